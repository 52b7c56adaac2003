#include "sim/core/model_spec.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace trainsim {

bool Gated(Activation a) { return a == Activation::kSwiGlu || a == Activation::kGeGlu; }

bool ModelSpec::IsMoeLayer(int i) const {
  if (!moe.enabled() || i < moe.first_k_dense) return false;
  // Hugging Face's interleave_moe_layer_step / Megatron's moe_layer_freq:
  // with an interval K the K-th, 2K-th, ... layer after the dense ones is MoE.
  const int k = std::max(1, moe.layer_interval);
  return (i - moe.first_k_dense + 1) % k == 0;
}

int ModelSpec::MoeLayers() const {
  // IsMoeLayer counted in closed form (the planner asks for every
  // configuration): the multiples of the interval among the layers after the dense ones.
  // Layer i >= max(0, first_k_dense) is MoE when j = i - first_k_dense + 1 is
  // a multiple of the interval: count the multiples of k in (a - f, layers - f].
  const int f = moe.first_k_dense, a = std::max(0, f), k = std::max(1, moe.layer_interval);
  if (!moe.enabled() || layers <= a) return 0;
  return (layers - f) / k - (a - f) / k;
}

LayerKind ModelSpec::LayerAt(int i) const {
  LayerKind k;
  k.moe = IsMoeLayer(i);
  const bool windowed = global_attention_every > 0 ? i % global_attention_every != global_attention_every - 1
                                                    : i % std::max(1, sliding_window_every) == 0;
  if (sliding_window > 0 && windowed) k.attention_span = sliding_window;
  if (attention_chunk > 0 && !(nope_layer_interval > 0 && i % nope_layer_interval == nope_layer_interval - 1)) {
    k.attention_span = attention_chunk;
    k.chunked = true;
  } else if (attention_chunk > 0) {
    k.rotary = false;  // Llama 4's global layers: no position encoding at all
  }
  return k;
}

double ModelSpec::AttentionParameters() const {
  const double h = hidden;
  if (attention == AttentionKind::kMla) {
    const MlaSpec& a = mla;
    const double q = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank /* norm */ + double(a.q_lora_rank) * heads * a.q_head_dim()
                                       : h * heads * a.q_head_dim();
    const double kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank /* norm */ +
                      double(a.kv_lora_rank) * heads * (a.qk_head_dim + a.v_head_dim);
    return q + kv + double(heads) * a.v_head_dim * h;
  }
  const double q = double(heads) * head_dim(), kv = kv_dim();
  double p = h * (q + 2 * kv) + q * h;
  if (qkv_bias) p += q + 2 * kv;
  if (proj_bias) p += h;
  if (qk_norm == QkNorm::kRms) p += 2.0 * head_dim();
  if (attention_sinks) p += heads;
  return p;
}

double ModelSpec::DenseMlpParameters() const {
  const double h = hidden, f = ffn_hidden;
  double p = (Gated(activation) ? 3.0 : 2.0) * h * f;
  if (mlp_bias) p += (Gated(activation) ? 2.0 : 1.0) * f /* fc1's (both halves when gated) */ + h /* fc2's */;
  return p;
}

double ModelSpec::ExpertParameters() const {
  const double h = hidden, f = moe.ffn_hidden;
  double p = (Gated(activation) ? 3.0 : 2.0) * h * f;
  if (moe.expert_bias.value_or(false)) p += (Gated(activation) ? 2.0 : 1.0) * f + h;  // GPT-OSS: gate_up_proj_bias, down_proj_bias
  return p;
}

double ModelSpec::MoeMlpParameters() const {
  // GPT-OSS, whose experts carry biases, biases its router too.
  const double router = double(hidden) * moe.experts + (moe.expert_bias.value_or(false) ? double(moe.experts) : 0.0);
  return (moe.experts + moe.shared_experts) * ExpertParameters() + router;
}

double ModelSpec::LayerParameters(const LayerKind& k) const {
  const double norms = (output_norms ? 4 : 2) * (norm == NormKind::kLayerNorm ? 2.0 * hidden : double(hidden));
  return AttentionParameters() + (k.moe ? MoeMlpParameters() : DenseMlpParameters()) + norms;
}

double ModelSpec::LayerParameters(int i) const { return LayerParameters(LayerAt(i)); }

double ModelSpec::ActiveLayerParameters(int i) const {
  const LayerKind k = LayerAt(i);
  if (!k.moe) return LayerParameters(k);
  return LayerParameters(k) - (moe.experts - moe.top_k) * ExpertParameters();
}

double ModelSpec::EmbeddingParameters(int seq_len) const {
  double p = double(vocab) * hidden;
  if (position == PositionKind::kLearned) p += double(max_positions > 0 ? max_positions : seq_len) * hidden;
  if (!tied_embeddings) p += double(vocab) * hidden;
  p += (norm == NormKind::kLayerNorm ? 2.0 : 1.0) * hidden;  // final norm
  return p;
}

double ModelSpec::MtpParameters() const {
  const int modules = mtp_layers.value_or(0);
  if (modules <= 0) return 0;
  const double h = hidden;
  return modules * (LayerParameters(layers - 1) + 2 * h * h + 3 * h);
}

namespace {

// Layers of each distinct kind, in order of first appearance (a model has a
// few kinds; counting them once keeps the totals cheap for the planner).
std::vector<std::pair<LayerKind, int>> KindCounts(const ModelSpec& m) {
  std::vector<std::pair<LayerKind, int>> kinds;
  if (m.uniform()) return {{m.LayerAt(0), m.layers}};
  for (int i = 0; i < m.layers; ++i) {
    const LayerKind k = m.LayerAt(i);
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& e) { return e.first == k; });
    if (it == kinds.end()) kinds.emplace_back(k, 1);
    else it->second++;
  }
  return kinds;
}

}  // namespace

double ModelSpec::TotalParameters(int seq_len) const {
  double p = EmbeddingParameters(seq_len);
  for (const auto& [kind, n] : KindCounts(*this)) p += n * LayerParameters(kind);
  return p;
}

double ModelSpec::ActiveParameters(int seq_len) const {
  double p = EmbeddingParameters(seq_len);
  for (const auto& [kind, n] : KindCounts(*this)) {
    p += n * (LayerParameters(kind) - (kind.moe ? (moe.experts - moe.top_k) * ExpertParameters() : 0.0));
  }
  return p;
}

std::string ToString(Activation a) {
  switch (a) {
    case Activation::kGelu: return "gelu";
    case Activation::kSwiGlu: return "swiglu";
    case Activation::kGeGlu: return "geglu";
    case Activation::kSquaredRelu: return "squared-relu";
  }
  return "?";
}
std::string ToString(NormKind n) { return n == NormKind::kLayerNorm ? "layernorm" : "rmsnorm"; }
std::string ToString(PositionKind p) {
  switch (p) {
    case PositionKind::kLearned: return "learned";
    case PositionKind::kRope: return "rope";
    case PositionKind::kAlibi: return "alibi";
  }
  return "rope";
}
std::string ToString(AttentionKind a) { return a == AttentionKind::kMla ? "mla" : "mha"; }

}  // namespace trainsim
