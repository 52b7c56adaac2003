// Hardware profiles: the GPU, node, fabric and storage descriptions a
// scenario refers to (value types; sim/io/profile_loader.h reads them from
// hardware-profiles/ or a path). Units are in
// the field names; all rates are stored in SI base units (bytes/s, FLOP/s, s).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/precision.h"

namespace trainsim {

// The attention core's kernel: the GPU's fused flash kernel (cuDNN's, which
// Transformer Engine runs, or FlashAttention-3's on Hopper), the unfused
// GEMM + softmax path, or the flash-attn 2 package's kernel, written for
// Ampere (mma.sync, no TMA or warpgroup MMA), which TE takes on Hopper when
// NVTE_FUSED_ATTN=0.
enum class AttentionKernel { kFlash, kUnfused, kFlash2 };
// The names profiles and scenarios use, in enum order: flash, unfused, flash2.
const std::vector<std::string>& AttentionKernelNames();
std::string ToString(AttentionKernel k);
AttentionKernel AttentionKernelNamed(const std::string& name);
// Whether the kernel keeps the scores on chip (flash and flash2).
inline bool IsFused(AttentionKernel k) { return k != AttentionKernel::kUnfused; }

// What the backward re-runs instead of keeping activations (training.recompute).
enum class Recompute { kNone, kSelective, kFull };
// The names scenarios and profiles use, in enum order: none, selective, full.
const std::vector<std::string>& RecomputeNames();
std::string ToString(Recompute r);
Recompute RecomputeNamed(const std::string& name);

// The HBM a training process cannot give its tensors, in GiB, unless a GPU
// profile says otherwise. An estimate: ~7% of an 80 GB H100 (the CUDA
// context, NCCL's buffers, cuBLAS/cuDNN workspaces and the PyTorch caching
// allocator's slack; PyTorch practice), the figure H100 runs were validated
// with. A fixed amount, not a share: none of those grows with the HBM
// (7% of a 288 GB B300 would be 20 GiB). Calibration replaces it.
inline constexpr double kDefaultReservedMemoryGib = 5.6;

// The attention backward / forward rate ratios a profile may hold: outside
// them a timing was wrong, not the kernel (calibrate refuses to write one).
inline constexpr double kLeastAttentionBwdFwdRatio = 0.05, kMostAttentionBwdFwdRatio = 4;

struct GpuProfile {
  std::string name;
  // A profile `trainsim calibrate --backend cpu` wrote of this machine's CPU
  // (its measured_on: cpu): it predicts the layer step it measured, and no
  // node takes it as its GPU.
  bool cpu_stand_in = false;
  std::string source_file;  // the profile's path ("" when built in code)
  double memory_bytes = 0;
  // What the CUDA context, NCCL's buffers, library workspaces and the
  // allocator's slack hold of the HBM: the training's tensors get the rest
  // (the profile's reserved_memory_gib, else kDefaultReservedMemoryGib).
  double reserved_memory_bytes = 0;
  double hbm_bytes_per_s = 0;
  int sms = 0;
  double tdp_w = 0;
  // The most its NVLink ports carry per direction (the GPU's generation and
  // link count); 0 where the profile does not say. A node may wire fewer
  // links, never more: the check that a node file names the GPU it was
  // written for.
  double nvlink_bytes_per_s = 0;
  std::map<std::string, double> peak_flops;      // "bf16", "fp16", "fp8", "mxfp8", "nvfp4", "fp32" -> FLOP/s
  std::map<std::string, double> matmul_max_eff;  // asymptotic (K -> infinity) fraction of peak
  std::map<std::string, double> matmul_k_half;   // K at which a GEMM reaches half of it
  int matmul_tile_m = 128;
  int matmul_tile_n = 128;
  double matmul_min_kernel_s = 0;
  // Per precision, the rate of a GEMM that promotes its partial sums to fp32
  // every few MMA steps (cuBLASLt CUBLASLT_MATMUL_DESC_FAST_ACCUM 0, what
  // frameworks run their fp8 backward GEMMs with) against the fast-accumulating
  // one that max_eff/k_half describe; 1 where the tensor cores accumulate in
  // fp32 anyway (Blackwell) or the profile gives none.
  std::map<std::string, double> matmul_split_accumulator_eff;
  // The GPU's fp8 GEMMs take only the TN layout (Hopper's and Ada's
  // cuBLASLt): a GEMM that reads an fp8 operand the other way round reads a
  // transposed copy someone made (Blackwell takes every layout).
  bool fp8_gemm_tn_only = false;
  double attention_fwd_flops = 0;  // flash kernel throughput at long sequences
  // The backward's FLOP rate (2.5x the forward's FLOPs) over the forward's;
  // above 1 where the backward kernel outruns the forward (measured on H200).
  double attention_bwd_fwd_ratio = 0.5;
  double attention_half_seq = 512;
  // The flash-attn 2 kernel's (AttentionKernel::kFlash2) rates, on the same
  // sequence curve; 0: the profile gives none (a scenario asking for it is
  // bad input).
  double attention_flash2_fwd_flops = 0;
  double attention_flash2_bwd_fwd_ratio = 0;
  // The kernel's rate at a head dim against its rate at 128, by head dim:
  // linear between the points (128 is 1.0) and flat outside them. A smaller
  // head does less MMA work per softmax exponential; past 128 a backward
  // kernel runs out of registers and shared memory for its tiles. The
  // backward's points are the forward's unless the profile gives its own.
  // Each holds 128: 1.0 beside the profile's points, or nothing (1.0 at every head dim).
  std::map<int, double> attention_head_dim_efficiency;           // forward
  std::map<int, double> attention_head_dim_backward_efficiency;  // backward
  double AttentionHeadDimEfficiency(double head_dim, bool backward) const;
  double memory_bound_efficiency = 0.8;
  // What every memory-bound kernel takes beyond its bytes at that rate: the
  // launch to the first CTA, the first DRAM round trip, the last CTAs
  // draining. A kernel of a few MB spends as long on it as on its bytes, so
  // small shapes (high TP, CP, short sequences, small models) pay it most.
  double memory_kernel_fixed_s = 2e-6;
  // Tensor-core work sustained for hours runs at the power limit's clock, not
  // the boost clock the peaks and short benchmarks use.
  double sustained_clock_fraction = 1.0;
  // Per precision, the clock fraction a GEMM's max_efficiency/k_half still
  // needs: they replace sustained_clock_fraction where those figures were
  // measured at sustained clocks already (1.0), so the derate is not taken twice.
  std::map<std::string, double> matmul_clock_fraction;

