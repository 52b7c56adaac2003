#include "models/workload.h"

#include <algorithm>
#include <cmath>

namespace trainsim {

namespace {

// The parameters in the first pipeline stage's last gradient bucket
// (RankState::last_bucket_fraction). Buckets take the trainable dense
// parameters (the routed experts have their own buffer) of the first model
// chunk in the order the backward produces their gradients: the LM head
// when the chunk holds it, its layers from the last, the embedding; a
// bucket closes once it holds the bucket size (a parameter larger than that
// fills one alone), as Megatron-Core's _ParamAndGradBuffer does per
// parameter; a layer counts here as one parameter. What is left when the
// embedding has been added is the last bucket.
double LastBucketParams(const Workload& w, const Scenario& sc, double embedding_params, double head_params) {
  const FrameworkProfile& f = sc.framework;
  const double bucket = std::max(f.grad_bucket_min_params, f.grad_bucket_params_per_replica * sc.parallelism.gradient_replicas());
  double fill = 0, closed = 0;
  auto add = [&](double params) {
    if (params <= 0) return;
    fill += params;
    if (bucket > 0 && fill >= bucket) {
      closed = fill;
      fill = 0;
    }
  };
  const int chunk_layers = w.stages.VirtualStageLayers(0);
  if (w.stages.pipeline() * w.stages.virtual_stages() == 1) add(head_params);
  for (int layer = chunk_layers - 1; layer >= 0; --layer) {
    const LayerWork& k = w.layer(layer);
    add(k.trainable_params_per_gpu - k.expert_trainable_params_per_gpu);
  }
  add(embedding_params);
  return fill > 0 ? fill : closed;
}

}  // namespace

const RankState& Workload::LargestRank() const {
  return *std::max_element(rank_state.begin(), rank_state.end(),
                           [](const RankState& a, const RankState& b) { return a.params_per_gpu < b.params_per_gpu; });
}

CommOp Workload::ChunkAmaxReduce(int vs, bool backward) const {
  CommOp c = chunk_amax_reduce;
  c.bytes = 0;
  const std::span<const int> counts = KindCounts(vs);
  for (size_t k = 0; k < counts.size(); ++k) {
    c.bytes += counts[k] * (backward ? kinds[k].fp8_amax_backward_bytes : kinds[k].fp8_amax_forward_bytes);
  }
  return c;
}

std::array<CommOp, 3> Workload::ChunkCollectives(int vs, bool backward) const {
  CommOp unit = backward ? shard_unit.reduce : shard_unit.gather;
  CommOp experts = backward ? shard_unit.expert_reduce : shard_unit.expert_gather;
  unit.overlapped = experts.overlapped = false;  // the edge unit's collectives are the ones nothing hides
  return {unit, experts, ChunkAmaxReduce(vs, backward)};
}

double PassWork::TotalFlops() const {
  double f = 0;
  for (const auto& o : ops) f += o.flops;
  return f;
}

namespace {

// Keys a causal query of a layer of `kind` attends to, on average over a
// sequence of s tokens: half the sequence (Megatron's s / 2); under a sliding
// window w, min(position, w), w - w^2 / 2s; in chunks of c, the keys of its
// own chunk before it, c / 2 over whole chunks and less in a partial last
// one. Each is s / 2 where its span reaches the whole sequence.
double CausalKeysPerQuery(const LayerKind& kind, double s) {
  const double span = kind.attention_span;
  if (span <= 0 || span >= s) return s / 2;
  if (!kind.chunked) return span - span * span / (2 * s);
  const double whole = std::floor(s / span), rest = s - whole * span;
  return (whole * span * span + rest * rest) / (2 * s);
}

// CausalKeysPerQuery summed over the first `layers` layers (an MTP module past
// the last layer attends as the last does). Megatron's s / 2 counted for every
// layer would put a long sequence's MFU above 100% when most layers are
// windowed (Mistral at 512k: 297%).
double CausalKeysSum(const ModelSpec& m, int layers, double seq_len) {
  if (m.sliding_window == 0 && m.attention_chunk == 0) return layers * seq_len / 2;
  double sum = 0;
  for (int i = 0; i < layers; ++i) sum += CausalKeysPerQuery(m.LayerAt(std::min(i, m.layers - 1)), seq_len);
  return sum;
}

// The attention core's model FLOPs per token (QK^T and its product with V,
// forward and both backward GEMMs), summed over `layers` layers: Megatron-LM's
// num_floating_point_operations counts the causal mask's nonzero half
// (seq_length / 2: its MHA/GQA term since 2025, as its MLA term did before;
// older releases and NeMo's flops formulas count the whole square, which
// Megatron-Bridge's published model TFLOP/s of GQA models do not).
double AttentionCoreFlopsPerToken(const ModelSpec& m, int layers, double seq_len) {
  const double causal_keys = CausalKeysSum(m, layers, seq_len);
  if (m.attention == AttentionKind::kMla) return 6.0 * causal_keys * m.heads * (m.mla.q_head_dim() + m.mla.v_head_dim);
  return 12.0 * causal_keys * m.heads * m.head_dim();
}

}  // namespace

double MegatronModelFlops(const ModelSpec& m, long global_batch, long seq_len) {
  const double h = m.hidden, L = m.layers, s = double(seq_len), tokens = double(global_batch) * s;
  auto gated = [](Activation a) { return Gated(a) ? 1.5 : 1.0; };  // three matrices as 3/2 of two
  // MLP: 12 = 3 (forward, wgrad, dgrad) x 2 (two stacked GEMMs) x 2 (FMA).
  double mlp_width = 0;  // summed over layers (and MTP modules, of the last layer's kind)
  const int mtp = std::max(0, m.mtp_layers.value_or(0));
  if (!m.moe.enabled()) {
    mlp_width = double(m.layers + mtp) * m.ffn_hidden;  // the sum below, exactly (integers)
  } else {
    // A capacity factor under 1 drops routed copies even at a balanced load:
    // the experts compute at most that share of them. Megatron's convention
    // counts every copy, which would put MFU above 100% (at 0.01, 142%).
    const double cf = m.moe.capacity_factor;
    const double routed = m.moe.top_k * (cf > 0 && cf < 1 ? cf : 1.0);
    for (int i = 0; i < m.layers + mtp; ++i) {
      const bool moe = m.IsMoeLayer(std::min(i, m.layers - 1));
      mlp_width += moe ? double(m.moe.ffn_hidden) * (routed + m.moe.shared_experts) : double(m.ffn_hidden);
    }
  }
  const double layers = L + mtp;
  double attention = AttentionCoreFlopsPerToken(m, m.layers + mtp, s);  // per token, then the projections
  if (m.attention == AttentionKind::kMla) {
    const MlaSpec& a = m.mla;
    const double heads = m.heads;
    const double q = a.q_lora_rank > 0 ? a.q_lora_rank * (h + heads * a.q_head_dim() + 1) : h * heads * a.q_head_dim();
    attention += 6.0 * layers *
                 (q + a.kv_lora_rank * (h + heads * (a.qk_head_dim + a.v_head_dim) + 1) + h * a.qk_rope_head_dim + heads * a.v_head_dim * h);
  } else {
    const double q_ratio = double(m.heads) * m.head_dim() / h;
    attention += 12.0 * layers * h * h * (1.0 + double(m.kv_heads) / m.heads) * q_ratio;
  }
  const double mtp_proj = 6.0 * mtp * (3 * h + 2 * h * h);
  const double logits = 6.0 * h * m.vocab * (mtp + 1);
  return tokens * (12.0 * h * mlp_width * gated(m.activation) + attention + mtp_proj + logits);
}

double BaseWeightBytes(const Scenario& sc) {
  return sc.training.finetune.lora() && IsLowPrecision(sc.training.precision) ? OperandBytes(sc.training.precision, sc.model.hidden) : 2;
}

namespace {

// The adapters on one MLP of `ffn` (fc1 and fc2 as targeted).
double LoraMlpParameters(const ModelSpec& m, const Finetune& f, double ffn) {
  const double h = m.hidden, r = f.rank, fc1_out = (Gated(m.activation) ? 2 : 1) * ffn;
  return (f.targets.fc1 ? r * (h + fc1_out) : 0.0) + (f.targets.fc2 ? r * (ffn + h) : 0.0);
}

// The adapters of every layer, a routed expert's counted `routed_copies`
// times per MoE layer; each multi-token-prediction module's layer is one
// more of the last layer's kind, adapted as it is.
double LoraParametersCounting(const ModelSpec& m, const Finetune& f, double routed_copies) {
  if (!f.lora()) return 0;
  const auto layer = [&](const LayerKind& kind) {
    return LoraLayerParameters(m, f, kind) - (kind.moe ? (m.moe.experts - routed_copies) * LoraRoutedExpertParameters(m, f) : 0.0);
  };
  double p = 0;
  for (int i = 0; i < m.layers; ++i) p += layer(m.LayerAt(i));
  return p + std::max(0, m.mtp_layers.value_or(0)) * layer(m.LayerAt(m.layers - 1));
}

}  // namespace

double LoraParameters(const ModelSpec& m, const Finetune& f) { return LoraParametersCounting(m, f, m.moe.experts); }

double LoraActiveParameters(const ModelSpec& m, const Finetune& f) { return LoraParametersCounting(m, f, m.moe.top_k); }

double LoraRoutedExpertParameters(const ModelSpec& m, const Finetune& f) {
  return f.lora() && m.moe.enabled() ? LoraMlpParameters(m, f, m.moe.ffn_hidden) : 0.0;
}

double LoraLayerParameters(const ModelSpec& m, const Finetune& f, const LayerKind& kind) {
  if (!f.lora()) return 0;
  // Each adapter is rank x (the projection's inputs + its outputs): queries
  // are heads x head_dim wide, which need not be the hidden size (Gemma).
  const double h = m.hidden, q = double(m.heads) * m.head_dim(), kv = double(m.kv_dim()), o = m.attention_out_dim();
  const double r = f.rank;
  double p = 0;
  if (f.targets.qkv) p += r * (h + q + 2 * kv);
  if (f.targets.proj) p += r * (o + h);
  if (!kind.moe) return p + LoraMlpParameters(m, f, m.ffn_hidden);
  // An MoE layer: the shared experts' MLP as a dense one, and one adapter pair per routed expert.
  if (m.moe.shared_experts > 0) p += LoraMlpParameters(m, f, double(m.moe.shared_experts) * m.moe.ffn_hidden);
  return p + m.moe.experts * LoraRoutedExpertParameters(m, f);
}

double ModelFlopsPerStep(const ModelSpec& m, const Training& t) {
  const double full = MegatronModelFlops(m, t.global_batch, t.seq_len);
  if (!t.finetune.lora()) return full;
  // Megatron's attention-core term keeps its backward; the weight terms lose
  // their weight gradient (a third).
  const double tokens = double(t.global_batch) * t.seq_len;
  const double core = tokens * AttentionCoreFlopsPerToken(m, m.layers + std::max(0, m.mtp_layers.value_or(0)), double(t.seq_len));
  return full - (full - core) / 3 + 6.0 * tokens * LoraActiveParameters(m, t.finetune);
}

namespace {

constexpr double kAct = 2.0;  // bytes per activation element (bf16/fp16)

}  // namespace

Operator GemmOperator(const OpName& name, double m, double n, double k, bool low_precision, double batch) {
  Operator o;
  o.name = name;
  o.cls = OpClass::kGemm;
  o.m = long(m);
  o.n = long(n);
  o.k = long(k);
  o.batch = long(batch);
  o.flops = 2.0 * m * n * k * batch;
  o.bytes = kAct * batch * (m * k + k * n + m * n);
  o.low_precision = low_precision;
  return o;
}

namespace {

Operator Mem(const OpName& name, double bytes) {
  Operator o;
  o.name = name;
  o.cls = OpClass::kMemoryBound;
  o.bytes = bytes;
  return o;
}

// A pure data movement (a permutation, a sort, a padding copy, MLA's rope
// writing whole q, k, v): its backward moves the gradients back along the
// inverse path, the same bytes, where an elementwise op's backward also reads
// what it saved.
Operator Move(const OpName& name, double bytes) {
  Operator o = Mem(name, bytes);
  o.backward_bytes = bytes;
  return o;
}

// The combine's unpermute: reads the experts' output rows and writes each
// token's sum of them. Where it also applies the routing probabilities
// (FrameworkProfile::moe_probs_on_fc2_input false), its backward reads the
// saved rows again for the probabilities' gradient; otherwise the backward
// moves the gradients back along the inverse path, a pure movement.
Operator Unpermute(double tokens_bytes, double rows_bytes, bool probs_on_fc2_input) {
  Operator o = Mem("moe unpermute", tokens_bytes + rows_bytes);
  o.backward_bytes = tokens_bytes + rows_bytes + (probs_on_fc2_input ? 0 : rows_bytes);
  return o;
}

CommOp Comm(const OpName& name, CollectiveKind kind, CommGroup group, double bytes, bool overlapped,
            const OpName& overlaps_op = {}, CommEngine engine = CommEngine::kNccl) {
  return CommOp{name, kind, group, bytes, overlapped, overlaps_op, engine};
}

// Backward of a forward GEMM: data gradient and weight gradient, same FLOPs
// each. The weight gradient accumulates into the main-grad buffer in its
// epilogue (wgrad_out_bytes per element, from the framework profile), a
// grouped one (the local experts') too: Megatron-Core's TEGroupedLinear passes
// gradient_accumulation_fusion to TE as fuse_wgrad_accumulation.
// A frozen weight (LoRA's base) has no weight gradient; a GEMM of two
// activations (unfused attention) has two data gradients instead.
// The backward GEMMs launch as many kernels as the forward one and, in low
// precision, accumulate as the framework's backward does.
void AddGemmBackward(std::vector<Operator>& ops, const Operator& f, const FrameworkProfile& fw, bool frozen = false) {
  const auto add = [&](Operator o) {
    o.kernels = f.kernels;
    o.batch_streams = f.batch_streams;
    o.split_accumulator = f.low_precision && fw.fp8_backward_split_accumulator;
    ops.push_back(o);
  };
  add(GemmOperator(f.name + " dgrad", f.m, f.k, f.n, f.low_precision, f.batch));
  if (frozen) return;
  if (f.activation_operands) {
    add(GemmOperator(f.name + " dgrad2", f.k, f.n, f.m, f.low_precision, f.batch));
    return;
  }
  Operator w = GemmOperator(f.name + " wgrad", f.k, f.n, f.m, f.low_precision, f.batch);
  w.out_bytes = fw.wgrad_out_bytes;
  w.bytes += w.m * w.n * w.batch * (fw.wgrad_out_bytes - kAct);
  add(w);
}

}  // namespace

void ResolvePartners(PassWork& pass) {
  for (CommOp& c : pass.comms) {
    if (c.overlaps_op.empty()) {
      c.partner = kWholePass;
      continue;
    }
    c.partner = kNoPartner;
    for (size_t i = 0; i < pass.ops.size(); ++i) {
      if (pass.ops[i].name == c.overlaps_op) {
        c.partner = int(i);
        break;
      }
    }
  }
}

bool ClampsActivationApart(const Scenario& sc) {
  return sc.model.activation_clamp.value_or(0) > 0 && Gated(sc.model.activation) && sc.framework.activation_clamp_pass.kernels > 0;
}

double ExpertLoadFactor(const Scenario& sc) {
  const MoeSpec& moe = sc.model.moe;
  // Padded to the capacity, every expert computes capacity_factor x the mean
  // whatever the routing, balanced or not.
  if (sc.pads_experts_to_capacity()) return moe.capacity_factor;
  // Otherwise the busiest EP rank's tokens: the mean under forced balance, the
  // framework's dropless imbalance else, at most the capacity. Without expert
  // parallelism every expert is local: the GPU computes exactly its tokens'
  // copies, however the router spreads them.
  const double load = moe.forced_balance || sc.parallelism.expert <= 1 ? 1.0 : sc.framework.moe_dropless_load_factor;
  return moe.capacity_factor > 0 ? std::min(moe.capacity_factor, load) : load;
}

namespace {

// The shapes every block of a layer shares: tokens per GPU, sharding, precision.
struct LayerContext {
  const Scenario& sc;
  const ModelSpec& md;
  const Parallelism& p;
  double t, cp, b, s, s_local, h, T, T_ln, tp_bytes, tp_gather_bytes, tp_scatter_bytes;
  Precision prec;  // which GEMMs and casts it implies: sim/core/precision.h
  Fp8Scaling scaling;  // the framework's fp8 recipe
  bool amax_reduce;    // TP all-reduces each sequence-parallel cast's amax first
  bool fp8_amax_reduced;  // each chunk's amaxes are all-reduced after its passes (Workload::chunk_amax_reduce)
  CommGroup amax_group;   // over these ranks
  bool dropout, tp, sp, lora;
  // Each micro batch's backward transposes every fp8 weight for its data-gradient GEMM
  // (FrameworkProfile::fp8_parameter_transpose_cache off, on a TN-only GPU).
  bool weight_transpose_per_micro_batch;
  double norm_bytes, residual_bytes, cast;
  int cast_kernels;
  explicit LayerContext(const Scenario& scenario)
      : sc(scenario), md(scenario.model), p(scenario.parallelism) {
    const Training& tr = sc.training;
    t = p.tensor;
    cp = p.context;
    b = tr.micro_batch;
    s = tr.seq_len;
    s_local = s / cp;
    h = md.hidden;
    T = b * s_local;                         // tokens through the TP region per GPU
    T_ln = p.sequence_parallel ? T / t : T;  // tokens of ops outside it
    prec = tr.precision;
    dropout = tr.dropout > 0;
    tp = p.tensor > 1;
    sp = p.sequence_parallel;
    lora = tr.finetune.lora();
    weight_transpose_per_micro_batch = prec == Precision::kFp8 && sc.node.gpu.fp8_gemm_tn_only && !sc.framework.fp8_parameter_transpose_cache;
    tp_bytes = T * h * kAct;  // gathered activation of one TP collective
    // Transformer Engine's userbuffers all-gathers (qkv/fc1 fprop and dgrad, proj/fc2 dgrad) move
    // low-precision buffers under a low-precision recipe ("AllGather buffers use fp8 when using fp8
    // recipe", layers_all_gather_overlap in TE's initialize_ub); its reduce-scatters stay 16-bit
    // unless configured on fp8 buffers (tp_scatter_bytes below).
    tp_gather_bytes = IsLowPrecision(prec) && p.tp_comm_overlap ? T * h * SavedInputBytes(prec, h) : tp_bytes;
    norm_bytes = 2 * T_ln * h * kAct;                                    // read input, write output
    residual_bytes = T_ln * h * (3 * kAct + (dropout ? 1 : 0));          // (dropout +) add
    scaling = sc.framework.fp8_scaling;
    cast = ForwardCastBytesPerElement(prec, scaling, h);                 // quantize a projection input (0 in 16-bit)
    cast_kernels = CastKernels(prec, scaling);                           // ... in this many kernels
    // A sequence-parallel shard quantized before its all-gather needs the amax of the whole tensor.
    amax_reduce = tp && sp && NeedsTensorAmax(prec, scaling);
    // A row-parallel projection's overlapped reduce-scatter on an fp8 buffer moves its output at 1 B
    // (FrameworkProfile::userbuffers_fp8_reduce_scatter: NVIDIA's fp8 userbuffers configs set fp8_buf
    // on proj_fprop and fc2_fprop, and TE quantizes the GEMM output at its delayed scale).
    tp_scatter_bytes = p.tp_comm_overlap && sc.framework.userbuffers_fp8_reduce_scatter && KeepsAmaxHistory(prec, scaling)
                           ? T * h * OperandBytes(prec, h)
                           : tp_bytes;
    amax_group = sc.framework.fp8_amax_reduction == Fp8AmaxReduction::kStage ? CommGroup::kStage : CommGroup::kTensor;
    fp8_amax_reduced = KeepsAmaxHistory(prec, scaling) && sc.framework.fp8_amax_reduction != Fp8AmaxReduction::kNone &&
                       sc.layout().Span(amax_group).ranks > 1;
  }
};

// A tensor-parallel region of a forward pass: entered before a
// column-parallel GEMM (all-gather with SP), left after a row-parallel one
// (reduce-scatter with SP, all-reduce without). The backward mirrors each
// region (LayerBuilder::Backward), so a block names its GEMMs once.
struct TpRegion {
  OpName column_gemm;
  OpName row_gemm;
};

// Builds the passes of one layer kind, block by block: attention (MHA/GQA or
// MLA, full, windowed or chunked), then a dense or MoE MLP.
class LayerBuilder {
 public:
  explicit LayerBuilder(const Scenario& sc) : c_(sc) {}

