// Mixture-of-experts: parameter counts, FLOPs, the MoE operators and their
// all-to-alls, expert sharding of memory, the EP/ETP rules, and the
// all-to-all as DES flows.
#include <algorithm>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "models/memory_model.h"
#include "models/workload.h"
#include "sim/cost/collective_model.h"
#include "sim/cost/step_costs.h"
#include "sim/io/scenario_loader.h"
#include "sim/run/simulate.h"

namespace trainsim {
namespace {

// Mixtral 8x7B (mistralai/Mixtral-8x7B-v0.1 config.json) on XE9680 nodes.
constexpr const char* kMixtral = R"(name: mixtral
cluster: {node: xe9680-h100, nodes: 2}
model:
  layers: 32
  hidden: 4096
  ffn_hidden: 14336
  heads: 32
  kv_heads: 8
  vocab: 32000
  moe: {experts: 8, top_k: 2, moe_ffn_hidden: 14336, forced_balance: true}
parallelism: {tensor: 1, pipeline: 1, expert: 8}
training: {seq_len: 4096, global_batch: 256, micro_batch: 1, precision: bf16}
)";

// DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json), MTP module left out as
// the published 671B total does.
constexpr const char* kDeepSeekV3 = R"(name: dsv3
cluster: {node: dgx-h100, nodes: 128}
model:
  layers: 61
  hidden: 7168
  ffn_hidden: 18432
  heads: 128
  kv_heads: 128
  vocab: 129280
  attention: mla
  mla: {q_lora_rank: 1536, kv_lora_rank: 512, qk_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128}
  moe: {experts: 256, top_k: 8, moe_ffn_hidden: 2048, shared_experts: 1, first_k_dense: 3, forced_balance: true}
parallelism: {tensor: 2, pipeline: 8, virtual_stages: 4, expert: 64, sequence_parallel: true}
training: {seq_len: 4096, global_batch: 8192, micro_batch: 1, precision: fp8}
)";

Expected<Scenario> Parse(const std::string& text, std::vector<std::string> sets = {}) {
  YAML::Node root = YAML::Load(text);
  ApplyOverrides(root, sets);
  return ParseScenario(root, "moe.yaml");
}

