#include "models/memory_model.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Llama 3.1 70B on 8 XE9680 (64 H100), TP 1 PP 1 DP 64, full recompute.
Scenario Make70b(std::vector<std::string> sets) {
  YAML::Node root = YAML::Load(R"(name: m
cluster: {node: xe9680-h100, nodes: 8, fabric: ndr-rail-optimized}
model: llama3.1-70b
parallelism: {tensor: 1, pipeline: 1}
training: {seq_len: 8192, global_batch: 64, precision: bf16, recompute: full}
)");
  ApplyOverrides(root, sets);
  auto s = ParseScenario(root, "m.yaml");
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

MemoryReport Memory(const Scenario& s) { return EstimateMemory(s, BuildWorkload(s)); }

// Parameters of the whole model (TP 1, PP 1; Llama 3.1 has untied embeddings).
double Params(const Scenario& s) { return s.model.layers * s.model.LayerParameters(0) + 2.0 * s.model.vocab * s.model.hidden; }

// The planner checks memory on the workload's holdings alone (no passes):
// the report must be the one the whole workload gives, reason included.
TEST(MemoryModelTest, HoldingsGiveTheWholeWorkloadsReport) {
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{"parallelism.data_sharding=none"},
        {"parallelism.pipeline=4", "parallelism.virtual_stages=5", "parallelism.data_sharding=optimizer", "training.recompute=selective"},
        {"parallelism.tensor=8", "parallelism.pipeline=8", "parallelism.data_sharding=full", "training.micro_batch=2", "training.recompute=none"},
        {"parallelism.tensor=4", "parallelism.pipeline=2", "parallelism.data_sharding=gradients"}}) {
    const Scenario s = Make70b(sets);
    const Workload holdings = BuildWorkload(s, WorkloadParts::kHoldings);
    EXPECT_TRUE(holdings.kinds[0].forward.ops.empty());  // no passes were built
    const MemoryReport a = EstimateMemory(s, holdings), b = Memory(s);
    EXPECT_EQ(a.peak_gib_per_gpu, b.peak_gib_per_gpu) << sets.back();
    EXPECT_EQ(a.activations_gib, b.activations_gib) << sets.back();
    EXPECT_EQ(a.peak_stage, b.peak_stage) << sets.back();
    EXPECT_EQ(a.fits, b.fits) << sets.back();
    EXPECT_EQ(a.reason, b.reason) << sets.back();
    // Without `explain` only the reason is left out.
    const MemoryReport c = EstimateMemory(s, holdings, /*explain=*/false);
    EXPECT_EQ(c.peak_gib_per_gpu, b.peak_gib_per_gpu);
    EXPECT_EQ(c.fits, b.fits);
    if (!b.fits) {
      EXPECT_TRUE(c.reason.empty());
    }
  }
}

// The loss keeps its logits from forward to backward: Megatron's fp32 softmax
// (4 B per local logit), or Transformer Engine's fused kernel's gradient in
// place over the 16-bit logits (2 B: Megatron-Bridge's recipes).
TEST(MemoryModelTest, TheLossKeepsItsLogitsAtTheFrameworksBytes) {
  Scenario s = Make70b({});
  const double logits = 8192.0 * s.model.vocab;  // one micro batch of 8,192 tokens, TP 1
  s.framework.cross_entropy_saved_bytes = 4;
  const double fp32 = Memory(s).activations_gib;
  s.framework.cross_entropy_saved_bytes = 2;
  EXPECT_NEAR((fp32 - Memory(s).activations_gib) * kGiB, 2 * logits, 1e-3 * logits);
  EXPECT_EQ(Make70b({"training.framework=megatron-bridge-perf"}).framework.cross_entropy_saved_bytes, 2);
}

TEST(MemoryModelTest, DdpKeepsEverythingOnEveryReplica) {
  const Scenario s = Make70b({"parallelism.data_sharding=none"});
  const MemoryReport m = Memory(s);
  const double P = Params(s);
  EXPECT_NEAR(m.weights_gib, P * 2 / kGiB, 1e-6);
  EXPECT_NEAR(m.gradients_gib, P * 4 / kGiB, 1e-6);
  EXPECT_NEAR(m.optimizer_gib, P * 12 / kGiB, 1e-6);
  EXPECT_FALSE(m.fits);
}