  LayerWork Build(const LayerKind& kind) {
    LayerWork lw;
    lw.kind = kind;
    regions_.clear();
    regions_.reserve(3);  // attention, the MLP and shared experts
    adapter_backward_.clear();
    PassWork& F = lw.forward;
    // A layer has a few dozen operators: reserve once rather than regrow (the planner builds thousands).
    F.ops.reserve(48);
    F.comms.reserve(16);
    lw.backward.ops.reserve(96);
    lw.backward.comms.reserve(24);
    Attention(F, kind);
    Graph(F, 0, kGraphAttention);
    const size_t mlp_begin = F.ops.size();
    // A dense MLP's fc1 takes the norm's output quantized (TE's LayerNormLinear);
    // an MoE layer's norm feeds the router and the dispatcher in 16-bit, and
    // each GEMM after it quantizes its own input.
    F.ops.push_back(NormOp("post-attention norm", !kind.moe));
    if (kind.moe) {
      MoeMlp(F, mlp_begin);
    } else {
      DenseMlp(F, c_.md.ffn_hidden, "");
    }
    if (c_.md.output_norms) F.ops.push_back(NormOp("mlp output norm", false));
    F.ops.push_back(Mem("residual", c_.residual_bytes));
    Graph(F, mlp_begin, kind.moe ? kGraphMoe : kGraphMlp);
    // Context parallel: each rank's K and V travel around the ring (overlapped with attention).
    if (c_.p.context > 1) {
      cp_bytes_ = (c_.cp - 1) * c_.b * c_.s_local * 2 * KvWidthLocal() * kAct;
      F.comms.push_back(Comm("cp kv ring", CollectiveKind::kSendRecv, CommGroup::kContext, cp_bytes_, true,
                             IsFused(c_.sc.training.attention) ? OpName("flash attention") : OpName()));
    }
    F.ops.erase(std::remove_if(F.ops.begin(), F.ops.end(), [](const Operator& o) { return o.flops == 0 && o.bytes == 0; }), F.ops.end());
    // Each low-precision GEMM call (and, by AddGemmBackward, each of its backward ones) launches its scale swizzles.
    for (Operator& o : F.ops) {
      if (o.cls == OpClass::kGemm && o.low_precision) o.kernels += ScaleSwizzleKernels(c_.prec);
    }
    Backward(F, lw.backward);
    lw.backward.comms.insert(lw.backward.comms.end(), adapter_backward_.begin(), adapter_backward_.end());
    ContextParallelOverheads(F, lw.backward);
    AddRecompute(F, kind, lw.recompute);
    Parameters(lw);
    if (c_.fp8_amax_reduced) {
      double gemms = 0;
      for (const Operator& o : F.ops) {
        if (o.cls == OpClass::kGemm && o.low_precision) gemms += o.batch;
      }
      lw.fp8_amax_forward_bytes = 3 * 4 * gemms;
      lw.fp8_amax_backward_bytes = 2 * 4 * gemms;
    }
    return lw;
  }