Scenario Make(const std::string& text, std::vector<std::string> sets = {}) {
  auto s = Parse(text, std::move(sets));
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

const Operator* FindOp(const PassWork& pass, const std::string& name) {
  for (const auto& o : pass.ops) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

const CommOp* FindComm(const PassWork& pass, const std::string& name) {
  for (const auto& c : pass.comms) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST(MoeModelTest, MixtralParameterCountsMatchThePublishedTotals) {
  const Scenario s = Make(kMixtral);
  // Mistral AI: 46.7B parameters, 12.9B active per token.
  EXPECT_NEAR(s.model.TotalParameters(4096) / 46.7e9, 1.0, 0.01);
  EXPECT_NEAR(s.model.ActiveParameters(4096) / 12.9e9, 1.0, 0.01);
  EXPECT_EQ(s.model.MoeLayers(), 32);
}

TEST(MoeModelTest, DeepSeekV3ParameterCountsMatchThePublishedTotals) {
  const Scenario s = Make(kDeepSeekV3);
  EXPECT_EQ(s.model.MoeLayers(), 58);
  EXPECT_FALSE(s.model.IsMoeLayer(2));
  EXPECT_TRUE(s.model.IsMoeLayer(3));
  // DeepSeek-V3 report (arXiv 2412.19437): 671B total, 37B activated. The
  // count here is 37.55B: the report's figure is rounded down (it gives no
  // decimals); counting the input embedding, which a token touches once,
  // as not "activated" would give 36.6B.
  EXPECT_NEAR(s.model.TotalParameters(4096) / 671e9, 1.0, 0.01);
  EXPECT_NEAR(s.model.ActiveParameters(4096) / 37e9, 1.0, 0.02);
}

TEST(MoeModelTest, MegatronFlopsCountTopKExpertsAndSharedOnes) {
  // All layers MoE, no shared experts: the dense formula with an MLP of top_k experts.
  Scenario s = Make(kMixtral);
  ModelSpec dense = s.model;
  dense.moe = MoeSpec{};
  dense.ffn_hidden = 2 * 14336;
  EXPECT_NEAR(MegatronModelFlops(s.model, 256, 4096) / MegatronModelFlops(dense, 256, 4096), 1.0, 1e-12);
  // A shared expert counts as one more expert's MLP per token.
  ModelSpec shared = s.model;
  shared.moe.shared_experts = 1;
  dense.ffn_hidden = 3 * 14336;
  EXPECT_NEAR(MegatronModelFlops(shared, 256, 4096) / MegatronModelFlops(dense, 256, 4096), 1.0, 1e-12);
}

// A capacity factor under 1 drops copies at any load: model FLOPs count the
// routed work computed, so MFU cannot pass 100% by counting dropped tokens.
TEST(MoeModelTest, ModelFlopsCountTheCopiesACapacityFactorUnderOneKeeps) {
  const Scenario full = Make(kMixtral, {"model.moe.forced_balance=false", "model.moe.capacity_factor=1.0"});
  const Scenario half = Make(kMixtral, {"model.moe.forced_balance=false", "model.moe.capacity_factor=0.5"});
  ModelSpec routed_half = full.model;
  routed_half.moe.top_k = 1;  // 2 copies x 0.5
  EXPECT_DOUBLE_EQ(MegatronModelFlops(half.model, 256, 4096), MegatronModelFlops(routed_half, 256, 4096));
  EXPECT_DOUBLE_EQ(MegatronModelFlops(Make(kMixtral, {"model.moe.forced_balance=false", "model.moe.capacity_factor=1.25"}).model, 256, 4096),
                   MegatronModelFlops(full.model, 256, 4096));
  SimulateOptions opt;
  opt.fidelity = Fidelity::kAnalytical;
  const SimulationResult r = Simulate(Make(kMixtral, {"model.moe.forced_balance=false", "model.moe.capacity_factor=0.01"}), opt);
  EXPECT_LT(r.mfu, 1.0) << r.mfu;
}

TEST(MoeWorkloadTest, DispatchAndCombineMoveTopKCopiesOfEachToken) {
  const Scenario s = Make(kMixtral);
  const Workload w = BuildWorkload(s);
  ASSERT_EQ(w.kinds.size(), 1u);
  const LayerWork& layer = w.layer(0);
  EXPECT_TRUE(layer.kind.moe);
  const double T = 4096, h = 4096, top_k = 2;
  const CommOp* dispatch = FindComm(layer.forward, "moe dispatch all-to-all");
  const CommOp* combine = FindComm(layer.forward, "moe combine all-to-all");
  ASSERT_TRUE(dispatch && combine);
  EXPECT_EQ(dispatch->kind, CollectiveKind::kAllToAll);
  EXPECT_EQ(dispatch->group, CommGroup::kExpert);
  EXPECT_DOUBLE_EQ(dispatch->bytes, T * top_k * h * 2);
  EXPECT_DOUBLE_EQ(combine->bytes, dispatch->bytes);
  // The backward sends the gradients back along both paths.
  EXPECT_TRUE(FindComm(layer.backward, "moe dispatch all-to-all backward"));
  EXPECT_TRUE(FindComm(layer.backward, "moe combine all-to-all backward"));
  // The all-to-all dispatcher sends each copy's fp32 routing probability in
  // an all-to-all of its own, and its gradient back; a flex dispatcher
  // carries them in its dispatch.
  const CommOp* probs = FindComm(layer.forward, "moe probs all-to-all");
  ASSERT_TRUE(probs);
  EXPECT_EQ(probs->group, CommGroup::kExpert);
  EXPECT_DOUBLE_EQ(probs->bytes, T * top_k * 4);
  EXPECT_TRUE(FindComm(layer.backward, "moe probs all-to-all backward"));
  // Before it, every rank's token counts per expert (int64) are gathered
  // over the EP group, once: no gradient comes back.
  const CommOp* counts = FindComm(layer.forward, "moe token counts all-gather");
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->kind, CollectiveKind::kAllGather);
  EXPECT_DOUBLE_EQ(counts->bytes, s.parallelism.expert * 8.0 * 8);
  EXPECT_FALSE(FindComm(layer.backward, "moe token counts all-gather backward"));
  const Workload flex = BuildWorkload(Make(kMixtral, {"parallelism.moe_dispatcher=deepep"}));
  EXPECT_EQ(FindComm(flex.layer(0).forward, "moe probs all-to-all"), nullptr);
  EXPECT_EQ(FindComm(flex.layer(0).forward, "moe token counts all-gather"), nullptr);
  // Expert GEMMs: one local expert per rank with EP 8, all top_k copies of the rank's tokens.
  double expert_flops = 0;
  for (const auto& op : layer.forward.ops) {
    if (op.name.starts_with("expert fc")) expert_flops += op.flops;
  }
  EXPECT_DOUBLE_EQ(expert_flops, 2.0 * T * top_k * 3 * h * 14336);
}

TEST(MoeWorkloadTest, CapacityFactorPadsTheExpertsAndTheAllToAll) {
  const Scenario balanced = Make(kMixtral);
  const Scenario padded = Make(kMixtral, {"model.moe.forced_balance=false", "model.moe.capacity_factor=1.25"});
  const double b = FindComm(BuildWorkload(balanced).layer(0).forward, "moe dispatch all-to-all")->bytes;
  const double p = FindComm(BuildWorkload(padded).layer(0).forward, "moe dispatch all-to-all")->bytes;
  EXPECT_DOUBLE_EQ(p / b, 1.25);
  // Megatron-Core's own default drops past the capacity without padding: the
  // busiest expert's load up to the capacity, the token counts sized on the host.
  const Scenario unpadded = Make(kMixtral, {"model.moe.forced_balance=false", "model.moe.capacity_factor=1.25", "model.moe.pad_to_capacity=false"});
  EXPECT_FALSE(unpadded.pads_experts_to_capacity());
  EXPECT_DOUBLE_EQ(ExpertLoadFactor(unpadded), std::min(1.25, unpadded.framework.moe_dropless_load_factor));
  const auto host_waits = [](const Scenario& x) {
    const Workload w = BuildWorkload(x);
    const PassWork& f = w.layer(0).forward;
    return std::count_if(f.ops.begin(), f.ops.end(), [](const auto& op) { return op.host_waits; });
  };
  EXPECT_EQ(host_waits(unpadded), 1);
  EXPECT_EQ(host_waits(padded), 0);
  // Padding needs a capacity, and the dispatcher that pads.
  auto no_capacity = Parse(kMixtral, {"model.moe.pad_to_capacity=true"});
  ASSERT_FALSE(no_capacity.ok());
  EXPECT_EQ(no_capacity.error().key, "model.moe.pad_to_capacity") << no_capacity.error().ToString();
  auto flex = Parse(kMixtral, {"model.moe.capacity_factor=1.0", "model.moe.pad_to_capacity=true", "parallelism.moe_dispatcher=deepep"});
  ASSERT_FALSE(flex.ok());
  EXPECT_EQ(flex.error().key, "parallelism.moe_dispatcher") << flex.error().ToString();
  // Dropless without forced balance waits for the framework's busiest expert.
  const Scenario dropless = Make(kMixtral, {"model.moe.forced_balance=false"});
  EXPECT_DOUBLE_EQ(ExpertLoadFactor(dropless), dropless.framework.moe_dropless_load_factor);
  EXPECT_GE(ExpertLoadFactor(dropless), 1.0);
}

// The all-to-all dispatcher receives each source rank's tokens as a block and
// sorts them by local expert (rows and fp32 probabilities), then unsorts the
// experts' output before the combine: one read and one write of every row
// each way, and the backward moves the gradients back the same way. One
// local expert needs no sort; DeepEP's permute after its dispatch is the only one.
TEST(MoeWorkloadTest, AllToAllSortsTheReceivedTokensByLocalExpert) {
  const Scenario s = Make(kMixtral, {"parallelism.expert=4"});  // 2 local experts
  const Workload w = BuildWorkload(s);
  const PassWork& f = w.layer(0).forward;
  const double rows = 4096.0 * 2;  // 4096 tokens x top-2, forced balance: all of them land here on average
  const Operator* sort = FindOp(f, "moe sort by expert");
  const Operator* unsort = FindOp(f, "moe unsort by expert");
  ASSERT_NE(sort, nullptr);
  ASSERT_NE(unsort, nullptr);
  EXPECT_DOUBLE_EQ(sort->bytes, 2 * rows * (4096 * 2 + 4));
  EXPECT_DOUBLE_EQ(unsort->bytes, 2 * rows * 4096 * 2);
  EXPECT_EQ(sort->kernels, s.framework.moe_sort_kernels);
  EXPECT_EQ(unsort->kernels, s.framework.moe_unsort_kernels);
  const PassWork& b = w.layer(0).backward;
  ASSERT_NE(FindOp(b, "moe sort by expert backward"), nullptr);
  // The backward sorts the gradients back (the inverse permutation): the same bytes, as the permute's.
  EXPECT_DOUBLE_EQ(FindOp(b, "moe sort by expert backward")->bytes, sort->bytes);
  EXPECT_DOUBLE_EQ(FindOp(b, "moe unsort by expert backward")->bytes, unsort->bytes);
  EXPECT_DOUBLE_EQ(FindOp(b, "moe permute backward")->bytes, FindOp(f, "moe permute")->bytes);
  EXPECT_EQ(FindOp(BuildWorkload(Make(kMixtral)).layer(0).forward, "moe sort by expert"), nullptr);  // EP 8: one expert per rank
  const Scenario deepep = Make(kMixtral, {"parallelism.expert=4", "parallelism.moe_dispatcher=deepep"});
  EXPECT_EQ(FindOp(BuildWorkload(deepep).layer(0).forward, "moe sort by expert"), nullptr);
}

// Experts with biases (GPT-OSS): Megatron-Core adds fc2's bias outside the
// GEMM, in fp32 and per expert, at the framework's bytes per output element,
// forward and (not twice) backward; experts without biases have no such pass.
TEST(MoeWorkloadTest, ExpertBiasIsAPassOverTheExpertsOutput) {
  const Scenario s = Make(kMixtral, {"parallelism.expert=4", "model.moe.expert_bias=true"});  // 2 local experts
  const Workload w = BuildWorkload(s);
  const Operator* f = FindOp(w.layer(0).forward, "expert fc2 bias");
  const Operator* b = FindOp(w.layer(0).backward, "expert fc2 bias backward");
  ASSERT_NE(f, nullptr);
  ASSERT_NE(b, nullptr);
  const double elems = 4096.0 * 2 * 4096;  // token copies x hidden
  ASSERT_GT(s.framework.moe_expert_bias_forward_bytes, 0);
  EXPECT_DOUBLE_EQ(f->bytes, elems * s.framework.moe_expert_bias_forward_bytes);
  EXPECT_DOUBLE_EQ(b->bytes, elems * s.framework.moe_expert_bias_backward_bytes);
  EXPECT_NE(b->bytes, 2 * f->bytes);
  EXPECT_EQ(f->kernels, 2 * s.framework.moe_expert_bias_kernels);
  EXPECT_EQ(FindOp(BuildWorkload(Make(kMixtral, {"parallelism.expert=4"})).layer(0).forward, "expert fc2 bias"), nullptr);
}

// A clamped gated activation (GPT-OSS's swiglu_limit) under Megatron-Core:
// the clamps and their concatenation are passes of their own before the
// fused GLU kernel, at the framework's bytes per activation output element;
// the host waits for the GPU before the GLU (its offset tensor's synchronous
// copy); moe_act recomputes the clamp with the activation, and its clamped
// copy is kept unless it does. A framework whose kernel clamps has no pass.
TEST(MoeWorkloadTest, ActivationClampIsPassesBeforeTheActivation) {
  const std::vector<std::string> moe_act = {"parallelism.expert=4", "training.recompute=selective", "training.recompute_modules=[moe_act]"};
  std::vector<std::string> clamped = moe_act;
  clamped.push_back("model.activation_clamp=7");
  const Scenario s = Make(kMixtral, clamped);  // 2 local experts
  const FrameworkProfile::ActivationClampPass& pass = s.framework.activation_clamp_pass;
  ASSERT_GT(pass.kernels, 0);
  ASSERT_TRUE(pass.host_sync);
  const Workload w = BuildWorkload(s);
  const PassWork& fwd = w.layer(0).forward;
  const auto act = std::find_if(fwd.ops.begin(), fwd.ops.end(), [](const Operator& o) { return o.name == "expert swiglu"; });
  ASSERT_NE(act, fwd.ops.end());
  ASSERT_NE(act, fwd.ops.begin());
  const Operator& clamp = *(act - 1);
  EXPECT_EQ(clamp.name, "expert swiglu clamp");
  const double elems = 4096.0 * 2 * 14336;  // token copies x the expert's width
  EXPECT_DOUBLE_EQ(clamp.bytes, elems * pass.forward_bytes);
  EXPECT_EQ(clamp.kernels, pass.kernels);
  EXPECT_TRUE(act->host_waits);
  const Operator* back = FindOp(w.layer(0).backward, "expert swiglu clamp backward");
  ASSERT_NE(back, nullptr);
  EXPECT_DOUBLE_EQ(back->bytes, elems * pass.backward_bytes);
  ASSERT_GT(pass.backward_kernels, pass.kernels);  // autograd's masks and selects
  EXPECT_EQ(back->kernels, pass.backward_kernels);
  EXPECT_NE(FindOp(w.layer(0).recompute, "expert swiglu clamp"), nullptr);
  EXPECT_NE(FindOp(w.layer(0).recompute, "expert swiglu"), nullptr);

  const Scenario plain = Make(kMixtral, moe_act);
  const Workload pw = BuildWorkload(plain);
  EXPECT_EQ(FindOp(pw.layer(0).forward, "expert swiglu clamp"), nullptr);
  EXPECT_FALSE(FindOp(pw.layer(0).forward, "expert swiglu")->host_waits);
  // The recomputed activation keeps no clamped copy but while one layer is
  // recomputed; kept, every layer holds one per routed copy.
  const double kGiB = 1024.0 * 1024 * 1024;
  EXPECT_NEAR((EstimateMemory(s, w).activations_gib - EstimateMemory(plain, pw).activations_gib) * kGiB, elems * 2 * 2, 1e-6 * elems);
  std::vector<std::string> kept = {"parallelism.expert=4", "training.recompute=none"};
  const Scenario plain_kept = Make(kMixtral, kept);
  kept.push_back("model.activation_clamp=7");
  const Scenario clamped_kept = Make(kMixtral, kept);
  const double delta = (EstimateMemory(clamped_kept, BuildWorkload(clamped_kept)).activations_gib -
                        EstimateMemory(plain_kept, BuildWorkload(plain_kept)).activations_gib) * kGiB;
  EXPECT_NEAR(delta, 32 * elems * 2 * 2, 1e-6 * delta);  // 32 layers x both halves in 16 bits

  const Scenario fused = Make(kMixtral, {"parallelism.expert=4", "model.activation_clamp=7",
                                         "training.framework=megatron-bridge-26.08-gpt-oss-120b-gb200-mxfp8"});
  EXPECT_EQ(FindOp(BuildWorkload(fused).layer(0).forward, "expert swiglu clamp"), nullptr);
}

// GPT-OSS's YaRN rotary runs unfused under Megatron-Bridge (its position
// type is not "rope", so provide() turns the fusion off): the recipe's profile
// prices the eager passes over the queries and keys, with a backward of its
// own kernel count; Mixtral's plain RoPE keeps the fused kernel.
TEST(MoeWorkloadTest, GptOssYarnRotaryIsEagerUnderMegatronBridge) {
  const Scenario s = Make(kMixtral, {"training.framework=megatron-bridge-gpt-oss-120b"});
  const FrameworkProfile::EagerElementwise& e = s.framework.eager_rotary;
  ASSERT_TRUE(e.Set());
  ASSERT_GT(e.backward_kernels, 0);
  ASSERT_NE(e.backward_kernels, e.kernels);
  const Workload w = BuildWorkload(s);
  const double qk = 4096.0 * (32 + 8) * 128;  // tokens x (query + key heads) x head dim
  const Operator* f = FindOp(w.layer(0).forward, "rotary");
  const Operator* b = FindOp(w.layer(0).backward, "rotary backward");
  ASSERT_TRUE(f && b);
  EXPECT_DOUBLE_EQ(f->bytes, qk * e.forward_bytes);
  EXPECT_EQ(f->kernels, e.kernels);
  EXPECT_DOUBLE_EQ(b->bytes, qk * e.backward_bytes);
  EXPECT_EQ(b->kernels, e.backward_kernels);
  const Workload fused = BuildWorkload(Make(kMixtral, {"training.framework=megatron-bridge-perf"}));
  EXPECT_DOUBLE_EQ(FindOp(fused.layer(0).forward, "rotary")->bytes, qk * 2 * 2);
  EXPECT_EQ(FindOp(fused.layer(0).backward, "rotary backward")->kernels, 1);
}

// Recomputing the experts' activation (moe_act) frees each routed copy's fc2
// input whatever the expert tensor split: ETP gathers ETP x the tokens at
// 1/ETP of the width, the same bytes per GPU.
TEST(MoeWorkloadTest, MoeActRecomputeFreesTheSameBytesWhateverTheEtp) {
  auto freed_gib = [](const std::string& etp) {
    const Scenario kept = Make(kMixtral, {"parallelism.expert=4", "parallelism.expert_tensor=" + etp, "training.recompute=none"});
    const Scenario act = Make(kMixtral, {"parallelism.expert=4", "parallelism.expert_tensor=" + etp, "training.recompute=selective",
                                         "training.recompute_modules=[moe_act]"});
    return EstimateMemory(kept, BuildWorkload(kept)).activations_gib - EstimateMemory(act, BuildWorkload(act)).activations_gib;
  };
  const double one = freed_gib("1");
  EXPECT_GT(one, 0);
  EXPECT_NEAR(freed_gib("2"), one, 1e-9 * one);
}

// Each local expert's weight gradient accumulates into the main-grad buffer
// as a dense layer's does (TEGroupedLinear's fuse_wgrad_accumulation): the
// grouped wgrad reads and writes the framework's bytes per weight element.
TEST(MoeWorkloadTest, ExpertWeightGradientsAccumulateIntoMainGrad) {
  const Scenario s = Make(kMixtral, {"parallelism.expert=4"});  // 2 local experts
  const Workload w = BuildWorkload(s);
  const Operator* fc1 = FindOp(w.layer(0).forward, "expert fc1");
  const Operator* wgrad = FindOp(w.layer(0).backward, "expert fc1 wgrad");
  ASSERT_NE(fc1, nullptr);
  ASSERT_NE(wgrad, nullptr);
  ASSERT_GT(s.framework.wgrad_out_bytes, 2);
  EXPECT_EQ(wgrad->batch, 2);
  EXPECT_EQ(wgrad->out_bytes, s.framework.wgrad_out_bytes);
  const double weight_elems = double(fc1->n) * fc1->k * fc1->batch;
  const double inputs = 2.0 * fc1->batch * fc1->m * (fc1->n + fc1->k);
  EXPECT_DOUBLE_EQ(wgrad->bytes, inputs + weight_elems * s.framework.wgrad_out_bytes);
}

// The host issues an expert's GEMMs one by one (Transformer Engine's
// GroupedLinear), and dropless routing makes it wait for the tokens' counts
// before the dispatch: the first operator after it (the sort by local expert) is marked; dropping at a
// capacity pads to a size known up front, so nothing waits.
TEST(MoeWorkloadTest, ExpertKernelsAndTheDroplessSync) {
  const Scenario s = Make(kMixtral, {"parallelism.expert=4"});  // 2 local experts
  const Workload w = BuildWorkload(s);
  const PassWork& f = w.layer(0).forward;
  int waits = 0;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    if (f.ops[i].name == "expert fc1" || f.ops[i].name == "expert fc2") {
      EXPECT_EQ(f.ops[i].kernels, 2) << f.ops[i].name.str();
    }
    if (f.ops[i].host_waits) {
      ++waits;
      ASSERT_GT(i, 0u);
      EXPECT_EQ(f.ops[i - 1].name, OpName("moe permute"));  // the last before the all-to-all
      EXPECT_EQ(f.ops[i].name, OpName("moe sort by expert"));  // Megatron-Core's sync "before_permutation_2"
    }
  }
  EXPECT_EQ(waits, 1);
  const PassWork& b = w.layer(0).backward;
  for (const auto& op : b.ops) {
    EXPECT_FALSE(op.host_waits) << op.name.str();  // the backward reuses the split sizes on the host
    if (op.name.starts_with("expert fc")) {
      EXPECT_EQ(op.kernels, 2) << op.name.str();
    }
  }
  const Scenario padded = Make(kMixtral, {"parallelism.expert=4", "model.moe.forced_balance=false", "model.moe.capacity_factor=1.0"});
  const Workload pw = BuildWorkload(padded);
  for (const auto& op : pw.layer(0).forward.ops) EXPECT_FALSE(op.host_waits) << op.name.str();
}

// The kernels the host issues for one MoE layer follow Transformer Engine's
// recipe: under fp8 current scaling each expert's input and output gradient
// is quantized in four kernels (the source counts about 217 forward and 250
// backward for this layer, TE v2.9 / Megatron-Core core_v0.15), under
// delayed scaling the experts share one multi-tensor cast, and a backward
// has nothing to quantize where the forward's cast was.
TEST(MoeWorkloadTest, KernelsOfAnMoeLayerFollowTheFp8Recipe) {
  // Qwen3-30B-A3B on 8 GPUs: 16 local experts.
  const std::vector<std::string> qwen3 = {"model.layers=48", "model.hidden=2048", "model.heads=32", "model.kv_heads=4",
                                          "model.head_dim=128", "model.qk_norm=true", "model.moe.experts=128",
                                          "model.moe.top_k=8", "model.moe.moe_ffn_hidden=768", "parallelism.expert=8",
                                          "cluster.nodes=1", "training.precision=fp8"};
  const auto kernels = [](const PassWork& pass) {
    int n = 0;
    for (const auto& op : pass.ops) n += op.kernels;
    return n;
  };
  const auto op = [](const PassWork& pass, const std::string& name) {
    for (const auto& o : pass.ops) {
      if (o.name.str() == name) return o;
    }
    ADD_FAILURE() << name;
    return Operator{};
  };
  auto current = qwen3;
  current.push_back("training.framework=megatron-bridge-perf");  // Float8CurrentScaling
  const Workload cw = BuildWorkload(Make(kMixtral, current));
  const PassWork& cf = cw.layer(0).forward;
  const PassWork& cb = cw.layer(0).backward;
  EXPECT_EQ(op(cf, "quantize (expert input)").kernels, 64);
  EXPECT_EQ(op(cf, "expert swiglu").kernels, 1 + 64);  // and fc2's input
  EXPECT_EQ(op(cb, "expert fc1 grad cast-transpose").kernels, 64);
  EXPECT_EQ(op(cb, "quantize (expert input) backward").kernels, 1);
  EXPECT_EQ(op(cb, "expert swiglu backward").kernels, 1);
  EXPECT_EQ(op(cf, "qk norm").kernels, 2);  // the queries' and the keys' norm modules
  EXPECT_NEAR(kernels(cf), 217, 20);
  EXPECT_NEAR(kernels(cb), 250, 25);
  auto delayed = qwen3;
  delayed.push_back("training.framework=megatron-core-2024");  // DelayedScaling
  const Workload dw = BuildWorkload(Make(kMixtral, delayed));
  const PassWork& df = dw.layer(0).forward;
  EXPECT_EQ(op(df, "quantize (expert input)").kernels, 1);
  EXPECT_LT(kernels(df), kernels(cf) - 100);
}

// Megatron-Core's TEGroupedMLP runs the local experts' GEMMs as Transformer
// Engine issues them, a cuBLAS call per expert over 4 streams, forward and
// backward; the TE op fuser's fused grouped MLP (26.08's recipes) as one
// grouped kernel.
TEST(MoeWorkloadTest, ExpertGemmsRunOnTheFrameworksGroupedGemmStreams) {
  const auto streams = [](const Scenario& s) {
    const Workload w = BuildWorkload(s);
    std::vector<int> out;
    for (const char* name : {"expert fc1", "expert fc2"}) out.push_back(FindOp(w.layer(0).forward, name)->batch_streams);
    for (const char* name : {"expert fc1 dgrad", "expert fc1 wgrad", "expert fc2 dgrad", "expert fc2 wgrad"}) {
      out.push_back(FindOp(w.layer(0).backward, name)->batch_streams);
    }
    return out;
  };
  const Scenario te = Make(kMixtral, {"parallelism.expert=4", "training.framework=megatron-bridge-perf"});
  EXPECT_EQ(te.framework.grouped_gemm_streams, 4);
  EXPECT_EQ(streams(te), std::vector<int>(6, 4));
  const Scenario fused = Make(kMixtral, {"parallelism.expert=4", "training.framework=megatron-bridge-26.08-qwen3-gb200-mxfp8"});
  EXPECT_EQ(streams(fused), std::vector<int>(6, 0));
  EXPECT_EQ(FindOp(BuildWorkload(te).layer(0).forward, "qkv")->batch_streams, 0);
}

// The all-to-all dispatcher counts the tokens per rank and expert in kernels
// of its own before the permute; the flex dispatcher's backends (DeepEP,
// HybridEP) count them inside their dispatch, leaving a couple.
TEST(MoeWorkloadTest, PreprocessKernelsFollowTheDispatcher) {
  const auto preprocess = [](const Scenario& s) {
    const Workload w = BuildWorkload(s);
    const Operator* o = FindOp(w.layer(0).forward, "moe preprocess");
    return o ? o->kernels : -1;
  };
  const Scenario alltoall = Make(kMixtral, {"parallelism.expert=4"});
  ASSERT_NE(alltoall.framework.moe_preprocess_kernels, alltoall.framework.moe_flex_preprocess_kernels);
  EXPECT_EQ(preprocess(alltoall), alltoall.framework.moe_preprocess_kernels);
  for (const char* flex : {"parallelism.moe_dispatcher=deepep", "parallelism.moe_dispatcher=hybridep"}) {
    const Scenario s = Make(kMixtral, {"parallelism.expert=4", flex});
    EXPECT_EQ(preprocess(s), s.framework.moe_flex_preprocess_kernels) << flex;
  }
}

// MLA's fused rope (the recipes' apply_rope_fusion) reads the up-projections'
// outputs and writes whole queries (192 per head), keys (192) and values
// (128), not only the 64 rotated dims; its backward moves as much.
TEST(MoeWorkloadTest, MlaRopeWritesWholeQueriesKeysAndValues) {
  const Scenario s = Make(kDeepSeekV3);  // TP 2: 64 heads per GPU, the whole sequence (4,096 tokens)
  const Workload w = BuildWorkload(s);
  const Operator* rope = FindOp(w.layer(0).forward, "rotary");
  ASSERT_NE(rope, nullptr);
  const double T = 4096, heads = 64;
  const double read = heads * (192 + 256) + 64, written = heads * (192 + 192 + 128) + 64;
  EXPECT_DOUBLE_EQ(rope->bytes, T * (read + written) * 2);
  EXPECT_EQ(rope->kernels, 2);
  const Operator* back = FindOp(w.layer(0).backward, "rotary backward");
  ASSERT_NE(back, nullptr);
  EXPECT_DOUBLE_EQ(back->bytes, rope->bytes);
}

// The framework's CUDA graph scope marks what the host launches as graphs:
// moe_router takes the pre-MLP norm, the router and the shared experts,
// moe_preprocess the dispatcher's token counts; the experts stay eager. A
// captured operator's backward replays in the graph too; full_iteration
// captures every pass.
TEST(MoeWorkloadTest, CudaGraphScopesMarkTheirModules) {
  Scenario s = Make(kDeepSeekV3);
  s.framework.cuda_graph_modules = kGraphAttention | kGraphMoeRouter | kGraphMoePreprocess;
  const Workload w = BuildWorkload(s);
  const LayerWork& moe = w.layer(s.model.layers - 1);
  ASSERT_TRUE(moe.kind.moe);
  for (const auto& o : moe.forward.ops) {
    const std::string n = o.name.str();
    const bool captured = n == "input norm" || n == "q down" || n == "flash attention" || n == "post-attention norm" ||
                          n.starts_with("router") || n == "moe preprocess" || n.starts_with("shared ");
    const bool eager = n.starts_with("expert ") || n == "moe permute" || n == "moe unpermute" || n == "moe shared-expert add";
    if (captured) {
      EXPECT_TRUE(o.graphed) << n;
    }
    if (eager) {
      EXPECT_FALSE(o.graphed) << n;
    }
  }
  for (const auto& o : moe.backward.ops) {
    const std::string n = o.name.str();
    if (n.starts_with("router") || n.starts_with("flash attention")) {
      EXPECT_TRUE(o.graphed) << n;
    }
    if (n.starts_with("expert ")) {
      EXPECT_FALSE(o.graphed) << n;
    }
  }
  // The shared experts' output joins the routed one in an add of its own,
  // forward, and their input gradients in one add, backward.
  const Operator* add = FindOp(moe.forward, "moe shared-expert add");
  ASSERT_NE(add, nullptr);
  EXPECT_DOUBLE_EQ(add->bytes, 4096.0 / 2 * 7168 * 2 * 3);  // TP 2 with SP: half the sequence per GPU
  const Operator* add_back = FindOp(moe.backward, "moe shared-expert add backward");
  ASSERT_NE(add_back, nullptr);
  EXPECT_DOUBLE_EQ(add_back->bytes, add->bytes);
  const LayerWork& dense = w.layer(0);  // the mlp scope is not taken: a dense layer's MLP stays eager
  ASSERT_FALSE(dense.kind.moe);
  for (const auto& o : dense.forward.ops) {
    if (o.name.str() == "fc1") {
      EXPECT_FALSE(o.graphed);
    }
  }
  s.framework.cuda_graph_modules = kGraphFullIteration;
  const Workload all = BuildWorkload(s);
  for (const PassWork* pass : {&all.layer(0).forward, &all.layer(s.model.layers - 1).backward, &all.head_forward, &all.embedding_backward}) {
    for (const auto& o : pass->ops) EXPECT_TRUE(o.graphed) << o.name.str();
  }
  s.framework.cuda_graph_modules = 0;
  const Workload eager = BuildWorkload(s);
  for (const auto& o : eager.layer(s.model.layers - 1).forward.ops) EXPECT_FALSE(o.graphed) << o.name.str();
}

// Low-precision expert GEMMs take rows in aligned blocks: a dropless router's
// tokens are copied into padded buffers and the output back out (TE's
// Fp8Padding in Megatron-Core's TEGroupedMLP); not in 16-bit, not at a
// capacity, not where HybridEP's dispatch already aligns them.
TEST(MoeWorkloadTest, DroplessLowPrecisionExpertsPadTheirRows) {
  const auto has = [](const Scenario& s, const std::string& name) {
    const Workload w = BuildWorkload(s);
    for (const auto& o : w.layer(0).forward.ops) {
      if (o.name.str() == name) return o.bytes;
    }
    return 0.0;
  };
  const Scenario fp8 = Make(kMixtral, {"training.precision=fp8"});
  const double rows = fp8.training.micro_batch * fp8.training.seq_len * 2.0 * 4096 * 2;  // tokens x top-2 x hidden x 2 B, forced balance
  EXPECT_DOUBLE_EQ(has(fp8, "moe fp8 padding"), 2 * rows);
  EXPECT_DOUBLE_EQ(has(fp8, "moe fp8 unpadding"), 2 * rows);
  EXPECT_EQ(has(Make(kMixtral), "moe fp8 padding"), 0.0);
  EXPECT_EQ(has(Make(kMixtral, {"training.precision=fp8", "model.moe.forced_balance=false", "model.moe.capacity_factor=1.0"}), "moe fp8 padding"), 0.0);
  EXPECT_EQ(has(Make(kMixtral, {"training.precision=fp8", "parallelism.moe_dispatcher=hybridep"}), "moe fp8 padding"), 0.0);
}

// A whole MoE layer replays as a graph only at fixed shapes: a framework
// capturing it with a dropless router is bad input naming the framework.
TEST(MoeWorkloadTest, AGraphedMoeLayerNeedsTokenDrop) {
  const std::string graphed = "training.framework=megatron-bridge-25.09-qwen3-cuda-graphs";
  auto dropless = Parse(kMixtral, {graphed});
  ASSERT_FALSE(dropless.ok());
  EXPECT_NE(dropless.error().ToString().find("training.framework"), std::string::npos) << dropless.error().ToString();
  EXPECT_NE(dropless.error().ToString().find("capacity_factor"), std::string::npos) << dropless.error().ToString();
  EXPECT_TRUE(Parse(kMixtral, {graphed, "model.moe.forced_balance=false", "model.moe.capacity_factor=1.0"}).ok());
  // Only the all-to-all dispatcher pads to the capacity.
  auto unpadded = Parse(kMixtral, {graphed, "model.moe.forced_balance=false", "model.moe.capacity_factor=1.0",
                                   "parallelism.moe_dispatcher=deepep"});
  ASSERT_FALSE(unpadded.ok());
  EXPECT_NE(unpadded.error().ToString().find("training.framework"), std::string::npos) << unpadded.error().ToString();
}

TEST(MoeWorkloadTest, FirstDenseLayersAreTheirOwnKind) {
  const Scenario s = Make(kDeepSeekV3);
  const Workload w = BuildWorkload(s);
  ASSERT_EQ(w.kinds.size(), 2u);
  EXPECT_FALSE(w.layer(0).kind.moe);
  EXPECT_TRUE(w.layer(3).kind.moe);
  // The three dense layers sit in the first virtual stages, in layer order.
  int layers = 0, dense = 0;
  for (int vs = 0; vs < 32; ++vs) {
    const std::span<const int> counts = w.KindCounts(vs);
    if (layers < 3) {
      EXPECT_EQ(counts[0], std::min(3 - layers, w.stages.VirtualStageLayers(vs))) << vs;
    }
    dense += counts[0];
    layers += counts[0] + counts[1];
  }
  EXPECT_EQ(dense, 3);
  EXPECT_EQ(layers, 61);
}

TEST(MoeLayoutTest, AllToAllStaysOnNvlinkInsideTheNodeAndCrossesTheNicsBeyondIt) {
  const Scenario in_node = Make(kMixtral);
  const Scenario across = Make(kMixtral, {"model.moe.experts=16", "parallelism.expert=16"});
  const Workload wi = BuildWorkload(in_node), wa = BuildWorkload(across);
  const CollectivePlan pi = PlanCollective(in_node, *FindComm(wi.layer(0).forward, "moe dispatch all-to-all"));
  const CollectivePlan pa = PlanCollective(across, *FindComm(wa.layer(0).forward, "moe dispatch all-to-all"));
  EXPECT_TRUE(pi.span.on_nvlink());
  EXPECT_EQ(pi.phase_count, 1);
  EXPECT_FALSE(pa.span.on_nvlink());
  EXPECT_EQ(pa.span.domains, 2);
  ASSERT_EQ(pa.phase_count, 2);
  EXPECT_EQ(pa.phases[1].link, LinkClass::kNic);
  // Half of each rank's pieces go to the other node's eight ranks.
  EXPECT_NEAR(pa.phases[1].bytes * MessageSizeFactor(across, CollectiveChunkBytes(*FindComm(wa.layer(0).forward, "moe dispatch all-to-all"), 16)) /
                  FindComm(wa.layer(0).forward, "moe dispatch all-to-all")->bytes, 0.5, 1e-9);
  // With 4 ConnectX-7 per node the NIC phase takes twice as long.
  const Scenario four = Make(kMixtral, {"model.moe.experts=16", "parallelism.expert=16", "cluster.nics_per_node=4"});
  const CommOp& op = *FindComm(wa.layer(0).forward, "moe dispatch all-to-all");
  EXPECT_NEAR(PlanCollective(four, op).phases[1].time_s() / pa.phases[1].time_s(), 2.0, 1e-9);
}

TEST(MoeDispatcherTest, TokenReachFractionIsTheChanceOfHoldingAnyOfTheTokensExperts) {
  EXPECT_DOUBLE_EQ(TokenReachFraction(8, 1, 1), 1.0 / 8);
  EXPECT_DOUBLE_EQ(TokenReachFraction(256, 8, 256), 1.0);
  EXPECT_DOUBLE_EQ(TokenReachFraction(256, 8, 0), 0.0);
  EXPECT_NEAR(TokenReachFraction(16, 2, 8), 1 - (8.0 / 16) * (7.0 / 15), 1e-12);
}

TEST(MoeDispatcherTest, DeepEpSendsATokenOncePerRemoteNodeAndOncePerGpu) {
  // EP 16 over two nodes, top-2 of 16 experts: the all-to-all sends half of
  // the routed copies across the NICs; DeepEP one copy of a token to the other
  // node when it holds either of its experts (1 - 8/16 x 7/15 of them).
  const std::vector<std::string> across = {"model.moe.experts=16", "parallelism.expert=16"};
  std::vector<std::string> deepep = across;
  deepep.push_back("parallelism.moe_dispatcher=deepep");
  const Scenario plain = Make(kMixtral, across), dedup = Make(kMixtral, deepep);
  EXPECT_EQ(dedup.parallelism.moe_dispatcher, MoeDispatcher::kDeepEp);
  const Workload pw = BuildWorkload(plain), dw = BuildWorkload(dedup);
  const CommOp& pop = *FindComm(pw.layer(0).forward, "moe dispatch all-to-all");
  const CommOp& dop = *FindComm(dw.layer(0).forward, "moe dispatch all-to-all");
  EXPECT_EQ(dop.bytes, pop.bytes);  // the routed copies, as before: only their trip differs
  EXPECT_EQ(dop.dedup_top_k, 2);
  EXPECT_EQ(dop.dedup_experts, 16);
  EXPECT_EQ(pop.dedup_top_k, 0);
  const CollectivePlan pp = PlanCollective(plain, pop), dp = PlanCollective(dedup, dop);
  ASSERT_EQ(pp.phase_count, 2);
  ASSERT_EQ(dp.phase_count, 2);
  ASSERT_EQ(dp.phases[1].link, LinkClass::kNic);
  const double reach = 1 - (8.0 / 16) * (7.0 / 15);
  const double token_bytes = pop.bytes / 2;  // top-2: two routed copies per token
  EXPECT_NEAR(dp.phases[1].bytes / (reach * token_bytes), 1.0, 1e-9);
  // NCCL's all-to-all pays its message-size penalty on the half that crosses;
  // DeepEP's streaming kernels do not (DeepEP's published normal-kernel rates).
  EXPECT_GT(pp.phases[1].bytes, pop.bytes / 2 * 1.01);
  // Over NVLink: once per destination GPU (2 of 16 here), 7/8 of them another GPU of its node
  // (a token from the other node arrives at the same-index GPU and is forwarded from there).
  EXPECT_NEAR(dp.phases[0].bytes / (2 * 7.0 / 8 * token_bytes), 1.0, 1e-9);
  EXPECT_LT(Simulate(dedup, SimulateOptions::At(Fidelity::kAnalytical)).step_time_s,
            Simulate(plain, SimulateOptions::At(Fidelity::kAnalytical)).step_time_s);
  // Top-1 routing has nothing to deduplicate across the NICs.
  std::vector<std::string> top1 = deepep;
  top1.push_back("model.moe.top_k=1");
  std::vector<std::string> top1_plain = across;
  top1_plain.push_back("model.moe.top_k=1");
  const Scenario t1 = Make(kMixtral, top1), t1p = Make(kMixtral, top1_plain);
  const Workload t1w = BuildWorkload(t1), t1pw = BuildWorkload(t1p);
  const CommOp& t1op = *FindComm(t1w.layer(0).forward, "moe dispatch all-to-all");
  const CommOp& t1pop = *FindComm(t1pw.layer(0).forward, "moe dispatch all-to-all");
  ASSERT_EQ(t1op.dedup_top_k, 1);
  // The same bytes cross as with the all-to-all (half the copies), less NCCL's penalty.
  EXPECT_NEAR(PlanCollective(t1, t1op).phases[1].bytes / (t1pop.bytes / 2), 1.0, 1e-12);
  EXPECT_GT(PlanCollective(t1p, t1pop).phases[1].bytes, t1pop.bytes / 2 * 1.01);
}

TEST(MoeDispatcherTest, OverlappedDispatcherKernelsTakeTheirSmsFromTheCompute) {
  const std::vector<std::string> base = {"model.moe.experts=16", "parallelism.expert=16", "parallelism.moe_a2a_overlap=true"};
  std::vector<std::string> deepep = base;
  deepep.push_back("parallelism.moe_dispatcher=deepep");
  const Scenario s = Make(kMixtral, deepep);
  EXPECT_EQ(s.framework.deepep_sms, 20);  // megatron-core-2024.yaml: Megatron-Core's moe_deepep_num_sms
  const StepCosts c = ComputeStepCosts(s);
  Scenario free_sms = s;
  free_sms.framework.deepep_sms = 0;
  const StepCosts f = ComputeStepCosts(free_sms);
  const StageCost &a = c.virtual_stage[0], &b = f.virtual_stage[0];
  EXPECT_EQ(a.forward_all_to_all_s, b.forward_all_to_all_s);
  // The compute loses 20 of the GPU's SMs for as long as the all-to-alls run
  // beside it: never more than the whole compute's worth.
  const double slowdown = 20.0 / (s.node.gpu.sms - 20);
  EXPECT_GT(a.forward_exposed_comm_s, b.forward_exposed_comm_s);
  EXPECT_LE(a.forward_exposed_comm_s - b.forward_exposed_comm_s, a.forward_compute_s * slowdown + 1e-12);
}

// DeepEP's NVLink kernels address 8 peers; past that, inside one multi-node
// NVLink domain (GB200 NVL72), its dispatch and combine run at the rates NVIDIA
// measured for EP 32 (megatron-core-2024.yaml deepep), the combine the
// slower. Up to 8 peers, and HybridEP over the whole domain, run at the
// rates NVIDIA measured for those kernels (deepep and hybridep
// nvlink_fraction). Each is an algorithm bandwidth, which counts the copies a
// GPU keeps for itself: (r - 1) / r of it crosses NVLink.
TEST(MoeDispatcherTest, FlexDispatchersRunAtTheirMeasuredNvlinkRates) {
  const std::vector<std::string> nvl72 = {"cluster.node=gb200-nvl72", "cluster.nodes=8", "model.moe.experts=32",
                                          "parallelism.expert=32", "parallelism.moe_dispatcher=deepep"};
  const Scenario s = Make(kMixtral, nvl72);
  EXPECT_EQ(s.framework.deepep_max_nvlink_peers, 8);
  const Workload w = BuildWorkload(s);
  const CommOp& dispatch = *FindComm(w.layer(0).forward, "moe dispatch all-to-all");
  const CommOp& combine = *FindComm(w.layer(0).forward, "moe combine all-to-all");
  EXPECT_EQ(dispatch.trip, TokenTrip::kDispatch);
  EXPECT_EQ(combine.trip, TokenTrip::kCombine);
  // The backward sends the gradients the other way: the combine's by DeepEP's dispatch kernel.
  EXPECT_EQ(FindComm(w.layer(0).backward, "moe combine all-to-all backward")->trip, TokenTrip::kDispatch);
  EXPECT_EQ(FindComm(w.layer(0).backward, "moe dispatch all-to-all backward")->trip, TokenTrip::kCombine);
  const CollectivePlan d = PlanCollective(s, dispatch), c = PlanCollective(s, combine);
  ASSERT_EQ(d.phase_count, 1);  // the whole group on NVLink
  EXPECT_EQ(d.phases[0].bytes, c.phases[0].bytes);
  EXPECT_DOUBLE_EQ(d.phases[0].shared_bytes_per_s, 400e9 * 31 / 32);
  EXPECT_DOUBLE_EQ(c.phases[0].unshared_bytes_per_s, 190e9 * 31 / 32);
  // In the cache of a scenario's collectives the two stay apart.
  CollectiveTimes times(s);
  EXPECT_GT(times(combine), 1.5 * times(dispatch));
  // HybridEP addresses the whole domain, at its measured rate for 32 members.
  std::vector<std::string> hybrid = nvl72;
  hybrid.back() = "parallelism.moe_dispatcher=hybridep";
  const Scenario h = Make(kMixtral, hybrid);
  const Workload hw = BuildWorkload(h);
  const CommOp& hd = *FindComm(hw.layer(0).forward, "moe combine all-to-all");
  const double hybrid_rate = Interpolate(h.framework.hybridep_nvlink.combine_fraction, 32, 0) * 900e9 * 31 / 32;
  EXPECT_GT(hybrid_rate, 0);
  EXPECT_DOUBLE_EQ(PlanCollective(h, hd).phases[0].shared_bytes_per_s, hybrid_rate);
  EXPECT_LT(hybrid_rate, NvlinkNcclBytesPerS(h));
  // EP 8 in one NVL72 domain is within DeepEP's 8 peers: its intranode
  // kernels, SM-bound on Blackwell at Megatron-Core's 20 SMs (18 GB/s each).
  std::vector<std::string> eight = nvl72;
  eight[2] = "model.moe.experts=8";
  eight[3] = "parallelism.expert=8";
  const Scenario e = Make(kMixtral, eight);
  const Workload ew = BuildWorkload(e);
  const CommOp& ec = *FindComm(ew.layer(0).forward, "moe combine all-to-all");
  EXPECT_DOUBLE_EQ(PlanCollective(e, ec).phases[0].shared_bytes_per_s, 20 * 18e9 * 7 / 8);
  // On an H100 node the same kernels are NVLink-bound: 0.651 of 450 GB/s.
  const Scenario hopper = Make(kMixtral, {"model.moe.experts=8", "parallelism.expert=8", "parallelism.moe_dispatcher=deepep"});
  ASSERT_EQ(hopper.node.nvlink_bytes_per_s, 450e9);
  const Workload hopper_work = BuildWorkload(hopper);
  const CommOp& hc = *FindComm(hopper_work.layer(0).forward, "moe combine all-to-all");
  EXPECT_NEAR(PlanCollective(hopper, hc).phases[0].shared_bytes_per_s, 0.651 * 450e9 * 7 / 8, 1e3);
  // The all-to-all dispatcher keeps NCCL's rate (and sends every copy).
  const Scenario nccl = Make(kMixtral, {"model.moe.experts=8", "parallelism.expert=8"});
  const Workload nccl_work = BuildWorkload(nccl);
  const CommOp& nc = *FindComm(nccl_work.layer(0).forward, "moe combine all-to-all");
  EXPECT_DOUBLE_EQ(PlanCollective(nccl, nc).phases[0].shared_bytes_per_s, NvlinkNcclBytesPerS(nccl));
}

// A dispatcher's measured rates: interpolated between the group sizes
// measured, held past them, and capped by the SMs the kernels hold.
TEST(MoeDispatcherTest, DispatcherNvlinkRatesInterpolateAndMayBeSmBound) {
  DispatcherNvlinkRates r;
  r.dispatch_fraction = {{8, 0.6}, {32, 0.5}};
  r.combine_fraction = {{8, 0.4}};
  EXPECT_DOUBLE_EQ(r.AlgorithmBytesPerS(false, 8, 1000, 0), 600);
  EXPECT_DOUBLE_EQ(r.AlgorithmBytesPerS(false, 20, 1000, 0), 550);
  EXPECT_DOUBLE_EQ(r.AlgorithmBytesPerS(false, 72, 1000, 0), 500);
  EXPECT_DOUBLE_EQ(r.AlgorithmBytesPerS(false, 4, 1000, 0), 600);
  EXPECT_DOUBLE_EQ(r.AlgorithmBytesPerS(true, 16, 1000, 0), 400);
  r.dispatch_bytes_per_s_per_sm = 10;
  EXPECT_DOUBLE_EQ(r.AlgorithmBytesPerS(false, 8, 1000, 20), 200);  // SM-bound
  EXPECT_DOUBLE_EQ(r.AlgorithmBytesPerS(false, 8, 1000, 100), 600);  // the measured cap
  EXPECT_DOUBLE_EQ(r.AlgorithmBytesPerS(false, 8, 1000, 0), 600);    // SMs not held: the cap
}

// DeepEP's internode kernels reach 20 NVLink domains (NUM_MAX_RDMA_PEERS): an
// EP group over 32 nodes is a run that cannot happen with it (exit 1), not
// bad input; 20 nodes run, and HybridEP has no such limit.
TEST(MoeDispatcherTest, DeepEpReachesTwentyNvlinkDomains) {
  const auto wide = [](int nodes, const std::string& dispatcher) {
    const int ep = 8 * nodes;
    return Parse(kMixtral, {"cluster.nodes=" + std::to_string(nodes), "model.moe.experts=" + std::to_string(ep),
                            "parallelism.expert=" + std::to_string(ep), "parallelism.moe_dispatcher=" + dispatcher,
                            "training.global_batch=" + std::to_string(ep)});
  };
  const auto too_wide = wide(32, "deepep");
  ASSERT_FALSE(too_wide.ok());
  EXPECT_EQ(too_wide.error().kind, ErrorKind::kUnsupported);
  EXPECT_EQ(ExitStatus(too_wide.error().kind), 1);
  EXPECT_NE(too_wide.error().ToString().find("parallelism.moe_dispatcher: DeepEP reaches at most 20 NVLink domains"), std::string::npos)
      << too_wide.error().ToString();
  EXPECT_NE(too_wide.error().ToString().find("spans 32"), std::string::npos) << too_wide.error().ToString();
  EXPECT_TRUE(wide(20, "deepep").ok());
  EXPECT_TRUE(wide(32, "hybridep").ok());
}

TEST(MoeDispatcherTest, AnUnknownDispatcherIsBadInputNamingTheKey) {
  auto s = Parse(kMixtral, {"parallelism.moe_dispatcher=deep-ep"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(s.error().ToString().find("moe_dispatcher"), std::string::npos) << s.error().ToString();
  EXPECT_NE(s.error().ToString().find("deepep"), std::string::npos) << s.error().ToString();
}

// Megatron-Core's allgather dispatcher (its default): every rank of the ETP x
// EP group gathers the group's tokens (16-bit), routing map (bool) and
// probabilities (fp32), permutes out the rows its experts take, and returns
// their outputs in an fp32 reduce-scatter; the backward sends the gradients
// the reverse way, but none for the routing map. No all-to-all, no sort, and
// the expert GEMMs are the all-to-all dispatcher's.
TEST(MoeAllGatherTest, GathersTheGroupsTokensAndReduceScattersInFp32) {
  const Scenario s = Make(kMixtral, {"parallelism.moe_dispatcher=allgather", "parallelism.expert=4"});  // 2 local experts
  const Workload w = BuildWorkload(s);
  const PassWork& f = w.layer(0).forward;
  const double T = 4096, h = 4096, E = 8, ep = 4;
  const CommOp* tokens = FindComm(f, "moe dispatch all-gather");
  const CommOp* combine = FindComm(f, "moe combine reduce-scatter");
  const CommOp* map = FindComm(f, "moe routing map all-gather");
  const CommOp* probs = FindComm(f, "moe probs all-gather");
  ASSERT_TRUE(tokens && combine && map && probs);
  EXPECT_EQ(tokens->kind, CollectiveKind::kAllGather);
  EXPECT_EQ(tokens->group, CommGroup::kExpert);
  EXPECT_DOUBLE_EQ(tokens->bytes, T * ep * h * 2);
  EXPECT_EQ(combine->kind, CollectiveKind::kReduceScatter);
  EXPECT_DOUBLE_EQ(combine->bytes, T * ep * h * 4);
  EXPECT_DOUBLE_EQ(map->bytes, T * ep * E);
  EXPECT_DOUBLE_EQ(probs->bytes, T * ep * E * 4);
  for (const auto& c : f.comms) EXPECT_NE(c.kind, CollectiveKind::kAllToAll) << c.name;
  EXPECT_EQ(FindOp(f, "moe sort by expert"), nullptr);
  const PassWork& b = w.layer(0).backward;
  ASSERT_TRUE(FindComm(b, "moe dispatch all-gather backward"));
  EXPECT_EQ(FindComm(b, "moe dispatch all-gather backward")->kind, CollectiveKind::kReduceScatter);
  EXPECT_EQ(FindComm(b, "moe combine reduce-scatter backward")->kind, CollectiveKind::kAllGather);
  EXPECT_TRUE(FindComm(b, "moe probs all-gather backward"));
  EXPECT_FALSE(FindComm(b, "moe routing map all-gather backward"));
  // The permute reads and writes the rows routed here: top-2 copies of the
  // rank's tokens on average (forced balance), as the all-to-all delivers.
  const double rows = T * 2;
  EXPECT_DOUBLE_EQ(FindOp(f, "moe permute")->bytes, 2 * rows * h * 2);
  EXPECT_TRUE(FindOp(f, "moe permute")->host_waits);  // the token counts' .cpu() comes first
  // The unpermute writes every gathered token; the casts around the reduce-scatter.
  EXPECT_DOUBLE_EQ(FindOp(f, "moe unpermute")->bytes, (rows + T * ep) * h * 2);
  EXPECT_EQ(FindOp(f, "moe local map")->kernels, s.framework.moe_allgather_local_map_kernels);
  const Workload a2a = BuildWorkload(Make(kMixtral, {"parallelism.expert=4"}));
  for (const char* gemm : {"expert fc1", "expert fc2"}) {
    const Operator* x = FindOp(f, gemm);
    const Operator* y = FindOp(a2a.layer(0).forward, gemm);
    ASSERT_TRUE(x && y);
    EXPECT_DOUBLE_EQ(x->flops, y->flops) << gemm;
    EXPECT_DOUBLE_EQ(x->m, y->m) << gemm;
  }
}

// With ETP the group is ETP x EP: each collective is taken as its EP stage
// and its ETP stage (ETP innermost), which together move what one collective
// over the whole group moves per rank; the ETP ranks compute every gathered
// row routed to their experts, each a 1/ETP slice of the expert.
TEST(MoeAllGatherTest, TheEtpTimesEpGroupIsAnEpStageAndAnEtpStage) {
  const Scenario s = Make(kMixtral, {"parallelism.moe_dispatcher=allgather", "parallelism.expert=4", "parallelism.expert_tensor=2"});
  const Workload w = BuildWorkload(s);
  const PassWork& f = w.layer(0).forward;
  const double T = 4096, h = 4096, ep = 4, etp = 2;
  const CommOp* ep_stage = FindComm(f, "moe dispatch all-gather");
  const CommOp* etp_stage = FindComm(f, "moe dispatch etp all-gather");
  ASSERT_TRUE(ep_stage && etp_stage);
  EXPECT_EQ(etp_stage->group, CommGroup::kExpertTensor);
  // Received per rank: (ep - 1) T from the EP stage, (etp - 1) ep T from the ETP stage = (ep etp - 1) T.
  const double received = (ep_stage->bytes - T * h * 2) + etp_stage->bytes * (etp - 1) / etp;
  EXPECT_DOUBLE_EQ(received, (ep * etp - 1) * T * h * 2);
  EXPECT_TRUE(FindComm(f, "moe combine etp reduce-scatter"));
  EXPECT_DOUBLE_EQ(FindOp(f, "expert fc1")->flops, 2.0 * T * 2 * etp * (2 * 14336 / etp) * h);
}

// Megatron-Core overlaps only the all-to-all and flex dispatchers' exchange;
// its allgather dispatcher drops past a capacity without padding to it, and
// always waits for the token counts; and its gathered buffers are memory one
// MoE layer at a time holds.
TEST(MoeAllGatherTest, NoOverlapNoPaddingToCapacityAndItsBuffersInMemory) {
  auto overlapped = Parse(kMixtral, {"parallelism.moe_dispatcher=allgather", "parallelism.moe_a2a_overlap=true"});
  ASSERT_FALSE(overlapped.ok());
  EXPECT_EQ(overlapped.error().key, "parallelism.moe_a2a_overlap");
  const std::vector<std::string> drop = {"model.moe.forced_balance=false", "model.moe.capacity_factor=1.25"};
  std::vector<std::string> ag_drop = drop;
  ag_drop.push_back("parallelism.moe_dispatcher=allgather");
  const Scenario a2a = Make(kMixtral, drop), ag = Make(kMixtral, ag_drop);
  EXPECT_DOUBLE_EQ(ExpertLoadFactor(a2a), 1.25);
  EXPECT_DOUBLE_EQ(ExpertLoadFactor(ag), std::min(1.25, ag.framework.moe_dropless_load_factor));
  EXPECT_TRUE(FindOp(BuildWorkload(ag).layer(0).forward, "moe permute")->host_waits);
  EXPECT_TRUE(a2a.pads_experts_to_capacity());
  EXPECT_FALSE(ag.pads_experts_to_capacity());
  // Megatron-Core's flex dispatcher refuses padding to the capacity: its experts take what the router kept.
  std::vector<std::string> flex_drop = drop;
  flex_drop.push_back("parallelism.moe_dispatcher=deepep");
  const Scenario flex = Make(kMixtral, flex_drop);
  EXPECT_FALSE(flex.pads_experts_to_capacity());
  EXPECT_DOUBLE_EQ(ExpertLoadFactor(flex), std::min(1.25, flex.framework.moe_dropless_load_factor));
  const Scenario plain = Make(kMixtral), gathered = Make(kMixtral, {"parallelism.moe_dispatcher=allgather"});
  const double extra_gib = EstimateMemory(gathered, BuildWorkload(gathered)).activations_gib -
                           EstimateMemory(plain, BuildWorkload(plain)).activations_gib;
  EXPECT_NEAR(extra_gib, 4096.0 * 8 * 4096 * 8 / (1 << 30), 1e-9);  // 4096 tokens x EP 8, 16 + 16 + 32 bits per element
}

// The DES sends the allgather dispatcher's collectives as flows on the links
// they use: alone, they take the closed form's time.
TEST(MoeAllGatherTest, DesFlowsAgreeWithTheClosedForm) {
  const Scenario s = Make(kMixtral, {"model.moe.experts=16", "parallelism.expert=16", "training.global_batch=64",
                                     "parallelism.moe_dispatcher=allgather"});
  const SimulationResult des = Simulate(s, SimulateOptions::At(Fidelity::kDes));
  const SimulationResult ana = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical));
  ASSERT_GT(des.step_time_s, 0);
  EXPECT_NEAR(des.step_time_s / ana.step_time_s, 1.0, 0.05);
  // Top-2 of 16 experts over 16 ranks: gathering all 16 ranks' tokens moves
  // more than the all-to-all's two copies, so the step is longer.
  const Scenario a2a = Make(kMixtral, {"model.moe.experts=16", "parallelism.expert=16", "training.global_batch=64"});
  EXPECT_GT(ana.step_time_s, Simulate(a2a, SimulateOptions::At(Fidelity::kAnalytical)).step_time_s);
}

// Megatron-Core's recompute_modules: each module re-runs its operators in the
// backward (a recomputed MoE block its all-to-alls too) and no longer keeps
// its activations.
TEST(RecomputeModulesTest, EachModuleRecomputesItsOperatorsAndFreesItsActivations) {
  const std::vector<std::string> sel = {"training.recompute=selective"};
  auto with = [&](const std::string& mods) {
    std::vector<std::string> v = sel;
    v.push_back("training.recompute_modules=" + mods);
    return Make(kMixtral, v);
  };
  const Scenario core = Make(kMixtral, sel), moe_act = with("[moe_act]"), moe = with("[moe]");
  EXPECT_EQ(core.training.recompute_modules, unsigned(kRecomputeCoreAttention));  // the default: Korthikanti's selective
  const Workload wc = BuildWorkload(core), wa = BuildWorkload(moe_act), wm = BuildWorkload(moe);
  auto has = [](const PassWork& p, const std::string& name) {
    return std::any_of(p.ops.begin(), p.ops.end(), [&](const Operator& o) { return o.name == name.c_str(); });
  };
  const PassWork &rc = wc.layer(0).recompute, &ra = wa.layer(0).recompute, &rm = wm.layer(0).recompute;
  EXPECT_TRUE(has(rc, "flash attention"));
  EXPECT_FALSE(has(rc, "expert fc1"));
  EXPECT_TRUE(has(ra, "expert swiglu"));
  EXPECT_FALSE(has(ra, "expert fc1"));
  EXPECT_FALSE(has(ra, "flash attention"));  // a list replaces the default
  EXPECT_TRUE(has(rm, "expert fc1") && has(rm, "expert fc2") && has(rm, "router"));
  EXPECT_TRUE(ra.comms.empty());
  ASSERT_EQ(rm.comms.size(), 4u);  // the token counts, the dispatch (tokens, then probabilities) and the combine again
  EXPECT_EQ(rm.comms[0].group, CommGroup::kExpert);
  // moe_act frees each routed copy's fc2 input (16-bit: bf16 here), moe all expert activations.
  const double tokens = double(core.training.seq_len) * core.training.micro_batch;
  const double fc2_inputs = tokens * 2 /* top-2 */ * 2.0 /* bytes */ * 14336;
  EXPECT_NEAR(LayerActivationBytes(core) - LayerActivationBytes(with("[core_attn, moe_act]")), fc2_inputs, 1e-3);
  EXPECT_LT(LayerActivationBytes(moe), LayerActivationBytes(moe_act));
  EXPECT_GT(ComputeStepCosts(moe).virtual_stage[0].backward_compute_s, ComputeStepCosts(moe_act).virtual_stage[0].backward_compute_s);
}

// The layer being recomputed holds what its modules re-create, once (as full
// recompute holds one whole layer); the attention core alone adds nothing.
TEST(RecomputeModulesTest, TheLayerBeingRecomputedHoldsWhatItsModulesRecreate) {
  const Scenario core = Make(kMixtral, {"training.recompute=selective"});
  const Scenario moe = Make(kMixtral, {"training.recompute=selective", "training.recompute_modules=[core_attn, moe]"});
  const Scenario none = Make(kMixtral);
  const double layers = core.model.layers;  // pipeline 1: one micro batch in flight
  const double kGiB = 1024.0 * 1024 * 1024;
  const double delta = (EstimateMemory(moe, BuildWorkload(moe)).activations_gib - EstimateMemory(core, BuildWorkload(core)).activations_gib) * kGiB;
  const double expected = layers * (LayerActivationBytes(moe) - LayerActivationBytes(core)) + (LayerActivationBytes(none) - LayerActivationBytes(moe));
  EXPECT_NEAR(delta / expected, 1.0, 1e-9);
}

TEST(RecomputeModulesTest, ModulesNeedSelectiveAndKnownNames) {
  for (const auto& sets : {std::vector<std::string>{"training.recompute_modules=[mlp]"},
                           std::vector<std::string>{"training.recompute=selective", "training.recompute_modules=[mlpp]"},
                           std::vector<std::string>{"training.recompute=selective", "training.recompute_modules=[]"}}) {
    auto s = Parse(kMixtral, sets);
    ASSERT_FALSE(s.ok()) << sets.back();
    EXPECT_EQ(s.error().kind, ErrorKind::kBadInput);
    EXPECT_NE(s.error().ToString().find("recompute_modules"), std::string::npos) << s.error().ToString();
  }
}

TEST(MoeLayoutTest, ExpertGroupsFoldOverTheAttentionRanks) {
  // TP 2 x DP 64 per stage; EP 64 x ETP 1: expert-DP 2.
  const Scenario s = Make(kDeepSeekV3);
  EXPECT_EQ(s.parallelism.expert_data(), 2);
  const RankLayout layout = s.layout();
  EXPECT_EQ(layout.Span(CommGroup::kExpert).ranks, 64);
  EXPECT_EQ(layout.Span(CommGroup::kExpert).stride, 1);
  EXPECT_EQ(layout.Span(CommGroup::kExpertData).ranks, 2);
  EXPECT_EQ(layout.Span(CommGroup::kExpertData).stride, 64);
  const Scenario etp = Make(kDeepSeekV3, {"parallelism.expert=32", "parallelism.expert_tensor=2"});
  EXPECT_EQ(etp.layout().Span(CommGroup::kExpert).stride, 2);
  EXPECT_EQ(etp.layout().Span(CommGroup::kExpertTensor).ranks, 2);
}

TEST(MoeMemoryTest, ExpertsAreShardedOverExpertParallelRanks) {
  const Scenario s = Make(kMixtral);
  const Workload w = BuildWorkload(s);
  const ModelSpec& m = s.model;
  // EP 8: each GPU holds one of the eight experts of every layer, the attention and router whole.
  const double expected_layer = m.LayerParameters(0) - 7 * m.ExpertParameters();
  EXPECT_NEAR(w.layer(0).params_per_gpu / expected_layer, 1.0, 1e-12);
  EXPECT_NEAR(w.layer(0).expert_params_per_gpu, m.ExpertParameters(), 1e-3);
  // Expert-DP = 16 GPUs / EP 8 = 2: the experts' optimizer state is halved,
  // the rest sharded over all 16 data-parallel ranks.
  const RankState& r = w.rank_state[0];
  const MemoryReport mem = EstimateMemory(s, w);
  const double experts = r.expert_params_per_gpu, dense = r.params_per_gpu - experts;
  EXPECT_NEAR(mem.optimizer_gib * 1024.0 * 1024 * 1024, (dense * 12 / 16 + experts * 12 / 2), 1e3);
  EXPECT_NEAR(mem.weights_gib * 1024.0 * 1024 * 1024, r.params_per_gpu * 2, 1e3);
}

// LoRA on an MoE's attention (target_modules qkv, proj): the experts, the
// router and the rest of the base are frozen, so no expert keeps a gradient,
// an optimizer state or the inputs of its GEMMs for a weight gradient, and
// no expert GEMM has a weight-gradient pass; adapters on MLA's latent
// projections are refused.
TEST(MoeLoraTest, AttentionAdaptersFreezeTheExperts) {
  const std::vector<std::string> lora = {"training.finetune.method=lora", "training.finetune.target_modules=[qkv, proj]"};
  const std::vector<std::string> full = {"training.finetune.method=full"};
  const Scenario ls = Make(kMixtral, lora), fs = Make(kMixtral, full);
  const Workload lw = BuildWorkload(ls), fw = BuildWorkload(fs);
  const MemoryReport lm = EstimateMemory(ls, lw), fm = EstimateMemory(fs, fw);
  EXPECT_GT(lm.weights_gib, fm.weights_gib);  // the 16-bit base, and the adapters beside it
  EXPECT_NEAR(lm.weights_gib, fm.weights_gib, 2e-3 * fm.weights_gib);
  EXPECT_LT(lm.gradients_gib, 0.01 * fm.gradients_gib);
  EXPECT_LT(lm.optimizer_gib, 0.01 * fm.optimizer_gib);
  EXPECT_LT(lm.activations_gib, fm.activations_gib);  // the experts keep no GEMM inputs
  auto wgrads = [](const Workload& w) {
    int n = 0;
    for (const auto& o : w.layer(0).backward.ops) n += o.name == "expert fc1 wgrad" || o.name == "expert fc2 wgrad";
    return n;
  };
  EXPECT_GT(wgrads(fw), 0);
  EXPECT_EQ(wgrads(lw), 0);
  auto mla = Parse(kDeepSeekV3, lora);
  ASSERT_FALSE(mla.ok());
  EXPECT_NE(mla.error().message.find("MLA attention"), std::string::npos) << mla.error().ToString();
  EXPECT_EQ(mla.error().key, "training.finetune.target_modules") << mla.error().ToString();
}

// What a LoRA run on a mixture of experts is checked for and reports: a
// rank beyond an expert's width is bad input; Mixtral's Hugging Face expert
// names (w1, w3, w2) name fc1 and fc2; the MTP module's layer is adapted as
// the last layer is; the result carries the trainable count; FSDP does not
// gather a frozen embedding for a backward it does not have; an EP group of
// one sends no all-to-all.
TEST(MoeLoraTest, RankNamesMtpAndWhatTheRunCarries) {
  auto wide = Parse(kDeepSeekV3, {"training.finetune.method=lora", "training.finetune.target_modules=[fc1, fc2]", "training.finetune.rank=4096"});
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.error().key, "training.finetune.rank");
  EXPECT_NE(wide.error().message.find("moe_ffn_hidden 2048"), std::string::npos) << wide.error().ToString();
  EXPECT_TRUE(Parse(kDeepSeekV3, {"training.finetune.method=lora", "training.finetune.target_modules=[fc1, fc2]", "training.finetune.rank=2048"}).ok());
  const Scenario hf = Make(kMixtral, {"training.finetune.method=lora", "training.finetune.target_modules=[w1, w2, w3]"});
  EXPECT_TRUE(hf.training.finetune.targets.fc1 && hf.training.finetune.targets.fc2 && !hf.training.finetune.targets.qkv);
  EXPECT_FALSE(Parse(kMixtral, {"training.finetune.method=lora", "training.finetune.target_modules=[w1, w2]"}).ok());  // w3 is fc1's other half
  const std::vector<std::string> ds_lora = {"training.finetune.method=lora", "training.finetune.target_modules=[fc1, fc2]"};
  // The same stages with and without it (the balanced default would count the module as a layer).
  std::vector<std::string> with_mtp = ds_lora, without_mtp = ds_lora;
  with_mtp.push_back("model.mtp_layers=1");
  with_mtp.push_back("parallelism.pipeline_layout=Et|(tt|)*30mL");
  without_mtp.push_back("parallelism.pipeline_layout=Et|(tt|)*30L");
  const Scenario d0 = Make(kDeepSeekV3, without_mtp), d1 = Make(kDeepSeekV3, with_mtp);
  const Finetune& f = d0.training.finetune;
  EXPECT_DOUBLE_EQ(LoraParameters(d1.model, f) - LoraParameters(d0.model, f), LoraLayerParameters(d0.model, f, d0.model.LayerAt(60)));
  const Workload w0 = BuildWorkload(d0), w1 = BuildWorkload(d1);
  EXPECT_NEAR(w1.rank_state.back().trainable_params_per_gpu - w0.rank_state.back().trainable_params_per_gpu,
              w0.layer(60).trainable_params_per_gpu, 1e-6);
  const SimulationResult r = Simulate(d1, SimulateOptions::At(Fidelity::kAnalytical));
  EXPECT_DOUBLE_EQ(r.model.trainable_parameters, LoraParameters(d1.model, f));
  const SimulationResult full = Simulate(Make(kMixtral), SimulateOptions::At(Fidelity::kAnalytical));
  EXPECT_DOUBLE_EQ(full.model.trainable_parameters, full.model.parameters);
  // FSDP: the frozen embedding is gathered for its forward alone.
  const Workload fsdp = BuildWorkload(Make(kMixtral, {"parallelism.data_sharding=full", "training.finetune.method=lora"}));
  EXPECT_EQ(FindComm(fsdp.embedding_backward, "shard parameter all-gather"), nullptr);
  EXPECT_NE(FindComm(fsdp.embedding_forward, "shard parameter all-gather"), nullptr);
  // EP 1: every expert local, no token all-to-all.
  const Workload ep1 = BuildWorkload(Make(kMixtral, {"parallelism.expert=1"}));
  EXPECT_EQ(FindComm(ep1.layer(0).forward, "moe dispatch all-to-all"), nullptr);
  EXPECT_EQ(FindComm(ep1.layer(0).forward, "moe combine all-to-all"), nullptr);
  EXPECT_EQ(FindComm(ep1.layer(0).backward, "moe dispatch all-to-all backward"), nullptr);
  // Adapter dropout keeps each adapter's dropped-out input and its mask.
  const Scenario dropped = Make(kMixtral, {"training.finetune.method=lora", "training.finetune.dropout=0.1"});
  const Scenario plain = Make(kMixtral, {"training.finetune.method=lora"});
  EXPECT_GT(EstimateMemory(dropped, BuildWorkload(dropped)).activations_gib, EstimateMemory(plain, BuildWorkload(plain)).activations_gib);
}

