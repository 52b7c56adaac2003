#include "sim/core/model_spec.h"

namespace trainsim {

double ModelSpec::LayerParameters() const {
  const double h = hidden, f = ffn_hidden, kv = kv_dim();
  const bool biases = norm == NormKind::kLayerNorm;  // GPT-style layers carry biases; Llama-style do not
  double attn = h * (h + 2 * kv) + h * h;
  double mlp = (activation == Activation::kSwiGlu ? 3.0 : 2.0) * h * f;
  if (biases) {
    attn += h + 2 * kv + h;
    mlp += f + h;
  }
  const double norms = 2 * (norm == NormKind::kLayerNorm ? 2 * h : h);
  return attn + mlp + norms;
}

double ModelSpec::EmbeddingParameters(int seq_len) const {
  double p = double(vocab) * hidden;
  if (position == PositionKind::kLearned) p += double(max_positions > 0 ? max_positions : seq_len) * hidden;
  if (!tied_embeddings) p += double(vocab) * hidden;
  p += (norm == NormKind::kLayerNorm ? 2.0 : 1.0) * hidden;  // final norm
  return p;
}

double ModelSpec::TotalParameters(int seq_len) const { return layers * LayerParameters() + EmbeddingParameters(seq_len); }

double ModelSpec::ActiveParameters(int seq_len) const { return TotalParameters(seq_len); }

std::string ToString(Activation a) { return a == Activation::kGelu ? "gelu" : "swiglu"; }
std::string ToString(NormKind n) { return n == NormKind::kLayerNorm ? "layernorm" : "rmsnorm"; }
std::string ToString(PositionKind p) { return p == PositionKind::kLearned ? "learned" : "rope"; }

}  // namespace trainsim