  // What a GPU holds of the layer kind, without its passes (BuildWorkload's kHoldings).
  LayerWork Holdings(const LayerKind& kind) const {
    LayerWork lw;
    lw.kind = kind;
    Parameters(lw);
    return lw;
  }

  double cp_exchange_bytes() const { return cp_bytes_; }

 private:
  const LayerContext c_;
  std::vector<TpRegion> regions_;
  std::vector<CommOp> adapter_backward_;  // the LoRA adapters' backward collectives (AdapterComms)
  double cp_bytes_ = 0;
  // MoE communication of the forward and its mirror in the backward (same bytes, reverse order).
  std::vector<CommOp> moe_comms_;

  double HeadsLocal() const { return c_.md.heads / c_.t; }
  double KvHeadsLocal() const {
    return c_.md.attention == AttentionKind::kMla ? HeadsLocal() : std::max(1.0, c_.md.kv_heads / c_.t);
  }
  double QHeadDim() const { return c_.md.attention == AttentionKind::kMla ? c_.md.mla.q_head_dim() : c_.md.head_dim(); }
  double VHeadDim() const { return c_.md.attention == AttentionKind::kMla ? c_.md.mla.v_head_dim : c_.md.head_dim(); }
  double KvWidthLocal() const { return KvHeadsLocal() * (QHeadDim() + VHeadDim()) / 2; }  // K and V per token, each

  // The one-float max all-reduce a cast of a sequence-parallel shard waits
  // for (sim/core/precision.h NeedsTensorAmax); nothing else hides it.
  void AmaxReduce(PassWork& P, const OpName& tensor) const {
    if (c_.amax_reduce) P.comms.push_back(Comm(tensor + " amax all-reduce", CollectiveKind::kAllReduce, CommGroup::kTensor, 4, false));
  }

  // Whether TE overlaps the all-gather into this column-parallel GEMM (userbuffers): under TP comm
  // overlap, except qkv's when the framework turns that one off (Megatron-Core tp_comm_overlap_disable_qkv).
  bool GatherOverlapped(const OpName& gemm) const {
    return c_.p.tp_comm_overlap && !(gemm == "qkv" && c_.sc.framework.tp_comm_overlap_disable_qkv);
  }
  // Whether TE pipelines the reduce-scatter of this column-parallel GEMM's input gradient with its
  // data-gradient GEMM (userbuffers ring exchange, Megatron-Core tp_comm_overlap_rs_dgrad), which
  // tp_comm_overlap_disable_qkv turns off for qkv as it does the all-gather.
  bool DgradScatterPipelined(const OpName& gemm) const {
    return GatherOverlapped(gemm) && Holds(c_.sc.framework.tp_comm_overlap_rs_dgrad, c_.p.context);
  }

  void TpIn(PassWork& F, const OpName& gemm) {  // before a column-parallel GEMM
    AmaxReduce(F, gemm + " input");
    if (c_.tp && c_.sp) {
      const bool overlapped = GatherOverlapped(gemm);  // NCCL's all-gather of the 16-bit input otherwise
      F.comms.push_back(Comm(gemm + " all-gather", CollectiveKind::kAllGather, CommGroup::kTensor, overlapped ? c_.tp_gather_bytes : c_.tp_bytes,
                             overlapped, gemm, CommEngine::kCopyEngine));
    }
  }
  void TpOut(PassWork& F, const OpName& gemm) {  // after a row-parallel GEMM
    if (!c_.tp) return;
    if (c_.sp) {
      F.comms.push_back(Comm(gemm + " reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kTensor, c_.tp_scatter_bytes, c_.p.tp_comm_overlap,
                             gemm, CommEngine::kUserbufferPipelined));
    } else {
      F.comms.push_back(Comm(gemm + " all-reduce", CollectiveKind::kAllReduce, CommGroup::kTensor, c_.tp_bytes, c_.p.tp_comm_overlap, gemm,
                             CommEngine::kUserbufferPipelined));
    }
  }

  // LoRA adapters beside a target projection (NeMo's ParallelLinearAdapter):
  // A (in -> rank) and B (rank -> out) in 16-bit, split over TP like the
  // projection: beside a column-parallel one A sees the gathered input and
  // makes rank/t outputs, B makes the local outputs; beside a row-parallel one
  // A reads the local input shard, B makes out/t outputs.
  void Adapter(PassWork& F, const OpName& gemm, bool target, bool column_parallel, double in, double out_local) {
    if (!c_.lora || !target) return;
    const double r = c_.sc.training.finetune.rank, T = c_.T, t = c_.t;
    // Dropout "pre" on the adapter's input, before any gather of it (NeMo's ParallelLinearAdapter.forward):
    // read 16-bit, write 16-bit and a 1-byte mask (its backward by the memory-bound rule of Backward).
    if (c_.sc.training.finetune.dropout > 0) {
      const double elems = column_parallel ? (AdapterGathersInput(gemm) ? T / t : T) * in : T * in / t;
      F.ops.push_back(Mem(gemm + " lora dropout", elems * (2 * kAct + 1)));
    }
    if (column_parallel) {
      F.ops.push_back(GemmOperator(gemm + " lora A", T, std::max(1.0, r / t), in, false));
    } else {
      F.ops.push_back(GemmOperator(gemm + " lora A", T, r, in / t, false));
    }
    F.ops.push_back(GemmOperator(gemm + " lora B", T, out_local, r, false));
    AdapterComms(F, gemm, column_parallel, in, out_local * t);  // B makes out/t of the projection's outputs on each rank
  }

  // Whether the adapter beside a column-parallel projection gathers its sequence-parallel input
  // itself: under TP and SP, when TE overlaps that projection's all-gather and so hands over no
  // gathered norm output (NeMo's get_adapter_attributes_from_linear).
  bool AdapterGathersInput(const OpName& gemm) const { return c_.tp && c_.sp && GatherOverlapped(gemm); }

  // The adapter's own TP collectives, as NeMo's ParallelLinearAdapter runs them
  // (nemo/collections/llm/peft/utils.py with get_adapter_attributes_from_linear,
  // 2024-25): NCCL, on the critical path (the adapter's output is added to the
  // projection's as soon as it is made). `in` and `out` are the projection's
  // full features. Beside a column-parallel projection (qkv, fc1) A is
  // column-parallel with its output gathered (T x rank); under SP the adapter
  // gathers the sequence-parallel input itself (AdapterGathersInput) and
  // reduce-scatters its gradient, and without SP it
  // all-reduces the input gradient. Beside a row-parallel one (proj, fc2) A is
  // row-parallel (an all-reduce of T x rank) and B column-parallel with its
  // output gathered (T x out), split over the sequence under SP (its gradient
  // gathered back), or, with FrameworkProfile::lora_adapter_all_to_all, one
  // all-to-all each way instead. B's input is replicated: its gradient is
  // all-reduced. Backward collectives wait in adapter_backward_ for Backward().
  void AdapterComms(PassWork& F, const OpName& gemm, bool column_parallel, double in, double out) {
    if (!c_.tp) return;
    const double T = c_.T, r = c_.sc.training.finetune.rank;
    const OpName a = gemm + " lora A", b = gemm + " lora B";
    // Tagged with the adapter GEMM they belong to, so that a recompute re-running it sends them again.
    auto forward = [&](const OpName& name, CollectiveKind kind, double bytes, const OpName& of) {
      F.comms.push_back(Comm(name, kind, CommGroup::kTensor, bytes, false, of));
    };
    auto backward = [&](const OpName& name, CollectiveKind kind, double bytes, const OpName& of) {
      adapter_backward_.push_back(Comm(name, kind, CommGroup::kTensor, bytes, false, of));
    };
    if (column_parallel) {
      if (AdapterGathersInput(gemm)) {
        forward(a + " input all-gather", CollectiveKind::kAllGather, T * in * kAct, a);
        backward(a + " input grad reduce-scatter", CollectiveKind::kReduceScatter, T * in * kAct, a);
      } else if (!c_.sp) {
        backward(a + " input grad all-reduce", CollectiveKind::kAllReduce, T * in * kAct, a);
      }
      forward(a + " output all-gather", CollectiveKind::kAllGather, T * r * kAct, a);
    } else {
      forward(a + " all-reduce", CollectiveKind::kAllReduce, T * r * kAct, a);
      if (c_.sp && c_.sc.framework.lora_adapter_all_to_all) {
        forward(b + " all-to-all", CollectiveKind::kAllToAll, T * out / c_.t * kAct, b);
        backward(b + " grad all-to-all", CollectiveKind::kAllToAll, T * out / c_.t * kAct, b);
      } else {
        forward(b + " output all-gather", CollectiveKind::kAllGather, T * out * kAct, b);
        if (c_.sp) backward(b + " output grad all-gather", CollectiveKind::kAllGather, T * out * kAct, b);
      }
    }
    backward(b + " input grad all-reduce", CollectiveKind::kAllReduce, T * r * kAct, b);
  }