// LoRA on the experts' MLP (target_modules fc1, fc2): one adapter pair per
// routed expert (Megatron-Bridge's GroupedExpertLinearAdapter), run as
// grouped GEMMs on the expert's own rows beside its frozen GEMM; the
// adapters are held with their experts (over EP) and reduced over expert-DP;
// a token passes through top_k of them (model FLOPs).
TEST(MoeLoraTest, ExpertAdaptersArePerRoutedExpert) {
  const std::vector<std::string> sets = {"training.finetune.method=lora", "training.finetune.rank=16",
                                         "training.finetune.target_modules=[qkv, proj, fc1, fc2]"};
  const Scenario s = Make(kMixtral, sets);
  const ModelSpec& m = s.model;
  const double r = 16, h = m.hidden, f = m.moe.ffn_hidden;
  const double per_expert = r * (h + 2 * f) + r * (f + h);
  EXPECT_DOUBLE_EQ(LoraRoutedExpertParameters(m, s.training.finetune), per_expert);
  const double attention = r * (h + h + 2 * m.kv_dim()) + r * (h + h);
  EXPECT_DOUBLE_EQ(LoraLayerParameters(m, s.training.finetune, m.LayerAt(0)), attention + 8 * per_expert);
  EXPECT_DOUBLE_EQ(LoraParameters(m, s.training.finetune), 32 * (attention + 8 * per_expert));
  EXPECT_DOUBLE_EQ(LoraActiveParameters(m, s.training.finetune), 32 * (attention + 2 * per_expert));
  const Workload w = BuildWorkload(s);
  const LayerWork& layer = w.layer(0);
  // EP 8: one expert, and its adapters, per GPU; all of its rows through them.
  EXPECT_DOUBLE_EQ(layer.expert_trainable_params_per_gpu, per_expert);
  EXPECT_DOUBLE_EQ(layer.trainable_params_per_gpu, attention + per_expert);
  const Operator* fc1 = FindOp(layer.forward, "expert fc1");
  const Operator* a = FindOp(layer.forward, "expert fc1 lora A");
  const Operator* b = FindOp(layer.forward, "expert fc1 lora B");
  ASSERT_TRUE(fc1 && a && b && FindOp(layer.forward, "expert fc2 lora A") && FindOp(layer.forward, "expert fc2 lora B"));
  EXPECT_DOUBLE_EQ(a->m * a->batch, fc1->m * fc1->batch);
  EXPECT_EQ(a->n, 16);
  EXPECT_EQ(b->n, fc1->n);
  EXPECT_FALSE(a->low_precision);
  // The frozen expert GEMM has no weight gradient; its adapters have theirs.
  EXPECT_EQ(FindOp(layer.backward, "expert fc1 wgrad"), nullptr);
  EXPECT_NE(FindOp(layer.backward, "expert fc1 lora A wgrad"), nullptr);
  // The adapters' gradients cross expert-DP (2), not all 16 data-parallel ranks.
  const RankState& rs = w.rank_state[0];
  EXPECT_DOUBLE_EQ(rs.expert_trainable_params_per_gpu, 32 * per_expert);
  EXPECT_NEAR(rs.expert_grad_reduce_bytes, 32 * per_expert * s.parallelism.grad_reduce_bytes, 1e-3);
  // The experts keep their 16-bit GEMM inputs for the adapters' weight gradients: more than attention-only LoRA.
  const Scenario attention_only = Make(kMixtral, {"training.finetune.method=lora", "training.finetune.rank=16",
                                                  "training.finetune.target_modules=[qkv, proj]"});
  EXPECT_GT(EstimateMemory(s, w).activations_gib, EstimateMemory(attention_only, BuildWorkload(attention_only)).activations_gib);
  EXPECT_GT(Simulate(s, SimulateOptions::At(Fidelity::kAnalytical)).step_time_s,
            Simulate(attention_only, SimulateOptions::At(Fidelity::kAnalytical)).step_time_s);
  // Split over expert tensor parallelism they are refused, naming the key.
  std::vector<std::string> etp = sets;
  etp.push_back("parallelism.expert=4");
  etp.push_back("parallelism.expert_tensor=2");
  auto refused = Parse(kMixtral, etp);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().key, "parallelism.expert_tensor") << refused.error().ToString();
  // Targets the scenario names are its own, even where they equal the framework's default; left out, they are the framework's.
  EXPECT_EQ(refused.error().message.find("default"), std::string::npos) << refused.error().ToString();
  auto defaulted = Parse(kMixtral, {"training.finetune.method=lora", "parallelism.expert=4", "parallelism.expert_tensor=2"});
  ASSERT_FALSE(defaulted.ok());
  EXPECT_NE(defaulted.error().message.find("as framework megatron-core-2024's default"), std::string::npos) << defaulted.error().ToString();
  // DeepSeek-V3's experts and dense layers take adapters; its latent attention does not.
  const Scenario ds = Make(kDeepSeekV3, {"training.finetune.method=lora", "training.finetune.target_modules=[fc1, fc2]"});
  EXPECT_GT(Simulate(ds, SimulateOptions::At(Fidelity::kAnalytical)).step_time_s, 0);
}

