// The per-micro-batch cost of each pipeline stage and the per-step costs of
// data parallelism and the optimizer, from the workload and the cost models.
// Both the analytical schedule (analytical_step.h) and the DES (des/) start
// from these numbers, so where no contention separates them they agree.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "models/workload.h"
#include "sim/core/result.h"
#include "sim/core/scenario.h"

namespace trainsim {

// One micro batch through one virtual stage (a model chunk of a pipeline
// rank), or through all chunks of a rank together.
struct StageCost {
  double forward_compute_s = 0;
  double backward_compute_s = 0;  // includes recompute
  double forward_exposed_comm_s = 0;   // TP/CP communication on the critical path
  double backward_exposed_comm_s = 0;
  // The MoE token all-to-alls' (EP group) part of the exposed communication:
  // the DES sends them as flows on the links instead of charging this time
  // (with parallelism.moe_a2a_overlap, only what the compute does not hide).
  double forward_all_to_all_s = 0;
  double backward_all_to_all_s = 0;
  double forward_s() const { return forward_compute_s + forward_exposed_comm_s; }
  double backward_s() const { return backward_compute_s + backward_exposed_comm_s; }
  double slot_s() const { return forward_s() + backward_s(); }
  StageCost& operator+=(const StageCost& o);
};

// What data parallelism and the optimizer cost one pipeline rank per step.
// A once-per-step DP collective cut per model chunk (Megatron-Core syncs each
// chunk of the interleaved schedule on its own): the time of chunk 0's share
// (its layers, and the embedding on the first rank) and of each other chunk's.
// With one chunk, first_s is the whole collective.
struct DpChunkTimes {
  double first_s = 0;
  double other_s = 0;
  // Chunk 0's last gradient bucket (RankState::last_bucket_fraction): its
  // reduction starts when the chunk's last backward ends, its gather ends
  // before the chunk's first forward starts. Part of first_s.
  double tail_s = 0;
  double Of(int chunk) const { return chunk == 0 ? first_s : other_s; }
};

struct RankStepCost {
  double grad_reduce_s = 0;    // DP reduce-scatter (distributed optimizer) or all-reduce
  double param_gather_s = 0;   // DP all-gather of updated parameters (distributed optimizer)
  DpChunkTimes grad_reduce_chunks, param_gather_chunks;
  double optimizer_s = 0;      // Adam step on the local shard
};

struct StepCosts {
  Workload workload;
  // Per virtual stage vs = chunk * pipeline + rank: its layers, plus the
  // embedding on the first and the LM head and loss on the last.
  std::vector<StageCost> virtual_stage;
  std::vector<StageCost> rank;       // per pipeline rank, its chunks together
  std::vector<RankStepCost> rank_dp;  // per pipeline rank
  int slowest_rank = 0;               // the rank with the longest slot
  const StageCost& slowest() const { return rank[size_t(slowest_rank)]; }
  // The pipeline's fill and drain: the step's time beyond the slowest
  // rank's m slots when nothing but the passes takes time: the schedule's
  // order (1F1B, interleaved where the middle chunks differ) walked pass by
  // pass, each chunk's own times (exact). Past the walk's budget (PP 32 and
  // deeper, deep interleaving) and for even middle chunks:
  // the slowest rank waits for the first micro batch's forward
  // and the last one's backward through the ranks before it, and for the
  // round trip through the ranks after it less what its own warm-up
  // forwards and outstanding backwards cover, over v. (p-1)/v slots when the
  // ranks are even; less when the others are lighter (an uneven layout, a
  // stage holding only the loss).
  double FillDrainS(int virtual_stages, double micro_batches) const;
  double p2p_s = 0;            // one micro batch's activations between neighbouring stages
  // The step's data-parallel and optimizer figures as the closed form uses
  // them: the collectives of the rank holding the most parameters.
  double grad_reduce_s = 0;
  double param_gather_s = 0;
  DpChunkTimes grad_reduce_chunks, param_gather_chunks;
  double optimizer_s = 0;
  double data_read_s = 0;  // the next step's tokens from the storage (DataReadSeconds), read during this step
  double tp_comm_total_per_layer_s = 0;  // TP collectives of one layer, fwd+bwd, for reports
};

// What a schedule (analytical or DES) makes of the step costs: the step
// time and its breakdown, and what the DES measured of checkpoints. The run
// layer turns it into a SimulationResult (throughput, MFU, memory, run).
struct StepTiming {
  double step_time_s = 0;
  StepBreakdown breakdown;
  std::optional<double> checkpoint_write_s;  // mean write time, when simulated
  std::optional<double> checkpoint_stall_s;  // per checkpoint, when simulated
  std::vector<TimelineEvent> timeline;       // when recorded
};

// Exposed part of a pass's communication: an overlapped comm hides behind the
// operator it is pipelined with (or, naming none, behind the pass's compute);
// what exceeds that operator's time is on the critical path, as is every
// comm that is not overlapped.
// Includes what overlapped communication costs the compute it overlaps: the
// SMs its kernels hold (OverlapSlowdown) for as long as both run.
double ExposedCommTime(const Scenario& s, const PassWork& pass, double pass_compute_s, bool backward = false);

// Extra compute time per second of compute that shares the GPU with an
// overlapped collective run by `engine`: k / (SMs - k) for the k SMs the
// framework profile says it holds.
double OverlapSlowdown(const Scenario& s, CommEngine engine);

// A forward or backward pass's exposed communication (exposed_s, counting its
// expert all-to-alls, all_to_all_s of them, in full) under Megatron-Core's
// overlap_moe_expert_parallel_comm (parallelism.moe_a2a_overlap), which pairs
// one micro batch's all-to-alls with another's compute: only what exceeds the
// compute shows, and the compute runs without the dispatcher's SMs while both
// run (charged as exposed time, so the DES's flows keep it). Leaves in
// all_to_all_s what still shows. Without the overlap, exposed_s unchanged.
double WithAllToAllOverlap(const Scenario& s, double exposed_s, double& all_to_all_s, double compute_s);

// What an overlapped once-per-step DP collective (Megatron-Core
// overlap_grad_reduce or overlap_param_gather) adds to the step under a
// pipeline schedule with `chunks` model chunks per rank. Each chunk syncs on
// its own: its gradients once its last backward of the step starts, its
// parameters before its first forward (the next chunk's prefetched
// meanwhile). The chunks' collectives queue on one stream; consecutive
// chunks' last backwards (first forwards) are `pipeline` passes of one chunk
// apart (the last group of micro batches of the interleaved schedule);
// `chunk_pass_s` is one micro batch's pass of one chunk, and chunk 0 syncs
// last (gathers first). The collectives that run before the last chunk's
// pass slow the passes they overlap by `nccl_slowdown` (NCCL's SMs); from
// there, whichever ends last, the slowed pass or the queue, ends the step.
// With one chunk: max(pass x slowdown, collective - pass), and at least the
// last bucket's collective (t.tail_s), which nothing hides.
double OverlappedDpTime(const DpChunkTimes& t, double chunk_pass_s, int chunks, int pipeline, double nccl_slowdown);

// Time of a pass's expert-parallel all-to-alls (never overlapped: Megatron-Core's
// dispatcher waits for them).
double AllToAllTime(const Scenario& s, const PassWork& pass);

// The routed experts' once-per-step collectives over expert-DP (Megatron-Core's
// expert data-parallel group): the gradient reduction (a reduce-scatter with the
// distributed optimizer; none under ZeRO-2 and FSDP, which reduce per layer) and
// the parameter all-gather after the optimizer step (ZeRO-2's in the expert shard group).
CommOp ExpertGradientReduce(const Scenario& s, const RankState& state);
CommOp ExpertParamGather(const Scenario& s, const RankState& state);

// The once-per-step data-parallel collectives of a pipeline rank holding
// `state`, for all its parameters (a model chunk's share moves that part of
// each): its gradients' (the DP reduction, HSDP's all-reduce of the shard
// across the shard groups, the routed experts' over expert-DP) and its
// parameters' gathers after the optimizer step. A collective the rank does
// not have has no bytes. The step costs time them; --operators lists them.
struct StepDpCollectives {
  std::array<CommOp, 3> gradients;
  std::array<CommOp, 2> parameters;
};
StepDpCollectives DpCollectivesOf(const Scenario& s, const RankState& state);

// Activation offload (training.activation_offload_layers, pipeline 1): layer
// i's activations go to the host behind layer i+1's forward and come back
// behind layer i+1's backward (Transformer Engine's offload context copies on
// a side stream, one layer ahead); a copy longer than that compute is on the
// critical path. Per micro batch, summed over the offloaded layers.
struct ActivationOffloadTimes {
  int layers = 0;
  double bytes = 0;          // per micro batch, all offloaded layers
  double copy_s = 0;         // one direction, all offloaded layers
  double forward_exposed_s = 0;
  double backward_exposed_s = 0;
};
ActivationOffloadTimes ActivationOffload(const Scenario& s, const Workload& w);

StepCosts ComputeStepCosts(const Scenario& s);
// The same over the scenario's workload built already (BuildWorkload(s)).
StepCosts ComputeStepCosts(const Scenario& s, Workload workload);

}  // namespace trainsim