// The gradient buffer holds the reduction's dtype: fp32 with Megatron's
// grad_reduce_in_fp32 (megatron-core-2024), bf16 without it (the
// megatron-bridge-perf recipes).
TEST(MemoryModelTest, GradientsTakeTheReductionsBytes) {
  const Scenario fp32 = Make70b({"parallelism.data_sharding=none"});
  const Scenario bf16 = Make70b({"parallelism.data_sharding=none", "training.framework=megatron-bridge-perf"});
  ASSERT_EQ(fp32.parallelism.grad_reduce_bytes, 4);
  ASSERT_EQ(bf16.parallelism.grad_reduce_bytes, 2);
  EXPECT_NEAR(Memory(bf16).gradients_gib, Params(bf16) * 2 / kGiB, 1e-6);
  EXPECT_NEAR(Memory(bf16).gradients_gib, Memory(fp32).gradients_gib / 2, 1e-6);
}

TEST(MemoryModelTest, DistributedOptimizerShardsTheAdamState) {
  const Scenario s = Make70b({"parallelism.data_sharding=optimizer"});
  const MemoryReport m = Memory(s);
  const double P = Params(s);
  EXPECT_NEAR(m.weights_gib, P * 2 / kGiB, 1e-6);
  EXPECT_NEAR(m.gradients_gib, P * 4 / kGiB, 1e-6);
  EXPECT_NEAR(m.optimizer_gib, P * 12 / 64 / kGiB, 1e-6);
  // The same as the older key.
  const MemoryReport d = Memory(Make70b({"parallelism.distributed_optimizer=true"}));
  EXPECT_DOUBLE_EQ(d.peak_gib_per_gpu, m.peak_gib_per_gpu);
  // A stack that keeps its Adam state in bf16 (Apex DistributedFusedAdam dtype bf16): 6 B per parameter.
  Scenario bf16_state = s;
  bf16_state.framework.optimizer_state_bytes = 6;
  EXPECT_NEAR(Memory(bf16_state).optimizer_gib, P * 6 / 64 / kGiB, 1e-6);
}

TEST(MemoryModelTest, Zero2ShardsTheGradientsToo) {
  const Scenario s = Make70b({"parallelism.data_sharding=gradients"});
  const MemoryReport m = Memory(s);
  const double P = Params(s), layer = s.model.LayerParameters(0);
  EXPECT_NEAR(m.weights_gib, P * 2 / kGiB, 1e-6);
  // The embedding's gradient (larger than a layer's) in flight beside one layer's.
  const double edge_beyond = (1 - 1 / 64.0) * (double(s.model.vocab) * s.model.hidden - layer);
  EXPECT_NEAR(m.gradients_gib, (P / 64 + kShardUnitsInFlight * (1 - 1 / 64.0) * layer + edge_beyond) * 4 / kGiB, 1e-6);
  EXPECT_NEAR(m.optimizer_gib, P * 12 / 64 / kGiB, 1e-6);
}

// The issue's figure: 70B with FSDP on 64 H100 fits where plain DDP does not.
TEST(MemoryModelTest, FsdpShardsTheWeightsPlusTheUnitsInFlight) {
  const Scenario s = Make70b({"parallelism.data_sharding=full"});
  const MemoryReport m = Memory(s);
  const double P = Params(s), layer = s.model.LayerParameters(0);
  // Each unit in flight gathered beyond the rank's own 1/64 of it; the
  // embedding (128,256 x 8,192, larger than a layer) gathered beside one layer.
  const double edge = double(s.model.vocab) * s.model.hidden;
  ASSERT_GT(edge, layer);
  const double units = kShardUnitsInFlight * (1 - 1 / 64.0) * layer + (1 - 1 / 64.0) * (edge - layer);
  EXPECT_NEAR(m.weights_gib, (P / 64 + units) * 2 / kGiB, 1e-6);
  EXPECT_NEAR(m.gradients_gib, (P / 64 + units) * 4 / kGiB, 1e-6);
  EXPECT_NEAR(m.optimizer_gib, P * 12 / 64 / kGiB, 1e-6);
  EXPECT_TRUE(m.fits) << m.reason;
  EXPECT_FALSE(Memory(Make70b({"parallelism.data_sharding=none"})).fits);
}