// ZeRO-2 and FSDP of a mixture of experts (torchtitan's FSDP2 with EP,
// Megatron FSDP): a layer's routed experts are sharded over the ranks holding
// the same experts (the expert shard group), the rest of it over all the
// gradient replicas; each moves in its own group, per layer, per micro batch.
TEST(MoeShardingTest, FsdpShardsTheExpertsOverTheirOwnGroup) {
  // 16 GPUs, EP 8: expert-DP 2.
  const Scenario s = Make(kMixtral, {"parallelism.data_sharding=full"});
  ASSERT_EQ(s.parallelism.shard_group(), 16);
  ASSERT_EQ(s.parallelism.expert_shard_group(), 2);
  EXPECT_EQ(s.layout().Span(CommGroup::kExpertShard).ranks, 2);
  EXPECT_EQ(s.layout().Span(CommGroup::kExpertShard).stride, 8);
  const Workload w = BuildWorkload(s);
  const LayerWork& layer = w.layer(0);
  const double experts = layer.expert_params_per_gpu, dense = layer.params_per_gpu - experts;
  const double grad_bytes = s.parallelism.grad_reduce_bytes;
  for (const PassWork* pass : {&layer.forward, &layer.backward}) {
    const CommOp* gather = FindComm(*pass, "shard parameter all-gather");
    const CommOp* expert_gather = FindComm(*pass, "expert shard parameter all-gather");
    ASSERT_TRUE(gather && expert_gather);
    EXPECT_EQ(gather->group, CommGroup::kShard);
    EXPECT_DOUBLE_EQ(gather->bytes, dense * 2);
    EXPECT_EQ(expert_gather->group, CommGroup::kExpertShard);
    EXPECT_DOUBLE_EQ(expert_gather->bytes, experts * 2);
  }
  const CommOp* reduce = FindComm(layer.backward, "shard gradient reduce-scatter");
  const CommOp* expert_reduce = FindComm(layer.backward, "expert shard gradient reduce-scatter");
  ASSERT_TRUE(reduce && expert_reduce);
  EXPECT_DOUBLE_EQ(reduce->bytes, dense * grad_bytes);
  EXPECT_DOUBLE_EQ(expert_reduce->bytes, experts * grad_bytes);
  EXPECT_EQ(FindComm(layer.forward, "expert shard gradient reduce-scatter"), nullptr);
  // Nothing of the experts is left to reduce or gather once per step.
  const RankState& r = w.rank_state[0];
  EXPECT_EQ(r.expert_grad_reduce_bytes, 0);
  EXPECT_EQ(r.expert_param_gather_bytes, 0);
  // Memory: each part over its group, and two layers in flight gathered in full.
  const MemoryReport mem = EstimateMemory(s, w);
  const double all_experts = r.expert_params_per_gpu, all_dense = r.params_per_gpu - all_experts;
  // (Mixtral's 32,000 x 4,096 embedding, gathered beside one layer, is smaller than a layer's gathered part.)
  ASSERT_LT((1 - 1.0 / 16) * w.embedding_params_per_gpu, (1 - 1.0 / 16) * dense + (1 - 1.0 / 2) * experts);
  const double held = all_dense / 16 + all_experts / 2 + kShardUnitsInFlight * ((1 - 1.0 / 16) * dense + (1 - 1.0 / 2) * experts);
  const double gib = 1024.0 * 1024 * 1024;
  EXPECT_NEAR(mem.weights_gib * gib, held * 2, 1e3);
  EXPECT_NEAR(mem.gradients_gib * gib, held * grad_bytes, 1e3);
  EXPECT_NEAR(mem.optimizer_gib * gib, all_dense * 12 / 16 + all_experts * 12 / 2, 1e3);
  // Less held than the distributed optimizer's replicated weights and gradients.
  const Scenario zero1 = Make(kMixtral, {"parallelism.data_sharding=optimizer"});
  EXPECT_LT(mem.peak_gib_per_gpu, EstimateMemory(zero1, BuildWorkload(zero1)).peak_gib_per_gpu);
  // ZeRO-2: the reduce-scatters per layer; the step gathers the updated shards, the experts' in their group.
  const Scenario zero2 = Make(kMixtral, {"parallelism.data_sharding=gradients"});
  const Workload w2 = BuildWorkload(zero2);
  EXPECT_NE(FindComm(w2.layer(0).backward, "expert shard gradient reduce-scatter"), nullptr);
  EXPECT_EQ(FindComm(w2.layer(0).forward, "expert shard parameter all-gather"), nullptr);
  EXPECT_DOUBLE_EQ(w2.rank_state[0].expert_param_gather_bytes, all_experts * 2);
  EXPECT_EQ(ExpertParamGather(zero2, w2.rank_state[0]).group, CommGroup::kExpertShard);
  // Both fidelities run it, and agree where nothing contends but the shard traffic.
  const double des = Simulate(s, SimulateOptions::At(Fidelity::kDes)).step_time_s;
  const double ana = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical)).step_time_s;
  ASSERT_GT(ana, 0);
  EXPECT_NEAR(des / ana, 1.0, 0.05);
}

