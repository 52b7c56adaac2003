#include "models/memory_model.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

namespace trainsim {
namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Appends printf's "%.1f" of v (std::to_chars prints as it does in the C
// locale; the planner formats a reason for every configuration that does not fit).
std::string& Fixed1(std::string& o, double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 1);
  return o.append(buf, r.ptr);
}
}


namespace {

// Activation bytes of one layer of `kind` under a given recompute mode (the
// layer being recomputed under full recompute holds its no-recompute activations).
double LayerActivationBytes(const Scenario& sc, const LayerKind& kind, Recompute recompute) {
  const ModelSpec& m = sc.model;
  const Parallelism& p = sc.parallelism;
  const Training& tr = sc.training;
  const double t = p.tensor;
  const double sb = double(tr.seq_len) / p.context * tr.micro_batch;  // tokens per GPU
  const double h = m.hidden, f = m.ffn_hidden;
  const bool mla = m.attention == AttentionKind::kMla;
  // Per token: queries and the attention output over all heads, keys and values over the KV heads.
  const double q = mla ? double(m.heads) * m.mla.q_head_dim() : double(m.heads) * m.head_dim();
  const double kv = mla ? double(m.heads) * (m.mla.q_head_dim() + m.mla.v_head_dim) / 2 : double(m.kv_dim());
  const double o = m.attention_out_dim();
  const double a = m.heads, s = tr.seq_len;
  const bool dropout = tr.dropout > 0;
  const bool gated = Gated(m.activation);
  // Korthikanti's 34sbh splits into a part inside the TP region (divided by t)
  // and a part outside it (divided by t only with sequence parallelism).
  const double mask = dropout ? 1.0 : 0.0;
  // In a low-precision format the four projections keep their inputs for the
  // weight gradient quantized (Transformer Engine saves the quantized copy,
  // scale factors included: sim/core/precision.h), the rest stays 16-bit.
  const double in = SavedInputBytes(tr.precision, h);
  // MLA keeps the latent down-projections' outputs (replicated over TP) for the up-projections.
  const double latents = mla ? 2.0 * (m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) : 0.0;
  // A projection keeps its input only for its weight gradient. Under LoRA
  // the frozen one keeps none (Transformer Engine saves a Linear's input only
  // when its weight requires a gradient); its adapter, a 16-bit Megatron
  // linear beside it, keeps the 16-bit input for its own, or with adapter
  // dropout the dropped-out copy it read (16-bit) and the mask (1 byte).
  const LoraTargets& adapted = tr.finetune.targets;
  const bool lora = tr.finetune.lora();
  const double adapter_input = lora && tr.finetune.dropout > 0 ? 2.0 + 1.0 : 2.0;
  auto wgrad_input_bytes = [&](bool target) { return !lora ? in : target ? adapter_input : 0.0; };
  const double qkv_in = wgrad_input_bytes(adapted.qkv) * h, fc1_in = wgrad_input_bytes(adapted.fc1) * h;
  const double fc2_in_bytes = wgrad_input_bytes(adapted.fc2);
  const double norm_inputs = (m.output_norms ? 4 : 2) * 2 * h;  // each norm keeps its 16-bit input
  const double outside = norm_inputs + qkv_in + fc1_in /* QKV and fc1 (router) inputs */ + 2 * mask * h /* dropout masks */;
  // With flash attention the proj input is the kernel's output O, which the
  // kernel keeps in 16-bit for its own backward; an fp8 proj keeps a copy too.
  const bool flash = IsFused(tr.attention);
  const double proj_wgrad_in = wgrad_input_bytes(adapted.proj);
  // (A 16-bit proj input without adapter dropout is O itself.)
  const bool shares_o = proj_wgrad_in == 2.0;
  const double proj_in = flash ? 2.0 + (shares_o ? 0.0 : proj_wgrad_in) : proj_wgrad_in;
  const double inside_attn = 2 * q /* Q */ + 4 * kv /* K, V */ + proj_in * o /* proj input */;
  // A clamp in passes of its own keeps the clamped copy of the activation's input too.
  const double clamped_copy = ClampsActivationApart(sc) ? 4.0 : 0.0;
  auto mlp = [&](double width, double fc2_in) { return (gated ? 4 * width : 2 * width) /* activation input(s) */ + clamped_copy * width + fc2_in * width; };
  double inside_mlp = kind.moe ? mlp(double(m.moe.shared_experts) * m.moe.ffn_hidden, fc2_in_bytes) : mlp(f, fc2_in_bytes);
  // MoE: per token routed, top_k copies at the busiest rank's load reach the
  // experts; each keeps its fc1 input, activation inputs and fc2 input, and
  // what the routing probability's gradient needs: its expert output where
  // the combine applies it, its fp32 probability where fc2's input takes it
  // (FrameworkProfile::moe_probs_on_fc2_input). They are sequence-sharded like
  // the tokens (T / t per GPU under TP with SP) and gathered over ETP with
  // 1/ETP of the expert's width.
  double experts = 0;  // per token of the layer, on this GPU
  if (kind.moe) {
    const double copies = m.moe.top_k * ExpertLoadFactor(sc), etp = p.expert_tensor;
    const double for_probs = sc.framework.moe_probs_on_fc2_input ? 4.0 : 2 * h;
    // Under LoRA the frozen experts' GEMMs keep their 16-bit inputs only for adapters beside them.
    experts = copies * (wgrad_input_bytes(adapted.fc1) * h * etp + mlp(double(m.moe.ffn_hidden), wgrad_input_bytes(adapted.fc2)) + for_probs) /
                  (p.sequence_parallel ? t : 1) +
              4.0 * m.moe.experts / (p.sequence_parallel ? t : 1) /* router probabilities, fp32 */;
  }
  double scores = 0;  // per token: the unfused path keeps the s x s scores, softmax output, dropout mask
  if (tr.attention == AttentionKernel::kUnfused) scores = a * s / p.context * (2 + 2 + mask);
  else scores = a * 4.0 * 2 / s;  // flash keeps only the softmax statistics (negligible)

  switch (recompute) {
    case Recompute::kFull:
      return sb * 2 * h / (p.sequence_parallel ? t : 1);  // the layer input only
    case Recompute::kSelective: {
      const double seq_shard = p.sequence_parallel ? t : 1;
      if (sc.framework.selective_recompute_torchtitan_op) {
        // torchtitan's op policy keeps the block's input, the outputs of the
        // matmuls it does not recompute (q, v, w1 and w2: the first, third,
        // fifth and seventh; fc2 stands for w1 in an ungated MLP) and the
        // attention kernel's; every other activation is recomputed from them.
        // Routed experts' grouped matmuls are not counted by the policy: kept.
        const double v = mla ? kv : double(m.kv_dim());
        const double kept_mlp = kind.moe ? 0.0 : 2 * f;
        return sb * ((2 * h + 2 * h) / seq_shard + (2 * q + 2 * v + 2 * o + kept_mlp + scores) / t + experts);
      }
      // What each recomputed module no longer keeps (its inputs stay).
      const unsigned mods = tr.recompute_modules;
      double kept_outside = outside + latents, kept_attn = inside_attn, kept_mlp = inside_mlp, kept_experts = experts;
      const double kept_scores = (mods & kRecomputeCoreAttention) ? 0.0 : scores;
      if (mods & kRecomputeLayerNorm) kept_outside -= qkv_in + fc1_in;  // the norms' outputs: the QKV and MLP inputs
      if (mla && (mods & kRecomputeMlaUpProj)) kept_attn -= 2 * q + 4 * kv;  // Q, K, V, from the kept latents
      if (!kind.moe && (mods & kRecomputeMlp)) kept_mlp = 0;
      if (kind.moe && (mods & kRecomputeSharedExperts)) kept_mlp = 0;
      if (kind.moe && (mods & kRecomputeMoe)) {
        kept_experts = 0;
      } else if (kind.moe && (mods & kRecomputeMoeAct)) {
        // Each copy's fc2 input and clamped activation input: the checkpointed activation keeps neither.
        kept_experts -= m.moe.top_k * ExpertLoadFactor(sc) * (wgrad_input_bytes(adapted.fc2) + clamped_copy) * m.moe.ffn_hidden / seq_shard;
      }
      return sb * (kept_outside / seq_shard + (kept_attn + kept_mlp + kept_scores) / t + kept_experts);
    }
    case Recompute::kNone:
      break;
  }
  return sb * ((outside + latents) / (p.sequence_parallel ? t : 1) + (inside_attn + inside_mlp + scores) / t + experts);
}

// The allgather dispatcher's buffers while an MoE layer runs: every token of
// the ETP x EP group gathered (16-bit, Megatron-Core's global buffer), and
// at the combine the experts' output scattered back to that shape and its
// fp32 copy for the reduce-scatter; the backward's gradients take as much.
// Held by one layer at a time, beside the saved activations.
double AllGatherDispatchBuffers(const Scenario& sc, double tokens) {
  const Parallelism& p = sc.parallelism;
  if (!sc.model.moe.enabled() || p.moe_dispatcher != MoeDispatcher::kAllGather) return 0;
  const double routed = tokens / (p.sequence_parallel ? p.tensor : 1);
  return routed * p.expert * p.expert_tensor * sc.model.hidden * (2 + 2 + 4);
}

}  // namespace

