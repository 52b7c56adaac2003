// A scenario: model + cluster + parallelism + training settings, resolved
// against the hardware profiles and checked for consistency. This is the one
// input of every simulation; the YAML keys are the contract of design.md §3.
#pragma once

#include <algorithm>

#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/model_spec.h"
#include "sim/core/hardware_profile.h"
#include "sim/core/rank_layout.h"
#include "sim/core/stage_plan.h"

namespace trainsim {

// What selective recompute re-runs in the backward instead of keeping its
// activations: Megatron-Core's recompute_modules (recompute_granularity
// selective), as bits of Training::recompute_modules.
enum RecomputeModule : unsigned {
  kRecomputeCoreAttention = 1u << 0,  // core_attn: the attention kernel (Korthikanti et al.'s selective recompute)
  kRecomputeLayerNorm = 1u << 1,      // layernorm: the two norms; their outputs (the QKV and MLP inputs) are not kept
  kRecomputeMlaUpProj = 1u << 2,      // mla_up_proj: MLA's q and kv up projections and rotary, from the kept latents
  kRecomputeMlp = 1u << 3,            // mlp: a dense layer's MLP
  kRecomputeMoeAct = 1u << 4,         // moe_act: the experts' activation function (its output, the fc2 input, is not kept)
  kRecomputeMoe = 1u << 5,            // moe: the whole MoE block: router, dispatch, experts, combine
  kRecomputeSharedExperts = 1u << 6,  // shared_experts: an MoE layer's shared experts
};
// Megatron-Core's names of the modules, in bit order.
const std::vector<std::string>& RecomputeModuleNames();

// training.finetune: kNone = pre-training (no key); kFull = supervised
// fine-tuning with the normal training step; kLora = base weights frozen, low-rank
// adapters (Hu et al. 2021, arXiv 2106.09685) on the target projections train.
enum class FinetuneMethod { kNone, kFull, kLora };

struct Finetune {
  FinetuneMethod method = FinetuneMethod::kNone;
  int rank = 16;
  double alpha = 32;
  // Target projections: the scenario's target_modules, else its framework's
  // default (targets_from_framework: what messages credit to the framework).
  LoraTargets targets;
  bool targets_from_framework = false;
  // Dropout on each adapter's input (NeMo's adapter_dropout, dropout_position "pre"): the
  // scenario's finetune.dropout, else its framework's lora_dropout.
  double dropout = 0;
  bool lora() const { return method == FinetuneMethod::kLora; }
};
// The training.finetune keys only method: lora reads (the loader refuses
// them beside another method; the GUI form drops them when the method changes).
const std::vector<std::string>& LoraOnlyKeys();

struct Parallelism {
  int tensor = 1;
  int pipeline = 1;
  int context = 1;
  int data = 1;            // resolved from "auto"
  int virtual_stages = 1;  // interleaved 1F1B chunks per pipeline rank
  // Megatron-Core's MoE parallel folding (arXiv 2504.14960): the expert
  // layers re-split the tensor x context x data GPUs of a pipeline stage as
  // expert_tensor x expert x expert-data (ETP fastest), on the same GPUs.
  int expert = 1;         // EP: ranks the routed experts are spread over
  int expert_tensor = 1;  // ETP: ranks each expert's MLP is split over
  bool sequence_parallel = false;
  // Kept equal to data_sharding != kNone (its readers predate data_sharding).
  bool distributed_optimizer = true;
  DataSharding data_sharding = DataSharding::kOptimizer;
  int sharding_group = 0;  // HSDP: gradient replicas per shard group; 0: all of them
  // Overlap of communication with compute, as Megatron-Core implements it.
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  bool tp_comm_overlap = false;
  bool overlap_p2p = false;  // as asked (framework default; parallelism.overlap_p2p): see p2p_overlapped()
  bool moe_a2a_overlap = false;  // EP all-to-alls hidden behind compute (framework default; parallelism.moe_a2a_overlap)
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;  // framework default; parallelism.moe_dispatcher
  int grad_reduce_bytes = 4;  // 4: fp32 gradient reduction, 2: half precision
  // Uneven pipeline stages (sim/core/stage_plan.h); 0 / false: not given.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  bool embedding_in_pipeline_split = false;
  bool loss_in_pipeline_split = false;
  // Megatron-Core's pipeline_model_parallel_layout (sim/core/pipeline_layout.h); empty: not given.
  std::string pipeline_layout;