TEST(MemoryModelTest, HsdpShardsInsideTheShardGroupOnly) {
  const Scenario s = Make70b({"parallelism.data_sharding=full", "parallelism.sharding_group=8"});
  EXPECT_EQ(s.parallelism.shard_group(), 8);
  EXPECT_EQ(s.parallelism.shard_replicas(), 8);
  const MemoryReport m = Memory(s);
  const double P = Params(s), layer = s.model.LayerParameters(0);
  const double edge = double(s.model.vocab) * s.model.hidden;
  EXPECT_NEAR(m.weights_gib, (P / 8 + kShardUnitsInFlight * (1 - 1 / 8.0) * layer + (1 - 1 / 8.0) * (edge - layer)) * 2 / kGiB, 1e-6);
  EXPECT_NEAR(m.optimizer_gib, P * 12 / 8 / kGiB, 1e-6);
  // A group of one shards nothing, and holds no more than plain data parallelism.
  const MemoryReport one = Memory(Make70b({"parallelism.data_sharding=full", "parallelism.sharding_group=1"}));
  const MemoryReport ddp = Memory(Make70b({"parallelism.data_sharding=none"}));
  EXPECT_NEAR(one.weights_gib, ddp.weights_gib, 1e-9);
  EXPECT_NEAR(one.gradients_gib, ddp.gradients_gib, 1e-9);
}

// LoRA: frozen base weights carry no gradient and no optimizer state; the
// adapters (rank x (in + out) per target projection) carry both.
TEST(MemoryModelTest, LoraKeepsGradientsAndAdamStateForTheAdaptersOnly) {
  const Scenario s = Make70b({"model=llama2-70b", "parallelism.tensor=4", "training.finetune={method: lora, rank: 16}",
                              "parallelism.data_sharding=optimizer"});
  const double h = 8192, kv = 1024, f = 28672, r = 16;
  const double per_layer = r * (h + h + 2 * kv) + r * (h + h) + r * (h + 2 * f) + r * (f + h);
  EXPECT_DOUBLE_EQ(LoraLayerParameters(s.model, s.training.finetune, s.model.LayerAt(0)), per_layer);
  const double adapters = 80 * per_layer / 4;
  const MemoryReport m = Memory(s);
  const Workload w = BuildWorkload(s);
  const double base = w.rank_state[0].params_per_gpu;
  EXPECT_NEAR(m.weights_gib, (base + adapters) * 2 / kGiB, 1e-6);
  EXPECT_NEAR(m.gradients_gib, adapters * 4 / kGiB, 1e-9);
  EXPECT_NEAR(m.optimizer_gib, adapters * 12 / 16 / kGiB, 1e-9);  // DP 16
  // Under fp8 the frozen base is kept in fp8 only (1 byte per weight), the adapters in 16-bit.
  std::vector<std::string> fp8_sets = {"model=llama2-70b", "parallelism.tensor=4", "training.finetune={method: lora, rank: 16}",
                                       "training.precision=fp8"};
  EXPECT_NEAR(Memory(Make70b(fp8_sets)).weights_gib, (base * 1 + adapters * 2) / kGiB, 1e-6);
  // Full fine-tuning is the normal training step.
  const Scenario full = Make70b({"model=llama2-70b", "parallelism.tensor=4", "training.finetune={method: full}"});
  const Scenario pre = Make70b({"model=llama2-70b", "parallelism.tensor=4"});
  EXPECT_DOUBLE_EQ(Memory(full).peak_gib_per_gpu, Memory(pre).peak_gib_per_gpu);
}