double LayerActivationBytes(const Scenario& sc) { return LayerActivationBytes(sc, sc.model.LayerAt(0), sc.training.recompute); }
double LayerActivationBytes(const Scenario& sc, const LayerKind& kind) { return LayerActivationBytes(sc, kind, sc.training.recompute); }

double SelectiveRecomputeFreedShare(const Scenario& sc) {
  if (sc.training.recompute != Recompute::kSelective) return 0;
  const LayerKind kind = sc.model.LayerAt(0);
  const double kept_all = LayerActivationBytes(sc, kind, Recompute::kNone);
  return kept_all > 0 ? 1 - LayerActivationBytes(sc, kind, Recompute::kSelective) / kept_all : 0;
}

OffloadedActivations OffloadedActivationBytes(const Scenario& sc, const Workload& w) {
  OffloadedActivations o;
  for (int i = 0; i < sc.training.activation_offload_layers && i < int(w.kind_of_layer.size()); ++i) {
    const double b = LayerActivationBytes(sc, w.layer(i).kind, sc.training.recompute);
    o.host_bytes += b;
    o.largest_layer_bytes = std::max(o.largest_layer_bytes, b);
  }
  return o;
}

double InFlightMicrobatches(const Scenario& sc, int rank) {
  const Parallelism& p = sc.parallelism;
  const double m = sc.microbatches_per_step();
  if (p.pipeline == 1) return 1;
  const double v = p.virtual_stages;
  // 1F1B: rank r holds p - r micro batches after its warm-up. Interleaved
  // (Megatron's schedule): (p - r - 1) * 2 + (v - 1) * p warm-up chunk
  // passes plus the one in flight, in units of the rank's v chunks.
  const double in_flight = v == 1 ? p.pipeline - rank : ((p.pipeline - rank - 1) * 2.0 + (v - 1) * p.pipeline + 1) / v;
  return std::min(in_flight, m);
}