  // Whether pipeline sends and receives overlap compute: only in the
  // interleaved schedule. Megatron-Core's non-interleaved 1F1B refuses
  // overlap_p2p_comm ("Non-interleaved pipeline parallelism does not support
  // overlapping p2p communication", schedules.py core_v0.15) and waits for each
  // micro batch's batched isend/irecv; Megatron-Bridge asks for it only with VP > 1.
  bool p2p_overlapped() const { return overlap_p2p && virtual_stages > 1; }
  // Whether TP communication can overlap the GEMMs at all: only with TP and
  // sequence parallelism (Megatron-Core asserts sequence_parallel with
  // tp_comm_overlap). The loader's default, CheckParallelism's rule and the
  // planner's candidates all take it from here.
  bool tp_comm_overlappable() const { return tensor > 1 && sequence_parallel; }

  // Ranks holding the same parameters, whose gradients are reduced together and
  // over which the distributed optimizer shards its state: context-parallel
  // ranks see different tokens of the same weights (Megatron-Core's
  // data-parallel group "with context parallel").
  int gradient_replicas() const { return data * context; }
  // Ranks holding the same experts (expert-DP): their expert gradients are
  // reduced together and the distributed optimizer shards expert state over them.
  int expert_data() const { return tensor * context * data / (expert_tensor * expert); }
  // Ranks the routed experts' optimizer state is sharded over: expert-DP
  // with a distributed optimizer, none (1) without; with shard groups (HSDP),
  // expert-DP split over the same replicas (Megatron-Core's
  // num_distributed_optimizer_instances: its intra-partial expert-DP group).
  int expert_shard_group() const {
    return data_sharding == DataSharding::kNone ? 1 : std::max(1, expert_data() / shard_replicas());
  }
  // Ranks one shard of the sharded state is spread over (all gradient replicas
  // unless HSDP), and the shard groups that replicate it (all-reduced across).
  int shard_group() const {
    if (data_sharding == DataSharding::kNone) return 1;
    return sharding_group > 0 ? sharding_group : gradient_replicas();
  }
  int shard_replicas() const { return gradient_replicas() / shard_group(); }
};

struct Training {
  int seq_len = 4096;
  int global_batch = 1;
  int micro_batch = 1;
  // training.micro_batch: auto (or not given): Simulate() runs the fastest
  // micro batch that fits (sim/run/micro_batch_choice.h); micro_batch holds
  // 1 until then, which the parallelism checks take.
  bool micro_batch_auto = false;
  int steps = 1;
  double tokens = 0;  // training.tokens; 0: not given (steps was). Given: steps = ceil(tokens / tokens per step)
  Precision precision = Precision::kBf16;
  Recompute recompute = Recompute::kNone;
  unsigned recompute_modules = kRecomputeCoreAttention;  // RecomputeModule bits; used with kSelective
  // With kFull: Megatron-Core's recompute_method "block" with
  // recompute_num_layers, the first N layers of each model chunk (virtual
  // stage) recompute and the others keep their activations; 0: every layer.
  int recompute_layers = 0;
  AttentionKernel attention = AttentionKernel::kFlash;  // "auto": the framework's kernel
  double dropout = 0;  // hidden and attention dropout probability; default: the framework's
  Finetune finetune;
  // Megatron-Core's CPU offloading (cpu_offloading_num_layers, Transformer
  // Engine's offload context): the first N layers' activations go to host
  // memory during the forward and come back during the backward, each copy
  // behind the next layer's compute. Needs pipeline 1 and no recompute.
  int activation_offload_layers = 0;
};

enum class CheckpointContents { kFull, kWeights };
enum class CheckpointMode { kSync, kAsync };

struct CheckpointPolicy {
  int every_steps = 0;  // 0: never
  CheckpointContents contents = CheckpointContents::kFull;
  CheckpointMode mode = CheckpointMode::kSync;
};

struct DataLoading {
  double bytes_per_token = 4;
};

struct FailureModel {
  double node_mtbf_hours = 0;  // 0: no failures modelled
  double restart_s = 600;      // detect, reschedule, restart processes (before the checkpoint load)
  double repair_hours = 24;        // a failed node is out this long (replace parts, burn in); sizes the hot spares
  double spare_probability = 0.99;  // hot spares cover the nodes in repair with this probability
};

enum class CostBasis { kRental, kOwnership };

struct CostModel {
  CostBasis model = CostBasis::kRental;  // rental: node-hour prices; ownership: capital amortised + energy
  double node_hour_usd = -1;         // <0: the node profile's price
  double storage_node_hour_usd = -1;  // <0: the storage profile's price
  SiteProfile site;                  // ownership: PUE, energy price, write-off years (cost.site)
};

// The largest cluster trainsim simulates (products of counts stay far from
// 32-bit overflow below it).
constexpr long kMaxGpus = 1L << 22;

struct Scenario {
  std::string name;
  std::string source_file;  // for messages; may be empty for inline scenarios
  ModelSpec model;
  NodeProfile node;  // nics_per_node already overridden by the scenario
  FabricProfile fabric;
  FrameworkProfile framework;
  bool framework_given = false;  // training.framework named it; else the node's default
  std::optional<StorageProfile> storage;
  int nodes = 1;
  int storage_nodes = 0;
  // cluster.nodes_per_nvlink_domain: nodes of each NVLink domain the ranks
  // fill before the next (Slurm's --segment); 0: not given.
  int nodes_per_nvlink_domain = 0;
  Parallelism parallelism;
  Training training;
  CheckpointPolicy checkpoint;
  DataLoading data;
  FailureModel failures;
  CostModel cost;

