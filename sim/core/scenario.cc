#include "sim/core/scenario.h"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/core/pipeline_layout.h"

namespace trainsim {

const std::vector<std::string>& RecomputeModuleNames() {
  static const std::vector<std::string> names = {"core_attn", "layernorm", "mla_up_proj", "mlp", "moe_act", "moe", "shared_experts"};
  return names;
}


int Scenario::nvlink_domain_nodes() const {
  const int domain_nodes = node.nvlink_domain_nodes();
  if (nodes_per_nvlink_domain > 0) return std::min(nodes_per_nvlink_domain, domain_nodes);
  if (nodes <= domain_nodes) return std::max(1, nodes);
  int segment = domain_nodes;
  while (segment > 1 && nodes % segment != 0) --segment;
  // No count above 1 divides the job (a prime number of trays): the launcher
  // asks for segments of 1, which Slurm's block topology still packs into
  // as few domains as it can, each filled in turn.
  return segment > 1 ? segment : domain_nodes;
}

std::string Scenario::nvlink_domains_text() const {
  const int domain_nodes = node.nvlink_domain_nodes();
  if (domain_nodes <= 1) return "";
  const int used = nvlink_domain_nodes(), full = nodes / used, rest = nodes % used;
  // "2 x 16", "4 x 18 + 1 x 2", "1 x 16" (fewer nodes than the domains asked for).
  std::string text = full > 0 ? std::to_string(full) + " x " + std::to_string(used) : "";
  if (rest > 0) text += (text.empty() ? "1 x " : " + 1 x ") + std::to_string(rest);
  text += " of " + std::to_string(domain_nodes) + " nodes";
  text += nodes_per_nvlink_domain > 0                       ? " (cluster.nodes_per_nvlink_domain)"
          : rest > 0 || (used == domain_nodes && nodes > used) ? " (filled in turn)"
                                                                 : " (Megatron-Bridge's Slurm --segment)";
  const RankLayout l = layout();
  std::string across;
  for (CommGroup g : {CommGroup::kTensor, CommGroup::kContext, CommGroup::kExpert, CommGroup::kExpertTensor, CommGroup::kPipeline, CommGroup::kData}) {
    const GroupSpan span = l.Span(g);
    if (span.ranks > 1 && !span.on_nvlink()) across += (across.empty() ? "" : ", ") + ToString(g);
  }
  return text + "; " + (across.empty() ? "every group on NVLink" : "across domains: " + across);
}

std::string Scenario::parallelism_text() const {
  const Parallelism& p = parallelism;
  std::string s = "TP" + std::to_string(p.tensor) + " PP" + std::to_string(p.pipeline) + " VP" +
                  std::to_string(p.virtual_stages) + " CP" + std::to_string(p.context) +
                  // data 0: a layout whose GPUs it does not divide, as plan reports one.
                  " DP" + (p.data > 0 ? std::to_string(p.data) : "?");
  if (p.expert > 1) s += " EP" + std::to_string(p.expert);
  if (p.expert_tensor > 1) s += " ETP" + std::to_string(p.expert_tensor);
  if (p.moe_dispatcher != MoeDispatcher::kAllToAll) s += " " + ToString(p.moe_dispatcher);
  if (p.moe_a2a_overlap) s += " A2AOV";
  s += " mb" + (training.micro_batch > 0 ? std::to_string(training.micro_batch) : "?") + " recompute=" + ToString(training.recompute);
  if (p.sequence_parallel) s += " SP";
  switch (p.data_sharding) {
    case DataSharding::kNone: break;
    case DataSharding::kOptimizer: s += " DO"; break;
    case DataSharding::kGradients: s += " ZeRO2"; break;
    case DataSharding::kFull: s += " FSDP"; break;
  }
  if (p.sharding_group > 0) s += " shard_group=" + std::to_string(p.sharding_group);
  return s;
}

RankLayout Scenario::layout() const {
  RankLayoutShape shape;
  shape.tensor = parallelism.tensor;
  shape.context = parallelism.context;
  shape.data = parallelism.data;
  shape.pipeline = parallelism.pipeline;
  shape.shard = parallelism.shard_group();
  shape.expert = parallelism.expert;
  shape.expert_tensor = parallelism.expert_tensor;
  shape.gpus_per_node = node.gpus_per_node;
  shape.nvlink_domain_gpus = nvlink_domain_gpus();
  shape.nodes_per_su = ScalableUnitNodes(fabric, nodes, node.nics_per_node);
  return RankLayout(shape);
}

StagePlanRequest Scenario::stage_plan_request() const {
  StagePlanRequest q;
  q.layers = model.layers;
  q.pipeline = parallelism.pipeline;
  q.virtual_stages = parallelism.virtual_stages;
  q.first_stage_layers = parallelism.first_stage_layers;
  q.last_stage_layers = parallelism.last_stage_layers;
  q.embedding_in_split = parallelism.embedding_in_pipeline_split;
  q.loss_in_split = parallelism.loss_in_pipeline_split;
  q.layout = parallelism.pipeline_layout;
  q.mtp_layers = model.mtp_layers.value_or(0);
  // The recipe's layout for this shape, when the scenario splits by no rule of its own and the layout is
  // for this model's layers (the planner asks this of every candidate: nothing to look up without layouts).
  const bool own_rule = !q.layout.empty() || q.first_stage_layers > 0 || q.last_stage_layers > 0 || q.embedding_in_split || q.loss_in_split;
  if (!own_rule && !framework.pipeline_layouts.empty()) {
    const auto recipe = framework.pipeline_layouts.find(std::to_string(q.pipeline) + "x" + std::to_string(q.virtual_stages));
    if (recipe != framework.pipeline_layouts.end()) {
      if (auto layout = PipelineLayout::Parse(recipe->second); layout && layout->layers() == q.layers) {
        q.layout = layout->WithMtpModules(q.mtp_layers).Unrolled();
      }
    }
  }
  return q;
}

StagePlan Scenario::stage_plan() const {
  // CheckParallelism has accepted the request; an even split is the fallback
  // only for scenarios built in code without it.
  if (auto plan = StagePlan::Make(stage_plan_request())) return std::move(*plan);
  StagePlanRequest even = stage_plan_request();
  even.first_stage_layers = even.last_stage_layers = 0;
  even.embedding_in_split = even.loss_in_split = false;
  even.layout.clear();
  even.virtual_stages = 1;
  return *StagePlan::Make(even);
}

const std::vector<std::string>& LoraOnlyKeys() {
  static const std::vector<std::string> keys = {"rank", "alpha", "target_modules", "dropout"};
  return keys;
}

const char* FactorNotDividing(long tensor, long pipeline, long context, long gpus) {
  const long product = tensor * pipeline * context;
  for (auto [key, v] : {std::pair{"tensor", tensor}, std::pair{"pipeline", pipeline}, std::pair{"context", context}}) {
    if (v > 1 && gpus % (product / v) == 0) return key;
  }
  return "tensor";
}

std::optional<InputError> CheckParallelism(const Scenario& s) {
  // One set of rules for the parser, sweeps and the planner, so a sweep row,
  // a plan rejection and `trainsim run` say the same thing about the same
  // settings. Products in 64 bits: each count is at most kMaxGpus.
  const Parallelism& par = s.parallelism;
  const ModelSpec& m = s.model;
  auto fail = [&](const std::string& key, const std::string& msg) {
    InputError e{s.source_file, 0, key, msg};
    e.layout = true;
    return e;
  };
  auto str = [](long v) { return std::to_string(v); };
  const long gpus = long(s.nodes) * s.node.gpus_per_node;
  if (s.nodes <= 0 || gpus > kMaxGpus) return fail("cluster.nodes", str(gpus) + " GPUs: trainsim simulates 1 to " + str(kMaxGpus));
  for (auto [key, v] : {std::pair{"parallelism.tensor", par.tensor}, std::pair{"parallelism.pipeline", par.pipeline},
                        std::pair{"parallelism.context", par.context}, std::pair{"parallelism.data", par.data},
                        std::pair{"parallelism.virtual_stages", par.virtual_stages}}) {
    if (v <= 0 || (v > gpus && std::string(key) != "parallelism.virtual_stages")) return fail(key, str(v) + " must be between 1 and the " + str(gpus) + " GPUs");
  }
  const long tpc = long(par.tensor) * par.pipeline * par.context;
  if (gpus % tpc != 0) {
    return fail("parallelism." + std::string(FactorNotDividing(par.tensor, par.pipeline, par.context, gpus)),
                "tensor x pipeline x context = " + str(tpc) + " does not divide the " + str(gpus) + " GPUs");
  }
  if (tpc * par.data != gpus) {
    return fail("parallelism.data", "tensor x pipeline x context x data = " + str(tpc * par.data) + " but the cluster has " + str(gpus) + " GPUs");
  }
  if (m.heads % par.tensor != 0) return fail("parallelism.tensor", "tensor " + str(par.tensor) + " does not divide the " + str(m.heads) + " attention heads");
  // Each tensor-parallel rank holds whole key-value groups: Megatron-Core
  // refuses num_query_groups not a multiple of tensor_model_parallel_size
  // (transformer_config.py, core_v0.15), and torchtitan splits n_kv_heads so.
  if (m.kv_heads % par.tensor != 0) {
    return fail("parallelism.tensor", "tensor " + str(par.tensor) + " does not divide the " + str(m.kv_heads) +
                                          " KV heads (each rank holds whole key-value groups)");
  }
  const bool dense_layers = m.MoeLayers() < m.layers;
  if (dense_layers && m.ffn_hidden % par.tensor != 0) {
    return fail("parallelism.tensor", "tensor " + str(par.tensor) + " does not divide ffn_hidden " + str(m.ffn_hidden));
  }
  if (!m.moe.enabled() && (par.expert > 1 || par.expert_tensor > 1)) {
    // Wrong on any cluster: the model, not the layout, is the error.
    InputError e = fail(par.expert > 1 ? "parallelism.expert" : "parallelism.expert_tensor", "expert parallelism needs a mixture-of-experts model (model.moe)");
    e.layout = false;
    return e;
  }
  if (m.moe.enabled()) {
    const long folded = long(par.expert) * par.expert_tensor, attention_ranks = long(par.tensor) * par.context * par.data;
    if (par.expert <= 0 || par.expert_tensor <= 0) return fail("parallelism.expert", "expert and expert_tensor must be at least 1");
    if (m.moe.experts % par.expert != 0) {
      return fail("parallelism.expert", "expert " + str(par.expert) + " does not divide the " + str(m.moe.experts) + " experts");
    }
    // Where the framework's default put expert_tensor (the TP size), say so: the scenario may not name it.
    auto etp_from = [&]() -> std::string {
      if (!s.framework.expert_tensor_follows_tensor || par.expert_tensor != par.tensor || par.tensor == 1) return "";
      return " (framework " + s.framework.name + " splits experts over the TP ranks unless parallelism.expert_tensor is set)";
    };
    if (m.moe.ffn_hidden % par.expert_tensor != 0) {
      return fail("parallelism.expert_tensor",
                  "expert_tensor " + str(par.expert_tensor) + " does not divide moe_ffn_hidden " + str(m.moe.ffn_hidden) + etp_from());
    }
    if (attention_ranks % folded != 0) {
      return fail("parallelism.expert", "expert x expert_tensor = " + str(folded) + " does not divide tensor x context x data = " +
                                            str(attention_ranks) + " (the GPUs of a pipeline stage)" + etp_from());
    }
    // LoRA on the experts' MLP: one adapter pair per routed expert, beside
    // its grouped GEMM on its own rows (models/workload.cc ExpertAdapter);
    // split over expert tensor parallelism they would need collectives of
    // their own (Megatron-Bridge gathers their rank and output over ETP), not modelled.
    if (const Finetune& ft = s.training.finetune; ft.lora() && (ft.targets.fc1 || ft.targets.fc2) && par.expert_tensor > 1) {
      return fail("parallelism.expert_tensor", "LoRA adapters on the routed experts (target_modules fc1, fc2" +
                                                   std::string(ft.targets_from_framework ? ", as framework " + s.framework.name + "'s default" : "") +
                                                   ") split over expert_tensor " + str(par.expert_tensor) + " are not modelled" + etp_from() +
                                                   ": set parallelism.expert_tensor: 1, or target_modules: [qkv, proj]");
    }
    if (par.tensor > 1 && !par.sequence_parallel) {
      return fail("parallelism.sequence_parallel", "a mixture of experts with tensor parallelism needs sequence_parallel (Megatron-Core requires it)");
    }
    // A graph replays fixed shapes: Megatron-Core captures an MoE layer whole only when token drop pads every expert to its capacity.
    if ((s.framework.cuda_graph_modules & kGraphMoe) && !s.pads_experts_to_capacity()) {
      return fail("training.framework", "framework '" + s.framework.name + "' captures MoE layers in CUDA graphs (cuda_graph_scope: moe), "
                                        "which Megatron-Core does only with token drop padded to a capacity: set model.moe.capacity_factor, "
                                        "with the alltoall dispatcher (the one that pads) and model.moe.pad_to_capacity not false");
    }
    if (s.model.moe.pad_to_capacity.value_or(false) && par.moe_dispatcher != MoeDispatcher::kAllToAll) {
      return fail("parallelism.moe_dispatcher", "model.moe.pad_to_capacity pads with Megatron-Core's alltoall dispatcher only (the flex "
                                                "dispatcher refuses it, the allgather one ignores it): use moe_dispatcher alltoall, or "
                                                "leave pad_to_capacity out");
    }
    if (par.moe_dispatcher == MoeDispatcher::kAllGather && par.moe_a2a_overlap && par.expert > 1) {
      return fail("parallelism.moe_a2a_overlap", "overlaps the all-to-all and flex dispatchers' token exchange, not the allgather "
                                                 "dispatcher's collectives (Megatron-Core asserts it): set it false or use another moe_dispatcher");
    }
    // Megatron-Core's other asserts on overlap_moe_expert_parallel_comm
    // (TransformerConfig.__post_init__): its schedule runs one micro batch's
    // forward beside another's backward, which needs the interleaved
    // pipeline's chunks, no full-layer replay, and at most one MTP module.
    if (par.moe_a2a_overlap && par.expert > 1) {
      const std::string why = " (Megatron-Core asserts it for overlap_moe_expert_parallel_comm): set parallelism.moe_a2a_overlap false";
      if (s.training.recompute == Recompute::kFull) {
        return fail("parallelism.moe_a2a_overlap", "the expert all-to-all overlap does not run with full recompute" + why + " or another recompute");
      }
      if (par.pipeline > 1 && par.virtual_stages <= 1) {
        return fail("parallelism.moe_a2a_overlap", "the expert all-to-all overlap needs virtual_stages with pipeline " + str(par.pipeline) + why +
                                                       " or set parallelism.virtual_stages");
      }
      if (m.mtp_layers.value_or(0) > 1) {
        return fail("parallelism.moe_a2a_overlap", "the expert all-to-all overlap takes at most one MTP module, not " +
                                                       str(*m.mtp_layers) + why + " or model.mtp_layers 1");
      }
    }
    // DeepEP's internode kernels reach a fixed number of NVLink domains: past it the run stops at an assertion.
    const int max_domains = s.framework.deepep_max_rdma_peers;
    if (par.moe_dispatcher == MoeDispatcher::kDeepEp && max_domains > 0 && par.expert > 1) {
      const GroupSpan ep = s.layout().Span(CommGroup::kExpert);
      if (ep.domains > max_domains) {
        InputError e = fail("parallelism.moe_dispatcher", "DeepEP reaches at most " + str(max_domains) + " NVLink domains (framework '" +
                                                              s.framework.name + "', deepep.max_rdma_peers) but expert " + str(par.expert) +
                                                              " spans " + str(ep.domains) + ": use hybridep or alltoall, or a smaller expert group");
        e.kind = ErrorKind::kUnsupported;  // the settings are valid; this software cannot run them
        return e;
      }
    }
  }
  if (long(par.pipeline) * par.virtual_stages > long(m.layers) + 2) {
    return fail(par.virtual_stages > 1 ? "parallelism.virtual_stages" : "parallelism.pipeline",
                "pipeline x virtual_stages = " + str(long(par.pipeline) * par.virtual_stages) + " is more than the " + str(m.layers) + " layers");
  }
  StagePlan::Error stage_error;
  if (!StagePlan::Make(s.stage_plan_request(), &stage_error)) return fail(stage_error.key, stage_error.message);
  // Causal context parallelism balances the load by giving each rank two of
  // 2 x context chunks of every sequence, one from each end (Megatron's
  // get_batch_on_this_cp_rank splits it so).
  if (par.context > 1 && s.training.seq_len % (2L * par.context) != 0) {
    return fail("parallelism.context", "context " + str(par.context) + " needs seq_len divisible by 2 x context = " + str(2L * par.context) +
                                           " (each rank takes two chunks of the sequence, one from each end), not " + str(s.training.seq_len));
  }
  if (par.sequence_parallel && par.tensor > 1 && (s.training.seq_len / par.context) % par.tensor != 0) {
    return fail("parallelism.sequence_parallel", "sequence parallel needs seq_len/context divisible by tensor " + str(par.tensor));
  }
  // Megatron-Core overlaps TP communication with the GEMMs on sequence
  // parallelism's all-gathers and reduce-scatters alone (its arguments.py
  // asserts sequence_parallel with tp_comm_overlap).
  if (par.tp_comm_overlap && par.tensor > 1 && !par.tp_comm_overlappable()) {
    return fail("parallelism.tp_comm_overlap", "overlaps tensor-parallel communication only with sequence_parallel (Megatron-Core "
                                               "asserts it): set sequence_parallel true, or tp_comm_overlap false");
  }
  const long per_step = long(s.training.micro_batch) * par.data;
  if (s.training.global_batch % per_step != 0) {
    return fail("training.global_batch", "global_batch " + str(s.training.global_batch) + " is not divisible by micro_batch x data = " +
                                             str(s.training.micro_batch) + " x " + str(par.data));
  }
  if (par.virtual_stages > 1 && s.microbatches_per_step() % par.pipeline != 0) {
    return fail("training.global_batch", "interleaved 1F1B needs the " + str(s.microbatches_per_step()) +
                                             " micro batches per step to be a multiple of pipeline " + str(par.pipeline));
  }
  if (par.sharding_group < 0 || (par.sharding_group > 0 && par.gradient_replicas() % par.sharding_group != 0)) {
    return fail("parallelism.sharding_group", "sharding_group " + str(par.sharding_group) + " does not divide data x context = " +
                                                  str(par.gradient_replicas()));
  }
  // Megatron-Core's TransformerConfig rules for CPU offloading
  // (megatron/core/transformer/transformer_config.py __post_init__).
  if (const int n = s.training.activation_offload_layers; n > 0) {
    if (n >= m.layers) {
      return fail("training.activation_offload_layers", str(n) + " layers: offloading can be done only for fewer layers than the " + str(m.layers) + " of the model");
    }
    if (par.pipeline > 1) return fail("training.activation_offload_layers", "Megatron-Core has no pipeline parallelism with CPU offloading (pipeline is " + str(par.pipeline) + ")");
    if (s.training.recompute != Recompute::kNone) {
      return fail("training.activation_offload_layers", "CPU offloading does not work with activation recomputation (training.recompute)");
    }
  }
  // MLA has no fused qkv projection to put an adapter beside (its q and kv
  // down- and up-projections would take their own), and its attention output
  // projection is not modelled for adapters either.
  if (const Finetune& ft = s.training.finetune; ft.lora() && m.attention == AttentionKind::kMla && (ft.targets.qkv || ft.targets.proj)) {
    return fail("training.finetune.target_modules",
                "LoRA adapters on MLA attention (qkv, proj" + std::string(ft.targets_from_framework ? ", as framework " + s.framework.name + "'s default" : "") +
                    ") are not modelled: MLA has low-rank q and kv projections, not a fused qkv; target_modules: [fc1, fc2]");
  }
  if (par.sharding_group > 0 && par.data_sharding == DataSharding::kNone) {
    return fail("parallelism.sharding_group", "a sharding group needs parallelism.data_sharding (optimizer, gradients or full)");
  }
  // The routed experts' state is sharded within each replica of the shard
  // groups as the rest is: expert-DP splits over the same replicas.
  if (m.moe.enabled() && par.sharding_group > 0 && par.expert_data() % par.shard_replicas() != 0) {
    return fail("parallelism.sharding_group", "sharding_group " + str(par.sharding_group) + " makes " + str(par.shard_replicas()) +
                                                  " replicas of the sharded state, which do not divide the " + str(par.expert_data()) +
                                                  " expert-data-parallel ranks (tensor x context x data / (expert x expert_tensor))");
  }
  return std::nullopt;
}

}  // namespace trainsim