// HSDP of a mixture of experts: shard groups of 8 make 2 replicas, which
// split expert-DP 2 into expert shard groups of one: the experts are not
// sharded, and their gradients cross the replicas once per step with the
// rest's shard. Under LoRA the frozen experts are gathered, never reduced.
TEST(MoeShardingTest, HsdpReplicasAndLoraFreezeWhatTheExpertsMove) {
  const Scenario hsdp = Make(kMixtral, {"parallelism.data_sharding=full", "parallelism.sharding_group=8"});
  ASSERT_EQ(hsdp.parallelism.expert_shard_group(), 1);
  const Workload wh = BuildWorkload(hsdp);
  EXPECT_EQ(FindComm(wh.layer(0).backward, "expert shard gradient reduce-scatter"), nullptr);
  const RankState& r = wh.rank_state[0];
  const double dense = r.params_per_gpu - r.expert_params_per_gpu;
  EXPECT_NEAR(r.grad_replica_reduce_bytes, (dense / 8 + r.expert_params_per_gpu) * hsdp.parallelism.grad_reduce_bytes, 1e3);
  // The step's collectives (what the step costs time and --operators lists) carry it across the replicas.
  const StepDpCollectives step = DpCollectivesOf(hsdp, r);
  EXPECT_EQ(step.gradients[1].group, CommGroup::kShardReplica);
  EXPECT_DOUBLE_EQ(step.gradients[1].bytes, r.grad_replica_reduce_bytes);
  EXPECT_EQ(step.gradients[2].bytes, 0);  // the experts' gradients were reduce-scattered per layer
  const Scenario lora = Make(kMixtral, {"parallelism.data_sharding=full", "training.finetune.method=lora",
                                        "training.finetune.target_modules=[qkv, proj]"});
  const Workload wl = BuildWorkload(lora);
  const CommOp* gather = FindComm(wl.layer(0).forward, "expert shard parameter all-gather");
  ASSERT_NE(gather, nullptr);
  EXPECT_DOUBLE_EQ(gather->bytes, wl.layer(0).expert_params_per_gpu * 2);
  EXPECT_EQ(FindComm(wl.layer(0).backward, "expert shard gradient reduce-scatter"), nullptr);
  EXPECT_EQ(wl.rank_state[0].expert_grad_reduce_bytes, 0);
}