  int gpus() const { return nodes * node.gpus_per_node; }
  // What the host spends issuing one kernel: the framework's figure on the
  // node's CPU (sim/cost/host_issue.h).
  double host_s_per_kernel() const { return framework.host_s_per_kernel * node.host_op_time_factor; }
  int microbatches_per_step() const { return int(training.global_batch / (long(training.micro_batch) * parallelism.data)); }
  // A mixture of experts' routed experts on each GPU: experts / EP (the
  // loader checks that EP divides them).
  double routed_experts_per_gpu() const { return double(model.moe.experts) / std::max(1, parallelism.expert); }
  // Whether every expert's input is padded to the capacity: a capacity factor
  // with Megatron-Core's all-to-all dispatcher, which alone pads
  // (moe_pad_expert_input_to_capacity, as the token-drop recipes set it and
  // model.moe.pad_to_capacity unsets; its flex dispatcher refuses the setting
  // and the allgather one ignores it: CheckParallelism refuses either asked to).
  // Shapes are then known up front: no host sync, no low-precision padding,
  // and a CUDA graph may capture the layer.
  bool pads_experts_to_capacity() const {
    return model.moe.capacity_factor > 0 && model.moe.pad_to_capacity.value_or(true) && parallelism.moe_dispatcher == MoeDispatcher::kAllToAll;
  }
  // The nodes of each NVLink domain the ranks fill before the next: the
  // scenario's nodes_per_nvlink_domain (at most a domain's), else what
  // Megatron-Bridge's launcher asks Slurm for on 4-GPU Grace trays (--segment,
  // scripts/performance/utils/executors.py, v0.1.0rc3 to v0.6.0): the job's
  // nodes where one domain holds them, else the largest count up to a
  // domain's that divides them, so that no rank group straddles two racks
  // by the placement alone; where only 1 divides them, whole domains filled
  // in turn. 1 where the node is the domain (HGX).
  int nvlink_domain_nodes() const;
  int nvlink_domain_gpus() const { return nvlink_domain_nodes() * node.gpus_per_node; }
  // Where the node is not the NVLink domain (rack-scale systems): how the
  // ranks fill the domains and which rank groups cross them, e.g. "4 x 16 of
  // 18 nodes (Megatron-Bridge's Slurm --segment); across domains: dp, pp".
  // Empty on HGX nodes.
  std::string nvlink_domains_text() const;
  // The parallelism and micro batch it runs, as plan and size name a
  // configuration: "TP4 PP4 VP5 CP1 DP2 mb1 recompute=none SP DO". EP and ETP
  // where above 1, the MoE dispatcher where not the all-to-all, A2AOV and SP
  // where on; what data parallelism shards last: DO (the distributed
  // optimizer), ZeRO2 or FSDP, nothing for DDP, and HSDP's shard group.
  std::string parallelism_text() const;
  // Where the ranks sit (TP, CP, DP, PP over GPUs, nodes, NVLink domains).
  RankLayout layout() const;
  // The layers of each pipeline stage; the scenario must have passed CheckParallelism.
  StagePlan stage_plan() const;
  StagePlanRequest stage_plan_request() const;
};

// The divisibility rules between parallelism, model, cluster and batch (TP,
// PP x virtual stages, CP, data, sequence parallel, micro batches), with the
// parser's keys and messages; for scenarios whose fields were set in code
// (parallelism.data must be the resolved count). nullopt: consistent. The
// error has no line: the parser places it at the key.
std::optional<InputError> CheckParallelism(const Scenario& s);

// Which of tensor, pipeline and context ("tensor", "pipeline" or "context")
// an error blames when their product does not divide `gpus`: the first
// without which the rest does ("tensor" where none does alone).
const char* FactorNotDividing(long tensor, long pipeline, long context, long gpus);

}  // namespace trainsim