  // Dense peak of a precision's GEMMs (its GemmRateKey, sim/core/precision.h);
  // a key the profile lacks falls back: mxfp8 to fp8, then to the 16-bit one.
  double PeakFlops(Precision p) const;
  double MatmulMaxEfficiency(Precision p) const;
  double MatmulKHalf(Precision p) const;
  double MatmulClockFraction(Precision p) const;
  double MatmulSplitAccumulatorEfficiency(Precision p) const;
  bool SupportsFp8() const { return peak_flops.count("fp8") > 0; }
  // Whether the tensor cores run the precision at all (its RequiredPeakKey).
  bool Supports(Precision p) const;
  // Why it does not ("GPU 'h100-sxm-80g' has no block-scaled tensor cores
  // for nvfp4 (...)"), the one wording of the refusal; "" when it does.
  std::string UnsupportedReason(Precision p) const;
};

// The software stack's defaults: which kernels and overlaps the training
// framework uses. Scenario keys override each of them.
// What data parallelism shards over the gradient replicas (design.md 3b):
// kNone = DDP (every replica holds everything), kOptimizer = ZeRO-1 / Megatron's
// distributed optimizer, kGradients = ZeRO-2 (gradients reduce-scattered in
// every backward, each rank keeps its shard), kFull = FSDP / ZeRO-3 (parameters
// sharded too, all-gathered per layer in forward and again in backward).
enum class DataSharding { kNone, kOptimizer, kGradients, kFull };
std::string ToString(DataSharding d);
// The names profiles and scenarios use, in enum order.
const std::vector<std::string>& DataShardingNames();
// The mode called `name`, one of DataShardingNames() (a loader's Choice checked it); kNone for any other.
DataSharding DataShardingNamed(const std::string& name);

// How an MoE layer's tokens reach their experts' EP ranks (Megatron-Core's
// token dispatcher). kAllToAll (moe_token_dispatcher_type alltoall) sends one
// row per (token, expert) pair in an NCCL all-to-all. The flex dispatcher's
// DeepEP and HybridEP kernels send a token across the NICs once per NVLink
// domain that holds any of its experts (to the same-index GPU there) and over
// NVLink once per destination GPU, and hold SMs while they run. kAllGather
// (allgather, Megatron-Core's own default) gathers every token of the ETP x EP
// group onto each rank, keeps those routed to its experts, and returns their
// outputs in an fp32 reduce-scatter over the same group.
enum class MoeDispatcher { kAllToAll, kDeepEp, kHybridEp, kAllGather };
// The names profiles and scenarios use, in enum order.
const std::vector<std::string>& MoeDispatcherNames();
std::string ToString(MoeDispatcher d);
// The dispatcher called `name`, one of MoeDispatcherNames() (a loader's
// Choice checked it); kAllToAll for any other.
MoeDispatcher MoeDispatcherNamed(const std::string& name);

// Which ranks agree on a delayed-scaling fp8 tensor's amax (FrameworkProfile::fp8_amax_reduction).
enum class Fp8AmaxReduction { kNone, kTensor, kStage };
// The names profiles use, in enum order.
const std::vector<std::string>& Fp8AmaxReductionNames();
std::string ToString(Fp8AmaxReduction r);
// The group called `name`, one of Fp8AmaxReductionNames() (a loader's Choice checked it); kNone for any other.
Fp8AmaxReduction Fp8AmaxReductionNamed(const std::string& name);

// A framework setting that a stack's recipes turn on everywhere, nowhere, or
// only in layouts without context parallelism (a release whose configs
// switch it off where the sequence is split, e.g. MLPerf v4.1's LoRA
// configs: "TP-RS overlap not enabled with CP2").
enum class RecipeSetting { kOff, kOn, kWithoutContextParallel };
// The names profiles use, in enum order: false, true, without_context_parallel.
const std::vector<std::string>& RecipeSettingNames();
std::string ToString(RecipeSetting s);
RecipeSetting RecipeSettingNamed(const std::string& name);
// Whether the setting holds in a layout of `context` context-parallel ranks.
bool Holds(RecipeSetting s, int context);

// The projections LoRA adapts (training.finetune.target_modules, or the
// framework's default for a scenario that names none).
struct LoraTargets {
  bool qkv = true, proj = true, fc1 = true, fc2 = true;
  bool operator==(const LoraTargets&) const = default;
};

// What the framework captures in CUDA graphs: Megatron-Core's
// cuda_graph_scope (core_v0.16 transformer/enums.py CudaGraphScope), as bits
// of FrameworkProfile::cuda_graph_modules. A layer's modules ("attn", "mlp",
// "moe" together are its whole layer, the older "full" scope) replay per
// layer, forward and backward; "full_iteration" replays the whole step.
enum CudaGraphModule : unsigned {
  kGraphAttention = 1u << 0,      // attn: input norm, attention, its residual add
  kGraphMlp = 1u << 1,            // mlp: a dense layer's norm, MLP and residual add
  kGraphMoe = 1u << 2,            // moe: an MoE layer's norm, router, dispatch, experts, combine, residual (token drop with padding only)
  kGraphMoeRouter = 1u << 3,      // moe_router: an MoE layer's norm, router and shared experts
  kGraphMoePreprocess = 1u << 4,  // moe_preprocess: the dispatcher's token counts (with moe_router)
  kGraphFullIteration = 1u << 5,  // full_iteration: every kernel of the step
};
// Megatron-Core's names of the scopes, in bit order.
const std::vector<std::string>& CudaGraphModuleNames();

// Piecewise linear in x through the points (key, value), held flat past the
// first and the last; `none` where there are no points.
double Interpolate(const std::map<int, double>& points, double x, double none);

// What a flex dispatcher's kernels (DeepEP's, HybridEP's) reach over NVLink
// inside one domain, as measured: algorithm bandwidth (every token copy a GPU
// receives, its own included, per second) as a fraction of the node's NVLink
// bandwidth per direction, by the EP group's members in the domain; and,
// where the kernels are SM-bound below that, per SM they hold. Empty: the
// profile has no measurement, and the dispatch moves at NCCL's rate.
struct DispatcherNvlinkRates {
  std::map<int, double> dispatch_fraction;  // by EP members in one NVLink domain
  std::map<int, double> combine_fraction;
  double dispatch_bytes_per_s_per_sm = 0;   // 0: not SM-bound
  double combine_bytes_per_s_per_sm = 0;
  bool empty() const { return dispatch_fraction.empty(); }
  bool operator==(const DispatcherNvlinkRates&) const = default;
  // The algorithm bandwidth of a dispatch (or a combine) among `ranks`
  // members of a domain whose GPUs have `nvlink_bytes_per_s` per direction,
  // the kernels holding `sms` SMs (0: as many as they need).
  double AlgorithmBytesPerS(bool combine, double ranks, double nvlink_bytes_per_s, int sms) const;
};

struct FrameworkProfile {
  std::string name;
  // The profile this one was written as changes to (its based_on key); empty for a whole profile.
  std::string based_on;
  AttentionKernel attention_kernel = AttentionKernel::kFlash;
  double dropout = 0;
  bool tp_comm_overlap = false;
  // Without userbuffers, the stack still issues the input-gradient
  // reduce-scatter (all-reduce without SP) of a column-parallel projection
  // asynchronously on NCCL and computes the weight gradient meanwhile
  // (Transformer Engine's Linear backward; Megatron's
  // LinearWithGradAccumulationAndAsyncCommunication): false where it waits
  // for it first (2021 Megatron-LM, DTensor's redistributions).
  bool async_input_grad_comm = false;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  bool overlap_p2p = false;
  // Megatron-Core's overlap_moe_expert_parallel_comm (2025): the EP
  // all-to-alls of one micro batch run behind another's compute.
  bool moe_a2a_overlap = false;
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // The training precisions (scenario spellings) the stack has recipes for
  // (precisions:); empty: any. A run in another is simulated with this
  // profile's kernels and overlaps and says so (FrameworkPrecisionWarning).
  std::vector<std::string> precisions;
  bool distributed_optimizer = false;
  DataSharding data_sharding = DataSharding::kNone;  // the framework's default; optimizer when distributed_optimizer
  bool sequence_parallel = true;  // with tensor > 1
  // The scale training.precision fp8 (per-tensor) takes: from the amax
  // history (delayed) or the tensor's own amax (current; sim/core/precision.h).
  Fp8Scaling fp8_scaling = Fp8Scaling::kDelayed;
  // Transformer Engine's DelayedScaling reduce_amax: when an fp8_autocast
  // region ends (a model chunk's forward) and when its backward ends, the
  // amaxes of its fp8 tensors are all-reduced (max) over the amax reduction
  // group, blocking the compute stream; only under delayed scaling
  // (KeepsAmaxHistory). kNone: each rank scales by its own amaxes
  // (reduce_amax off); kTensor: over the TP group only (Megatron-Core
  // tp_only_amax_red); kStage: over the stage's TP x CP x DP ranks
  // (Megatron-Core's default amax reduction group).
  Fp8AmaxReduction fp8_amax_reduction = Fp8AmaxReduction::kNone;
  // TE userbuffers' pipelined GEMM + reduce-scatter (a row-parallel
  // projection's output under TP comm overlap) on an fp8 buffer (fp8_buf):
  // the GEMM writes fp8 at its delayed scale and the reduce-scatter moves 1 B
  // per element, summing in higher precision. Needs a scale known before the
  // GEMM, so only under delayed scaling (KeepsAmaxHistory).
  bool userbuffers_fp8_reduce_scatter = false;
  // The backward's fp8 GEMMs (data and weight gradient) accumulate in split
  // mode, promoting partial sums to fp32, while the forward's accumulate fast
  // (Transformer Engine's _2X_ACC_DGRAD/_2X_ACC_WGRAD, torchao's
  // use_fast_accum on the output GEMM only): they run at the GPU's
  // MatmulSplitAccumulatorEfficiency.
  bool fp8_backward_split_accumulator = false;
  // LoRA (training.finetune) as the stack runs it: the projections a scenario
  // without target_modules adapts, and whether the adapter beside a
  // row-parallel projection returns to the sequence-parallel layout by one
  // all-to-all each way (NeMo's a2a_experimental) instead of an all-gather of
  // its output and one of its output's gradient.
  LoraTargets lora_targets;
  double lora_dropout = 0;  // the default training.finetune.dropout
  bool lora_adapter_all_to_all = false;
  // Megatron-Core tp_comm_overlap_disable_qkv: under TP comm overlap, the
  // all-gather into the qkv GEMM is NCCL's, before the GEMM, not overlapped.
  bool tp_comm_overlap_disable_qkv = false;
  // Megatron-Core tp_comm_overlap_rs_dgrad: under TP comm overlap, the
  // reduce-scatter of a column-parallel projection's input gradient is
  // pipelined with its own data-gradient GEMM (TE userbuffers) instead of
  // running beside the weight-gradient GEMM (bulk), which a frozen weight
  // (LoRA's base) does not have: there it is NCCL's, on the critical path.
  RecipeSetting tp_comm_overlap_rs_dgrad = RecipeSetting::kOff;
  // Transformer Engine keeps the transpose of an fp8 weight (what the data
  // gradient GEMM reads on a GPU whose fp8 GEMMs take only the TN layout)
  // from the step's first micro batch; Megatron-Core's
  // disable_parameter_transpose_cache makes every micro batch's backward
  // transpose each fp8 weight again (read and write, 1 B per element each).
  bool fp8_parameter_transpose_cache = true;
  // What a scenario without training.recompute recomputes: the recipe's
  // activations_checkpoint_granularity (none in Megatron-Core's defaults).
  Recompute recompute = Recompute::kNone;
  // What its selective recompute recomputes (RecomputeModule bits, the
  // recipe's recompute_modules) when the scenario names no modules; 0: the
  // scenario's default (the attention core).
  unsigned recompute_modules = 0;
  // Its full recompute's recompute_num_layers (recompute_method block) for a
  // scenario that names none (Training::recompute_layers); 0: every layer.
  int recompute_layers = 0;
  // How selective recompute chooses: Megatron-Core's recompute_modules
  // (above), or torchtitan's "op" checkpointing policy, which keeps the
  // attention kernel's and every first matmul's outputs and recomputes every
  // other operator and every second matmul of the block (its order: q, k, v,
  // o, w1, w3, w2, so k, o and w3).
  bool selective_recompute_torchtitan_op = false;
  // The recipe's activation offload (Megatron-Core's cpu_offloading_num_layers)
  // for a scenario without training.activation_offload_layers that can take
  // it (pipeline 1, no recompute, fewer layers than the model's: the rules
  // its presets keep); 0: none.
  int activation_offload_layers = 0;
  // The recipe's pipeline layouts (sim/core/pipeline_layout.h) by pipeline x
  // virtual stages ("16x1"), for a scenario that splits its layers by no rule of
  // its own and whose layers the layout places; the MTP modules follow the model
  // (Megatron-Bridge's recipes build the layout for the model's MTP depth). A
  // derived profile's entries add to its base's, or replace those it names.
  std::map<std::string, std::string> pipeline_layouts;
  // SMs a communication kernel holds while it overlaps compute (the compute
  // runs on the rest): NCCL's channels, TE userbuffers' num_sm.
  // Bytes a weight-gradient GEMM's epilogue moves per element: 8 when it
  // accumulates into an fp32 main_grad (read + write), 2 for a plain output.
  double wgrad_out_bytes = 2;
  int nccl_overlap_sms = 0;
  int userbuffer_pipelined_sms = 0;
  int userbuffer_bulk_sms = 0;
  int deepep_sms = 0;     // DeepEP's dispatch/combine kernels
  int hybridep_sms = 0;   // HybridEP's dispatch/combine kernels
  // DeepEP's NVLink kernels address at most this many peers; an EP group with
  // more members in one NVLink domain (GB200 NVL72) runs a port of them that
  // moves each GPU's NVLink share of a dispatch, and of a combine, at these
  // rates instead of NCCL's. Its internode kernels reach at most
  // deepep_max_rdma_peers NVLink domains: a wider EP group cannot run with
  // it. 0: no such limit.
  int deepep_max_nvlink_peers = 0;
  int deepep_max_rdma_peers = 0;
  double deepep_beyond_peers_dispatch_bytes_per_s = 0;
  double deepep_beyond_peers_combine_bytes_per_s = 0;
  // DeepEP's and HybridEP's kernels over NVLink inside a domain (DeepEP's up
  // to deepep_max_nvlink_peers), where the profile gives their measured rates.
  DispatcherNvlinkRates deepep_nvlink;
  DispatcherNvlinkRates hybridep_nvlink;
  // TE's pipelined GEMM + reduce-scatter overlap (userbuffers "pipeline":
  // proj_fprop, fc2_fprop) cuts the GEMM into this many chunks, each chunk's
  // reduce-scatter behind the next chunk's GEMM: the last one's is exposed.
  int userbuffer_pipelined_splits = 1;
  int grad_reduce_bytes = 4;
  // Bytes of optimizer state per trainable parameter, sharded as the
  // optimizer is: Adam's fp32 master copy and two fp32 moments (12); NeMo's
  // Apex DistributedFusedAdam keeps only the 16 bits the bf16 parameter lacks
  // of its master (10), or its state in bf16 (6).
  double optimizer_state_bytes = 12;
  // The data-parallel gradient buckets an overlapped reduction issues as the
  // backward fills them: max(min, per_replica x DP x CP) parameters (0 and 0:
  // no buckets, the reduction of a chunk goes at once). The last bucket's
  // collective is on the critical path (RankState::last_bucket_fraction).
  double grad_bucket_min_params = 0;
  double grad_bucket_params_per_replica = 0;
  // A dropless MoE router's busiest expert (EP rank) against the mean, when
  // the run neither forces balance nor drops tokens: the all-to-all and the
  // expert GEMMs wait for it (models/workload.h ExpertLoadFactor).
  double moe_dropless_load_factor = 1.0;
  // HBM bytes the loss moves per local logit (tokens x vocab / TP), forward
  // and backward: Megatron's unfused fp32 vocab-parallel cross entropy makes
  // several passes over an fp32 copy of the logits; a fused kernel one.
  double cross_entropy_forward_bytes = 10;
  double cross_entropy_backward_bytes = 6;
  // Bytes per local logit the loss keeps from its forward to its backward:
  // Megatron's fp32 softmax (4); Transformer Engine's fused kernel writes the
  // gradient in place over the 16-bit logits (2).
  double cross_entropy_saved_bytes = 4;
  // The elementwise operators a framework runs unfused, as PyTorch eager
  // runs a model's own code (no torch.compile): HBM bytes per element at
  // 16-bit activations, forward and backward, and kernels per call. All zero
  // (the default) keeps the fused kernels' cost (Transformer Engine's
  // RMSNorm, Megatron-Core's fused rotary and swiglu).
  struct EagerElementwise {
    double forward_bytes = 0;
    double backward_bytes = 0;
    int kernels = 0;
    int backward_kernels = 0;  // 0: as many as the forward's
    bool Set() const { return forward_bytes > 0; }
    bool operator==(const EagerElementwise&) const = default;
  };
  EagerElementwise eager_norm;              // per element of the normalized tensor
  EagerElementwise eager_rotary;            // per element of the rotated queries and keys
  EagerElementwise eager_gated_activation;  // per element of the activation's output
  // Whether eager attention copies tensors around the attention kernel: GQA's
  // repeat_kv writes K and V at the query heads, and the output's
  // transpose().contiguous() copies it back to token-major.
  bool eager_attention_copies = false;
  // The clamp the recipe puts on a gated activation's inputs, for a model that
  // does not say (ModelSpec::activation_clamp); 0: none.
  double activation_clamp = 0;
  // What clamping a gated activation's inputs adds to it, per element of the
  // activation's output, where the activation's own kernel does not clamp:
  // passes of their own before it (HBM bytes forward and backward, kernels),
  // and whether the host waits for the GPU before it issues the activation
  // (a device-to-host or pageable host-to-device copy on the way).
  struct ActivationClampPass {
    double forward_bytes = 0;
    double backward_bytes = 0;
    int kernels = 0;
    int backward_kernels = 0;  // 0: as many as forward (Operator::backward_kernels)
    bool host_sync = false;
    bool operator==(const ActivationClampPass&) const = default;
  };
  ActivationClampPass activation_clamp_pass;
  // The multi-token-prediction modules the recipe trains, for a model that
  // does not say (ModelSpec::mtp_layers): Megatron's mtp_num_layers, which
  // the recipe sets, not the checkpoint; 0: none.
  int mtp_layers = 0;
  // Whether the recipe builds experts with biases, for a model that does not
  // say (MoeSpec::expert_bias).
  bool moe_expert_bias = false;
  // Where each routed copy's probability is applied: false, at the combine
  // (the unpermute merges the experts' outputs weighted by their
  // probabilities, so it keeps every copy's h-wide output for the
  // probabilities' gradient and its backward reads it again); true, on fc2's
  // input inside the experts (a weighted activation), so the unpermute keeps
  // only its map, its backward moves the same bytes as its forward, and the
  // layer keeps one fp32 probability per copy instead.
  bool moe_probs_on_fc2_input = false;
  // HBM bytes per element of the experts' output (token copies x hidden) that
  // adding fc2's bias takes in a model whose experts have biases
  // (MoeSpec::expert_bias), forward and backward: 0 where the GEMM's epilogue
  // adds it; Megatron-Core adds it outside, unfused, in fp32.
  double moe_expert_bias_forward_bytes = 0;
  double moe_expert_bias_backward_bytes = 0;
  // A mixture of experts whose scenario does not give parallelism.expert_tensor
  // splits each expert over the tensor-parallel ranks (Megatron-Core's own
  // default since expert tensor parallelism became a setting) instead of 1
  // (what the 2025 performance recipes set).
  bool expert_tensor_follows_tensor = false;
  // The streams a grouped GEMM of the local experts is issued on, one kernel
  // per expert (Transformer Engine's GroupedLinear: expert i on compute
  // stream i mod 4); 0: one batched kernel for them all (a grouped-GEMM
  // kernel such as torch._grouped_mm).
  int grouped_gemm_streams = 0;
  // What the host spends issuing one kernel (Python, the framework's modules,
  // the PyTorch dispatcher, the launch): passes of short kernels wait for it
  // (sim/cost/host_issue.h). 0: the host is never the bottleneck.
  double host_s_per_kernel = 0;
  // CudaGraphModule bits: the host launches each captured run of kernels as
  // one graph instead of kernel by kernel.
  unsigned cuda_graph_modules = 0;
  // Kernels an MoE layer's forward launches beside its GEMMs: the router's
  // scores, top-k and auxiliary loss; the dispatcher's token counts (its
  // preprocess: the all-to-all dispatcher's, or the flex dispatcher's, whose
  // DeepEP and HybridEP backends count the tokens inside their own kernels)
  // and permute; the all-to-all dispatcher's sort of the received tokens by
  // local expert and its unsort; the combine's unpermute (the backward
  // launches as many). The allgather dispatcher's own: the local routing map,
  // probabilities and token counts it cuts from the gathered ones, and the
  // fp32 casts around its reduce-scatter.
  int moe_router_kernels = 1, moe_preprocess_kernels = 1, moe_flex_preprocess_kernels = 1, moe_dispatch_kernels = 1,
      moe_combine_kernels = 1;
  int moe_allgather_local_map_kernels = 1, moe_allgather_combine_cast_kernels = 1;
  int moe_sort_kernels = 1, moe_unsort_kernels = 1;
  int moe_expert_bias_kernels = 1;  // per local expert, for fc2's bias where it is a pass of its own
  // Software containers this profile describes (e.g. "nvcr.io/nvidia/nemo:24.12"):
  // `validate` runs a reference case whose source names one with this profile.
  std::vector<std::string> containers;
  // Repositories whose published performance results ran this stack as the
  // profile describes it (e.g. "NVIDIA-NeMo/Megatron-Bridge" for its recipes):
  // the same for a case whose source names one and no container.
  std::vector<std::string> result_repositories;
  // Benchmarks of those repositories that ran this profile's recipe (e.g.
  // "llama2_70b_lora": a directory or file the case's source names): a
  // profile with them describes only those, and takes them before a profile
  // of the whole repository or of the container the source names (a recipe
  // is written as changes to its release).
  std::vector<std::string> result_benchmarks;