double InFlightMicrobatches(const Scenario& sc) { return InFlightMicrobatches(sc, 0); }

MemoryReport EstimateMemory(const Scenario& sc, const Workload& w, bool explain) {
  const Parallelism& p = sc.parallelism;
  const GpuProfile& g = sc.node.gpu;
  const double tokens = double(sc.training.seq_len) / p.context * sc.training.micro_batch;
  // Activations of each layer kind (workload.h kinds), and of the largest.
  std::vector<double> kind_act, kind_act_kept;  // kept: a layer that does not recompute (recompute_layers)
  double largest_none = 0, largest_recomputed = 0;
  // Recompute modules beyond the attention core re-create a sizeable part of
  // a layer in its backward: the one being recomputed holds it meanwhile.
  const bool modules = sc.training.recompute == Recompute::kSelective &&
                       ((sc.training.recompute_modules & ~unsigned(kRecomputeCoreAttention)) != 0 || sc.framework.selective_recompute_torchtitan_op);
  for (const LayerWork& k : w.kinds) {
    kind_act.push_back(LayerActivationBytes(sc, k.kind, sc.training.recompute));
    const double none = LayerActivationBytes(sc, k.kind, Recompute::kNone);
    kind_act_kept.push_back(none);
    largest_none = std::max(largest_none, none);
    if (modules) largest_recomputed = std::max(largest_recomputed, none - kind_act.back());
  }
  // Offloaded layers (pipeline 1, one micro batch in flight) live in host
  // memory but for the one whose copy is running.
  const OffloadedActivations off = OffloadedActivationBytes(sc, w);
  MemoryReport r;
  bool first = true;
  // Every rank is checked: uneven stages move the peak away from rank 0.
  for (int rank = 0; rank < p.pipeline; ++rank) {
    const RankState& state = w.rank_state[size_t(rank)];
    const double params = state.params_per_gpu;
    const double trainable = state.trainable_params_per_gpu;  // all of them, or LoRA's adapters
    const double adapters = sc.training.finetune.lora() ? trainable : 0;  // weights beside the frozen base
    // Sharded data parallel (models/memory_model.h): over the shard group G
    // (the routed experts over their own, G_expert), with the units in flight
    // gathered in full.
    const double G = p.shard_group(), G_expert = p.expert_shard_group();
    const DataSharding mode = p.data_sharding;
    // Of each unit in flight, the part a rank gathers beyond its own shard
    // (none in a group of one: sharding then never costs more than replicating).
    const auto gathered = [&](double unit, double unit_experts) {
      return (1 - 1 / G) * (unit - unit_experts) + (1 - 1 / G_expert) * unit_experts;
    };
    const double all_experts = state.expert_params_per_gpu;  // frozen or not
    // What a rank holds of `total` parameters, `experts` of them routed
    // experts', and of the units in flight with `unit_experts` of `unit`, sharded.
    const auto sharded = [&](double total, double experts, double unit, double unit_experts) {
      return (total - experts) / G + experts / G_expert + kShardUnitsInFlight * gathered(unit, unit_experts);
    };
    // An edge unit (the embedding on the first stage, the LM head on the
    // last) is gathered whole while it runs, beside one layer's unit instead
    // of two: what it gathers beyond a layer's.
    const double edge = std::max(rank == 0 ? w.embedding_params_per_gpu : 0.0, rank == p.pipeline - 1 ? w.head_params_per_gpu : 0.0);
    const double edge_beyond = std::max(0.0, gathered(edge, 0) - gathered(w.layer_params_per_gpu, w.layer_expert_params_per_gpu));
    MemoryReport m;
    // Base weights and LoRA adapters (16-bit); FSDP keeps its shard of each plus the units in flight.
    const bool full = mode == DataSharding::kFull;
    const double base = full ? sharded(params, all_experts, w.layer_params_per_gpu, w.layer_expert_params_per_gpu) + edge_beyond : params;
    const double trainable_experts = state.expert_trainable_params_per_gpu;  // the experts, or their adapters
    const double adapter = adapters == 0 ? 0
                           : full    ? sharded(adapters, trainable_experts, w.layer_trainable_params_per_gpu, w.layer_expert_trainable_params_per_gpu)
                                     : adapters;
    m.weights_gib = (base * BaseWeightBytes(sc) + adapter * 2) / kGiB;
    const bool grads_sharded = mode == DataSharding::kGradients || mode == DataSharding::kFull;
    // (A frozen LoRA base has no gradient at its edges.)
    const double grads = grads_sharded ? sharded(trainable, trainable_experts, w.layer_trainable_params_per_gpu,
                                                 w.layer_expert_trainable_params_per_gpu) + (adapters > 0 ? 0.0 : edge_beyond)
                                       : trainable;
    // The gradient buffer holds the reduction's dtype: Megatron-Core DDP's
    // grad_dtype is fp32 only with grad_reduce_in_fp32, else the parameter's
    // (param_and_grad_buffer.py); FSDP2's sharded gradients are in reduce_dtype.
    m.gradients_gib = grads * p.grad_reduce_bytes / kGiB;
    // Master weights and two moments (FrameworkProfile::optimizer_state_bytes;
    // G = 1 without sharding); the routed
    // experts' state is sharded over expert-DP instead.
    const double state_bytes = sc.framework.optimizer_state_bytes;
    m.optimizer_gib = ((trainable - trainable_experts) * state_bytes / G + trainable_experts * state_bytes / G_expert) / kGiB;
    const double in_flight = InFlightMicrobatches(sc, rank);
    double layers_act = 0, chunk_kept = 0;  // chunk_kept: the least a chunk keeps of layers it does not recompute
    for (int chunk = 0; chunk < w.stages.virtual_stages(); ++chunk) {
      const int vs = chunk * p.pipeline + rank;
      const std::span<const int> counts = w.KindCounts(vs), recomputed = w.RecomputeKindCounts(vs);
      double kept = 0;
      for (size_t k = 0; k < counts.size(); ++k) {
        layers_act += recomputed[k] * kind_act[k];
        kept += (counts[k] - recomputed[k]) * kind_act_kept[k];
      }
      layers_act += kept;
      chunk_kept = chunk == 0 ? kept : std::min(chunk_kept, kept);
    }
    double act = layers_act * in_flight;
    if (off.host_bytes > 0) act -= off.host_bytes - off.largest_layer_bytes;
    // The embedding output of each in-flight micro batch (first rank), and
    // with full recompute one layer's full activations while it is recomputed
    // (with recompute modules, what they re-create of the largest layer).
    if (rank == 0) act += tokens * sc.model.hidden * 2 / (p.sequence_parallel ? p.tensor : 1) * in_flight;
    // A chunk's recomputed layers come first in it, so its backward reaches
    // them after freeing the layers it kept: the recompute's layer takes
    // their place, and adds only what it holds beyond them.
    if (sc.training.recompute == Recompute::kFull) act += std::max(0.0, largest_none - chunk_kept);
    act += largest_recomputed;
    act += AllGatherDispatchBuffers(sc, tokens);
    // The loss's logits, on the last stage (one micro batch's: its backward follows its forward).
    if (rank == p.pipeline - 1) act += tokens * double(sc.model.vocab) / p.tensor * sc.framework.cross_entropy_saved_bytes;
    m.activations_gib = act / kGiB;
    m.peak_gib_per_gpu = m.weights_gib + m.gradients_gib + m.optimizer_gib + m.activations_gib;
    if (first || m.peak_gib_per_gpu > r.peak_gib_per_gpu) {
      r = m;
      r.peak_stage = rank;
    }
    first = false;
  }
  r.capacity_gib = (g.memory_bytes - g.reserved_memory_bytes) / kGiB;
  r.workspace_gib = g.reserved_memory_bytes / kGiB;
  r.fits = r.peak_gib_per_gpu <= r.capacity_gib;
  // The node's GPUs offload at once into the node's host memory.
  r.offloaded_activations_gib = off.host_bytes / kGiB;
  const double host_gib = sc.node.host_memory_bytes / kGiB, node_offload_gib = r.offloaded_activations_gib * sc.node.gpus_per_node;
  if (r.fits && host_gib > 0 && node_offload_gib > host_gib) {
    char buf[320];
    std::snprintf(buf, sizeof buf, "offloads %.1f GiB of activations per GPU, %.0f GiB per node, but %s has %.0f GiB of host memory",
                  r.offloaded_activations_gib, node_offload_gib, sc.node.name.c_str(), host_gib);
    r.fits = false;
    r.host_exceeded = true;
    r.reason = buf;
    return r;
  }
  if (!r.fits && explain) {
    std::string& o = r.reason;  // built in place, in one allocation
    o.reserve(192 + g.name.size());
    Fixed1(o.append("needs "), r.peak_gib_per_gpu).append(" GiB per GPU (weights ");
    Fixed1(o, r.weights_gib).append(", gradients ");
    Fixed1(o, r.gradients_gib).append(", optimizer ");
    Fixed1(o, r.optimizer_gib).append(", activations ");
    Fixed1(o, r.activations_gib);
    if (!(w.stages.even() || p.pipeline == 1)) o.append(", on pipeline stage ").append(std::to_string(r.peak_stage));
    Fixed1(o.append(") but ").append(g.name).append(" has "), r.capacity_gib).append(" GiB usable");
    if (o.size() > 319) o.resize(319);  // as the 320-byte buffer it was formatted into
  }
  return r;
}

}  // namespace trainsim