  void Attention(PassWork& F, const LayerKind& kind) {
    const ModelSpec& md = c_.md;
    const Finetune& ft = c_.sc.training.finetune;
    const double T = c_.T, h = c_.h, heads = HeadsLocal(), kv = KvHeadsLocal();
    const double dq = QHeadDim(), dv = VHeadDim();
    F.ops.push_back(NormOp("input norm", true));
    OpName first_gemm;
    if (md.attention == AttentionKind::kMla) {
      // DeepSeek's latent projections are replicated over TP (each rank
      // projects the gathered tokens), the up-projections column-parallel.
      const MlaSpec& a = md.mla;
      first_gemm = a.q_lora_rank > 0 ? OpName("q down") : OpName("q");
      TpIn(F, first_gemm);
      if (a.q_lora_rank > 0) {
        F.ops.push_back(GemmOperator("q down", T, a.q_lora_rank, h, true));
        F.ops.push_back(Mem("q norm", 2 * T * a.q_lora_rank * kAct));
        F.ops.push_back(GemmOperator("q up", T, heads * dq, a.q_lora_rank, true));
      } else {
        F.ops.push_back(GemmOperator("q", T, heads * dq, h, true));
      }
      F.ops.push_back(GemmOperator("kv down", T, a.kv_lora_rank + a.qk_rope_head_dim, h, true));
      F.ops.push_back(Mem("kv norm", 2 * T * a.kv_lora_rank * kAct));
      F.ops.push_back(GemmOperator("kv up", T, heads * (a.qk_head_dim + a.v_head_dim), a.kv_lora_rank, true));
      // Megatron-Core's fused MLA rope (apply_rope_fusion, which the
      // performance recipes set) rotates the rope part and writes whole,
      // contiguous queries, keys and values: it reads the up-projections'
      // outputs and the shared rope key and writes q, k and v
      // (fused_apply_mla_rope_for_q / _for_kv, multi_latent_attention.py,
      // core_v0.15); its backward moves the same gradients back.
      const double dq_full = a.qk_head_dim + a.qk_rope_head_dim;
      const double per_head = 2 * dq_full + (a.qk_head_dim + a.v_head_dim) + (dq_full + a.v_head_dim);
      F.ops.push_back(Move("rotary", T * (heads * per_head + 2 * a.qk_rope_head_dim) * kAct));
      F.ops.back().kernels = 2;
    } else {
      first_gemm = "qkv";
      TpIn(F, "qkv");
      const double d = md.head_dim();
      const double qkv_n = (heads + 2 * kv) * d;
      F.ops.push_back(GemmOperator("qkv", T, qkv_n, h, true));
      Adapter(F, "qkv", ft.targets.qkv, true, h, qkv_n);
      // The queries' and the keys' norms are two modules, two kernels
      // (q_layernorm and k_layernorm, attention.py:1107-1111, core_v0.15).
      if (md.qk_norm == QkNorm::kRms || (md.qk_norm == QkNorm::kL2 && kind.rotary)) {
        F.ops.push_back(Mem("qk norm", 2 * T * (heads + kv) * d * kAct));
        F.ops.back().kernels = 2;
      }
      if (md.position == PositionKind::kRope && kind.rotary) {
        const double rotated = T * (heads + kv) * d;
        F.ops.push_back(Eager(Mem("rotary", 2 * rotated * kAct), c_.sc.framework.eager_rotary, rotated, 2 * rotated * kAct));
      }
    }
    const double s = c_.s;
    const double keys_per_query = CausalKeysPerQuery(kind, s);
    double kernel_seq = c_.s_local;
    if (kind.attention_span > 0 && kind.attention_span < s) kernel_seq = std::min(kernel_seq, double(kind.attention_span));
    // Eager attention (FrameworkProfile::eager_attention_copies): GQA's
    // repeat_kv writes K and V at the query heads before the kernel (its
    // backward sums them back), and the output's transpose().contiguous()
    // copies it token-major after.
    const bool eager_copies = c_.sc.framework.eager_attention_copies && md.attention != AttentionKind::kMla;
    if (eager_copies && kv < heads) {
      F.ops.push_back(Move("kv repeat", T * (kv + heads) * (dq + dv) * kAct));
      F.ops.back().kernels = 2;
    }
    if (IsFused(c_.sc.training.attention)) {
      Operator a;
      a.name = "flash attention";
      a.cls = OpClass::kAttention;
      a.flops = 2.0 * c_.b * heads * c_.s_local * keys_per_query * (dq + dv);
      a.bytes = T * (heads * (dq + dv) + kv * (dq + dv)) * kAct;
      // With context parallelism the kernel runs once per ring step on the
      // local chunk's keys, so its efficiency is that of the shorter sequence.
      a.seq = kernel_seq;
      a.head_dim = (dq + dv) / 2;
      a.attention_kernel = c_.sc.training.attention;
      F.ops.push_back(a);
    } else {
      // Megatron's unfused path: full s x s scores (the causal mask does not skip work).
      const double scores = c_.b * heads * c_.s_local * s;
      F.ops.push_back(GemmOperator("attention scores QK^T", c_.s_local, s, dq, false, c_.b * heads));
      F.ops.back().activation_operands = true;
      F.ops.push_back(Mem("scale-mask-softmax", scores * 2 * kAct));
      if (c_.dropout) F.ops.push_back(Mem("attention dropout", scores * (2 * kAct + 1)));
      F.ops.push_back(GemmOperator("attention over values", c_.s_local, dv, s, false, c_.b * heads));
      F.ops.back().activation_operands = true;
    }
    if (eager_copies) F.ops.push_back(Move("attention output copy", 2 * T * heads * dv * kAct));
    F.ops.push_back(Mem("quantize (proj input)", c_.cast * T * heads * dv));
    F.ops.back().kernels = F.ops.back().cast_kernels = c_.cast_kernels;
    F.ops.push_back(GemmOperator("attention proj", T, h, heads * dv, true));
    Adapter(F, "attention proj", ft.targets.proj, false, md.heads * dv, h / c_.t);
    TpOut(F, "attention proj");
    regions_.push_back({first_gemm, "attention proj"});
    if (md.output_norms) F.ops.push_back(NormOp("attention output norm", false));
    F.ops.push_back(Mem("residual", c_.residual_bytes));
  }

  // A tensor-parallel MLP of `ffn` (the dense MLP, or the shared experts'
  // with `prefix` "shared ").
  void DenseMlp(PassWork& F, double ffn, const OpName& prefix) {
    const Finetune& ft = c_.sc.training.finetune;
    const double T = c_.T, h = c_.h;
    const bool gated = Gated(c_.md.activation);
    const OpName fc1 = prefix + "fc1", fc2 = prefix + "fc2";
    if (!prefix.empty()) {  // the shared experts' fc1 (a TE Linear) quantizes the norm's 16-bit output itself
      F.ops.push_back(Mem(prefix + "quantize (fc1 input)", c_.cast * T * h / (c_.sp ? c_.t : 1)));
      F.ops.back().kernels = F.ops.back().cast_kernels = c_.cast_kernels;
    }
    TpIn(F, fc1);
    const double ffn_local = ffn / c_.t;
    F.ops.push_back(GemmOperator(fc1, T, (gated ? 2 : 1) * ffn_local, h, true));
    Adapter(F, fc1, ft.targets.fc1, true, h, (gated ? 2 : 1) * ffn_local);
    AddActivation(F, prefix + ActivationName(), T * ffn_local, c_.cast_kernels);
    F.ops.push_back(GemmOperator(fc2, T, h, ffn_local, true));
    Adapter(F, fc2, ft.targets.fc2, false, ffn, h / c_.t);
    TpOut(F, fc2);
    regions_.push_back({fc1, fc2});
  }

  // A layer's norm over its (sequence-parallel shard of the) tokens; when it
  // feeds a projection (`quantizes`: TE's LayerNormLinear) it writes the
  // quantized input too, in the kernels a cast takes.
  Operator NormOp(const OpName& name, bool quantizes) const {
    Operator o = Mem(name, c_.norm_bytes + (quantizes ? c_.cast * c_.T * c_.h / (c_.sp ? c_.t : 1) : 0.0));
    o.kernels = quantizes ? std::max(1, c_.cast_kernels) : 1;
    o.cast_kernels = o.kernels - 1;
    return Eager(o, c_.sc.framework.eager_norm, c_.norm_bytes / (2 * kAct), c_.norm_bytes);
  }

  // An elementwise operator over `elems` as the framework runs it unfused
  // (FrameworkProfile::eager_*): its passes replace the fused kernel's
  // `fused_bytes` and kernels, forward and backward; a quantization the
  // operator carries stays.
  static Operator Eager(Operator o, const FrameworkProfile::EagerElementwise& e, double elems, double fused_bytes) {
    if (!e.Set()) return o;
    o.bytes += elems * e.forward_bytes - fused_bytes;
    o.backward_bytes = elems * e.backward_bytes;
    o.kernels = e.kernels + o.cast_kernels;
    o.backward_kernels = e.backward_kernels;
    return o;
  }

  // The activation between fc1 and fc2 over `elems` of its outputs, quantized for fc2 on the way
  // under a low-precision recipe. A gated one reads both halves and writes one; the others read
  // and write one per kernel. Megatron-Core fuses only gelu and swiglu (core_r0.10
  // transformer/mlp.py, bias_activation_fusion); squared ReLU (NeMo's and Megatron's
  // squared_relu: torch.pow(F.relu(x), 2)) runs as two kernels, each a read and a write.
  // The quantization for fc2 takes `cast_kernels` of its own.
  Operator ActivationOp(const OpName& name, double elems, int cast_kernels) const {
    const bool gated = Gated(c_.md.activation);
    const int kernels = c_.md.activation == Activation::kSquaredRelu ? 2 : 1;
    const double fused_bytes = elems * kAct * (gated ? 3 : 2 * kernels);
    Operator o = Mem(name, fused_bytes + c_.cast * elems);
    o.kernels = kernels + cast_kernels;
    o.cast_kernels = cast_kernels;
    return gated ? Eager(o, c_.sc.framework.eager_gated_activation, elems, fused_bytes) : o;
  }

  // The activation after the passes that clamp its inputs, where the model
  // clamps them (ModelSpec::activation_clamp) and the framework does so apart
  // from the activation's kernel (FrameworkProfile::activation_clamp_pass);
  // the clamp is recomputed with the activation (IsActivation).
  void AddActivation(PassWork& F, const OpName& name, double elems, int cast_kernels) const {
    const FrameworkProfile::ActivationClampPass& clamp = c_.sc.framework.activation_clamp_pass;
    const bool clamped = ClampsActivationApart(c_.sc);
    if (clamped) {
      F.ops.push_back(Mem(name + kClampSuffix, elems * clamp.forward_bytes));
      F.ops.back().backward_bytes = elems * clamp.backward_bytes;
      F.ops.back().kernels = clamp.kernels;
      F.ops.back().backward_kernels = clamp.backward_kernels;
    }
    F.ops.push_back(ActivationOp(name, elems, cast_kernels));
    F.ops.back().host_waits = clamped && clamp.host_sync;
  }
  static constexpr const char* kClampSuffix = " clamp";
  // `o` is the activation called `act` or the passes that clamp its inputs.
  static bool IsActivation(const Operator& o, const OpName& act) { return o.name == act || o.name == act + kClampSuffix; }

  OpName ActivationName() const {
    switch (c_.md.activation) {
      case Activation::kGelu: return "gelu";
      case Activation::kSwiGlu: return "swiglu";
      case Activation::kGeGlu: return "geglu";
      case Activation::kSquaredRelu: return "squared-relu";
    }
    return "activation";
  }

  // The tokens' trip to their experts (or back) over the EP group, as the
  // scenario's dispatcher sends them: `bytes` are the routed copies.
  CommOp TokenDispatch(const OpName& name, double bytes) const {
    CommOp c = Comm(name, CollectiveKind::kAllToAll, CommGroup::kExpert, bytes, false);
    c.engine = CommEngine::kMoeDispatcher;
    c.trip = TokenTrip::kDispatch;
    c.carries_tokens = true;
    if (c_.p.moe_dispatcher != MoeDispatcher::kAllToAll) {
      c.dedup_top_k = c_.md.moe.top_k;
      c.dedup_experts = c_.md.moe.experts;
    }
    return c;
  }