// The multi-token-prediction module is a MoE layer like the last one: its
// routed experts are split over EP like every other layer's, not held whole
// by each TP rank of the last stage (which put 5.6B parameters on one GPU).
TEST(MoeMemoryTest, TheMtpModulesExpertsAreShardedLikeTheLayers) {
  // The same stages with and without it (the balanced default would count the module as a layer).
  const Scenario with = Make(kDeepSeekV3, {"model.mtp_layers=1", "parallelism.pipeline_layout=Et|(tt|)*30mL"});
  const Scenario without = Make(kDeepSeekV3, {"parallelism.pipeline_layout=Et|(tt|)*30L"});
  const Workload w1 = BuildWorkload(with), w0 = BuildWorkload(without);
  const ModelSpec& m = with.model;
  const RankState &last1 = w1.rank_state.back(), &last0 = w0.rank_state.back();
  const LayerWork& moe_layer = w1.layer(m.layers - 1);
  ASSERT_TRUE(moe_layer.kind.moe);
  // The module: one MoE layer as the last stage holds it, plus the 2h -> h projection and two norms over TP 2.
  const double h = m.hidden;
  EXPECT_NEAR(last1.params_per_gpu - last0.params_per_gpu, moe_layer.params_per_gpu + (2 * h * h + 3 * h) / 2, 1.0);
  EXPECT_NEAR(last1.expert_params_per_gpu - last0.expert_params_per_gpu, 256.0 / 64 * m.ExpertParameters(), 1.0);
  // Its experts are reduced over expert-DP with the others, not over all of DP.
  EXPECT_NEAR(last1.expert_grad_reduce_bytes - last0.expert_grad_reduce_bytes, 4 * 256.0 / 64 * m.ExpertParameters(), 1e3);
  // Other stages hold nothing of it.
  EXPECT_DOUBLE_EQ(w1.rank_state[0].params_per_gpu, w0.rank_state[0].params_per_gpu);
}

