#include "sim/cost/step_costs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <iterator>
#include <vector>

#include "models/memory_model.h"
#include "sim/cost/checkpoint_cost.h"
#include "sim/cost/collective_model.h"
#include "sim/cost/gpu_cost_model.h"
#include "sim/cost/host_issue.h"
#include "sim/schedule/pipeline_schedule.h"

namespace trainsim {

int MoeDispatcherSms(const Scenario& s) {
  switch (s.parallelism.moe_dispatcher) {
    case MoeDispatcher::kAllToAll:
    case MoeDispatcher::kAllGather: return s.framework.nccl_overlap_sms;
    case MoeDispatcher::kDeepEp: return s.framework.deepep_sms;
    case MoeDispatcher::kHybridEp: return s.framework.hybridep_sms;
  }
  return 0;
}

double OverlapSlowdown(const Scenario& s, CommEngine engine) {
  const FrameworkProfile& f = s.framework;
  const int k = engine == CommEngine::kNccl                  ? f.nccl_overlap_sms
                : engine == CommEngine::kUserbufferPipelined ? f.userbuffer_pipelined_sms
                : engine == CommEngine::kUserbufferBulk      ? f.userbuffer_bulk_sms
                : engine == CommEngine::kMoeDispatcher       ? MoeDispatcherSms(s)
                                                             : 0;
  const int sms = s.node.gpu.sms;
  return k > 0 && k < sms ? double(k) / (sms - k) : 0.0;
}

double OverlappedDpTime(const DpChunkTimes& t, double chunk_pass_s, int chunks, int pipeline, double nccl_slowdown) {
  const double v = std::max(1, chunks);
  const double total_s = t.first_s + (v - 1) * t.other_s;
  if (total_s <= 0) return 0;
  const double gap_s = std::max(1, pipeline) * chunk_pass_s;
  // Counting back from chunk 0, chunk k starts k gaps earlier; the queue left
  // when chunk 0 starts is its own collective, or what the earlier ones could
  // not finish in the gaps.
  const double last_s = std::max(t.first_s, total_s - (v - 1) * gap_s);
  const double early_s = total_s - last_s;
  const double tail_s = std::min(t.tail_s, last_s);
  return early_s * nccl_slowdown + std::max(last_s - chunk_pass_s, tail_s + std::min(last_s - tail_s, chunk_pass_s) * nccl_slowdown);
}

namespace {

// ExposedCommTime with the GPU's rates looked up once (gpu_cost_model.h).
// `op_s`: the pass's operator times when they were timed already (PassTimes), else null.
double ExposedCommTimeAt(const Scenario& s, const GpuRates& rates, CollectiveTimes& times, const PassWork& pass, double pass_compute_s,
                         bool backward, const double* op_s = nullptr) {
  double exposed = 0, overlapped = 0, contention = 0;
  struct Partner {
    int op;         // the partner operator's index
    double op_s;    // the operator's compute time (timed once)
    double comm_s;  // overlapped comm behind it
    bool pipelined;  // TE's chunked GEMM + reduce-scatter
  };
  // A pass has a few partners: a flat list (filled as found), summed in the order of their index.
  Partner behind[24];
  size_t partners = 0;
  std::vector<Partner> more;  // past 32 (never in practice)
  auto find = [&](int op) -> std::pair<Partner*, bool> {
    for (size_t i = 0; i < partners; ++i) {
      if (behind[i].op == op) return {&behind[i], false};
    }
    for (Partner& p : more) {
      if (p.op == op) return {&p, false};
    }
    if (partners < std::size(behind)) {
      behind[partners] = Partner{op, 0, 0, false};
      return {&behind[partners++], true};
    }
    more.push_back(Partner{op, 0, 0, false});
    return {&more.back(), true};
  };
  for (const auto& c : pass.comms) {
    const double t = times(c);
    if (!c.overlapped) {
      exposed += t;
      continue;
    }
    double partner_s = pass_compute_s;
    if (c.partner == kWholePass) {
      overlapped += t;
    } else {
      auto [it, fresh] = find(c.partner);
      if (fresh && c.partner >= 0 && size_t(c.partner) < pass.ops.size()) {
        it->op_s = op_s ? op_s[c.partner] : OperatorTime(pass.ops[size_t(c.partner)], rates, backward);
      }
      it->comm_s += t;
      it->pipelined |= c.engine == CommEngine::kUserbufferPipelined;
      partner_s = it->op_s;
    }
    // The partner loses the comm's SMs while both run; a pipelined userbuffers
    // GEMM is launched on the remaining SMs for its whole duration.
    const double shared_s = c.engine == CommEngine::kUserbufferPipelined ? partner_s : std::min(t, partner_s);
    contention += shared_s * OverlapSlowdown(s, c.engine);
  }
  auto by_op = [](const Partner& a, const Partner& b) { return a.op < b.op; };
  Partner* first = behind;
  if (!more.empty()) {
    more.insert(more.end(), behind, behind + partners);
    first = more.data();
    partners = more.size();
  }
  std::sort(first, first + partners, by_op);
  // Behind a chunked (pipelined) GEMM, each chunk's collective waits for its
  // chunk and runs behind the next: the last chunk's is exposed, and a
  // collective longer than the GEMM ends its own length after the first chunk.
  const double n = std::max(1, s.framework.userbuffer_pipelined_splits);
  for (size_t i = 0; i < partners; ++i) {
    const Partner& p = first[i];
    exposed += p.pipelined ? std::max(p.comm_s / n, p.comm_s - p.op_s * (1 - 1 / n)) : std::max(0.0, p.comm_s - p.op_s);
  }
  return exposed + std::max(0.0, overlapped - pass_compute_s) + contention;
}

double AllToAllTimeAt(CollectiveTimes& times, const PassWork& pass) {
  double t = 0;
  for (const auto& c : pass.comms) {
    if (c.group == CommGroup::kExpert) t += times(c);
  }
  return t;
}

}  // namespace

double ExposedCommTime(const Scenario& s, const PassWork& pass, double pass_compute_s, bool backward) {
  CollectiveTimes times(s);
  return ExposedCommTimeAt(s, GpuRates(s.node.gpu, s.training.precision), times, pass, pass_compute_s, backward);
}

namespace {

// PassComputeTime (the same sum, in the same order), keeping each operator's
// time for the comms that overlap it: `kept`, or null when the pass has more
// operators than it holds (ExposedCommTimeAt then times the partners again).
struct PassTimes {
  static constexpr size_t kKept = 160;  // a layer's backward has a few dozen
  double op_s[kKept];
  double total_s = 0;
  const double* kept = nullptr;
  // total_s: as the host issues the pass (host_issue.h) when host_s_per_kernel > 0.
  PassTimes(const PassWork& pass, const GpuRates& rates, bool backward, double host_s_per_kernel) {
    const bool keep = pass.ops.size() <= kKept;
    for (size_t i = 0; i < pass.ops.size(); ++i) {
      const double t = OperatorTime(pass.ops[i], rates, backward);
      if (keep) op_s[i] = t;
      total_s += t;
    }
    if (keep) kept = op_s;
    if (host_s_per_kernel > 0) total_s = keep ? HostIssuedPassTime(pass.ops, op_s, host_s_per_kernel)
                                              : PassComputeTime(pass, rates, backward, host_s_per_kernel);
  }
};

StageCost AddPasses(const Scenario& s, const GpuRates& rates, CollectiveTimes& times, const PassWork& fwd, const PassWork& bwd) {
  StageCost c;
  const double h = s.host_s_per_kernel();
  const PassTimes f(fwd, rates, false, h), b(bwd, rates, true, h);
  const double fc = f.total_s;
  const double bc = b.total_s;
  c.forward_compute_s = fc;
  c.backward_compute_s = bc;
  c.forward_exposed_comm_s = ExposedCommTimeAt(s, rates, times, fwd, fc, false, f.kept);
  c.backward_exposed_comm_s = ExposedCommTimeAt(s, rates, times, bwd, bc, true, b.kept);
  c.forward_all_to_all_s = AllToAllTimeAt(times, fwd);
  c.backward_all_to_all_s = AllToAllTimeAt(times, bwd);
  c.forward_exposed_comm_s = WithAllToAllOverlap(s, c.forward_exposed_comm_s, c.forward_all_to_all_s, fc);
  c.backward_exposed_comm_s = WithAllToAllOverlap(s, c.backward_exposed_comm_s, c.backward_all_to_all_s, bc);
  return c;
}

StageCost Times(double n, const StageCost& c) {
  StageCost r;
  r.forward_compute_s = n * c.forward_compute_s;
  r.backward_compute_s = n * c.backward_compute_s;
  r.forward_exposed_comm_s = n * c.forward_exposed_comm_s;
  r.backward_exposed_comm_s = n * c.backward_exposed_comm_s;
  r.forward_all_to_all_s = n * c.forward_all_to_all_s;
  r.backward_all_to_all_s = n * c.backward_all_to_all_s;
  return r;
}

// What a layer kind's recompute adds to the backward (nothing without one);
// `backward_compute_s`: the layer's backward compute without it. The
// backward's collectives that overlap the whole pass (a sharded layer's
// gather and gradient reduce-scatter) are issued before the recompute (the
// unit's pre-backward hook, the next unit's prefetch) and run behind it too:
// a recompute widens their window by its own length.
StageCost RecomputeCost(const Scenario& s, const GpuRates& rates, CollectiveTimes& times, const LayerWork& layer, double backward_compute_s) {
  StageCost c;
  if (layer.recompute.ops.empty()) return c;
  const PassTimes r(layer.recompute, rates, false, s.host_s_per_kernel());
  const double rc = r.total_s;
  c.backward_compute_s = rc;
  c.backward_exposed_comm_s = ExposedCommTimeAt(s, rates, times, layer.recompute, rc, false, r.kept);
  // Only those collectives see the window: without one (no sharding) nothing changes and nothing is re-timed.
  const bool whole_pass = std::any_of(layer.backward.comms.begin(), layer.backward.comms.end(),
                                      [](const CommOp& cm) { return cm.overlapped && cm.partner == kWholePass; });
  if (whole_pass) {
    c.backward_exposed_comm_s += ExposedCommTimeAt(s, rates, times, layer.backward, backward_compute_s + rc, true) -
                                 ExposedCommTimeAt(s, rates, times, layer.backward, backward_compute_s, true);
  }
  c.backward_all_to_all_s = AllToAllTimeAt(times, layer.recompute);
  return c;
}

}  // namespace

CommOp ExpertGradientReduce(const Scenario& s, const RankState& state) {
  const bool rs = s.parallelism.data_sharding == DataSharding::kOptimizer;
  return CommOp{rs ? OpName("expert gradient reduce-scatter") : OpName("expert gradient all-reduce"), rs ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                CommGroup::kExpertData, state.expert_grad_reduce_bytes, s.parallelism.overlap_grad_reduce, ""};
}

StepDpCollectives DpCollectivesOf(const Scenario& s, const RankState& state) {
  const Parallelism& p = s.parallelism;
  StepDpCollectives d;
  const bool rs = state.grad_reduce_kind == CollectiveKind::kReduceScatter;
  const bool replicated = p.gradient_replicas() > 1;  // a group of one moves nothing
  d.gradients[0] = CommOp{OpName("dp gradient ") + (rs ? OpName("reduce-scatter") : OpName("all-reduce")), state.grad_reduce_kind,
                          state.grad_reduce_group, replicated ? state.grad_reduce_bytes : 0.0, p.overlap_grad_reduce, ""};
  // HSDP: the shard then crosses the shard groups (after the reduce-scatter, on the same stream).
  d.gradients[1] = CommOp{"dp gradient shard all-reduce", CollectiveKind::kAllReduce, CommGroup::kShardReplica,
                          replicated ? state.grad_replica_reduce_bytes : 0.0, p.overlap_grad_reduce, ""};
  d.gradients[2] = ExpertGradientReduce(s, state);
  d.parameters[0] = CommOp{"dp parameter all-gather", CollectiveKind::kAllGather, CommGroup::kShard,
                           replicated ? state.param_gather_bytes : 0.0, p.overlap_param_gather, ""};
  d.parameters[1] = ExpertParamGather(s, state);
  return d;
}

CommOp ExpertParamGather(const Scenario& s, const RankState& state) {
  // ZeRO-2's shards span the expert shard group (HSDP's replicas hold copies); the distributed optimizer's all of expert-DP.
  const CommGroup group = s.parallelism.data_sharding == DataSharding::kGradients ? CommGroup::kExpertShard : CommGroup::kExpertData;
  return CommOp{"expert parameter all-gather", CollectiveKind::kAllGather, group, state.expert_param_gather_bytes,
                s.parallelism.overlap_param_gather, ""};
}

double WithAllToAllOverlap(const Scenario& s, double exposed_s, double& all_to_all_s, double compute_s) {
  if (!s.parallelism.moe_a2a_overlap) return exposed_s;
  const double shows_s = std::max(0.0, all_to_all_s - compute_s);
  exposed_s += shows_s - all_to_all_s + std::min(all_to_all_s, compute_s) * OverlapSlowdown(s, CommEngine::kMoeDispatcher);
  all_to_all_s = shows_s;
  return exposed_s;
}

double AllToAllTime(const Scenario& s, const PassWork& pass) {
  double t = 0;
  for (const auto& c : pass.comms) {
    if (c.group == CommGroup::kExpert) t += CollectiveTime(s, c);
  }
  return t;
}

namespace {

// How long `m` micro batches take through Megatron-Core's order
// (StageSchedule: 1F1B, or interleaved over v chunks a rank, virtual stage
// chunk x p + rank) when nothing but the passes takes time: each pass starts
// once its rank is free and its input is there (the previous virtual stage's
// forward, the next one's backward, the last one's own forward), at its
// chunk's own time. NaN if the order deadlocks (Megatron's never does).
double ScheduleMakespanS(const std::vector<StageCost>& virtual_stage, int p, int v, int m) {
  const int stages = p * v;
  thread_local std::vector<std::vector<PipelineOp>> order;
  thread_local std::vector<double> forward_end, backward_end, free_at;
  thread_local std::vector<size_t> next;
  // Without interleaving each op comes by index (OneFOneBOp): no list to build.
  order.resize(size_t(p));
  size_t left = 0;
  for (int r = 0; r < p; ++r) {
    if (v > 1) StageScheduleInto(p, r, m, v, order[size_t(r)]);
    left += v > 1 ? order[size_t(r)].size() : 2 * size_t(m);
  }
  forward_end.assign(size_t(stages) * size_t(m), -1.0);
  backward_end.assign(forward_end.size(), -1.0);
  free_at.assign(size_t(p), 0.0);
  next.assign(size_t(p), 0);
  const auto at = [m](int vs, int mb) { return size_t(vs) * size_t(m) + size_t(mb); };
  // Forwards flow to later stages, backwards to earlier: sweeps alternate
  // direction so each carries one kind of dependency through every rank.
  for (int sweep = 0; left > 0; ++sweep) {
    bool progressed = false;
    for (int k = 0; k < p; ++k) {
      const int r = sweep % 2 == 0 ? k : p - 1 - k;
      const auto& mine = order[size_t(r)];
      const size_t ops = v > 1 ? mine.size() : 2 * size_t(m);
      for (size_t& i = next[size_t(r)]; i < ops; ++i) {
        const PipelineOp op = v > 1 ? mine[i] : OneFOneBOp(p, r, m, int(i));
        const int vs = VirtualStage(p, r, op.chunk);
        const double ready = op.forward ? (vs == 0 ? 0.0 : forward_end[at(vs - 1, op.microbatch)])
                                        : (vs == stages - 1 ? forward_end[at(vs, op.microbatch)] : backward_end[at(vs + 1, op.microbatch)]);
        if (ready < 0) break;
        const StageCost& c = virtual_stage[size_t(vs)];
        const double end = std::max(free_at[size_t(r)], ready) + (op.forward ? c.forward_s() : c.backward_s());
        (op.forward ? forward_end : backward_end)[at(vs, op.microbatch)] = end;
        free_at[size_t(r)] = end;
        --left;
        progressed = true;
      }
    }
    if (!progressed) return std::numeric_limits<double>::quiet_NaN();
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

// Whether the chunks between the first (embedding) and the last (LM head)
// differ: where they do not, the closed form's position formula is the
// interleaved walk's figure but for those two chunks' extra (under 5% of the
// bubble: Llama 2 70B, 4 nodes, 30.1 against 31.6 ms), at none of its cost.
bool ChunksDiffer(const std::vector<StageCost>& virtual_stage) {
  for (size_t vs = 2; vs + 1 < virtual_stage.size(); ++vs) {
    if (std::abs(virtual_stage[vs].slot_s() - virtual_stage[1].slot_s()) > 1e-9 * virtual_stage[1].slot_s()) return true;
  }
  return false;
}

// Micro batches per pipeline rank the schedule is walked for: past its
// transient every further one adds the slowest rank's slot (a rank nearly as
// slow as the slowest takes a few rounds to fall behind: GLM-4.5-Air's PP 8
// layout settles past 3 micro batches a rank). Walks longer than the budget
// (PP 32 and deeper, deep interleaving) take the closed form instead.
constexpr int kFillDrainSample = 4;
constexpr long kFillDrainWalkBudget = 8192;

}  // namespace

double StepCosts::FillDrainS(int virtual_stages, double micro_batches) const {
  // The schedule itself, over enough micro batches to reach its steady
  // state (the slowest rank paces every further one).
  const int p = int(rank.size()), m = int(std::lround(micro_batches));
  // The walk where the formula below would not give its figure: one chunk
  // per rank unless the last rank (the LM head's) is the slowest, which
  // waits only for the ranks before it, once each way; interleaved where the
  // chunks between the edges differ. Interleaved orders walk whole groups of p.
  const int v = std::max(1, virtual_stages);
  const bool walk = p > 1 && m >= 1 && virtual_stage.size() == size_t(p) * size_t(v) &&
                    (v == 1 ? slowest_rank != p - 1 : m >= p && ChunksDiffer(virtual_stage));
  const int sample = v == 1 ? std::min(m, kFillDrainSample * p) : std::min(m, kFillDrainSample * p) / p * p;
  if (walk && 2L * sample * p * v <= kFillDrainWalkBudget) {
    const double makespan_s = ScheduleMakespanS(virtual_stage, p, v, sample);
    if (std::isfinite(makespan_s)) return std::max(0.0, makespan_s - sample * slowest().slot_s());
  }
  const size_t s = size_t(slowest_rank);
  double before_s = 0, after_s = 0;  // the ranks before the slowest, and the round trip through those after it
  for (size_t r = 0; r < rank.size(); ++r) {
    if (r < s) before_s += rank[r].slot_s();
    if (r > s) after_s += rank[r].slot_s();
  }
  // 1F1B: the slowest rank runs min(p - s, m) forwards before its first
  // backward, whose gradient returns after the round trip through the ranks
  // after it; it waits for what those forwards do not cover, and at the end
  // for what its outstanding backwards do not. Even ranks: (p - s - 1) slots.
  const double in_flight = std::min(double(rank.size() - s), std::max(1.0, micro_batches)) - 1;
  const StageCost& slow = rank[s];
  const double waits_s = std::max(0.0, after_s - in_flight * slow.forward_s()) + std::max(0.0, after_s - in_flight * slow.backward_s());
  return (before_s + waits_s) / std::max(1, virtual_stages);
}

StageCost& StageCost::operator+=(const StageCost& o) {
  forward_compute_s += o.forward_compute_s;
  backward_compute_s += o.backward_compute_s;
  forward_exposed_comm_s += o.forward_exposed_comm_s;
  backward_exposed_comm_s += o.backward_exposed_comm_s;
  forward_all_to_all_s += o.forward_all_to_all_s;
  backward_all_to_all_s += o.backward_all_to_all_s;
  return *this;
}

ActivationOffloadTimes ActivationOffload(const Scenario& s, const Workload& w) {
  ActivationOffloadTimes t;
  const GpuRates rates(s.node.gpu, s.training.precision);
  const double host_bytes_per_s = s.node.host_copy_bytes_per_s_per_gpu();
  for (int i = 0; i < s.training.activation_offload_layers && i + 1 < int(w.kind_of_layer.size()); ++i) {
    const double bytes = LayerActivationBytes(s, w.layer(i).kind);
    const double copy_s = bytes / host_bytes_per_s;
    const LayerWork& next = w.layer(i + 1);
    t.layers++;
    t.bytes += bytes;
    t.copy_s += copy_s;
    t.forward_exposed_s += std::max(0.0, copy_s - PassComputeTime(next.forward, rates, false, s.host_s_per_kernel()));
    t.backward_exposed_s += std::max(0.0, copy_s - PassComputeTime(next.backward, rates, true, s.host_s_per_kernel()));
  }
  return t;
}

StepCosts ComputeStepCosts(const Scenario& s) { return ComputeStepCosts(s, BuildWorkload(s)); }

StepCosts ComputeStepCosts(const Scenario& s, Workload workload) {
  StepCosts c;
  c.workload = std::move(workload);
  const Workload& w = c.workload;
  const Parallelism& p = s.parallelism;
  const StagePlan& plan = w.stages;

  const GpuRates rates(s.node.gpu, s.training.precision);
  CollectiveTimes times(s);
  std::vector<StageCost> layer(w.kinds.size()), recompute(w.kinds.size());
  for (size_t k = 0; k < w.kinds.size(); ++k) {
    layer[k] = AddPasses(s, rates, times, w.kinds[k].forward, w.kinds[k].backward);
    recompute[k] = RecomputeCost(s, rates, times, w.kinds[k], layer[k].backward_compute_s);
  }
  const StageCost embedding = AddPasses(s, rates, times, w.embedding_forward, w.embedding_backward);
  StageCost head = AddPasses(s, rates, times, w.head_forward, w.head_backward);
  // Multi-token prediction: each module is one more layer (of the last
  // layer's kind) and one more pass through the shared head.
  if (w.mtp_layers > 0) {
    StageCost module = layer[size_t(w.kind_of_layer.back())];
    module += recompute[size_t(w.kind_of_layer.back())];
    module += AddPasses(s, rates, times, w.head_forward, w.head_backward);
    head += Times(w.mtp_layers, module);
  }
  const int P = plan.pipeline(), V = plan.virtual_stages();
  c.virtual_stage.assign(size_t(P) * V, {});
  c.rank.assign(size_t(P), {});
  for (int vs = 0; vs < P * V; ++vs) {
    StageCost& st = c.virtual_stage[size_t(vs)];
    const std::span<const int> counts = w.KindCounts(vs), recomputed = w.RecomputeKindCounts(vs);
    for (size_t k = 0; k < counts.size(); ++k) {
      if (counts[k] > 0) st += Times(counts[k], layer[k]);
      if (recomputed[k] > 0) st += Times(recomputed[k], recompute[k]);
    }
    // A chunk with layers adds its own collectives, nothing to hide behind (Workload::ChunkCollectives):
    // the sharded edge units' gather and reduce-scatter, delayed fp8 scaling's amax all-reduce.
    if (plan.VirtualStageLayers(vs) > 0) {
      for (const CommOp& c : w.ChunkCollectives(vs, false)) st.forward_exposed_comm_s += times(c);
      for (const CommOp& c : w.ChunkCollectives(vs, true)) st.backward_exposed_comm_s += times(c);
    }
    if (vs == 0) st += embedding;
    if (vs == P * V - 1) st += head;
    c.rank[size_t(vs % P)] += st;
  }
  if (s.training.activation_offload_layers > 0 && P * V == 1) {
    const ActivationOffloadTimes off = ActivationOffload(s, w);
    for (StageCost* st : {&c.virtual_stage[0], &c.rank[0]}) {
      st->forward_exposed_comm_s += off.forward_exposed_s;
      st->backward_exposed_comm_s += off.backward_exposed_s;
    }
  }
  for (int r = 0; r < P; ++r) {
    if (c.rank[size_t(r)].slot_s() > c.slowest().slot_s()) c.slowest_rank = r;
  }

  for (const auto* pass : {&w.layer(0).forward, &w.layer(0).backward}) {
    for (const auto& cm : pass->comms) {
      if (cm.group == CommGroup::kTensor) c.tp_comm_total_per_layer_s += times(cm);
    }
  }

  c.p2p_s = p.pipeline > 1 ? times(w.pipeline_p2p) : 0.0;
  const GpuProfile& g = s.node.gpu;
  c.rank_dp.assign(size_t(P), {});
  for (int r = 0; r < P; ++r) {
    const RankState& state = w.rank_state[size_t(r)];
    RankStepCost& dp = c.rank_dp[size_t(r)];
    // Ranks holding the same parameters (the middle of a pipeline) move the
    // same bytes: time their collectives once.
    if (r > 0 && state.params_per_gpu == w.rank_state[size_t(r - 1)].params_per_gpu &&
        state.last_bucket_fraction == w.rank_state[size_t(r - 1)].last_bucket_fraction &&
        c.rank[size_t(r)].slot_s() == c.rank[size_t(r - 1)].slot_s()) {
      dp = c.rank_dp[size_t(r - 1)];
      continue;
    }
    if (p.gradient_replicas() > 1 || state.expert_grad_reduce_bytes > 0 || state.expert_param_gather_bytes > 0) {
      // The rank's collectives for a part of its parameters (all of them, or
      // one model chunk's share).
      const StepDpCollectives collectives = DpCollectivesOf(s, state);
      auto part_s = [&](std::span<const CommOp> ops, double part) {
        double t = 0;
        for (CommOp c : ops) {
          c.bytes *= part;
          t += times(c);
        }
        return t;
      };
      auto grads_s = [&](double part) { return part_s(collectives.gradients, part); };
      auto params_s = [&](double part) { return part_s(collectives.parameters, part); };
      dp.grad_reduce_s = grads_s(1.0);
      dp.param_gather_s = params_s(1.0);
      const double tail = state.last_bucket_fraction;
      const double grad_tail_s = tail > 0 ? grads_s(tail) : 0.0, param_tail_s = tail > 0 ? params_s(tail) : 0.0;
      if (V > 1) {
        const double first = state.ChunkFraction(0, V), other = state.ChunkFraction(1, V);
        dp.grad_reduce_chunks = {grads_s(first), grads_s(other), grad_tail_s};
        dp.param_gather_chunks = {params_s(first), params_s(other), param_tail_s};
      } else {
        dp.grad_reduce_chunks = {dp.grad_reduce_s, 0, grad_tail_s};
        dp.param_gather_chunks = {dp.param_gather_s, 0, param_tail_s};
      }
    }
    dp.optimizer_s = state.optimizer_bytes / (g.hbm_bytes_per_s * g.memory_bound_efficiency);
  }
  // The closed form's step: the largest rank's collectives and optimizer,
  // overlapping the slowest rank's passes.
  const RankState* largest = &w.LargestRank();
  const RankStepCost& big = c.rank_dp[size_t(largest - w.rank_state.data())];
  c.grad_reduce_s = big.grad_reduce_s;
  c.param_gather_s = big.param_gather_s;
  c.grad_reduce_chunks = big.grad_reduce_chunks;
  c.param_gather_chunks = big.param_gather_chunks;
  // The first stage's last bucket: its backward ends the step (and its
  // forward starts the next), whichever rank holds the most.
  c.grad_reduce_chunks.tail_s = c.rank_dp[0].grad_reduce_chunks.tail_s;
  c.param_gather_chunks.tail_s = c.rank_dp[0].param_gather_chunks.tail_s;
  c.optimizer_s = big.optimizer_s;
  c.data_read_s = DataReadSeconds(s);
  return c;
}

}  // namespace trainsim