  // The MoE MLP as Megatron-Core runs it: the router scores the rank's
  // tokens (sequence-sharded under TP), the dispatcher brings each token to
  // the EP ranks of its experts, each rank runs its experts as grouped GEMMs
  // (split over the ETP group), and the outputs travel back and are combined.
  // `norm` is the index of the layer's pre-MLP norm, which a graph of the router takes with it.
  void MoeMlp(PassWork& F, size_t norm) {
    const MoeSpec& moe = c_.md.moe;
    const double h = c_.h, E = moe.experts;
    const double T_moe = c_.T_ln;  // tokens this GPU routes
    const FrameworkProfile& fw = c_.sc.framework;
    F.ops.push_back(GemmOperator("router", T_moe, E, h, false));
    F.ops.push_back(Mem("router softmax top-k", T_moe * E * 4 * 3));
    F.ops.back().kernels = fw.moe_router_kernels;
    Graph(F, norm, kGraphMoeRouter);
    if (c_.p.moe_dispatcher == MoeDispatcher::kAllGather) {
      AllGatherDispatch(F);
    } else {
      AllToAllDispatch(F);
    }
    if (moe.shared_experts > 0) {
      const size_t shared = F.ops.size();
      DenseMlp(F, double(moe.shared_experts) * moe.ffn_hidden, "shared ");
      Graph(F, shared, kGraphMoeRouter);  // captured with the router (Megatron-Core, without moe_shared_expert_overlap)
      // MoELayer adds the shared experts' output to the routed one, eagerly
      // after the combine; the backward sums the two branches' input
      // gradients once (one add each way).
      F.ops.push_back(Mem("moe shared-expert add", T_moe * h * kAct * 3));
      F.ops.back().backward_bytes = F.ops.back().bytes;
    }
  }