// The routing imbalance is the busiest EP rank's: with every expert local
// (EP 1) the GPU computes exactly its tokens' copies, balanced or not.
TEST(MoeWorkloadTest, WithoutExpertParallelismImbalanceAddsNothing) {
  auto activations = [](std::vector<std::string> sets) {
    const Scenario s = Make(kMixtral, sets);
    return EstimateMemory(s, BuildWorkload(s)).activations_gib;
  };
  EXPECT_DOUBLE_EQ(activations({"parallelism.expert=1", "model.moe.forced_balance=false"}),
                   activations({"parallelism.expert=1", "model.moe.forced_balance=true"}));
  EXPECT_GT(activations({"parallelism.expert=8", "model.moe.forced_balance=false"}),
            activations({"parallelism.expert=8", "model.moe.forced_balance=true"}));
}

TEST(MoeRulesTest, ExpertParallelDivisibilityErrorsNameTheKey) {
  struct Case {
    std::vector<std::string> sets;
    std::string key;
  };
  for (const Case& c : {Case{{"parallelism.expert=3"}, "expert"},
                        Case{{"parallelism.expert=32"}, "expert"},  // EP 32 > 16 GPUs per stage
                        Case{{"parallelism.expert_tensor=3"}, "expert_tensor"},
                        Case{{"model.moe.top_k=9"}, "top_k"},
                        Case{{"parallelism.tensor=2", "parallelism.sequence_parallel=false"}, "sequence_parallel"}}) {
    auto s = Parse(kMixtral, c.sets);
    ASSERT_FALSE(s.ok()) << c.sets[0];
    EXPECT_EQ(s.error().kind, ErrorKind::kBadInput);
    EXPECT_NE(s.error().ToString().find(c.key), std::string::npos) << s.error().ToString();
  }
  YAML::Node dense = YAML::Load(kMixtral);
  dense["model"].remove("moe");
  auto s = ParseScenario(dense, "dense.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().ToString().find("parallelism.expert"), std::string::npos) << s.error().ToString();
}

// Megatron-Core asserts what its all-to-all overlap needs (one micro batch's
// forward beside another's backward): no full recompute, interleaved chunks
// with a pipeline, at most one MTP module. Exit 2 naming the key, and plan
// skips such layouts (they are layout errors).
TEST(MoeRulesTest, AllToAllOverlapRefusesWhatMegatronCoreAsserts) {
  const std::vector<std::string> on = {"parallelism.expert=8", "parallelism.moe_a2a_overlap=true"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), on.begin(), on.end());
    return Parse(kMixtral, more);
  };
  ASSERT_TRUE(with({}).ok()) << with({}).error().ToString();
  for (const auto& sets : std::vector<std::vector<std::string>>{{"training.recompute=full"},
                                                                {"parallelism.pipeline=2", "parallelism.virtual_stages=1"},
                                                                {"model.mtp_layers=2"}}) {
    auto s = with(sets);
    ASSERT_FALSE(s.ok()) << sets[0];
    EXPECT_EQ(s.error().key, "parallelism.moe_a2a_overlap") << s.error().ToString();
    EXPECT_TRUE(s.error().layout);
    EXPECT_NE(s.error().message.find("Megatron-Core asserts it"), std::string::npos) << s.error().ToString();
  }
  EXPECT_TRUE(with({"parallelism.pipeline=2", "parallelism.virtual_stages=2"}).ok());
  EXPECT_TRUE(with({"model.mtp_layers=1"}).ok());
}