  // A recipe setting that differs for one training precision (a by_precision
  // entry: Megatron-Bridge's performance scripts turn TP comm overlap off for
  // NVFP4): the precision's name and the profile file whose by_precision entry
  // for it sets the keys. A derived profile keeps its base's first; they apply
  // after every plain key, in this order.
  struct PrecisionOverride {
    std::string precision;
    std::string file;
    bool operator==(const PrecisionOverride&) const = default;
  };
  std::vector<PrecisionOverride> precision_overrides;
  // The profile as it trains each precision an override names, built by the
  // loader from the values above and precision_overrides (which equality
  // compares: the variants follow from them).
  struct Variants {
    std::map<std::string, std::shared_ptr<const FrameworkProfile>> of;
    bool operator==(const Variants&) const { return true; }
  };
  Variants variants;

  // This profile as it trains `p`: itself when no override names p.
  const FrameworkProfile& ForPrecision(Precision p) const;

  bool operator==(const FrameworkProfile&) const = default;
};

struct NodeProfile {
  std::string name;
  GpuProfile gpu;
  int gpus_per_node = 8;
  // GPUs on one NVLink fabric: the node on HGX (8), the rack on GB200 NVL72 (72).
  int nvlink_domain_gpus = 8;
  // Nodes on one NVLink fabric: 1 on HGX, 18 trays on GB200 NVL72.
  int nvlink_domain_nodes() const { return std::max(1, nvlink_domain_gpus / std::max(1, gpus_per_node)); }
  int nics_per_node = 8;
  std::vector<int> nics_allowed;  // the NIC counts the node is sold with (XE9680: 4 or 8 ConnectX-7)
  bool TakesNics(int nics) const;
  // "node 'NAME' takes 4, 8 NICs": the one wording of the allowed counts, for
  // every message that turns a count down.
  std::string TakesNicsText() const;
  double nic_bytes_per_s = 0;          // line rate of one NIC
  double nvlink_bytes_per_s = 0;       // per GPU per direction
  bool nvls = false;
  double intra_allreduce_bus_bytes_per_s = 0;
  double intra_ring_bus_bytes_per_s = 0;
  double intra_latency_s = 0;
  double intra_half_chunk_bytes = 0;  // per ring step / transfer, at half the peak bandwidth
  // The node's GPU-to-host bandwidth with all its GPUs copying at once
  // (pcie_gb_per_s): the sum over its host paths (PCIe x16 links or switch
  // uplinks; NVLink-C2C on Grace trays), not one link's.
  double pcie_bytes_per_s = 0;
  double host_memory_bytes = 0;
  // The node's CPU time for one framework op (Python, the PyTorch dispatcher,
  // the launch) against a DGX H100's Xeon Platinum 8480C, on which the
  // frameworks' host_us_per_kernel is stated: Grace's Arm cores take ~2.75x.
  double host_op_time_factor = 1.0;
  // What each GPU gets of the host path when all of them copy at once (an
  // async checkpoint's staging, activation offload).
  double host_copy_bytes_per_s_per_gpu() const { return pcie_bytes_per_s / gpus_per_node; }
  double power_load_w = 0;
  double power_idle_w = 0;
  double node_hour_usd = 0;      // with the profile's default nics_per_node
  double nic_port_hour_usd = 0;  // what one NIC and its fabric ports add per hour
  // Ownership (cost.model: ownership); 0: the profile gives no figure.
  double capital_usd = 0;      // purchase price of the node without its compute-fabric NICs
  double nic_capital_usd = 0;  // one compute-fabric NIC (adapter only; its link is the fabric's)
  int default_nics_per_node = 8;
  std::string framework;    // default FrameworkProfile name
  std::string default_fabric;  // path of the fabric profile a scenario without cluster.fabric uses ("" = none)
  std::string source_file;  // the profile's path, for messages about it
};

enum class FabricTopology { kRailOptimized, kFatTree };

struct FabricProfile {
  std::string name;
  FabricTopology topology = FabricTopology::kRailOptimized;
  double link_bytes_per_s = 0;
  double achieved_bytes_per_s = 0;  // what NCCL reaches per NIC
  int nodes_per_su = 32;
  int switch_radix = 64;
  double switch_latency_s = 0;
  double inter_node_latency_s = 0;
  double spine_oversubscription = 1.0;
  // Ownership (cost.model: ownership); 0: the profile gives no figure.
  double switch_capital_usd = 0;  // one switch of switch_radix ports
  double link_capital_usd = 0;    // one link: the cable and the optics at both ends
};

// Nodes per scalable unit of `nodes` on fabric `f` with `nics_per_node`: the
// nodes under one set of leaves, whose traffic to other units crosses the
// spines (and their oversubscription). All of them when every node port fits
// one switch (no spine); a rail-optimized leaf takes at most half its radix
// of nodes (the rest are uplinks); else the profile's nodes_per_su. What the
// rank layout, the collectives, the DES platform and the fabric's capital
// all take.
int ScalableUnitNodes(const FabricProfile& f, int nodes, int nics_per_node);

struct StorageProfile {
  std::string name;
  int default_nodes = 1;
  double write_bytes_per_s_per_node = 0;
  double read_bytes_per_s_per_node = 0;
  int front_end_links_per_node = 1;
  double front_end_link_bytes_per_s = 0;
  double latency_s = 0;
  double power_w = 0;
  double node_hour_usd = 0;
  double capital_usd = 0;  // ownership: purchase price of one storage node; 0: no figure
};

// Where owned equipment runs and how it is paid for (cost.model: ownership):
// the facility's power overhead, the price of energy and the years over which
// the purchase is written off.
struct SiteProfile {
  std::string name;
  double pue = 1;                      // facility energy / IT energy
  double electricity_usd_per_kwh = 0;  // price of a kWh at the facility meter
  double amortization_years = 1;       // straight-line write-off of the capital
};

}  // namespace trainsim