  // Megatron-Core's all-to-all dispatcher (or a flex one: DeepEP, HybridEP):
  // the tokens are permuted by expert and each routed copy is sent over the
  // EP group (the ETP group gathers them and splits each expert's MLP), and
  // the outputs come back the same way.
  void AllToAllDispatch(PassWork& F) {
    const MoeSpec& moe = c_.md.moe;
    const double h = c_.h, E = moe.experts, k = moe.top_k;
    const double ep = c_.p.expert, etp = c_.p.expert_tensor;
    const double T_moe = c_.T_ln;
    const double load = ExpertLoadFactor(c_.sc);
    // Megatron-Core's all-to-all dispatcher, not a flex one (DeepEP, HybridEP),
    // whose kernels count, carry and sort what it does in steps of its own.
    const bool alltoall = c_.p.moe_dispatcher == MoeDispatcher::kAllToAll;
    // The kernels the host issues (sim/cost/host_issue.h) are the framework's (moe_kernels).
    const FrameworkProfile& fw = c_.sc.framework;
    // The dispatcher's preprocess counts each rank's and expert's tokens from the routing map.
    const size_t preprocess = F.ops.size();
    F.ops.push_back(Mem("moe preprocess", T_moe * E));
    F.ops.back().kernels = alltoall ? fw.moe_preprocess_kernels : fw.moe_flex_preprocess_kernels;
    // The all-to-all dispatcher learns every rank's token counts per expert
    // (int64) in an all-gather before its splits reach the host
    // (MoEAlltoAllTokenDispatcher.preprocess, core_v0.15: over TP x EP, here
    // the EP group); the flex dispatchers count inside their dispatch.
    if (alltoall && c_.p.expert > 1) {
      F.comms.push_back(Comm("moe token counts all-gather", CollectiveKind::kAllGather, CommGroup::kExpert, c_.p.expert * E * 8, false));
    }
    Graph(F, preprocess, kGraphMoePreprocess);
    F.ops.push_back(Move("moe permute", T_moe * h * kAct * (1 + k)));
    F.ops.back().kernels = fw.moe_dispatch_kernels;
    // Each routed copy of a token travels to its expert's EP rank (1/ep of
    // them stay), at the busiest rank's load, in 16 bits whatever the GEMMs'
    // precision: Megatron-Core's dispatchers quantize after the dispatch
    // (fused_a2a.py, core_v0.16-v0.19: HybridEP's fp8_dispatch is fixed False,
    // "we do not support fp8 dispatch"; NVIDIA's DeepSeek-V3 GB200 guide found
    // DeepEP's fp8 dispatch's saving offset by the kernels that re-quantize).
    const double dispatch_bytes = T_moe * k * h * kAct * load;
    // An EP group of one sends nothing: its tokens' experts are all local.
    const bool across_ep = c_.p.expert > 1;
    const CommOp dispatch = TokenDispatch("moe dispatch all-to-all", dispatch_bytes);
    if (across_ep) F.comms.push_back(dispatch);
    // The all-to-all dispatcher sends each copy's routing probability (fp32)
    // in an all-to-all of its own after the tokens' (token_dispatcher.py
    // MoEAlltoAllTokenDispatcher.token_dispatch, core_v0.15: global_probs),
    // which its backward retraces; the flex dispatchers carry them inside
    // their dispatch. Small, so mostly the collective's latency.
    if (alltoall && across_ep) {
      F.comms.push_back(Comm("moe probs all-to-all", CollectiveKind::kAllToAll, CommGroup::kExpert, T_moe * k * 4 * load, false));
      F.comms.back().carries_tokens = true;
    }
    const double received = T_moe * k * load;  // token copies this rank's experts compute, before ETP
    if (etp > 1) {
      F.comms.push_back(Comm("moe etp all-gather", CollectiveKind::kAllGather, CommGroup::kExpertTensor, received * etp * h * kAct, false));
      F.comms.back().carries_tokens = true;
    }
    const double local_experts = E / ep;
    const size_t after_dispatch = F.ops.size();
    // The all-to-all delivers each source rank's tokens in a block of its own,
    // expert by expert: with more than one local expert the dispatcher sorts
    // them into one run per expert (and their probabilities, fp32), and unsorts
    // the experts' output before the combine (Megatron-Core's "permutation 2",
    // token_dispatcher.py sort_chunks_by_idxs; a dropping dispatcher's
    // transpose-copy moves the same rows). The flex dispatchers (DeepEP,
    // HybridEP) permute the received tokens once, which "moe permute" counts.
    const bool sorts = alltoall && local_experts > 1;
    const double expert_rows = received * etp;  // token copies this rank's experts compute
    if (sorts) {
      F.ops.push_back(Move("moe sort by expert", 2 * expert_rows * (h * kAct + 4)));
      F.ops.back().kernels = fw.moe_sort_kernels;
    }
    // HybridEP's dispatch writes the tokens already aligned for low-precision
    // GEMMs (core_v0.16 token_dispatcher.py passes pad_multiple to
    // hybrid_ep_dispatch); padding to a capacity fills every expert to it.
    const bool padded = !c_.sc.pads_experts_to_capacity() && c_.p.moe_dispatcher != MoeDispatcher::kHybridEp;
    RoutedExperts(F, expert_rows, padded);
    if (sorts) {
      F.ops.push_back(Move("moe unsort by expert", 2 * expert_rows * h * kAct));
      F.ops.back().kernels = fw.moe_unsort_kernels;
    }
    // Unless every expert's input is padded to a capacity, the dispatch is
    // sized on the host: it waits for the tokens' counts per expert (a
    // device-to-host sync) before it issues the all-to-all and what follows.
    if (!c_.sc.pads_experts_to_capacity()) HostWaitsAt(F, after_dispatch);
    if (etp > 1) {
      F.comms.push_back(Comm("moe etp reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kExpertTensor, received * etp * h * kAct, false));
      F.comms.back().carries_tokens = true;
    }
    CommOp combine = dispatch;
    combine.name = "moe combine all-to-all";
    combine.trip = TokenTrip::kCombine;
    if (across_ep) F.comms.push_back(combine);
    F.ops.push_back(Unpermute(T_moe * h * kAct, T_moe * k * h * kAct, fw.moe_probs_on_fc2_input));
    F.ops.back().kernels = fw.moe_combine_kernels;
  }

  // Megatron-Core's allgather dispatcher (token_dispatcher.py
  // MoEAllGatherTokenDispatcher, core_v0.15): every rank of the ETP x EP group
  // gathers all of the group's tokens with their routing map and
  // probabilities, keeps the rows routed to its local experts (a permute; the
  // token counts go to the host first), and after the experts scatters their
  // outputs back into the gathered shape, reduce-scattered over the same
  // group in fp32. The group's collectives are taken as an EP stage and an
  // ETP stage (ETP innermost in the rank layout): the same bytes per rank as
  // one collective over both.
  void AllGatherDispatch(PassWork& F) {
    const MoeSpec& moe = c_.md.moe;
    const double h = c_.h, E = moe.experts, k = moe.top_k;
    const double ep = c_.p.expert, etp = c_.p.expert_tensor;
    const double T_moe = c_.T_ln;
    const double gathered = T_moe * ep * etp;  // the group's tokens, on every rank
    const FrameworkProfile& fw = c_.sc.framework;
    // Each gathered as an EP stage (to T x EP rows) and an ETP stage (to all of
    // them); the routing map (bool) under no_grad, the probabilities (fp32)
    // and the tokens with their gradients' reduce-scatter in the backward.
    auto gather = [&](const OpName& name, double bytes_per_token, bool tokens) {
      if (ep > 1) {
        F.comms.push_back(Comm(name + " all-gather", CollectiveKind::kAllGather, CommGroup::kExpert, T_moe * ep * bytes_per_token, false));
        F.comms.back().carries_tokens = tokens;
      }
      if (etp > 1) {
        F.comms.push_back(Comm(name + " etp all-gather", CollectiveKind::kAllGather, CommGroup::kExpertTensor, gathered * bytes_per_token, false));
        F.comms.back().carries_tokens = tokens;
      }
    };
    gather("moe routing map", E, false);
    gather("moe probs", E * 4, true);
    gather("moe dispatch", h * kAct, true);
    const double expert_rows = T_moe * k * ExpertLoadFactor(c_.sc) * etp;  // the gathered copies routed to this rank's experts
    const size_t after_gather = F.ops.size();
    F.ops.push_back(Mem("moe local map", gathered * E * (2 * 1 + 2 * 4)));
    F.ops.back().kernels = fw.moe_allgather_local_map_kernels;
    // The permute reads the routed rows out of the gathered tokens (grouped
    // by expert as it writes them: no sort).
    F.ops.push_back(Move("moe permute", 2 * expert_rows * h * kAct));
    F.ops.back().kernels = fw.moe_dispatch_kernels;
    // The token counts reach the host (.cpu()) before the permute is sized,
    // dropping or not (Scenario::pads_experts_to_capacity: never here).
    HostWaitsAt(F, after_gather + 1);
    RoutedExperts(F, expert_rows, true);
    // The unpermute writes every gathered token (zero where none of its
    // experts is local), cast to fp32 for the reduce-scatter and back after it.
    F.ops.push_back(Unpermute(gathered * h * kAct, expert_rows * h * kAct, fw.moe_probs_on_fc2_input));
    F.ops.back().kernels = fw.moe_combine_kernels;
    F.ops.push_back(Mem("moe combine fp32 casts", gathered * h * (kAct + 4) + T_moe * h * (4 + kAct)));
    F.ops.back().kernels = fw.moe_allgather_combine_cast_kernels;
    if (etp > 1) {
      F.comms.push_back(Comm("moe combine etp reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kExpertTensor, gathered * h * 4, false));
      F.comms.back().carries_tokens = true;
    }
    if (ep > 1) {
      F.comms.push_back(Comm("moe combine reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kExpert, T_moe * ep * h * 4, false));
      F.comms.back().carries_tokens = true;
    }
  }

  // The routed experts of this rank on `expert_rows` token copies: Transformer
  // Engine's GroupedLinear runs (and quantizes for) each local expert on its
  // own, a kernel per expert.
  void RoutedExperts(PassWork& F, double expert_rows, bool pads_low_precision) {
    const ModelSpec& md = c_.md;
    const MoeSpec& moe = md.moe;
    const double h = c_.h;
    const double local_experts = c_.sc.routed_experts_per_gpu();
    const double tokens_per_expert = expert_rows / local_experts;
    const double ffn_local = moe.ffn_hidden / double(c_.p.expert_tensor);
    const bool gated = Gated(md.activation);
    const FrameworkProfile& fw = c_.sc.framework;
    const int per_expert = std::max(1, int(local_experts));
    // Low-precision GEMMs take each expert's rows in multiples of 16 (32 for
    // the block formats): a router's counts are not, so Megatron-Core's
    // TEGroupedMLP copies the tokens (and their probabilities) into padded
    // buffers and the output back out (TE Fp8Padding / Fp8Unpadding; core_v0.15
    // experts.py, unless moe_router_padding_for_fp8, which the recipes leave
    // off), unless the dispatcher delivered them aligned.
    const bool padded = IsLowPrecision(c_.prec) && pads_low_precision;
    const double expert_rows_bytes = expert_rows * h * kAct;
    if (padded) {
      F.ops.push_back(Move("moe fp8 padding", 2 * expert_rows_bytes));
      F.ops.back().kernels = 2;
    }
    const int expert_casts = GroupedCastKernels(c_.prec, c_.scaling, per_expert);
    F.ops.push_back(Mem("quantize (expert input)", c_.cast * expert_rows * h));
    F.ops.back().kernels = F.ops.back().cast_kernels = expert_casts;
    const Finetune& ft = c_.sc.training.finetune;
    F.ops.push_back(GemmOperator("expert fc1", tokens_per_expert, (gated ? 2 : 1) * ffn_local, h, true, local_experts));
    F.ops.back().kernels = per_expert;
    F.ops.back().batch_streams = fw.grouped_gemm_streams;
    ExpertAdapter(F, "expert fc1", ft.targets.fc1, expert_rows, h, (gated ? 2 : 1) * ffn_local);
    AddActivation(F, OpName("expert ") + ActivationName(), expert_rows * ffn_local, expert_casts);
    F.ops.push_back(GemmOperator("expert fc2", tokens_per_expert, h, ffn_local, true, local_experts));
    F.ops.back().kernels = per_expert;
    F.ops.back().batch_streams = fw.grouped_gemm_streams;
    ExpertAdapter(F, "expert fc2", ft.targets.fc2, expert_rows, ffn_local, h);
    if (padded) F.ops.push_back(Move("moe fp8 unpadding", 2 * expert_rows_bytes));
    // fc2's bias, scaled by each copy's routing probability, where the
    // framework adds it outside the GEMM (FrameworkProfile::moe_expert_bias_*).
    if (moe.expert_bias.value_or(false) && fw.moe_expert_bias_forward_bytes > 0) {
      const double elems = expert_rows * h;
      F.ops.push_back(Mem("expert fc2 bias", elems * fw.moe_expert_bias_forward_bytes));
      F.ops.back().backward_bytes = elems * fw.moe_expert_bias_backward_bytes;
      F.ops.back().kernels = per_expert * fw.moe_expert_bias_kernels;
    }
  }

  // LoRA beside a routed expert's projection: one adapter pair per local
  // expert (Megatron-Bridge's GroupedExpertLinearAdapter, HF PEFT's per-expert
  // adapters), A (in -> rank) and B (rank -> out) in 16-bit, each a grouped
  // GEMM over the local experts' rows (torch grouped_mm: one kernel). Expert
  // tensor parallelism is refused with them (CheckParallelism).
  void ExpertAdapter(PassWork& F, const OpName& gemm, bool target, double expert_rows, double in, double out) {
    if (!c_.lora || !target) return;
    const double r = c_.sc.training.finetune.rank, local_experts = c_.sc.routed_experts_per_gpu();
    if (c_.sc.training.finetune.dropout > 0) F.ops.push_back(Mem(gemm + " lora dropout", expert_rows * in * (2 * kAct + 1)));
    F.ops.push_back(GemmOperator(gemm + " lora A", expert_rows / local_experts, r, in, false, local_experts));
    F.ops.push_back(GemmOperator(gemm + " lora B", expert_rows / local_experts, out, r, false, local_experts));
  }

  // The host waits for the GPU (a device-to-host copy of the token counts)
  // before it issues the first operator from `begin` on that does work (an
  // operator without work is dropped).
  static void HostWaitsAt(PassWork& F, size_t begin) {
    for (size_t i = begin; i < F.ops.size(); ++i) {
      if (F.ops[i].flops > 0 || F.ops[i].bytes > 0) {
        F.ops[i].host_waits = true;
        break;
      }
    }
  }

  // Marks the operators from `begin` on as launched in a CUDA graph when the
  // framework captures `module`.
  void Graph(PassWork& F, size_t begin, CudaGraphModule module) const {
    if (!(c_.sc.framework.cuda_graph_modules & module)) return;
    for (size_t i = begin; i < F.ops.size(); ++i) F.ops[i].graphed = true;
  }

  // Backward: GEMMs twice, attention by its backward kernel, memory-bound ops
  // ~2x traffic; each TP region's collectives mirrored; the MoE all-to-alls
  // and ETP collectives again (the gradients retrace the tokens' path).
  void Backward(const PassWork& F, PassWork& B) const {
    const bool lora = c_.lora;
    for (const auto& o : F.ops) {
      const size_t first = B.ops.size();
      if (o.cls == OpClass::kGemm) {
        // Low precision: the output gradient is quantized in both layouts (dgrad and wgrad reduce over different axes).
        if (IsLowPrecision(c_.prec) && o.low_precision) {
          B.ops.push_back(Mem(o.name + " grad cast-transpose", o.m * o.n * o.batch * BackwardCastBytesPerElement(c_.prec, c_.scaling, o.n)));
          B.ops.back().kernels = o.batch > 1 ? GroupedCastKernels(c_.prec, c_.scaling, int(o.batch)) : c_.cast_kernels;
        }
        if (c_.weight_transpose_per_micro_batch && o.low_precision) {
          B.ops.push_back(Mem(o.name + " weight transpose", 2 * o.n * o.k * o.batch));
        }
        // Under LoRA every base projection is frozen (low_precision marks them; the adapters run in 16-bit).
        AddGemmBackward(B.ops, o, c_.sc.framework, lora && o.low_precision);
      } else if (o.cls == OpClass::kAttention) {
        Operator a = o;
        a.name = "flash attention backward";
        a.flops = 2.5 * o.flops;  // five matmuls against the forward's two
        a.bytes = 2 * o.bytes;
        B.ops.push_back(a);
      } else {
        B.ops.push_back(Mem(o.name + " backward", o.backward_bytes >= 0 ? o.backward_bytes : 2 * o.bytes));
        B.ops.back().kernels = o.backward_kernels > 0 ? o.backward_kernels : std::max(1, o.kernels - o.cast_kernels);
      }
      // A captured module's backward replays as a graph too (TE's make_graphed_callables captures both).
      for (size_t i = first; i < B.ops.size(); ++i) B.ops[i].graphed = o.graphed;
    }
    if (c_.tp) {
      const Parallelism& p = c_.p;
      const CommEngine ub_bulk = p.tp_comm_overlap ? CommEngine::kUserbufferBulk : CommEngine::kNccl;
      const bool async_input_grad = p.tp_comm_overlap || c_.sc.framework.async_input_grad_comm;
      for (const TpRegion& r : regions_) {
        const OpName& where = r.column_gemm;
        if (c_.sp) {
          // Megatron re-gathers the input for the weight gradient while the data gradient runs
          // (Megatron's async NCCL all-gather without TE userbuffers; userbuffers' bulk overlap with
          // them); a frozen weight has no weight gradient to gather it for.
          if (!lora) {
            B.comms.push_back(Comm(where + " input re-gather", CollectiveKind::kAllGather, CommGroup::kTensor, c_.tp_gather_bytes, true, where + " dgrad", ub_bulk));
          }
          if (DgradScatterPipelined(where)) {
            B.comms.push_back(Comm(where + " dgrad reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kTensor, c_.tp_bytes, true,
                                   where + " dgrad", CommEngine::kCopyEngine));
          } else {
            // Beside the weight-gradient GEMM (userbuffers' bulk, else NCCL's async); a frozen weight's
            // is absent, and with it what hides this.
            B.comms.push_back(Comm(where + " dgrad reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kTensor, c_.tp_bytes, async_input_grad,
                                   where + " wgrad", ub_bulk));
          }
        } else {
          B.comms.push_back(Comm(where + " dgrad all-reduce", CollectiveKind::kAllReduce, CommGroup::kTensor, c_.tp_bytes, async_input_grad,
                                 where + " wgrad", ub_bulk));
        }
      }
      if (c_.sp) {
        for (const TpRegion& r : regions_) {
          AmaxReduce(B, r.row_gemm + " output grad");
          B.comms.push_back(Comm(r.row_gemm + " grad all-gather", CollectiveKind::kAllGather, CommGroup::kTensor, c_.tp_gather_bytes, p.tp_comm_overlap,
                                 r.row_gemm + " dgrad", CommEngine::kCopyEngine));
        }
      }
    }
    // What carries tokens comes back as their gradients (CommOp::carries_tokens):
    // the dispatch and combine, the probabilities, the ETP collectives.
    for (auto it = F.comms.rbegin(); it != F.comms.rend(); ++it) {
      if (!it->carries_tokens) continue;
      CommOp back = *it;
      back.name += " backward";
      // The reverse of a gather is a reduce-scatter and vice versa.
      if (back.kind == CollectiveKind::kAllGather) back.kind = CollectiveKind::kReduceScatter;
      else if (back.kind == CollectiveKind::kReduceScatter) back.kind = CollectiveKind::kAllGather;
      // The dispatch's gradient goes back the way the combine went, and vice versa.
      if (back.trip == TokenTrip::kDispatch) back.trip = TokenTrip::kCombine;
      else if (back.trip == TokenTrip::kCombine) back.trip = TokenTrip::kDispatch;
      B.comms.push_back(back);
    }
    if (c_.p.context > 1) {
      B.comms.push_back(Comm("cp kv+grad ring", CollectiveKind::kSendRecv, CommGroup::kContext, 2 * cp_bytes_, true,
                             IsFused(c_.sc.training.attention) ? OpName("flash attention backward") : OpName()));
    }
  }

  // Transformer Engine's ring attention (AttnFuncWithCPAndKVP2P) runs one kernel per ring step and
  // merges the partial outputs: per step a softmax-correction pass reads the step's output and
  // reads and writes the result (16-bit); the rank with the most full-length steps does all cp of
  // them on all its tokens. Its backward adds each step's dQ and dK/dV into the accumulated ones,
  // and the last step's dK/dV return to their owner after the last kernel, with nothing to hide behind.
  // (After the backward is derived: these have no mirror.)
  void ContextParallelOverheads(PassWork& F, PassWork& B) const {
    if (c_.p.context <= 1 || !IsFused(c_.sc.training.attention)) return;
    const double q_elems = c_.T * HeadsLocal() * QHeadDim(), kv_elems = c_.T * 2 * KvWidthLocal();
    F.ops.push_back(Mem("cp output correction", c_.cp * q_elems * 3 * kAct));
    B.ops.push_back(Mem("cp gradient accumulation", c_.cp * (q_elems + kv_elems) * 3 * kAct));
    B.comms.push_back(Comm("cp dkv return", CollectiveKind::kSendRecv, CommGroup::kContext, kv_elems * kAct, false));
  }

  // Recompute: full re-runs the layer forward; selective re-runs the modules
  // of training.recompute_modules (the attention core by default), with the
  // collectives of the operators it re-runs (a recomputed MoE block sends its
  // tokens again; a recomputed attention core under CP its K/V ring).
  void AddRecompute(const PassWork& F, const LayerKind& kind, PassWork& R) const {
    const Recompute mode = c_.sc.training.recompute;
    if (mode == Recompute::kFull) {
      R = F;
      return;
    }
    if (mode != Recompute::kSelective) return;
    if (c_.sc.framework.selective_recompute_torchtitan_op) {
      TorchtitanOpRecompute(F, kind, R);
      return;
    }
    const unsigned mods = c_.sc.training.recompute_modules;
    const bool mla = c_.md.attention == AttentionKind::kMla;
    const OpName act = ActivationName();
    // The planner builds thousands of layers: the default list needs only the core test.
    const bool core_only = mods == kRecomputeCoreAttention;
    auto recomputed = [&](const Operator& o) {
      const bool core = o.cls == OpClass::kAttention || o.name.starts_with("attention scores") || o.name == "scale-mask-softmax" ||
                        o.name == "attention dropout" || o.name == "attention over values";
      if (core) return (mods & kRecomputeCoreAttention) != 0;
      if (core_only) return false;
      if (o.name == "input norm" || o.name == "post-attention norm") return (mods & kRecomputeLayerNorm) != 0;
      if (mla && (o.name == "q up" || o.name == "kv up" || o.name == "rotary")) return (mods & kRecomputeMlaUpProj) != 0;
      if (o.name.starts_with("shared ")) return (mods & kRecomputeSharedExperts) != 0;
      if (!kind.moe && (o.name == "fc1" || o.name == "fc2" || IsActivation(o, act) || o.name.starts_with("fc1 lora") || o.name.starts_with("fc2 lora"))) {
        return (mods & kRecomputeMlp) != 0;
      }
      if (kind.moe && IsActivation(o, OpName("expert ") + act)) return (mods & (kRecomputeMoeAct | kRecomputeMoe)) != 0;
      if (kind.moe && (o.name.starts_with("expert ") || o.name.starts_with("router") || o.name.starts_with("moe ") ||
                       o.name == "quantize (expert input)")) {
        return (mods & kRecomputeMoe) != 0;
      }
      return false;
    };
    for (const auto& o : F.ops) {
      if (recomputed(o)) R.ops.push_back(o);
    }
    for (const auto& c : F.comms) {
      const bool expert = c.group == CommGroup::kExpert || c.group == CommGroup::kExpertTensor;
      const bool again = expert ? (mods & kRecomputeMoe) != 0
                                : !c.overlaps_op.empty() &&
                                      std::any_of(R.ops.begin(), R.ops.end(), [&](const Operator& o) { return o.name == c.overlaps_op; });
      if (again) R.comms.push_back(c);
    }
  }

  // torchtitan's "op" policy (FrameworkProfile::selective_recompute_torchtitan_op):
  // every memory-bound operator again, and of the matmuls every second one in
  // the block's order (q, k, v, o, w1, w3, w2): the keys' projection (part of
  // trainsim's fused qkv), the output projection and w3 (half of a gated fc1;
  // fc2 of an ungated MLP, the sixth).
  // The attention kernel and the collectives' outputs are kept. Routed experts
  // run grouped matmuls, which the policy does not count: kept too.
  void TorchtitanOpRecompute(const PassWork& F, const LayerKind& kind, PassWork& R) const {
    for (const auto& o : F.ops) {
      if (o.cls == OpClass::kMemoryBound) {
        R.ops.push_back(o);
      } else if (o.cls == OpClass::kGemm && o.name == "qkv") {
        R.ops.push_back(GemmOperator("qkv keys", o.m, KvHeadsLocal() * QHeadDim(), o.k, o.low_precision));
      } else if (o.cls == OpClass::kGemm && o.name == "attention proj") {
        R.ops.push_back(o);
      } else if (o.cls == OpClass::kGemm && !kind.moe && Gated(c_.md.activation) && o.name == "fc1") {
        R.ops.push_back(GemmOperator("fc1 w3", o.m, o.n / 2, o.k, o.low_precision));
      } else if (o.cls == OpClass::kGemm && !kind.moe && !Gated(c_.md.activation) && o.name == "fc2") {
        R.ops.push_back(o);  // q, k, v, o, fc1, fc2: the sixth
      }
    }
  }

  // What one GPU holds of the layer: attention, dense MLP, shared experts
  // and norms split over TP (the dense count divided as a whole, as before
  // MoE); routed experts over EP x ETP; the router replicated.
  void Parameters(LayerWork& lw) const {
    const ModelSpec& md = c_.md;
    if (!lw.kind.moe) {
      lw.params_per_gpu = md.LayerParameters(lw.kind) / c_.t;
    } else {
      const double routed = md.moe.experts * md.ExpertParameters();
      const double router = double(md.hidden) * md.moe.experts;
      lw.expert_params_per_gpu = routed / (double(c_.p.expert) * c_.p.expert_tensor);
      lw.params_per_gpu = (md.LayerParameters(lw.kind) - routed - router) / c_.t + router + lw.expert_params_per_gpu;
    }
    if (!c_.lora) {
      lw.trainable_params_per_gpu = lw.params_per_gpu;
      lw.expert_trainable_params_per_gpu = lw.expert_params_per_gpu;
      return;
    }
    // The adapters: the attention's, the dense or shared MLP's split over TP; the routed experts' with their experts over EP.
    const Finetune& ft = c_.sc.training.finetune;
    const double routed_adapters = lw.kind.moe ? md.moe.experts * LoraRoutedExpertParameters(md, ft) : 0.0;
    lw.expert_trainable_params_per_gpu = routed_adapters / c_.p.expert;
    lw.trainable_params_per_gpu = (LoraLayerParameters(md, ft, lw.kind) - routed_adapters) / c_.t + lw.expert_trainable_params_per_gpu;
  }
};

}  // namespace

Workload BuildWorkload(const Scenario& sc, WorkloadParts parts) {
  const bool passes = parts == WorkloadParts::kAll;
  const ModelSpec& md = sc.model;
  const Parallelism& p = sc.parallelism;
  const Training& tr = sc.training;
  const LayerContext c(sc);
  const double t = c.t, h = c.h, s = c.s, T = c.T;
  const bool tp = c.tp, sp = c.sp, lora = c.lora;
  const double tp_bytes = c.tp_bytes;

  Workload w;
  // One LayerWork per distinct layer kind, in order of first appearance.
  LayerBuilder builder(sc);
  std::vector<LayerKind> seen;
  w.kind_of_layer.assign(size_t(md.layers), 0);
  for (int i = 0; i < (md.uniform() ? 1 : md.layers); ++i) {
    const LayerKind k = md.LayerAt(i);
    auto it = std::find(seen.begin(), seen.end(), k);
    if (it == seen.end()) {
      seen.push_back(k);
      w.kinds.push_back(passes ? builder.Build(k) : builder.Holdings(k));
      it = seen.end() - 1;
    }
    w.kind_of_layer[size_t(i)] = int(it - seen.begin());
  }
  w.cp_exchange_bytes_per_layer = builder.cp_exchange_bytes();
  w.mtp_layers = md.mtp_layers.value_or(0);
  if (c.fp8_amax_reduced) w.chunk_amax_reduce = Comm("fp8 amax all-reduce", CollectiveKind::kAllReduce, c.amax_group, 0, false);

  // First stage: embedding lookup (vocab-parallel: combine partial rows over TP).
  if (passes) {
    w.embedding_forward.ops.push_back(Mem("embedding lookup", T * h * kAct * 2));
    if (tp) {
      w.embedding_forward.comms.push_back(Comm(sp ? OpName("embedding reduce-scatter") : OpName("embedding all-reduce"),
                                               sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                                               CommGroup::kTensor, tp_bytes, false));
    }
    if (!lora) w.embedding_backward.ops.push_back(Mem("embedding grad scatter-add", T * h * (kAct + 4) * 2));  // frozen under LoRA

    // Last stage: final norm, LM head (kept in 16-bit), vocab-parallel cross entropy.
    const double v_local = double(md.vocab) / t;
    w.head_forward.ops.reserve(3);
    w.head_backward.ops.reserve(3);
    w.head_forward.ops.push_back(Mem("final norm", c.norm_bytes));
    if (tp && sp) w.head_forward.comms.push_back(Comm("lm head all-gather", CollectiveKind::kAllGather, CommGroup::kTensor, tp_bytes, false));
    Operator head = GemmOperator("lm head", T, v_local, h, false);
    w.head_forward.ops.push_back(head);
    w.head_forward.ops.push_back(Mem("cross entropy", T * v_local * sc.framework.cross_entropy_forward_bytes));
    AddGemmBackward(w.head_backward.ops, head, sc.framework, lora);
    w.head_backward.ops.push_back(Mem("cross entropy backward", T * v_local * sc.framework.cross_entropy_backward_bytes));
    if (tp) {
      w.head_backward.comms.push_back(Comm(sp ? OpName("lm head dgrad reduce-scatter") : OpName("lm head dgrad all-reduce"),
                                           sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                                           CommGroup::kTensor, tp_bytes, false));
    }
  }

  // Pipeline: one micro batch's activations. Each TP rank sends 1/t of them
  // (sequence-sharded with SP; without SP Megatron's scatter/gather
  // optimisation splits the replicated tensor and re-gathers it over NVLink).
  w.pipeline_p2p = Comm("pipeline send/recv", CollectiveKind::kSendRecv, CommGroup::kPipeline, c.b * c.s_local * h * kAct / t,
                        p.p2p_overlapped());

  // Parameters per GPU of each pipeline rank: its layers, the embedding on
  // the first rank and the LM head (and MTP modules) on the last (one copy
  // when tied and the model has one stage), and what data parallelism moves
  // for them.
  w.stages = sc.stage_plan();
  {
    const int stages = w.stages.pipeline() * w.stages.virtual_stages();
    w.vs_kind_counts.assign(size_t(stages) * w.kinds.size(), 0);
    int layer = 0;
    for (int vs = 0; vs < stages; ++vs) {
      if (w.kinds.size() == 1) {  // one kind (most models): all of the stage's layers
        w.vs_kind_counts[size_t(vs)] = w.stages.VirtualStageLayers(vs);
        continue;
      }
      for (int n = 0; n < w.stages.VirtualStageLayers(vs); ++n) w.vs_kind_counts[size_t(vs) * w.kinds.size() + size_t(w.kind_of_layer[size_t(layer++)])]++;
    }
    // Block recompute (recompute_layers N): each virtual stage's first N
    // layers, in the order the stages take them.
    const int block = sc.training.recompute == Recompute::kFull ? sc.training.recompute_layers : 0;
    if (block == 0) {
      w.vs_recompute_counts = w.vs_kind_counts;
    } else {
      w.vs_recompute_counts.assign(w.vs_kind_counts.size(), 0);
      int first = 0;
      for (int vs = 0; vs < stages; ++vs) {
        const int n = w.stages.VirtualStageLayers(vs);
        for (int i = 0; i < std::min(n, block); ++i) {
          const size_t kind = w.kinds.size() == 1 ? 0 : size_t(w.kind_of_layer[size_t(first + i)]);
          w.vs_recompute_counts[size_t(vs) * w.kinds.size() + kind]++;
        }
        first += n;
      }
    }
  }
  const double emb = double(md.vocab) * h / t + (md.position == PositionKind::kLearned ? s * h / t : 0);
  const double head_params = double(md.vocab) * h / t;
  w.embedding_params_per_gpu = emb;
  w.head_params_per_gpu = p.pipeline == 1 && md.tied_embeddings ? 0.0 : head_params;
  // Each multi-token-prediction module is a layer of the last layer's kind, split
  // as that layer is (routed experts over EP x ETP), plus its 2h -> h projection
  // and norms, split over TP.
  const LayerWork& mtp_layer = w.layer(md.layers - 1);
  const int mtp = std::max(0, md.mtp_layers.value_or(0));
  const double mtp_expert_params = mtp * mtp_layer.expert_params_per_gpu;
  const double mtp_params =
      mtp == 0 ? 0.0 : mtp * mtp_layer.params_per_gpu + (md.MtpParameters() - mtp * md.LayerParameters(md.layers - 1)) / t;
  for (const LayerWork& k : w.kinds) {
    if (k.params_per_gpu > w.layer_params_per_gpu) w.layer_expert_params_per_gpu = k.expert_params_per_gpu;
    if (k.trainable_params_per_gpu > w.layer_trainable_params_per_gpu) w.layer_expert_trainable_params_per_gpu = k.expert_trainable_params_per_gpu;
    w.layer_params_per_gpu = std::max(w.layer_params_per_gpu, k.params_per_gpu);
    w.layer_trainable_params_per_gpu = std::max(w.layer_trainable_params_per_gpu, k.trainable_params_per_gpu);
  }
  const int P = p.pipeline;
  const DataSharding mode = p.data_sharding;
  const double G = p.shard_group();
  const bool replicated_shards = mode != DataSharding::kNone && p.shard_replicas() > 1;
  const double G_expert = p.expert_shard_group();
  w.rank_state.assign(size_t(P), {});
  for (int r = 0; r < P; ++r) {
    RankState& rs = w.rank_state[size_t(r)];
    double layer_params = 0, layer_trainable = 0, experts = 0, expert_trainable = 0, first_chunk = 0;
    for (int chunk = 0; chunk < w.stages.virtual_stages(); ++chunk) {
      const int vs = chunk * P + r;
      const std::span<const int> counts = w.KindCounts(vs);
      for (size_t k = 0; k < counts.size(); ++k) {
        layer_params += counts[k] * w.kinds[k].params_per_gpu;
        layer_trainable += counts[k] * w.kinds[k].trainable_params_per_gpu;
        experts += counts[k] * w.kinds[k].expert_params_per_gpu;
        expert_trainable += counts[k] * w.kinds[k].expert_trainable_params_per_gpu;
      }
      if (chunk == 0) first_chunk = layer_params + (r == 0 ? emb : 0.0);
    }
    if (r == P - 1) {
      experts += mtp_expert_params;
      layer_trainable += mtp * mtp_layer.trainable_params_per_gpu;  // LoRA's adapters on the MTP modules' layers
      expert_trainable += mtp * mtp_layer.expert_trainable_params_per_gpu;
    }
    rs.params_per_gpu = layer_params;
    rs.trainable_params_per_gpu = layer_trainable;
    rs.expert_params_per_gpu = experts;
    rs.expert_trainable_params_per_gpu = expert_trainable;
    if (r == 0) rs.params_per_gpu += emb;
    if (r == P - 1 && !(P == 1 && md.tied_embeddings)) rs.params_per_gpu += head_params;
    if (r == P - 1) rs.params_per_gpu += mtp_params;
    rs.first_chunk_fraction = w.stages.virtual_stages() == 1 || rs.params_per_gpu <= 0 ? 1.0 : first_chunk / rs.params_per_gpu;
    if (!lora) rs.trainable_params_per_gpu = rs.params_per_gpu;
    const double dense_trainable = rs.trainable_params_per_gpu - expert_trainable;
    if (r == 0 && dense_trainable > 0 && p.overlap_grad_reduce &&
        (mode == DataSharding::kNone || mode == DataSharding::kOptimizer)) {
      rs.last_bucket_fraction = LastBucketParams(w, sc, lora ? 0.0 : emb, lora ? 0.0 : head_params + mtp_params - mtp_expert_params) / dense_trainable;
    }
    const double grads = dense_trainable * p.grad_reduce_bytes;
    switch (mode) {
      case DataSharding::kNone:
        rs.grad_reduce_bytes = grads;
        break;
      case DataSharding::kOptimizer:
        rs.grad_reduce_bytes = grads;
        rs.grad_reduce_kind = CollectiveKind::kReduceScatter;
        rs.grad_reduce_group = CommGroup::kShard;
        rs.param_gather_bytes = dense_trainable * kAct;
        break;
      case DataSharding::kGradients:
        rs.param_gather_bytes = dense_trainable * kAct;
        break;
      case DataSharding::kFull:
        break;
    }
    // The routed experts' gradients: reduced once per step over expert-DP
    // (all-reduce, or the distributed optimizer's reduce-scatter and gather),
    // or per micro batch in the layers' backward under ZeRO-2 and FSDP,
    // whose step gathers ZeRO-2's updated shards alone.
    if (expert_trainable > 0 && p.expert_data() > 1) {
      if (mode == DataSharding::kNone || mode == DataSharding::kOptimizer) rs.expert_grad_reduce_bytes = expert_trainable * p.grad_reduce_bytes;
      if (mode == DataSharding::kOptimizer || mode == DataSharding::kGradients) rs.expert_param_gather_bytes = expert_trainable * kAct;
    }
    if (replicated_shards) {
      rs.grad_replica_reduce_bytes = grads / G;
      if (mode == DataSharding::kGradients || mode == DataSharding::kFull) rs.grad_replica_reduce_bytes += expert_trainable * p.grad_reduce_bytes / G_expert;
    }
    // Adam: read the fp32 gradient (4), read and write its state (master and
    // two moments: 2 x 12 B in fp32, FrameworkProfile::optimizer_state_bytes),
    // write the 16-bit parameter (2); plus the grad-norm read and zeroing the
    // main-grad buffer over the full local shard (ZeRO-2 and FSDP keep only
    // their shard of the gradients). The experts' state is sharded over expert-DP.
    const bool grads_sharded = mode == DataSharding::kGradients || mode == DataSharding::kFull;
    const double shard = mode == DataSharding::kNone ? dense_trainable : dense_trainable / G;
    const double grad_buffer = grads_sharded ? shard : dense_trainable;
    const double expert_grad_buffer = grads_sharded ? expert_trainable / G_expert : expert_trainable;
    const double per_param = 4.0 + 2 * sc.framework.optimizer_state_bytes + kAct;
    rs.optimizer_bytes = shard * per_param + grad_buffer * (4.0 + 4.0) + expert_trainable / G_expert * per_param + expert_grad_buffer * 8.0;
  }

  // ZeRO-2 and FSDP, per micro batch: each layer's gradients are
  // reduce-scattered in the shard group as its backward finishes (DeepSpeed
  // stage 2's reduce per backward, FSDP2's default), hidden behind the
  // backward of the layers after it; FSDP gathers each layer's parameters
  // before its forward and again before its backward, the next layer's gather
  // prefetched behind the current layer's compute (FSDP2's implicit
  // prefetch; torchtitan wraps each transformer block). Added after the
  // recompute pass was copied: the backward's gather serves the recompute.
  // A layer's routed experts are sharded over the ranks holding the same
  // experts (CommGroup::kExpertShard: torchtitan's FSDP of the experts over
  // its expert-DP mesh, Megatron FSDP's expert data-parallel group), the
  // rest of it over the shard group: two collectives each way, in their groups.
  const bool reduce_per_microbatch = mode == DataSharding::kGradients || mode == DataSharding::kFull;
  if (passes && reduce_per_microbatch && (G > 1 || G_expert > 1)) {
    // A unit's weights as held (BaseWeightBytes), and a LoRA layer's 16-bit adapters beside them.
    const auto unit_gather_bytes = [&](double params, double trainable) {
      return params * BaseWeightBytes(sc) + (lora ? trainable * kAct : 0.0);
    };
    // The collectives of one unit with `params` of which `experts` are routed
    // experts', and `trainable` of which `expert_trainable` (theirs, or their LoRA adapters).
    const auto unit_comms = [&](double params, double trainable, double experts, double expert_trainable) {
      ShardUnitComms u;
      if (G > 1) {
        u.reduce = Comm("shard gradient reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kShard,
                        (trainable - expert_trainable) * p.grad_reduce_bytes, true);
        if (mode == DataSharding::kFull) {
          u.gather = Comm("shard parameter all-gather", CollectiveKind::kAllGather, CommGroup::kShard,
                          unit_gather_bytes(params - experts, trainable - expert_trainable), true);
        }
      }
      if (G_expert > 1 && experts > 0) {
        u.expert_reduce = Comm("expert shard gradient reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kExpertShard,
                               expert_trainable * p.grad_reduce_bytes, true);
        if (mode == DataSharding::kFull) {
          u.expert_gather = Comm("expert shard parameter all-gather", CollectiveKind::kAllGather, CommGroup::kExpertShard,
                                 unit_gather_bytes(experts, expert_trainable), true);
        }
      }
      return u;
    };
    for (LayerWork& k : w.kinds) {
      const ShardUnitComms u = unit_comms(k.params_per_gpu, k.trainable_params_per_gpu, k.expert_params_per_gpu, k.expert_trainable_params_per_gpu);
      for (const CommOp* c : {&u.reduce, &u.expert_reduce, &u.gather, &u.expert_gather}) {
        if (c->bytes <= 0) continue;
        if (c->kind == CollectiveKind::kAllGather) k.forward.comms.push_back(*c);
        k.backward.comms.push_back(*c);
      }
    }
    w.shard_unit = unit_comms(w.layer_params_per_gpu, w.layer_trainable_params_per_gpu, w.layer_expert_params_per_gpu,
                              w.layer_expert_trainable_params_per_gpu);
  }
  if (passes && reduce_per_microbatch && G > 1) {
    if (!lora) {
      w.embedding_backward.comms.push_back(Comm("shard embedding gradient reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kShard,
                                                emb * p.grad_reduce_bytes, true));
      w.head_backward.comms.push_back(Comm("shard lm head gradient reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kShard,
                                           head_params * p.grad_reduce_bytes, true));
    }
    if (mode == DataSharding::kFull) {
      // A frozen embedding (LoRA) has no backward: nothing unshards it there
      // (FSDP2's pre-backward hook hangs on outputs that need a gradient).
      for (auto [pass, bytes] : {std::pair{&w.embedding_forward, emb}, std::pair{&w.embedding_backward, lora ? 0.0 : emb},
                                 std::pair{&w.head_forward, head_params}, std::pair{&w.head_backward, head_params}}) {
        if (bytes > 0) pass->comms.push_back(Comm("shard parameter all-gather", CollectiveKind::kAllGather, CommGroup::kShard, bytes * kAct, true));
      }
    }
  }

  if (passes) {
    const bool whole_step_graphed = sc.framework.cuda_graph_modules & kGraphFullIteration;  // the step replays as one graph
    const auto finish = [whole_step_graphed](PassWork& pass) {
      ResolvePartners(pass);
      if (whole_step_graphed) {
        for (Operator& o : pass.ops) o.graphed = true;
      }
    };
    for (LayerWork& k : w.kinds) {
      for (PassWork* pass : {&k.forward, &k.backward, &k.recompute}) finish(*pass);
    }
    for (PassWork* pass : {&w.embedding_forward, &w.embedding_backward, &w.head_forward, &w.head_backward}) finish(*pass);
  }
  w.model_flops_per_step = ModelFlopsPerStep(md, tr);
  return w;
}

}  // namespace trainsim