TEST(MoeDesTest, AllToAllFlowsShareTheNicsAndAgreeWithTheClosedFormWhenAlone) {
  // EP 16 over two nodes, one pipeline stage: nothing else contends, so the
  // DES's all-to-all flows take the closed form's time.
  const Scenario s = Make(kMixtral, {"model.moe.experts=16", "parallelism.expert=16", "training.global_batch=64"});
  const SimulationResult des = Simulate(s, SimulateOptions::At(Fidelity::kDes));
  const SimulationResult ana = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical));
  // (EP 16 leaves each expert on one GPU: its optimizer state does not fit; the step time is still simulated.)
  ASSERT_GT(des.step_time_s, 0);
  EXPECT_NEAR(des.step_time_s / ana.step_time_s, 1.0, 0.05);
  // Fewer NICs: the all-to-all, a large part of this step, slows it down in both.
  const Scenario four = Make(kMixtral, {"model.moe.experts=16", "parallelism.expert=16", "training.global_batch=64", "cluster.nics_per_node=4"});
  const SimulationResult des4 = Simulate(four, SimulateOptions::At(Fidelity::kDes));
  EXPECT_GT(des4.step_time_s, des.step_time_s * 1.1);
}

TEST(MoeDesTest, OverlappedAllToAllHidesBehindComputeInBothFidelities) {
  const std::vector<std::string> across = {"model.moe.experts=16", "parallelism.expert=16", "training.global_batch=64"};
  std::vector<std::string> overlapped = across;
  overlapped.push_back("parallelism.moe_a2a_overlap=true");
  const Scenario plain = Make(kMixtral, across), over = Make(kMixtral, overlapped);
  const StepCosts cp = ComputeStepCosts(plain), co = ComputeStepCosts(over);
  // Exposed: what the compute does not cover, never more than without overlap.
  EXPECT_LT(co.virtual_stage[0].forward_all_to_all_s, cp.virtual_stage[0].forward_all_to_all_s);
  EXPECT_NEAR(co.virtual_stage[0].forward_all_to_all_s,
              std::max(0.0, cp.virtual_stage[0].forward_all_to_all_s - co.virtual_stage[0].forward_compute_s), 1e-9);
  const double des = Simulate(over, SimulateOptions::At(Fidelity::kDes)).step_time_s;
  const double ana = Simulate(over, SimulateOptions::At(Fidelity::kAnalytical)).step_time_s;
  EXPECT_LT(des, Simulate(plain, SimulateOptions::At(Fidelity::kDes)).step_time_s);
  EXPECT_NEAR(des / ana, 1.0, 0.05);
}

// Megatron-Core up to core_v0.12 applies the routing probabilities in the
// combine's unpermute, which keeps every copy's expert output for their
// gradient and reads it again in its backward; from core_v0.13 the experts'
// activation takes them, so the unpermute's backward is a pure movement and
// the layer keeps one fp32 probability per copy instead of an h-wide row.
TEST(MoeWorkloadTest, WhereTheRoutingProbabilitiesApplyDecidesWhatTheCombineKeeps) {
  Scenario at_combine = Make(kMixtral, {"parallelism.expert=4"});
  at_combine.framework.moe_probs_on_fc2_input = false;
  Scenario at_fc2 = at_combine;
  at_fc2.framework.moe_probs_on_fc2_input = true;
  const double T = 4096, h = 4096, k = 2;
  const double tokens = T * h * 2, rows = T * k * h * 2;
  for (const Scenario* s : {&at_combine, &at_fc2}) {
    const Workload w = BuildWorkload(*s);
    const Operator* f = FindOp(w.layer(0).forward, "moe unpermute");
    const Operator* b = FindOp(w.layer(0).backward, "moe unpermute backward");
    ASSERT_TRUE(f && b);
    EXPECT_DOUBLE_EQ(f->bytes, tokens + rows);
    EXPECT_DOUBLE_EQ(b->bytes, s == &at_fc2 ? tokens + rows : tokens + 2 * rows);
  }
  EXPECT_DOUBLE_EQ(LayerActivationBytes(at_combine) - LayerActivationBytes(at_fc2), T * k * (2 * h - 4));
  // The allgather dispatcher's unpermute follows the same rule.
  for (Scenario* s : {&at_combine, &at_fc2}) s->parallelism.moe_dispatcher = MoeDispatcher::kAllGather;
  const Workload wc = BuildWorkload(at_combine), wf = BuildWorkload(at_fc2);
  const Operator* ag_combine = FindOp(wc.layer(0).backward, "moe unpermute backward");
  const Operator* ag_fc2 = FindOp(wf.layer(0).backward, "moe unpermute backward");
  ASSERT_TRUE(ag_combine && ag_fc2);
  EXPECT_DOUBLE_EQ(ag_combine->bytes - ag_fc2->bytes, rows);
}

}  // namespace
}  // namespace trainsim
