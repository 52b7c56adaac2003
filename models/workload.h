// The workload of one training step on one GPU: the operators of forward,
// backward and recompute of a transformer layer for one micro batch (shapes
// after tensor/context sharding), the extra work of the first and last
// pipeline stages, the communication each parallelism adds, and the optimizer.
// Pure counting: no hardware here. Times come from sim/gpu_cost_model.h and
// sim/collective_model.h; schedules from sim/analytical_step.h and sim/des/.
#pragma once

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "models/op_name.h"
#include "sim/core/rank_layout.h"
#include "sim/core/scenario.h"
#include "sim/core/stage_plan.h"

namespace trainsim {

enum class OpClass {
  kGemm,        // tensor-core matmul; time from FLOPs and the GEMM efficiency curve
  kAttention,   // fused (flash) attention core; its own efficiency curve
  kMemoryBound  // elementwise, norms, softmax, optimizer: bytes over HBM bandwidth
};

struct Operator {
  OpName name;
  OpClass cls = OpClass::kMemoryBound;
  double flops = 0;
  double bytes = 0;      // HBM traffic
  long m = 0, n = 0, k = 0;
  long batch = 1;        // batched GEMMs (unfused attention: one per head)
  // GEMM: the streams a batch's GEMMs are issued on, a kernel each and at
  // most this many running at once (Transformer Engine's grouped GEMM of the
  // local experts: FrameworkProfile::grouped_gemm_streams); 0: one batched
  // kernel runs them all together.
  int batch_streams = 0;
  bool low_precision = false;  // runs in fp8 when the scenario's precision is fp8
  double seq = 0;        // attention: key length the kernel iterates over
  double head_dim = 0;   // attention: the mean of the query/key and value head dims (the kernel's efficiency)
  AttentionKernel attention_kernel = AttentionKernel::kFlash;  // attention: whose rates it runs at
  // GEMM: both operands are activations (unfused attention's batched
  // matmuls), so its backward is two data gradients; otherwise the second
  // operand is a weight (one per batch entry: a local expert's) and the
  // backward's second GEMM is that weight's gradient.
  bool activation_operands = false;
  // GEMM: bytes the epilogue moves per output element (2: writes a bf16
  // output; 8: reads and writes an fp32 accumulator, as a weight gradient
  // accumulated into Megatron's main_grad does).
  double out_bytes = 2;
  // GEMM: a low-precision one accumulates in split mode (partial sums
  // promoted to fp32; FrameworkProfile::fp8_backward_split_accumulator).
  bool split_accumulator = false;
  // CUDA kernels the framework launches for it: the host issues each one
  // (sim/cost/host_issue.h), e.g. one GEMM per local expert.
  int kernels = 1;
  // Of `kernels`, those that quantize its output for the next GEMM: the
  // backward has nothing to quantize there (the gradient passes a cast
  // through), so the op's backward launches the rest.
  int cast_kernels = 0;
  // The kernels it actually launches: none without work (a cast the
  // precision does not need), else at least one.
  int LaunchedKernels() const { return flops > 0 || bytes > 0 ? std::max(1, kernels) : 0; }
  // Memory-bound: the kernels its backward launches where autograd's are not
  // the forward's less its casts (an eager chain whose gradient takes masks
  // and selects); 0: those.
  int backward_kernels = 0;
  // Memory-bound: the backward's HBM traffic when it is not twice the
  // forward's (an unfused chain of elementwise ops, whose autograd does other
  // passes than the forward's; a pure data movement, whose backward moves the
  // same bytes back); < 0: twice `bytes`.
  double backward_bytes = -1;
  // The host reads a result of the GPU before it issues this operator (a
  // device-to-host sync: the dropless dispatcher's token counts), so the GPU
  // has run everything before it by then and waits for this one's launch.
  bool host_waits = false;
  // Launched inside a CUDA graph (FrameworkProfile::cuda_graph_modules): the
  // host launches the graph of a run of such operators, not their kernels.
  bool graphed = false;
};


// What moves an overlapped collective's data, which decides what it takes
// from the compute it overlaps (sim/step_costs.cc charges it).
enum class CommEngine {
  kNccl,                  // NCCL kernels on a side stream: one CTA (SM) per channel while they run
  kUserbufferPipelined,   // TE userbuffers GEMM + reduce-scatter pipeline: the GEMM runs on the SMs left over
  kUserbufferBulk,        // TE userbuffers bulk all-gather / reduce-scatter beside a GEMM, sharing SMs
  kCopyEngine,            // TE userbuffers ring exchange: copy engines, no SMs
  kMoeDispatcher          // the MoE token dispatcher's kernels (parallelism.moe_dispatcher): NCCL's, DeepEP's or HybridEP's SMs
};

// CommOp::partner values other than an operator's index.
constexpr int kWholePass = -1;  // overlaps the pass's compute as a whole
constexpr int kNoPartner = -2;  // its partner is absent from the pass (a frozen weight's gradient GEMM): nothing hides it

enum class TokenTrip { kNone, kDispatch, kCombine };

struct CommOp {
  OpName name;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CommGroup group = CommGroup::kTensor;
  double bytes = 0;          // the full (gathered / reduced) buffer per rank, as nccl-tests counts "size"
  bool overlapped = false;   // hidden behind compute by the framework (TP comm overlap, wgrad re-gather)
  OpName overlaps_op;        // name of the operator it is pipelined with (e.g. the GEMM it feeds); empty: the whole pass
  CommEngine engine = CommEngine::kNccl;  // meaningful when overlapped
  // That operator, by its index in the pass's ops (BuildWorkload resolves
  // overlaps_op once), kWholePass or kNoPartner.
  int partner = kWholePass;
  // A token dispatch or combine that deduplicates (DeepEP, HybridEP): `bytes`
  // are top_k routed copies of each token, over `experts` experts spread
  // evenly on the group; a token crosses to another NVLink domain once per
  // domain holding any of its experts, and reaches each such GPU once.
  // 0: a plain all-to-all of `bytes`.
  int dedup_top_k = 0;
  int dedup_experts = 0;
  // Which way a token dispatcher's kernel carries the tokens: out to their
  // experts (the dispatch, and the combine's backward) or back (the combine,
  // which also sums each token's top_k outputs, and the dispatch's backward).
  // DeepEP's two kernels run at different rates where they leave its design
  // (FrameworkProfile::deepep_max_nvlink_peers).
  TokenTrip trip = TokenTrip::kNone;
  // MoE tokens (or their routing probabilities) on their way to or from the
  // experts: the backward sends their gradients back the same way (the
  // reverse collective). Token counts and the routing map have none.
  bool carries_tokens = false;
};

// Work of one pass (forward, backward or recompute) of one unit for one micro batch.
struct PassWork {
  std::vector<Operator> ops;
  std::vector<CommOp> comms;
  double TotalFlops() const;
};

// The per-layer collectives of one sharded unit (ZeRO-2's gradient
// reduce-scatter, FSDP's gathers too): the layer's own parameters in the
// shard group (kShard), its routed experts' in the expert shard group
// (kExpertShard). A collective the unit does not have has no bytes.
struct ShardUnitComms {
  CommOp gather, reduce;                // kShard
  CommOp expert_gather, expert_reduce;  // kExpertShard
};

// What one GPU of a pipeline rank holds and moves once per step.
// The once-per-step data-parallel collectives by parallelism.data_sharding:
//   none       gradient all-reduce over the replicas (kData)
//   optimizer  gradient reduce-scatter and parameter all-gather in the shard group (kShard)
//   gradients  parameter all-gather in the shard group; the gradients were reduce-scattered
//              in every backward (Workload::LayerWork backward)
//   full       nothing but HSDP's: parameters and gradients move per layer in the passes
// and with HSDP (shard groups < replicas) an all-reduce of each rank's gradient
// shard across the shard groups (kShardReplica).
// The routed experts' parameters are held by the expert-DP ranks
// (kExpertData) instead: their gradients are reduced, and with the distributed
// optimizer their state sharded, over that group; ZeRO-2 and FSDP shard them
// over kExpertShard, in the layers' passes as the rest.
struct RankState {
  double params_per_gpu = 0;            // everything, experts included
  double trainable_params_per_gpu = 0;  // params_per_gpu, or the LoRA adapters' alone
  double expert_params_per_gpu = 0;     // the routed experts' part of params_per_gpu
  double expert_trainable_params_per_gpu = 0;  // the routed experts' part of the trainable ones (theirs, or their LoRA adapters)
  double grad_reduce_bytes = 0;   // DP gradient buffer per step (without the experts')
  CollectiveKind grad_reduce_kind = CollectiveKind::kAllReduce;
  CommGroup grad_reduce_group = CommGroup::kData;
  double grad_replica_reduce_bytes = 0;  // HSDP: the gradient shard all-reduced across shard groups
  double param_gather_bytes = 0;  // DP parameter all-gather per step (kShard; distributed optimizer, ZeRO-2)
  double expert_grad_reduce_bytes = 0;   // over kExpertData, grad_reduce_kind
  double expert_param_gather_bytes = 0;  // over kExpertData (distributed optimizer) or kExpertShard (ZeRO-2)
  double optimizer_bytes = 0;     // HBM traffic of the optimizer step
  // Chunk 0's part of params_per_gpu: with per-chunk DP syncs, the chunk
  // whose gradients reduce last and whose parameters are gathered first.
  double first_chunk_fraction = 1;
  // The part of the rank's per-step DP gradient buffer (and of its parameter
  // gather) in its last gradient bucket: the framework's buckets
  // (FrameworkProfile::grad_bucket_*) fill in the order the backward
  // produces gradients, so the last one holds the first layers and the
  // embedding; its reduce-scatter starts when the backward ends and its
  // all-gather must end before the next forward starts: nothing hides them.
  // Megatron-Core buckets only the first pipeline stage's first model chunk
  // (distributed_data_parallel.py: bucket_size None when pp_rank > 0 or
  // disable_bucketing, which training.py sets for chunks after the first), so
  // this is 0 on the other ranks, and 0 without overlap or buckets.
  double last_bucket_fraction = 0;
  // The part of the rank's parameters model chunk `chunk` of `chunks` holds:
  // chunk 0 its own, the others the rest evenly.
  double ChunkFraction(int chunk, int chunks) const {
    return chunks <= 1 ? 1.0 : chunk == 0 ? first_chunk_fraction : (1 - first_chunk_fraction) / (chunks - 1);
  }
};

// One kind of transformer layer (sim/core/model_spec.h LayerKind): its passes
// for one micro batch on one GPU and what it holds. A model's layers are
// one or a few kinds (dense and MoE MLPs, full and windowed attention).
struct LayerWork {
  LayerKind kind;
  PassWork forward;
  PassWork backward;
  PassWork recompute;  // empty without recompute
  double params_per_gpu = 0;             // after TP (attention, dense MLP) and EP x ETP (routed experts)
  double trainable_params_per_gpu = 0;   // params_per_gpu, or the LoRA adapters'
  double expert_params_per_gpu = 0;      // the routed experts' part of params_per_gpu
  double expert_trainable_params_per_gpu = 0;  // the routed experts' part of the trainable ones (their LoRA adapters under LoRA)
  // Under delayed fp8 scaling with the amax reduction on (Workload::chunk_amax_reduce):
  // the amaxes one layer adds to its chunk's reductions, 4 B each: Transformer
  // Engine keeps 3 per fp8 GEMM in the forward (input, weight, output) and 2 in
  // the backward (output gradient, input gradient); a grouped GEMM, per expert.
  double fp8_amax_forward_bytes = 0;
  double fp8_amax_backward_bytes = 0;
};

struct Workload {
  std::vector<LayerWork> kinds;    // the distinct layer kinds of the model
  std::vector<int> kind_of_layer;  // per model layer, its index in kinds
  const LayerWork& layer(int i) const { return kinds[size_t(kind_of_layer[size_t(i)])]; }
  // Layers of each kind (indexed as kinds) in virtual stage vs.
  std::span<const int> KindCounts(int vs) const { return {vs_kind_counts.data() + size_t(vs) * kinds.size(), kinds.size()}; }
  std::vector<int> vs_kind_counts;  // per virtual stage, kinds.size() each, filled by BuildWorkload
  // Of those, the layers whose recompute pass runs: all of them, but with
  // Training::recompute_layers only the first N of each virtual stage.
  std::span<const int> RecomputeKindCounts(int vs) const {
    return {vs_recompute_counts.data() + size_t(vs) * kinds.size(), kinds.size()};
  }
  std::vector<int> vs_recompute_counts;

