#include "models/workload.h"

#include <algorithm>

namespace trainsim {

const RankState& Workload::LargestRank() const {
  return *std::max_element(rank_state.begin(), rank_state.end(),
                           [](const RankState& a, const RankState& b) { return a.params_per_gpu < b.params_per_gpu; });
}

double PassWork::TotalFlops() const {
  double f = 0;
  for (const auto& o : ops) f += o.flops;
  return f;
}

double MegatronModelFlops(const ModelSpec& m, long global_batch, long seq_len) {
  const double h = m.hidden, L = m.layers, s = double(seq_len);
  const double gated = m.activation == Activation::kSwiGlu ? 1.5 : 1.0;
  const double ffn_ratio = double(m.ffn_hidden) / h;
  // For SwiGLU Megatron counts three matrices via the 3/2 multiplier on 2*ffn.
  return 12.0 * global_batch * s * L * h * h *
         ((1.0 + double(m.kv_heads) / m.heads + s / h) + ffn_ratio * gated + double(m.vocab) / (2.0 * L * h));
}

double LoraLayerParameters(const ModelSpec& m, const Finetune& f) {
  if (!f.lora()) return 0;
  const double h = m.hidden, kv = double(m.kv_dim()), ff = m.ffn_hidden, r = f.rank;
  const double fc1_out = (m.activation == Activation::kSwiGlu ? 2 : 1) * ff;
  double p = 0;
  if (f.qkv) p += r * (h + h + 2 * kv);
  if (f.proj) p += r * (h + h);
  if (f.fc1) p += r * (h + fc1_out);
  if (f.fc2) p += r * (ff + h);
  return p;
}

double ModelFlopsPerStep(const ModelSpec& m, const Training& t) {
  const double full = MegatronModelFlops(m, t.global_batch, t.seq_len);
  if (!t.finetune.lora()) return full;
  // Megatron's attention-core term (12 B s^2 L h) keeps its backward; the
  // weight terms lose their weight gradient (a third).
  const double tokens = double(t.global_batch) * t.seq_len;
  const double core = 12.0 * tokens * t.seq_len * m.layers * m.hidden;
  return full - (full - core) / 3 + 6.0 * tokens * m.layers * LoraLayerParameters(m, t.finetune);
}

namespace {

constexpr double kAct = 2.0;  // bytes per activation element (bf16/fp16)

Operator Gemm(std::string name, double m, double n, double k, bool low_precision, double batch = 1) {
  Operator o;
  o.name = std::move(name);
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

Operator Mem(std::string name, double bytes) {
  Operator o;
  o.name = std::move(name);
  o.cls = OpClass::kMemoryBound;
  o.bytes = bytes;
  return o;
}

CommOp Comm(std::string name, CollectiveKind kind, CommGroup group, double bytes, bool overlapped,
            std::string overlaps_op = "", CommEngine engine = CommEngine::kNccl) {
  return CommOp{std::move(name), kind, group, bytes, overlapped, std::move(overlaps_op), engine};
}

// Backward of a forward GEMM: data gradient and weight gradient, same FLOPs
// each. The weight gradient accumulates into the main-grad buffer in its
// epilogue (wgrad_out_bytes per element, from the framework profile).
// A frozen weight (LoRA's base) has no weight gradient.
void AddGemmBackward(std::vector<Operator>& ops, const Operator& f, double wgrad_out_bytes, bool frozen = false) {
  ops.push_back(Gemm(f.name + " dgrad", f.m, f.k, f.n, f.low_precision, f.batch));
  if (frozen) return;
  if (f.batch == 1) {
    Operator w = Gemm(f.name + " wgrad", f.k, f.n, f.m, f.low_precision);
    w.out_bytes = wgrad_out_bytes;
    w.bytes += w.m * w.n * (wgrad_out_bytes - kAct);
    ops.push_back(w);
  } else {
    ops.push_back(Gemm(f.name + " dgrad2", f.k, f.n, f.m, f.low_precision, f.batch));
  }
}

}  // namespace

Workload BuildWorkload(const Scenario& sc) {
  const ModelSpec& md = sc.model;
  const Parallelism& p = sc.parallelism;
  const Training& tr = sc.training;
  const double t = p.tensor, cp = p.context, b = tr.micro_batch;
  const double s = tr.seq_len, s_local = s / cp;
  const double h = md.hidden, f = md.ffn_hidden, d = md.head_dim();
  const double heads_local = md.heads / t;
  const double kv_local = std::max(1.0, md.kv_heads / t);
  const double T = b * s_local;                                 // tokens through the TP region per GPU
  const double T_ln = p.sequence_parallel ? T / t : T;          // tokens of ops outside it
  const bool fp8 = tr.precision == Precision::kFp8;
  const bool dropout = tr.dropout > 0;
  const bool swiglu = md.activation == Activation::kSwiGlu;
  const bool tp = p.tensor > 1;
  const bool sp = p.sequence_parallel;
  const double tp_bytes = T * h * kAct;  // gathered activation of one TP collective
  // Transformer Engine's userbuffers all-gathers (qkv/fc1 fprop and dgrad, proj/fc2 dgrad) move
  // fp8 buffers under an fp8 recipe ("AllGather buffers use fp8 when using fp8 recipe",
  // layers_all_gather_overlap in TE's initialize_ub); its reduce-scatters stay 16-bit.
  const double tp_gather_bytes = fp8 && p.tp_comm_overlap ? T * h * 1.0 : tp_bytes;

  Workload w;
  PassWork& F = w.layer_forward;
  // With TP comm overlap (Transformer Engine userbuffers) each collective is
  // chunked and pipelined with the GEMM it feeds or drains, so it can hide
  // only behind that GEMM.
  auto tp_in = [&](const std::string& gemm) {  // before a column-parallel GEMM
    if (tp && sp) F.comms.push_back(Comm(gemm + " all-gather", CollectiveKind::kAllGather, CommGroup::kTensor, tp_gather_bytes, p.tp_comm_overlap, gemm, CommEngine::kCopyEngine));
  };
  auto tp_out = [&](const std::string& gemm) {  // after a row-parallel GEMM
    if (!tp) return;
    if (sp) F.comms.push_back(Comm(gemm + " reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kTensor, tp_bytes, p.tp_comm_overlap, gemm, CommEngine::kUserbufferPipelined));
    else F.comms.push_back(Comm(gemm + " all-reduce", CollectiveKind::kAllReduce, CommGroup::kTensor, tp_bytes, p.tp_comm_overlap, gemm, CommEngine::kUserbufferPipelined));
  };
  // LoRA adapters beside a target projection (NeMo's ParallelLinearAdapter):
  // A (in -> rank) and B (rank -> out) in 16-bit, split over TP like the
  // projection: beside a column-parallel one A sees the gathered input and
  // makes rank/t outputs, B makes the local outputs; beside a row-parallel one
  // A reads the local input shard, B makes out/t outputs.
  const Finetune& ft = tr.finetune;
  const bool lora = ft.lora();
  auto adapter = [&](const std::string& gemm, bool target, bool column_parallel, double in, double out_local) {
    if (!lora || !target) return;
    const double r = ft.rank;
    if (column_parallel) {
      F.ops.push_back(Gemm(gemm + " lora A", T, std::max(1.0, r / t), in, false));
      F.ops.push_back(Gemm(gemm + " lora B", T, out_local, r, false));
    } else {
      F.ops.push_back(Gemm(gemm + " lora A", T, r, in / t, false));
      F.ops.push_back(Gemm(gemm + " lora B", T, out_local, r, false));
    }
  };
  const double norm_bytes = 2 * T_ln * h * kAct;                   // read input, write output
  const double residual_bytes = T_ln * h * (3 * kAct + (dropout ? 1 : 0));  // (dropout +) add
  const double cast = fp8 ? 3.0 : 0.0;                              // fp8 quantize: read bf16, write fp8

  // Attention block.
  F.ops.push_back(Mem("input norm", norm_bytes + cast * T * h / (sp ? t : 1)));
  tp_in("qkv");
  const double qkv_n = (heads_local + 2 * kv_local) * d;
  F.ops.push_back(Gemm("qkv", T, qkv_n, h, true));
  adapter("qkv", ft.qkv, true, h, qkv_n);
  if (md.position == PositionKind::kRope) F.ops.push_back(Mem("rotary", 2 * T * (heads_local + kv_local) * d * kAct));
  if (tr.attention == AttentionKernel::kFlash) {
    Operator a;
    a.name = "flash attention";
    a.cls = OpClass::kAttention;
    a.flops = 4.0 * b * heads_local * s_local * s * d * 0.5;  // causal: half the score matrix
    a.bytes = T * (2 * heads_local + 2 * kv_local) * d * kAct;
    // With context parallelism the kernel runs once per ring step on the
    // local chunk's keys, so its efficiency is that of the shorter sequence.
    a.seq = s_local;
    F.ops.push_back(a);
  } else {
    // Megatron's unfused path: full s x s scores (the causal mask does not skip work).
    const double scores = b * heads_local * s_local * s;
    F.ops.push_back(Gemm("attention scores QK^T", s_local, s, d, false, b * heads_local));
    F.ops.push_back(Mem("scale-mask-softmax", scores * 2 * kAct));
    if (dropout) F.ops.push_back(Mem("attention dropout", scores * (2 * kAct + 1)));
    F.ops.push_back(Gemm("attention over values", s_local, d, s, false, b * heads_local));
  }
  F.ops.push_back(Mem("fp8 cast (proj input)", cast * T * heads_local * d));
  F.ops.push_back(Gemm("attention proj", T, h, heads_local * d, true));
  adapter("attention proj", ft.proj, false, md.heads * d, h / t);
  tp_out("attention proj");
  F.ops.push_back(Mem("residual", residual_bytes));
  // MLP block.
  F.ops.push_back(Mem("post-attention norm", norm_bytes + cast * T * h / (sp ? t : 1)));
  tp_in("fc1");
  const double ffn_local = f / t;
  F.ops.push_back(Gemm("fc1", T, (swiglu ? 2 : 1) * ffn_local, h, true));
  adapter("fc1", ft.fc1, true, h, (swiglu ? 2 : 1) * ffn_local);
  F.ops.push_back(Mem(swiglu ? "swiglu" : "gelu", T * ffn_local * kAct * (swiglu ? 3 : 2) + cast * T * ffn_local));
  F.ops.push_back(Gemm("fc2", T, h, ffn_local, true));
  adapter("fc2", ft.fc2, false, f, h / t);
  tp_out("fc2");
  F.ops.push_back(Mem("residual", residual_bytes));
  // Context parallel: each rank's K and V travel around the ring (overlapped with attention).
  if (p.context > 1) {
    w.cp_exchange_bytes_per_layer = (cp - 1) * b * s_local * 2 * kv_local * d * kAct;
    F.comms.push_back(Comm("cp kv ring", CollectiveKind::kSendRecv, CommGroup::kContext, w.cp_exchange_bytes_per_layer, true,
                           tr.attention == AttentionKernel::kFlash ? "flash attention" : ""));
  }
  F.ops.erase(std::remove_if(F.ops.begin(), F.ops.end(), [](const Operator& o) { return o.flops == 0 && o.bytes == 0; }), F.ops.end());

  // Backward: GEMMs twice, attention by its backward kernel, memory-bound ops ~2x traffic.
  PassWork& B = w.layer_backward;
  for (const auto& o : F.ops) {
    if (o.cls == OpClass::kGemm) {
      // fp8: the output gradient is quantized and transposed (one fp8 copy per GEMM operand layout).
      if (fp8 && o.low_precision) B.ops.push_back(Mem(o.name + " grad cast-transpose", o.m * o.n * (kAct + 2)));
      // Under LoRA every base projection is frozen (low_precision marks them; the adapters run in 16-bit).
      AddGemmBackward(B.ops, o, sc.framework.wgrad_out_bytes, lora && o.low_precision);
    } else if (o.cls == OpClass::kAttention) {
      Operator a = o;
      a.name = "flash attention backward";
      a.flops = 2.5 * o.flops;  // five matmuls against the forward's two
      a.bytes = 2 * o.bytes;
      B.ops.push_back(a);
    } else {
      B.ops.push_back(Mem(o.name + " backward", 2 * o.bytes));
    }
  }
  if (tp) {
    const CommEngine ub_bulk = p.tp_comm_overlap ? CommEngine::kUserbufferBulk : CommEngine::kNccl;
    for (const std::string where : {"qkv", "fc1"}) {
      if (sp) {
        // Megatron re-gathers the input for the weight gradient while the data gradient runs.
        // (Megatron's async NCCL all-gather without TE userbuffers; userbuffers' bulk overlap with them.)
        B.comms.push_back(Comm(where + " input re-gather", CollectiveKind::kAllGather, CommGroup::kTensor, tp_gather_bytes, true, where + " dgrad", ub_bulk));
        B.comms.push_back(Comm(where + " dgrad reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kTensor, tp_bytes, p.tp_comm_overlap, where + " wgrad", ub_bulk));
      } else {
        B.comms.push_back(Comm(where + " dgrad all-reduce", CollectiveKind::kAllReduce, CommGroup::kTensor, tp_bytes, p.tp_comm_overlap, where + " wgrad", ub_bulk));
      }
    }
    if (sp) {
      for (const std::string where : {"attention proj", "fc2"}) {
        B.comms.push_back(Comm(where + " grad all-gather", CollectiveKind::kAllGather, CommGroup::kTensor, tp_gather_bytes, p.tp_comm_overlap, where + " dgrad", CommEngine::kCopyEngine));
      }
    }
  }
  if (p.context > 1) {
    B.comms.push_back(Comm("cp kv+grad ring", CollectiveKind::kSendRecv, CommGroup::kContext, 2 * w.cp_exchange_bytes_per_layer, true,
                           tr.attention == AttentionKernel::kFlash ? "flash attention backward" : ""));
  }
  // Transformer Engine's ring attention (AttnFuncWithCPAndKVP2P) runs one kernel per ring step and
  // merges the partial outputs: per step a softmax-correction pass reads the step's output and
  // reads and writes the result (16-bit); the rank with the most full-length steps does all cp of
  // them on all its tokens. Its backward adds each step's dQ and dK/dV into the accumulated ones,
  // and the last step's dK/dV return to their owner after the last kernel, with nothing to hide behind.
  if (p.context > 1 && tr.attention == AttentionKernel::kFlash) {
    const double q_elems = T * heads_local * d, kv_elems = T * 2 * kv_local * d;
    F.ops.push_back(Mem("cp output correction", cp * q_elems * 3 * kAct));
    B.ops.push_back(Mem("cp gradient accumulation", cp * (q_elems + kv_elems) * 3 * kAct));
    B.comms.push_back(Comm("cp dkv return", CollectiveKind::kSendRecv, CommGroup::kContext, kv_elems * kAct, false));
  }

  // Recompute: full re-runs the layer forward; selective re-runs the attention core.
  if (tr.recompute == Recompute::kFull) {
    w.layer_recompute = F;
  } else if (tr.recompute == Recompute::kSelective) {
    for (const auto& o : F.ops) {
      const bool core = o.cls == OpClass::kAttention || o.name.rfind("attention scores", 0) == 0 ||
                        o.name == "scale-mask-softmax" || o.name == "attention dropout" || o.name == "attention over values";
      if (core) w.layer_recompute.ops.push_back(o);
    }
  }

  // First stage: embedding lookup (vocab-parallel: combine partial rows over TP).
  w.embedding_forward.ops.push_back(Mem("embedding lookup", T * h * kAct * 2));
  if (tp) {
    w.embedding_forward.comms.push_back(Comm(sp ? "embedding reduce-scatter" : "embedding all-reduce",
                                             sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                                             CommGroup::kTensor, tp_bytes, false));
  }
  if (!lora) w.embedding_backward.ops.push_back(Mem("embedding grad scatter-add", T * h * (kAct + 4) * 2));  // frozen under LoRA

  // Last stage: final norm, LM head (kept in 16-bit), vocab-parallel cross entropy.
  const double v_local = double(md.vocab) / t;
  w.head_forward.ops.push_back(Mem("final norm", norm_bytes));
  if (tp && sp) w.head_forward.comms.push_back(Comm("lm head all-gather", CollectiveKind::kAllGather, CommGroup::kTensor, tp_bytes, false));
  Operator head = Gemm("lm head", T, v_local, h, false);
  w.head_forward.ops.push_back(head);
  w.head_forward.ops.push_back(Mem("cross entropy", T * v_local * sc.framework.cross_entropy_forward_bytes));
  AddGemmBackward(w.head_backward.ops, head, sc.framework.wgrad_out_bytes, lora);
  w.head_backward.ops.push_back(Mem("cross entropy backward", T * v_local * sc.framework.cross_entropy_backward_bytes));
  if (tp) {
    w.head_backward.comms.push_back(Comm(sp ? "lm head dgrad reduce-scatter" : "lm head dgrad all-reduce",
                                         sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                                         CommGroup::kTensor, tp_bytes, false));
  }

  // Pipeline: one micro batch's activations. Each TP rank sends 1/t of them
  // (sequence-sharded with SP; without SP Megatron's scatter/gather
  // optimisation splits the replicated tensor and re-gathers it over NVLink).
  w.pipeline_p2p = Comm("pipeline send/recv", CollectiveKind::kSendRecv, CommGroup::kPipeline, b * s_local * h * kAct / t,
                        p.overlap_p2p);

  // Parameters per GPU of each pipeline rank: its layers, the embedding on
  // the first rank and the LM head on the last (one copy when tied and the
  // model has one stage), and what data parallelism moves for them.
  w.stages = sc.stage_plan();
  const double layer_params = md.LayerParameters() / t;
  const double layer_trainable = lora ? LoraLayerParameters(md, ft) / t : layer_params;
  const double emb = double(md.vocab) * h / t + (md.position == PositionKind::kLearned ? s * h / t : 0);
  const double head_params = double(md.vocab) * h / t;
  w.layer_params_per_gpu = layer_params;
  w.layer_trainable_params_per_gpu = layer_trainable;
  const int P = p.pipeline;
  const DataSharding mode = p.data_sharding;
  const double G = p.shard_group();
  const bool replicated_shards = mode != DataSharding::kNone && p.shard_replicas() > 1;
  w.rank_state.assign(size_t(P), {});
  for (int r = 0; r < P; ++r) {
    RankState& rs = w.rank_state[size_t(r)];
    rs.params_per_gpu = w.stages.RankLayers(r) * layer_params;
    rs.trainable_params_per_gpu = w.stages.RankLayers(r) * layer_trainable;
    if (r == 0) rs.params_per_gpu += emb;
    if (r == P - 1 && !(P == 1 && md.tied_embeddings)) rs.params_per_gpu += head_params;
    if (!lora) rs.trainable_params_per_gpu = rs.params_per_gpu;
    const double grads = rs.trainable_params_per_gpu * p.grad_reduce_bytes;
    switch (mode) {
      case DataSharding::kNone:
        rs.grad_reduce_bytes = grads;
        break;
      case DataSharding::kOptimizer:
        rs.grad_reduce_bytes = grads;
        rs.grad_reduce_kind = CollectiveKind::kReduceScatter;
        rs.grad_reduce_group = CommGroup::kShard;
        rs.param_gather_bytes = rs.trainable_params_per_gpu * kAct;
        break;
      case DataSharding::kGradients:
        rs.param_gather_bytes = rs.trainable_params_per_gpu * kAct;
        break;
      case DataSharding::kFull:
        break;
    }
    if (replicated_shards) rs.grad_replica_reduce_bytes = grads / G;
    // Adam: read grad (4), read+write master (8), m (8), v (8), write 16-bit param (2);
    // plus the grad-norm read and zeroing the main-grad buffer over the full local shard
    // (ZeRO-2 and FSDP keep only their shard of the gradients).
    const double shard = mode == DataSharding::kNone ? rs.trainable_params_per_gpu : rs.trainable_params_per_gpu / G;
    const double grad_buffer = mode == DataSharding::kGradients || mode == DataSharding::kFull ? shard : rs.trainable_params_per_gpu;
    rs.optimizer_bytes = shard * 30.0 + grad_buffer * (4.0 + 4.0);
  }

  // ZeRO-2 and FSDP, per micro batch: each layer's gradients are
  // reduce-scattered in the shard group as its backward finishes (DeepSpeed
  // stage 2's reduce per backward, FSDP2's default), hidden behind the
  // backward of the layers after it; FSDP gathers each layer's parameters
  // before its forward and again before its backward, the next layer's gather
  // prefetched behind the current layer's compute (FSDP2's implicit
  // prefetch; torchtitan wraps each transformer block). Added after the
  // recompute pass was copied: the backward's gather serves the recompute.
  const bool reduce_per_microbatch = mode == DataSharding::kGradients || mode == DataSharding::kFull;
  if (reduce_per_microbatch && G > 1) {
    const double unit_reduce = layer_trainable * p.grad_reduce_bytes;
    const double unit_gather = layer_params * kAct;
    w.shard_unit_reduce = Comm("shard gradient reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kShard, unit_reduce, true);
    w.layer_backward.comms.push_back(w.shard_unit_reduce);
    if (!lora) {
      w.embedding_backward.comms.push_back(Comm("shard embedding gradient reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kShard,
                                                emb * p.grad_reduce_bytes, true));
      w.head_backward.comms.push_back(Comm("shard lm head gradient reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kShard,
                                           head_params * p.grad_reduce_bytes, true));
    }
    if (mode == DataSharding::kFull) {
      w.shard_unit_gather = Comm("shard parameter all-gather", CollectiveKind::kAllGather, CommGroup::kShard, unit_gather, true);
      w.layer_forward.comms.push_back(w.shard_unit_gather);
      w.layer_backward.comms.push_back(w.shard_unit_gather);
      for (auto [pass, bytes] : {std::pair{&w.embedding_forward, emb}, std::pair{&w.embedding_backward, emb},
                                 std::pair{&w.head_forward, head_params}, std::pair{&w.head_backward, head_params}}) {
        pass->comms.push_back(Comm("shard parameter all-gather", CollectiveKind::kAllGather, CommGroup::kShard, bytes * kAct, true));
      }
    }
  }

  w.model_flops_per_step = ModelFlopsPerStep(md, tr);
  return w;
}

}  // namespace trainsim