// A frozen projection keeps no input for a weight gradient it does not take;
// an adapted one keeps its adapter's 16-bit input. At bf16 with all four
// projections adapted that is full fine-tuning's activations; fewer targets
// keep less, by each dropped input's width (with sequence parallelism all
// of them sharded over TP). Flash attention keeps the proj input, its output
// O, for its own backward: adapting proj adds nothing at bf16.
TEST(MemoryModelTest, LoraKeepsTheInputsOfAdaptedProjectionsOnly) {
  auto activations = [](const std::string& targets) {
    return Memory(Make70b({"model=llama2-70b", "parallelism.tensor=4", "parallelism.sequence_parallel=true", "training.recompute=none",
                           "training.micro_batch=1", "training.finetune={method: lora, rank: 16, target_modules: " + targets + "}"}))
        .activations_gib;
  };
  const double full = Memory(Make70b({"model=llama2-70b", "parallelism.tensor=4", "parallelism.sequence_parallel=true",
                                      "training.recompute=none", "training.micro_batch=1", "training.finetune={method: full}"}))
                          .activations_gib;
  const double all = activations("[qkv, proj, fc1, fc2]");
  const double qkv = activations("[qkv]"), qkv_proj = activations("[qkv, proj]"), qkv_fc1 = activations("[qkv, fc1]");
  EXPECT_NEAR(all, full, 1e-9 * full);
  EXPECT_DOUBLE_EQ(qkv, qkv_proj);
  EXPECT_LT(qkv, qkv_fc1);
  const double h = 8192, f = 28672;
  EXPECT_NEAR((all - qkv) / (all - qkv_fc1), (h + f) / f, 1e-9);  // fc1's input (h) and fc2's (f), against fc2's alone
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Megatron-Core CPU offloading of the first N layers' activations: the GPU
// keeps the other layers' and the one copy in flight; the host holds N layers
// per GPU, the node's GPUs together.
TEST(MemoryModelTest, ActivationOffloadMovesTheFirstLayersToHostMemory) {
  const Scenario base = Make70b({"training.recompute=none", "parallelism.data_sharding=full"});
  const Scenario off = Make70b({"training.recompute=none", "parallelism.data_sharding=full", "training.activation_offload_layers=75"});
  const MemoryReport a = Memory(base), b = Memory(off);
  const double layer = LayerActivationBytes(off) / kGiB;
  EXPECT_GT(layer, 1.0);
  EXPECT_NEAR(a.activations_gib - b.activations_gib, 74 * layer, 1e-6);  // 75 offloaded, one in flight
  EXPECT_NEAR(b.offloaded_activations_gib, 75 * layer, 1e-6);
  EXPECT_EQ(a.offloaded_activations_gib, 0);
  EXPECT_DOUBLE_EQ(a.weights_gib, b.weights_gib);
  // The host must hold what the node's 8 GPUs offload: 2 TB holds it on
  // XE9680; a node with 1 TiB does not.
  EXPECT_TRUE(b.fits) << b.reason;
  Scenario small = off;
  small.node.host_memory_bytes = 1024 * kGiB;
  const MemoryReport c = Memory(small);
  EXPECT_FALSE(c.fits);
  EXPECT_NE(c.reason.find("of host memory"), std::string::npos) << c.reason;
  EXPECT_EQ(c.Problem().rfind("does not fit in host memory: offloads ", 0), 0u) << c.Problem();
  EXPECT_EQ(Memory(Make70b({"parallelism.data_sharding=none"})).Problem().rfind("does not fit in GPU memory: needs ", 0), 0u);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// The loss runs on the last pipeline stage, which keeps one micro batch's
// logits (they were counted only without a pipeline): with most layers on
// the last stage, the peak is there and holds them.
TEST(MemoryModelTest, TheLastPipelineStageKeepsTheLogits) {
  Scenario s = Make70b({"parallelism.pipeline=2", "parallelism.last_stage_layers=60"});
  const double logits = 8192.0 * s.model.vocab;
  s.framework.cross_entropy_saved_bytes = 4;
  const MemoryReport fp32 = Memory(s);
  EXPECT_EQ(fp32.peak_stage, 1);
  s.framework.cross_entropy_saved_bytes = 2;
  EXPECT_NEAR((fp32.activations_gib - Memory(s).activations_gib) * kGiB, 2 * logits, 1e-3 * logits);
}

// Shard groups (HSDP) shard the routed experts' state within each replica
// too, as Megatron-Core's distributed optimizer instances split expert-DP:
// as many replicas as expert-DP ranks leave the expert state unsharded
// (it was sharded over all expert-DP ranks whatever the groups), and
// replicas that do not divide expert-DP are bad input, as Megatron-Core's
// parallel state refuses them.
TEST(MemoryModelTest, ShardGroupsShardTheExpertStateToo) {
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/examples/moe/mixtral-8x7b-8n-8nic.yaml";
  const auto mixtral = [&](std::vector<std::string> sets) {
    auto s = LoadScenario(file, sets);
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    return *s;
  };
  const Scenario whole = mixtral({});
  const Parallelism& p = whole.parallelism;
  ASSERT_EQ(p.expert_data(), 2);
  ASSERT_EQ(p.gradient_replicas(), 16);
  EXPECT_EQ(p.expert_shard_group(), 2);
  const Scenario grouped = mixtral({"parallelism.sharding_group=8"});  // 2 replicas: one expert-DP rank each
  EXPECT_EQ(grouped.parallelism.expert_shard_group(), 1);
  const Scenario ddp = mixtral({"parallelism.distributed_optimizer=false"});
  // The dense state sharded 8 ways against none; the experts' the same in both.
  const double dense_gib = (Memory(ddp).optimizer_gib - Memory(grouped).optimizer_gib) / (1 - 1.0 / 8);
  EXPECT_NEAR(Memory(whole).optimizer_gib, Memory(ddp).optimizer_gib - dense_gib * (1 - 1.0 / 16) - (Memory(ddp).optimizer_gib - dense_gib) / 2,
              1e-6);
  const auto bad = LoadScenario(file, {"parallelism.sharding_group=1"});  // 16 replicas, 2 expert-DP ranks
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().ToString().find("do not divide the 2 expert-data-parallel ranks"), std::string::npos) << bad.error().ToString();
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Recomputing some layers never needs more memory than recomputing none
// (one recomputed layer of 80 came out 0.04 GiB above none): the layer being
// recomputed takes the place of the kept layers its chunk has freed by then.
TEST(MemoryModelTest, PartialRecomputeNeverKeepsMoreThanNone) {
  const double none = Memory(Make70b({"training.recompute=none"})).activations_gib;
  double last = none;
  for (int n : {1, 8, 40}) {
    const double partial = Memory(Make70b({"training.recompute=full", "training.recompute_layers=" + std::to_string(n)})).activations_gib;
    EXPECT_LE(partial, last + 1e-9) << n;
    last = partial;
  }
  EXPECT_LE(Memory(Make70b({"training.recompute=full"})).activations_gib, last + 1e-9);
}

// Selective recompute of the attention core frees the s x s scores an
// unfused kernel keeps; a fused (flash) kernel keeps none, so it frees
// nothing there, and `trainsim run` says so. Recomputing the MLP frees its
// intermediates under either kernel.
TEST(MemoryModelTest, SelectiveRecomputeFreesWhatTheKernelKeeps) {
  EXPECT_EQ(SelectiveRecomputeFreedShare(Make70b({"training.recompute=none"})), 0);
  EXPECT_LT(SelectiveRecomputeFreedShare(Make70b({"training.recompute=selective", "training.attention=flash"})), 0.01);
  EXPECT_GT(SelectiveRecomputeFreedShare(Make70b({"training.recompute=selective", "training.attention=unfused"})), 0.5);
  EXPECT_GT(SelectiveRecomputeFreedShare(
                Make70b({"training.recompute=selective", "training.attention=flash", "training.recompute_modules=[core_attn, mlp]"})),
            0.2);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// FSDP2's sharded state is the fp32 parameter (AdamW's master too), its fp32
// gradient and two moments: 16 B per parameter per shard (it counted a bf16
// copy beside the master: 18).
TEST(MemoryModelTest, Fsdp2KeepsSixteenBytesPerShardedParameter) {
  const Scenario s = Make70b({"training.framework=torchtitan-fsdp2-2025", "parallelism.data_sharding=full"});
  const MemoryReport m = Memory(s);
  const double layer = s.model.LayerParameters(0);
  const double P = Params(s), units = kShardUnitsInFlight * (1 - 1 / 64.0) * layer + (1 - 1 / 64.0) * (double(s.model.vocab) * s.model.hidden - layer);
  const double state_gib = m.weights_gib + m.gradients_gib + m.optimizer_gib - units * (2 + 4) / kGiB;
  EXPECT_NEAR(state_gib, P * 16 / 64 / kGiB, 1e-6);
}

}  // namespace
}  // namespace trainsim