  PassWork embedding_forward, embedding_backward;  // first stage
  PassWork head_forward, head_backward;            // last stage: final norm, LM head, loss
  int mtp_layers = 0;  // multi-token prediction: last stage, each a layer of the last kind plus the head again

  CommOp pipeline_p2p;     // activations of one micro batch between stages (each direction)
  StagePlan stages;        // layers of each pipeline rank and chunk
  std::vector<RankState> rank_state;  // per pipeline rank
  const RankState& LargestRank() const;  // the rank holding the most parameters
  double cp_exchange_bytes_per_layer = 0;  // K/V ring exchange per layer, forward
  // Sharded data parallel, per micro batch and virtual stage: the unit
  // (one layer, as torchtitan and Megatron FSDP wrap) whose collectives
  // nothing hides: FSDP's gather of the first unit before its forward, the
  // reduce-scatter of the last unit's gradients after its backward (ZeRO-2
  // and FSDP). Bytes 0 when the mode has none.
  ShardUnitComms shard_unit;
  // Delayed fp8 scaling with FrameworkProfile::fp8_amax_reduction: per micro
  // batch and virtual stage, one blocking all-reduce (max) over the
  // reduction group (the stage's ranks, CommGroup::kStage, or the TP group)
  // after the chunk's forward and one after its backward, of its layers'
  // amaxes (LayerWork::fp8_amax_*_bytes). Not overlapped; no reduction (0
  // bytes) without an amax history or in a group of one.
  CommOp chunk_amax_reduce;
  // That all-reduce after virtual stage vs's forward (or backward), sized by its layers.
  CommOp ChunkAmaxReduce(int vs, bool backward) const;
  // What virtual stage vs adds once per micro batch to its forward (or backward) beside its
  // layers' passes, with nothing to hide behind: the sharded edge unit's collectives
  // (shard_unit) and the amax all-reduce (ChunkAmaxReduce). A
  // collective a scenario does not have has no bytes. The step costs and --operators read it.
  std::array<CommOp, 3> ChunkCollectives(int vs, bool backward) const;
  // Per layer, on one GPU (after TP), the largest kind: what FSDP gathers and
  // keeps in flight (its routed experts' part apart: sharded over their own
  // group), and the trainable parameters whose gradients it reduces.
  double layer_params_per_gpu = 0;
  double layer_expert_params_per_gpu = 0;
  // The first stage's embedding and the last stage's LM head, per GPU (after
  // TP): FSDP's edge units, gathered whole while they run (0: tied into the
  // embedding on a single stage).
  double embedding_params_per_gpu = 0;
  double head_params_per_gpu = 0;
  double layer_trainable_params_per_gpu = 0;
  double layer_expert_trainable_params_per_gpu = 0;

  // FLOPs of the whole step over all GPUs by Megatron-LM's
  // num_floating_point_operations (recompute not counted).
  double model_flops_per_step = 0;
};

// Tokens each local expert computes per micro batch, relative to a perfectly
// balanced router: the capacity factor when tokens are dropped and padded to
// it (balanced or not), else 1 when the run forced balance or the framework's
// estimate of a dropless router's most-loaded expert (the all-to-all waits
// for it), cut to the capacity where tokens are dropped without padding.
double ExpertLoadFactor(const Scenario& s);

// A GEMM operator of m x n x k, `batch` of them: its FLOPs and the HBM bytes
// of its 16-bit operands and output, as every workload operator counts them.
Operator GemmOperator(const OpName& name, double m, double n, double k, bool low_precision, double batch = 1);

// The model clamps its gated activation's inputs (ModelSpec::activation_clamp)
// and the framework does so in passes of its own before the activation's
// kernel (FrameworkProfile::activation_clamp_pass), which keep a clamped copy
// of the activation's input for its backward.
bool ClampsActivationApart(const Scenario& s);

// kAll: the whole workload. kHoldings: what each pipeline rank holds
// (layer kinds with their parameters, the stage plan, rank_state, the
// largest layer), all that EstimateMemory reads, without the passes (their
// operators and collectives): the planner checks memory first and builds
// the passes only for the configurations that fit.
enum class WorkloadParts { kAll, kHoldings };
Workload BuildWorkload(const Scenario& s, WorkloadParts parts = WorkloadParts::kAll);

// Sets each comm's partner from its overlaps_op: the index of the pass's
// operator of that name, kNoPartner when there is none, kWholePass when unnamed.
void ResolvePartners(PassWork& pass);

// Parameters of the LoRA adapters (A: in x rank, B: rank x out) on one
// transformer layer's target projections, the whole layer (before TP): on an
// MoE layer the shared experts' MLP and each routed expert's (one pair per expert).
double LoraLayerParameters(const ModelSpec& m, const Finetune& f, const LayerKind& kind);
// The adapters of one routed expert (fc1, fc2 as targeted); 0 without MoE.
double LoraRoutedExpertParameters(const ModelSpec& m, const Finetune& f);
// The adapters of every layer: what a LoRA run trains and checkpoints.
double LoraParameters(const ModelSpec& m, const Finetune& f);
// Those a token passes through: a routed expert's top_k times per MoE layer,
// not experts times (model FLOPs, Megatron-Core's MoE convention).
double LoraActiveParameters(const ModelSpec& m, const Finetune& f);

// Bytes of one weight of a layer's base as a GPU holds it and FSDP gathers
// it: a frozen LoRA base under fp8 is Transformer Engine's fp8 copy alone
// (fp8_model_init: no optimizer updates it, so no 16-bit copy), else 16-bit.
double BaseWeightBytes(const Scenario& sc);

// Megatron-LM model FLOPs per step (training/training.py
// num_floating_point_operations, all GPUs): GQA- and SwiGLU-aware; the
// attention core's causal half (a window's or chunk's span at most); for MoE
// layers the routed experts count top_k times and the shared experts once
// (Megatron-Core's MoE convention, routers not counted; under a capacity
// factor below 1, top_k times that factor: what is computed); MLA by its own term
// there; MTP modules as extra layers plus their projection and head.
double MegatronModelFlops(const ModelSpec& m, long global_batch, long seq_len);

// The same convention for a training step under training.finetune: LoRA
// does the forward and the data gradients of the frozen weights (4 of
// Megatron's 6 FLOPs per parameter and token), the attention core's all,
// and 6 per adapter parameter and token.
double ModelFlopsPerStep(const ModelSpec& m, const Training& t);

}  // namespace trainsim
