#include "models/workload.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <tuple>
#include <yaml-cpp/yaml.h>

#include "models/memory_model.h"
#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

Scenario Make(const std::string& model, std::vector<std::string> sets) {
  YAML::Node root = YAML::Load(R"(name: w
cluster: {node: dgx-a100, nodes: 8, fabric: hdr-fat-tree}
model: gpt3-175b
parallelism: {tensor: 8, pipeline: 8}
training: {seq_len: 2048, global_batch: 64, precision: fp16}
)");
  sets.push_back("model=" + model);
  ApplyOverrides(root, sets);
  auto s = ParseScenario(root, "w.yaml");
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

TEST(WorkloadTest, MegatronFlopsAgreeWith6NDForLargeModels) {
  // 6 N D counts the parameter GEMMs; Megatron's formula adds attention (s/6h) and the logits.
  Scenario s = Make("llama2-70b", {"parallelism.tensor=8", "parallelism.pipeline=8", "cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "training.precision=bf16"});
  const double tokens = 64.0 * 2048;
  const double six_nd = 6 * s.model.TotalParameters(2048) * tokens;
  const double megatron = MegatronModelFlops(s.model, 64, 2048);
  EXPECT_GT(megatron / six_nd, 1.0);
  EXPECT_LT(megatron / six_nd, 1.06);
}

// A windowed layer's queries see at most the window, so past it the model
// FLOPs per token stop growing with the sequence: a long sequence's MFU
// stays a fraction of the GPU's peak (Mistral 7B at 512k counted 297%).
TEST(WorkloadTest, WindowedAttentionCountsTheKeysItSees) {
  Scenario s = Make("llama2-7b", {"cluster.node=dgx-h100", "training.precision=bf16"});
  const double h = s.model.hidden, L = s.model.layers;
  ModelSpec windowed = s.model;
  windowed.sliding_window = 4096;
  const long long_seq = 524288;
  // A causal query under a window of w sees min(position, w) keys: w - w^2 / 2s
  // on average, where the whole causal prefix gives s / 2 (2,048 at 4,096).
  const double window_keys = 4096 - 4096.0 * 4096 / (2.0 * long_seq);
  EXPECT_NEAR(MegatronModelFlops(windowed, 1, long_seq) / long_seq - MegatronModelFlops(s.model, 1, 4096) / 4096.0,
              12.0 * h * L * (window_keys - 2048), 1e-9 * MegatronModelFlops(s.model, 1, 4096) / 4096.0);
  EXPECT_DOUBLE_EQ(MegatronModelFlops(windowed, 1, 4096), MegatronModelFlops(s.model, 1, 4096));  // a window as long as the sequence
  // Every other layer windowed (GPT-OSS): half the layers pay for the sequence (its causal half).
  windowed.sliding_window_every = 2;
  const double global_only = MegatronModelFlops(s.model, 1, long_seq) - MegatronModelFlops(windowed, 1, long_seq);
  EXPECT_NEAR(global_only, 12.0 * long_seq * (long_seq / 2.0 - window_keys) * h * L / 2, 1e-9 * global_only);
  // Chunks of c (Llama 4): a query sees its own chunk's keys before it, c / 2
  // over whole chunks, fewer in a partial last one (12,288 = 8,192 + 4,096).
  ModelSpec chunked = s.model;
  chunked.attention_chunk = 8192;
  const double chunk_keys = (8192.0 * 8192 + 4096.0 * 4096) / (2 * 12288);
  EXPECT_NEAR(MegatronModelFlops(s.model, 1, 12288) - MegatronModelFlops(chunked, 1, 12288), 12.0 * 12288 * (6144 - chunk_keys) * h * L,
              1e-9 * MegatronModelFlops(s.model, 1, 12288));
}

// Gemma 2 and 3 norm each block's output before its residual add: two more
// norm passes a layer, forward and backward, and two more norm inputs kept.
// The attention core counts the causal mask's nonzero half, as Megatron-LM's
// num_floating_point_operations does (seq_length / 2): Llama 2 7B at 4,096
// tokens, 6 x 4096 x 4096 per token and layer, beside the projections'
// 6 x 4 x 4096^2 and the MLP's 6 x 3 x 4096 x 11008.
TEST(WorkloadTest, AttentionCoreCountsTheCausalHalf) {
  const Scenario s = Make("llama2-7b", {"cluster.node=dgx-h100", "training.precision=bf16"});
  const double h = 4096, L = 32, seq = 4096;
  const double per_token = L * (6.0 * seq * h + 6.0 * 4 * h * h + 6.0 * 3 * h * 11008) + 6.0 * h * s.model.vocab;
  EXPECT_DOUBLE_EQ(MegatronModelFlops(s.model, 1, long(seq)), seq * per_token);
}

TEST(WorkloadTest, OutputNormsAddTwoNormPassesALayer) {
  const Scenario plain = Make("llama2-7b", {"cluster.node=dgx-h100", "training.precision=bf16", "training.recompute=none"});
  Scenario normed = plain;
  normed.model.output_norms = true;
  auto names = [](const Scenario& s) {
    std::vector<std::string> n;
    const Workload w = BuildWorkload(s);  // a range-for over BuildWorkload(s).layer(0) would outlive the workload
    for (const Operator& o : w.layer(0).forward.ops) n.push_back(o.name.str());
    return n;
  };
  const std::vector<std::string> a = names(plain), b = names(normed);
  EXPECT_EQ(b.size(), a.size() + 2);
  const auto at = [&](const std::string& op) { return std::find(b.begin(), b.end(), op) - b.begin(); };
  EXPECT_EQ(at("attention output norm") + 1, at("residual"));  // before the attention block's residual add
  EXPECT_LT(at("mlp output norm"), long(b.size()));
  EXPECT_EQ(std::count(a.begin(), a.end(), "attention output norm"), 0);
  EXPECT_GT(EstimateMemory(normed, BuildWorkload(normed)).activations_gib, EstimateMemory(plain, BuildWorkload(plain)).activations_gib);
  EXPECT_DOUBLE_EQ(normed.model.TotalParameters(4096) - plain.model.TotalParameters(4096), 32.0 * 2 * 4096);
}

// Llama 4's global layers carry no position encoding (NoPE): no rotary pass
// there, and its L2 query-key norm, which runs on the RoPE layers only, has
// nothing to learn; an RMS query-key norm runs on every layer and counts weights.
TEST(WorkloadTest, NopeLayersSkipRotaryAndTheL2QueryKeyNorm) {
  Scenario s = Make("llama4-maverick", {"cluster.node=dgx-h100", "training.precision=bf16", "parallelism.tensor=8",
                                        "parallelism.pipeline=1", "cluster.nodes=1", "training.global_batch=8"});
  const auto ops_of_layer = [](const Scenario& sc, int layer) {
    std::vector<std::string> n;
    const Workload w = BuildWorkload(sc);
    for (const Operator& o : w.layer(layer).forward.ops) n.push_back(o.name.str());
    return n;
  };
  const auto has = [](const std::vector<std::string>& ops, const std::string& op) { return std::count(ops.begin(), ops.end(), op) > 0; };
  ASSERT_FALSE(s.model.LayerAt(3).rotary);
  ASSERT_TRUE(s.model.LayerAt(2).rotary);
  for (QkNorm qk : {QkNorm::kNone, QkNorm::kL2, QkNorm::kRms}) {
    s.model.qk_norm = qk;
    const std::vector<std::string> rope = ops_of_layer(s, 2), nope = ops_of_layer(s, 3);
    EXPECT_TRUE(has(rope, "rotary"));
    EXPECT_FALSE(has(nope, "rotary"));
    EXPECT_EQ(has(rope, "qk norm"), qk != QkNorm::kNone);
    EXPECT_EQ(has(nope, "qk norm"), qk == QkNorm::kRms);
  }
  ModelSpec l2 = s.model, rms = s.model, none = s.model;
  l2.qk_norm = QkNorm::kL2;
  rms.qk_norm = QkNorm::kRms;
  none.qk_norm = QkNorm::kNone;
  EXPECT_DOUBLE_EQ(l2.TotalParameters(4096), none.TotalParameters(4096));
  EXPECT_DOUBLE_EQ(rms.TotalParameters(4096) - none.TotalParameters(4096), 48.0 * 2 * 128);
}

// ALiBi's bias is added inside the attention kernel (MPT, BLOOM): no rotary
// pass over the queries and keys, no position table beside the embeddings.
TEST(WorkloadTest, AlibiHasNoPassOrTableOfItsOwn) {
  const auto with = [](const std::string& position) {
    YAML::Node root = YAML::Load(R"(name: mpt
cluster: {node: dgx-h100, nodes: 1}
model: {layers: 32, hidden: 4096, ffn_hidden: 16384, heads: 32, vocab: 50368, activation: gelu, norm: layernorm, tied_embeddings: true}
parallelism: {tensor: 1, pipeline: 1}
training: {seq_len: 2048, global_batch: 48, micro_batch: 6, precision: bf16}
)");
    root["model"]["position"] = position;
    auto s = ParseScenario(root, "mpt.yaml");
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    return *s;
  };
  const Scenario rope = with("rope"), alibi = with("alibi"), learned = with("learned");
  EXPECT_EQ(alibi.model.position, PositionKind::kAlibi);
  EXPECT_EQ(ToString(alibi.model.position), "alibi");
  const auto has_rotary = [](const Scenario& s) {
    const Workload w = BuildWorkload(s);
    const auto& ops = w.layer(0).forward.ops;
    return std::any_of(ops.begin(), ops.end(), [](const Operator& o) { return o.name == "rotary"; });
  };
  EXPECT_TRUE(has_rotary(rope));
  EXPECT_FALSE(has_rotary(alibi));
  EXPECT_EQ(alibi.model.TotalParameters(2048), rope.model.TotalParameters(2048));
  EXPECT_DOUBLE_EQ(learned.model.TotalParameters(2048) - rope.model.TotalParameters(2048), 2048.0 * 4096);
}

TEST(WorkloadTest, LayerGemmFlopsMatchMegatronPerLayerTerms) {
  // With TP 1 the forward pass of one layer is 1/3 of Megatron's per-layer count
  // (fwd + 2x bwd), up to the causal half of the attention core Megatron counts whole.
  Scenario s = Make("gpt3-175b", {"parallelism.tensor=1", "parallelism.pipeline=8", "cluster.nodes=1", "training.global_batch=8",
                                  "training.attention=flash"});
  const Workload w = BuildWorkload(s);
  const ModelSpec& m = s.model;
  const double b = 1, sq = 2048, h = m.hidden;
  const double gemm = 2 * b * sq * (4 * h * h + 2 * h * m.ffn_hidden);
  const double attn_causal = 2 * b * sq * sq * h;  // 4bs^2h / 2
  EXPECT_NEAR(w.layer(0).forward.TotalFlops() / (gemm + attn_causal), 1.0, 1e-9);
  double bwd_gemm = 0;
  for (const auto& o : w.layer(0).backward.ops) bwd_gemm += o.cls == OpClass::kGemm ? o.flops : 0;
  EXPECT_NEAR(bwd_gemm / (2 * gemm), 1.0, 1e-9);
}

TEST(WorkloadTest, ActivationMemoryMatchesKorthikantiClosedForms) {
  // Korthikanti et al. 2022 §4, GPT-3 175B, s=2048, b=1, t=8, a=96 (unfused attention, dropout).
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  Scenario sp = Make("gpt3-175b", {"parallelism.sequence_parallel=true", "training.framework=megatron-lm-2022"});
  EXPECT_NEAR(LayerActivationBytes(sp) / (s * b * h * (34 / t + 5 * a * s / (h * t))), 1.0, 1e-9);
  Scenario tp_only = Make("gpt3-175b", {"parallelism.sequence_parallel=false", "training.framework=megatron-lm-2022"});
  EXPECT_NEAR(LayerActivationBytes(tp_only) / (s * b * h * (10 + 24 / t + 5 * a * s / (h * t))), 1.0, 1e-9);
  Scenario selective = Make("gpt3-175b", {"parallelism.sequence_parallel=true", "training.recompute=selective", "training.framework=megatron-lm-2022"});
  EXPECT_NEAR(LayerActivationBytes(selective) / (s * b * h * 34 / t), 1.0, 1e-9);
  Scenario full = Make("gpt3-175b", {"parallelism.sequence_parallel=true", "training.recompute=full", "training.framework=megatron-lm-2022"});
  EXPECT_NEAR(LayerActivationBytes(full) / (s * b * h * 2 / t), 1.0, 1e-9);
}

// Unfused attention multiplies two activations: its backward is two data
// gradients and accumulates into no weight's main grad.
TEST(WorkloadTest, UnfusedAttentionMatmulsHaveNoWeightGradient) {
  const Scenario s = Make("gpt3-175b", {"training.framework=megatron-lm-2022"});
  const Workload w = BuildWorkload(s);
  int data_gradients = 0;
  for (const auto& o : w.layer(0).backward.ops) {
    if (!o.name.starts_with("attention scores") && !o.name.starts_with("attention over values")) continue;
    EXPECT_FALSE(o.name.str().ends_with("wgrad")) << o.name.str();
    EXPECT_EQ(o.out_bytes, 2) << o.name.str();
    ++data_gradients;
  }
  EXPECT_EQ(data_gradients, 4);
}

TEST(WorkloadTest, Gpt3OnA100NeedsRecomputeOrSequenceParallelToFit) {
  // Korthikanti Fig. 1: 175B with TP 8, PP 8 exceeds 80 GB without SP or recompute
  // (1F1B keeps p micro batches in flight on the first stage); with SP + selective it fits.
  Scenario none = Make("gpt3-175b", {"parallelism.sequence_parallel=false", "training.framework=megatron-lm-2022", "parallelism.distributed_optimizer=false"});
  const MemoryReport m0 = EstimateMemory(none, BuildWorkload(none));
  Scenario sel = Make("gpt3-175b", {"parallelism.sequence_parallel=true", "training.recompute=selective", "training.framework=megatron-lm-2022"});
  const MemoryReport m1 = EstimateMemory(sel, BuildWorkload(sel));
  EXPECT_GT(m0.activations_gib, 50.0);
  EXPECT_FALSE(m0.fits);
  EXPECT_LT(m1.activations_gib, 15.0);
  EXPECT_TRUE(m1.fits) << m1.reason;
}

TEST(WorkloadTest, WeightsOptimizerAndGradientsPerGpu) {
  Scenario s = Make("llama2-70b", {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "cluster.nodes=4",
                                   "parallelism.tensor=4", "parallelism.pipeline=4", "training.precision=bf16"});
  const Workload w = BuildWorkload(s);
  const MemoryReport m = EstimateMemory(s, w);
  const double per_gpu = s.model.TotalParameters(2048) / 16;
  EXPECT_NEAR(w.LargestRank().params_per_gpu / per_gpu, 1.0, 0.1);  // the first/last stage carry the embeddings
  EXPECT_NEAR(m.gradients_gib / m.weights_gib, 2.0, 1e-9);
  EXPECT_NEAR(m.optimizer_gib / m.weights_gib, 6.0 / s.parallelism.data, 1e-9);
}

TEST(WorkloadTest, Fp8KeepsTheProjectionInputsInOneByte) {
  // GPT-3 175B on H100, TP 8 with SP, flash attention, no dropout: the QKV,
  // fc1 and fc2 inputs drop from 2 bytes to 1 per element; the proj input is
  // the flash kernel's output, kept in 16-bit by the kernel, plus the fp8 copy
  // (3 bytes, 1 more than bf16).
  const double s = 2048, h = 12288, f = 4 * h, t = 8;
  const std::vector<std::string> h100 = {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "parallelism.sequence_parallel=true"};
  std::vector<std::string> bf16 = h100, fp8 = h100;
  bf16.push_back("training.precision=bf16");
  fp8.push_back("training.precision=fp8");
  const double saved = LayerActivationBytes(Make("gpt3-175b", bf16)) - LayerActivationBytes(Make("gpt3-175b", fp8));
  EXPECT_NEAR(saved / (s * (2 * h / t - h / t + f / t)), 1.0, 1e-9);
}

TEST(WorkloadTest, ContextParallelRanksShareTheGradientReductionAndOptimizerShards) {
  // Llama 3 8B on 8 GPUs with CP 2: the distributed optimizer shards over
  // DP x CP = 8 (Megatron-Core's data-parallel group with context parallel).
  const std::vector<std::string> base = {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "cluster.nodes=1",
                                         "parallelism.tensor=1", "parallelism.pipeline=1", "training.seq_len=8192",
                                         "training.global_batch=8", "training.precision=bf16"};
  std::vector<std::string> cp2 = base;
  cp2.push_back("parallelism.context=2");
  const Scenario s = Make("llama3-8b", cp2);
  const MemoryReport m = EstimateMemory(s, BuildWorkload(s));
  EXPECT_EQ(s.parallelism.data, 4);
  EXPECT_NEAR(m.optimizer_gib / m.weights_gib, 6.0 / 8, 1e-9);
}

const CommOp& CommNamed(const PassWork& pass, const std::string& name) {
  for (const auto& c : pass.comms) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no comm " << name;
  static const CommOp none{};
  return none;
}

// HBM bytes of the operator `name` of a pass; 0 when the pass has none.
double OpBytes(const PassWork& pass, const std::string& name) {
  for (const auto& o : pass.ops) {
    if (o.name == name) return o.bytes;
  }
  return 0;
}

// Transformer Engine's userbuffers all-gathers carry fp8 buffers under an fp8
// recipe; its reduce-scatters stay 16-bit. Without TP overlap (plain NCCL
// collectives) the model keeps 2 bytes.
TEST(WorkloadTest, Fp8AllGathersOfTheOverlappedLayersMoveOneByte) {
  std::vector<std::string> sets = {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "parallelism.sequence_parallel=true",
                                   "training.precision=fp8", "parallelism.tp_comm_overlap=true"};
  const Workload w = BuildWorkload(Make("gpt3-175b", sets));
  const double rs = CommNamed(w.layer(0).forward, "attention proj reduce-scatter").bytes;
  EXPECT_DOUBLE_EQ(CommNamed(w.layer(0).forward, "qkv all-gather").bytes, rs / 2);
  EXPECT_DOUBLE_EQ(CommNamed(w.layer(0).forward, "fc1 all-gather").bytes, rs / 2);
  EXPECT_DOUBLE_EQ(CommNamed(w.layer(0).backward, "qkv input re-gather").bytes, rs / 2);
  EXPECT_DOUBLE_EQ(CommNamed(w.layer(0).backward, "fc2 grad all-gather").bytes, rs / 2);
  EXPECT_DOUBLE_EQ(CommNamed(w.layer(0).backward, "fc1 dgrad reduce-scatter").bytes, rs);
  sets.back() = "parallelism.tp_comm_overlap=false";
  const Workload nccl = BuildWorkload(Make("gpt3-175b", sets));
  EXPECT_DOUBLE_EQ(CommNamed(nccl.layer(0).forward, "qkv all-gather").bytes, rs);
  sets.back() = "training.precision=bf16";
  const Workload bf16 = BuildWorkload(Make("gpt3-175b", sets));
  EXPECT_DOUBLE_EQ(CommNamed(bf16.layer(0).forward, "qkv all-gather").bytes, rs);
}

// Current scaling (megatron-bridge-perf's fp8) reads each cast's input once
// more for its amax and all-reduces the amax of every sequence-parallel shard
// over TP before quantizing it: the inputs of the column-parallel GEMMs and
// the output gradients of the row-parallel ones. Delayed scaling does neither.
TEST(WorkloadTest, CurrentScalingAmaxPassesAndTheirAllReduces) {
  std::vector<std::string> sets = {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "parallelism.sequence_parallel=true",
                                   "training.precision=fp8", "training.framework=megatron-bridge-perf"};
  const Workload current = BuildWorkload(Make("gpt3-175b", sets));
  for (const char* name : {"qkv input amax all-reduce", "fc1 input amax all-reduce"}) {
    const CommOp& c = CommNamed(current.layer(0).forward, name);
    EXPECT_EQ(c.group, CommGroup::kTensor) << name;
    EXPECT_DOUBLE_EQ(c.bytes, 4) << name;
    EXPECT_FALSE(c.overlapped) << name;  // the cast waits for it
  }
  CommNamed(current.layer(0).backward, "attention proj output grad amax all-reduce");
  CommNamed(current.layer(0).backward, "fc2 output grad amax all-reduce");
  sets.back() = "training.framework=megatron-core-2024";
  const Workload delayed = BuildWorkload(Make("gpt3-175b", sets));
  const auto amax_comms = [](const PassWork& p) {
    return std::count_if(p.comms.begin(), p.comms.end(), [](const CommOp& c) { return c.name.str().find("amax") != std::string::npos; });
  };
  EXPECT_EQ(amax_comms(delayed.layer(0).forward) + amax_comms(delayed.layer(0).backward), 0);
  // The cast of the attention output: one more 2-byte read per element.
  const double elems = OpBytes(delayed.layer(0).forward, "quantize (proj input)") / 3;
  ASSERT_GT(elems, 0);  // the cast is there
  EXPECT_DOUBLE_EQ(OpBytes(current.layer(0).forward, "quantize (proj input)"), 5 * elems);
}

// Transformer Engine's fp8 data- and weight-gradient GEMMs accumulate in
// split mode and its forward GEMMs fast: the backward's low-precision GEMMs
// carry the mark, nothing else does, and a framework that accumulates fast
// throughout marks none.
TEST(WorkloadTest, Fp8BackwardGemmsAccumulateAsTheFrameworkDoes) {
  Scenario s = Make("gpt3-175b", {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "training.precision=fp8",
                                  "training.framework=megatron-core-2024"});
  ASSERT_TRUE(s.framework.fp8_backward_split_accumulator);
  const auto marked = [](const PassWork& pass) {
    int split = 0, low = 0;
    for (const Operator& o : pass.ops) {
      split += o.split_accumulator;
      low += o.cls == OpClass::kGemm && o.low_precision;
    }
    return std::pair{split, low};
  };
  const Workload w = BuildWorkload(s);
  EXPECT_EQ(marked(w.layer(0).forward).first, 0);
  const auto [split, low] = marked(w.layer(0).backward);
  EXPECT_EQ(split, 8);  // qkv, proj, fc1, fc2: dgrad and wgrad each
  EXPECT_EQ(split, low);
  EXPECT_EQ(marked(w.head_backward).first, 0);  // the LM head runs in 16-bit
  s.framework.fp8_backward_split_accumulator = false;
  EXPECT_EQ(marked(BuildWorkload(s).layer(0).backward).first, 0);
}

// A row-parallel projection's overlapped reduce-scatter moves its fp8 output
// (1 B per element) when the framework puts it on an fp8 userbuffer, which
// needs the GEMM's scale before the GEMM: delayed scaling only. The
// all-gathers are fp8 either way; the backward's reduce-scatters stay 16-bit.
TEST(WorkloadTest, Fp8BufferedReduceScatterMovesOneBytePerElement) {
  Scenario s = Make("gpt3-175b", {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "parallelism.sequence_parallel=true",
                                  "training.precision=fp8", "training.framework=megatron-core-2024"});
  ASSERT_TRUE(s.parallelism.tp_comm_overlap);
  ASSERT_FALSE(s.framework.userbuffers_fp8_reduce_scatter);  // TE's default
  const double two_byte = CommNamed(BuildWorkload(s).layer(0).forward, "fc2 reduce-scatter").bytes;
  s.framework.userbuffers_fp8_reduce_scatter = true;
  const Workload fp8_buf = BuildWorkload(s);
  for (const char* name : {"attention proj reduce-scatter", "fc2 reduce-scatter"}) {
    EXPECT_DOUBLE_EQ(CommNamed(fp8_buf.layer(0).forward, name).bytes, two_byte / 2) << name;
  }
  EXPECT_DOUBLE_EQ(CommNamed(fp8_buf.layer(0).backward, "fc1 dgrad reduce-scatter").bytes, two_byte);
  s.framework.fp8_scaling = Fp8Scaling::kCurrent;
  EXPECT_DOUBLE_EQ(CommNamed(BuildWorkload(s).layer(0).forward, "fc2 reduce-scatter").bytes, two_byte);
  s.framework.fp8_scaling = Fp8Scaling::kDelayed;
  s.parallelism.tp_comm_overlap = false;  // NCCL's reduce-scatter, in 16-bit
  EXPECT_DOUBLE_EQ(CommNamed(BuildWorkload(s).layer(0).forward, "fc2 reduce-scatter").bytes, two_byte);
}

// Megatron's unfused fp32 cross entropy: 38 bytes per local logit forward,
// 14 backward (megatron-core-2024 and megatron-lm-2022 profiles).
TEST(WorkloadTest, CrossEntropyMovesTheFrameworksBytesPerLogit) {
  const Scenario s = Make("gpt3-175b", {});
  EXPECT_DOUBLE_EQ(s.framework.cross_entropy_forward_bytes, 38);
  EXPECT_DOUBLE_EQ(s.framework.cross_entropy_backward_bytes, 14);
  const Workload w = BuildWorkload(s);
  const double logits = 2048.0 * s.training.micro_batch * s.model.vocab / s.parallelism.tensor;
  for (const auto& [pass, name, bytes] : {std::tuple{&w.head_forward, "cross entropy", 38.0},
                                          std::tuple{&w.head_backward, "cross entropy backward", 14.0}}) {
    bool found = false;
    for (const auto& o : pass->ops) {
      if (o.name != name) continue;
      found = true;
      EXPECT_DOUBLE_EQ(o.bytes, logits * bytes);
    }
    EXPECT_TRUE(found) << name;
  }
}

// A framework that runs the model's own code eagerly (torchtitan-2024) moves
// its profile's bytes per element in the norms, rotary and gated activation,
// and copies K, V and the attention output around the kernel under GQA.
TEST(WorkloadTest, EagerElementwiseMovesTheFrameworksBytesPerElement) {
  const std::vector<std::string> tp1 = {"parallelism.tensor=1", "parallelism.pipeline=1", "training.global_batch=64"};
  auto with = [&](const char* framework) {
    std::vector<std::string> sets = tp1;
    sets.push_back(std::string("training.framework=") + framework);
    return BuildWorkload(Make("llama3-8b", sets));
  };
  const Workload fused = with("torchtitan-fsdp2-2025"), eager = with("torchtitan-2024");
  const Scenario s = Make("llama3-8b", tp1);
  const double T = 2048.0 * s.training.micro_batch, h = s.model.hidden, d = s.model.head_dim();
  const double qk = T * (s.model.heads + s.model.kv_heads) * d, ffn = T * s.model.ffn_hidden;
  auto op = [](const PassWork& p, const std::string& name) -> const Operator* {
    for (const auto& o : p.ops) {
      if (o.name == name) return &o;
    }
    return nullptr;
  };
  const PassWork& f = eager.layer(0).forward;
  for (const auto& [name, elems, fwd, bwd, kernels] : {std::tuple{"input norm", T * h, 36.0, 72.0, 8},
                                                       std::tuple{"rotary", qk, 20.0, 20.0, 6},
                                                       std::tuple{"swiglu", ffn, 10.0, 18.0, 2}}) {
    const Operator* o = op(f, name);
    ASSERT_TRUE(o) << name;
    EXPECT_DOUBLE_EQ(o->bytes, elems * fwd) << name;
    EXPECT_EQ(o->kernels, kernels) << name;
    const Operator* b = op(eager.layer(0).backward, std::string(name) + " backward");
    ASSERT_TRUE(b) << name;
    EXPECT_DOUBLE_EQ(b->bytes, elems * bwd) << name;
    EXPECT_LT(op(fused.layer(0).forward, name)->bytes, o->bytes) << name;
  }
  ASSERT_TRUE(op(f, "kv repeat"));  // Llama 3 8B: 8 KV heads for 32 query heads
  EXPECT_DOUBLE_EQ(op(f, "kv repeat")->bytes, T * (s.model.kv_heads + s.model.heads) * 2 * d * 2);
  EXPECT_DOUBLE_EQ(op(f, "attention output copy")->bytes, 2 * T * s.model.heads * d * 2);
  EXPECT_FALSE(op(fused.layer(0).forward, "kv repeat"));
  EXPECT_FALSE(op(fused.layer(0).forward, "attention output copy"));
}

// torchtitan's "op" checkpointing: every memory-bound operator again, and of
// the matmuls q, k, v, o, w1, w3, w2 the second, fourth and sixth; not the
// attention kernel.
TEST(WorkloadTest, TorchtitanOpPolicyRecomputesEverySecondMatmul) {
  const Scenario s = Make("llama3-8b", {"parallelism.tensor=1", "parallelism.pipeline=1", "training.global_batch=64",
                                        "training.recompute=selective", "training.framework=torchtitan-fsdp2-2025"});
  ASSERT_TRUE(s.framework.selective_recompute_torchtitan_op);
  const Workload w = BuildWorkload(s);
  const PassWork& f = w.layer(0).forward;
  const PassWork& r = w.layer(0).recompute;
  double gemm_flops = 0, forward_gemm_flops = 0;
  size_t memory_ops = 0, forward_memory_ops = 0;
  for (const auto& o : f.ops) {
    forward_gemm_flops += o.cls == OpClass::kGemm ? o.flops : 0;
    forward_memory_ops += o.cls == OpClass::kMemoryBound;
  }
  for (const auto& o : r.ops) {
    EXPECT_NE(o.cls, OpClass::kAttention) << o.name;
    gemm_flops += o.cls == OpClass::kGemm ? o.flops : 0;
    memory_ops += o.cls == OpClass::kMemoryBound;
  }
  EXPECT_EQ(memory_ops, forward_memory_ops);
  // k (kv_dim x h), o (h x h) and w3 (ffn x h) of the seven.
  const double h = s.model.hidden, kv = s.model.kv_dim(), ffn = s.model.ffn_hidden;
  EXPECT_NEAR(gemm_flops / forward_gemm_flops, (kv * h + h * h + ffn * h) / (h * h + 2 * kv * h + h * h + 3 * ffn * h), 1e-9);
  // What it keeps: the block input, q, v, the attention output, w1's and w2's outputs, 16-bit, per token.
  const double q = s.model.heads * s.model.head_dim(), o = s.model.attention_out_dim();
  const double tokens = 2048.0 * s.training.micro_batch;
  EXPECT_NEAR(LayerActivationBytes(s), tokens * (2 * h + 2 * q + 2 * kv + 2 * o + 2 * ffn + 2 * h), 1e-5 * LayerActivationBytes(s));  // + softmax statistics
  // Megatron-Core's selective recompute of the same run: the attention core only, no projection or norm.
  const Scenario mcore = Make("llama3-8b", {"parallelism.tensor=1", "parallelism.pipeline=1", "training.global_batch=64",
                                            "training.recompute=selective"});
  EXPECT_LT(LayerActivationBytes(s), 0.6 * LayerActivationBytes(mcore));  // keeps well under half the activations
  const Workload mw = BuildWorkload(mcore);
  for (const auto& o : mw.layer(0).recompute.ops) {
    for (const char* name : {"qkv", "qkv keys", "attention proj", "fc1", "fc1 w3", "fc2", "input norm", "rotary", "swiglu"}) {
      EXPECT_NE(o.name.str(), std::string(name));
    }
  }
}

// Context parallel with TE's ring attention: cp output corrections in
// forward, cp gradient accumulations in backward, and the last dK/dV return
// exposed; none of them without context parallelism.
TEST(WorkloadTest, ContextParallelAddsTheRingAttentionMergeAndTheLastDkvReturn) {
  const std::vector<std::string> base = {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "cluster.nodes=1",
                                         "parallelism.tensor=1", "parallelism.pipeline=1", "training.seq_len=8192",
                                         "training.global_batch=8", "training.precision=bf16"};
  std::vector<std::string> cp2 = base;
  cp2.push_back("parallelism.context=2");
  const Scenario s = Make("llama3-8b", cp2);
  const Workload w = BuildWorkload(s);
  const double T = 8192 / 2, q = T * s.model.heads * s.model.head_dim(), kv = T * 2 * s.model.kv_heads * s.model.head_dim();
  EXPECT_DOUBLE_EQ(OpBytes(w.layer(0).forward, "cp output correction"), 2 * q * 6);
  EXPECT_DOUBLE_EQ(OpBytes(w.layer(0).backward, "cp gradient accumulation"), 2 * (q + kv) * 6);
  const CommOp& ret = CommNamed(w.layer(0).backward, "cp dkv return");
  EXPECT_FALSE(ret.overlapped);
  EXPECT_DOUBLE_EQ(ret.bytes, kv * 2);
  const Workload none = BuildWorkload(Make("llama3-8b", base));
  EXPECT_EQ(OpBytes(none.layer(0).forward, "cp output correction"), 0.0);
  for (const auto& c : none.layer(0).backward.comms) EXPECT_NE(c.name, "cp dkv return");
}

// Megatron-Core's gradient buckets (max(40M, 1M x DP x CP) parameters) fill
// from the LM head through the layers to the embedding; the last one, whose
// reduce-scatter nothing hides, holds the embedding. Llama 2 7B on TP 1: a
// layer (202M) outgrows a 40M bucket alone, so at DP 8 the last bucket is the
// embedding; at DP 256 (256M) two layers close one, and the last holds layer
// 0 and the embedding. Only the first pipeline stage buckets.
TEST(WorkloadTest, TheLastGradientBucketHoldsTheEmbedding) {
  auto last_bucket_params = [](const std::vector<std::string>& sets) {
    std::vector<std::string> all = {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "training.precision=bf16",
                                    "parallelism.tensor=1", "parallelism.pipeline=1", "training.global_batch=512"};
    all.insert(all.end(), sets.begin(), sets.end());
    const Scenario s = Make("llama2-7b", all);
    const Workload w = BuildWorkload(s);
    return std::make_tuple(w.rank_state[0].last_bucket_fraction * w.rank_state[0].params_per_gpu, w.layer(0).params_per_gpu, w);
  };
  const double embedding = 32000.0 * 4096;
  {
    const auto [bucket, layer, w] = last_bucket_params({"cluster.nodes=1"});
    EXPECT_NEAR(bucket, embedding, 1);
    EXPECT_GT(layer, 40e6);
  }
  {
    const auto [bucket, layer, w] = last_bucket_params({"cluster.nodes=32"});
    ASSERT_LT(layer, 256e6);
    EXPECT_NEAR(bucket, layer + embedding, 1);
  }
  {
    const auto [bucket, layer, w] = last_bucket_params({"cluster.nodes=2", "parallelism.pipeline=2"});
    EXPECT_NEAR(bucket, embedding, 1);
    EXPECT_EQ(w.rank_state[1].last_bucket_fraction, 0.0);
  }
  EXPECT_EQ(std::get<0>(last_bucket_params({"cluster.nodes=1", "parallelism.overlap_grad_reduce=false"})), 0.0);
}

// LoRA: the frozen base projections lose their weight gradients (backward
// GEMM FLOPs = forward), the adapters add forward and backward GEMMs; only the
// adapters' gradients are reduced.
TEST(WorkloadTest, LoraDropsTheBaseWeightGradients) {
  const std::vector<std::string> common = {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "training.precision=bf16",
                                           "parallelism.tensor=4", "parallelism.pipeline=1", "cluster.nodes=1", "training.global_batch=8",
                                           "training.attention=flash"};
  std::vector<std::string> lora_sets = common;
  lora_sets.push_back("training.finetune={method: lora, rank: 16}");
  const Scenario base = Make("llama2-70b", common);
  const Scenario lora = Make("llama2-70b", lora_sets);
  const Workload wb = BuildWorkload(base), wl = BuildWorkload(lora);
  auto gemm_flops = [](const PassWork& p, bool adapters) {
    double f = 0;
    for (const auto& o : p.ops) {
      const bool adapter = o.name.str().find("lora") != std::string::npos;
      if (o.cls == OpClass::kGemm && adapter == adapters) f += o.flops;
    }
    return f;
  };
  EXPECT_DOUBLE_EQ(gemm_flops(wl.layer(0).forward, false), gemm_flops(wb.layer(0).forward, false));
  EXPECT_DOUBLE_EQ(gemm_flops(wl.layer(0).backward, false), gemm_flops(wb.layer(0).forward, false));  // dgrad only
  EXPECT_DOUBLE_EQ(gemm_flops(wb.layer(0).backward, false), 2 * gemm_flops(wb.layer(0).forward, false));
  // Adapters: forward 2 T r (in + out) per projection; backward twice that.
  const double T = 2048;  // tokens per micro batch (seq_len 2048, micro batch 1)
  EXPECT_NEAR(gemm_flops(wl.layer(0).forward, true), 2 * T * LoraLayerParameters(lora.model, lora.training.finetune, lora.model.LayerAt(0)) / 4,
              1e-6 * gemm_flops(wl.layer(0).forward, true));
  EXPECT_DOUBLE_EQ(gemm_flops(wl.layer(0).backward, true), 2 * gemm_flops(wl.layer(0).forward, true));
  const RankState& r = wl.rank_state[0];
  EXPECT_DOUBLE_EQ(r.trainable_params_per_gpu, 80 * LoraLayerParameters(lora.model, lora.training.finetune, lora.model.LayerAt(0)) / 4);
  EXPECT_DOUBLE_EQ(r.grad_reduce_bytes, r.trainable_params_per_gpu * lora.parallelism.grad_reduce_bytes);
  // Model FLOPs: 4 of 6 per weight and token, all of the attention core (its causal half), 6 per adapter weight.
  const double tokens = 8.0 * 2048;
  const double core = 12.0 * tokens * 2048 / 2 * 80 * 8192;
  const double full = MegatronModelFlops(base.model, 8, 2048);
  EXPECT_DOUBLE_EQ(wl.model_flops_per_step, full - (full - core) / 3 + 6 * tokens * 80 * LoraLayerParameters(lora.model, lora.training.finetune, lora.model.LayerAt(0)));
}

// Llama 2 70B LoRA (rank 16) on one H100 node, TP 4 with sequence
// parallelism, Megatron-Core's stack; the last entry is the finetune key.
std::vector<std::string> LoraTp4SequenceParallel() {
  return {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "training.precision=bf16",
          "parallelism.tensor=4", "parallelism.pipeline=1", "cluster.nodes=1", "training.global_batch=8",
          "parallelism.sequence_parallel=true", "training.framework=megatron-core-2024",
          "training.finetune={method: lora, rank: 16}"};
}

// LoRA under TP with sequence parallelism: the adapters' own collectives
// (NeMo's ParallelLinearAdapter), on the critical path. Beside qkv and fc1,
// whose input TE all-gathers on userbuffers, the adapter gathers the input
// itself and reduce-scatters its gradient; beside proj and fc2 it gathers its
// output and the output's gradient, or sends one all-to-all each way.
TEST(WorkloadTest, LoraAdaptersSendTheirOwnCollectives) {
  const std::vector<std::string> sets = LoraTp4SequenceParallel();
  Scenario s = Make("llama2-70b", sets);
  ASSERT_TRUE(s.parallelism.tp_comm_overlap);
  const double T = 2048, h = 8192, r = 16;
  auto check = [](const PassWork& p, const std::string& name, CollectiveKind kind, double bytes) {
    const CommOp& c = CommNamed(p, name);
    EXPECT_EQ(c.kind, kind) << name;
    EXPECT_EQ(c.group, CommGroup::kTensor) << name;
    EXPECT_DOUBLE_EQ(c.bytes, bytes) << name;
    EXPECT_FALSE(c.overlapped) << name;
  };
  const Workload w = BuildWorkload(s);
  const PassWork &f = w.layer(0).forward, &b = w.layer(0).backward;
  check(f, "qkv lora A input all-gather", CollectiveKind::kAllGather, T * h * 2);
  check(b, "qkv lora A input grad reduce-scatter", CollectiveKind::kReduceScatter, T * h * 2);
  check(f, "qkv lora A output all-gather", CollectiveKind::kAllGather, T * r * 2);
  check(b, "qkv lora B input grad all-reduce", CollectiveKind::kAllReduce, T * r * 2);
  check(f, "fc2 lora A all-reduce", CollectiveKind::kAllReduce, T * r * 2);
  check(f, "fc2 lora B output all-gather", CollectiveKind::kAllGather, T * h * 2);
  check(b, "fc2 lora B output grad all-gather", CollectiveKind::kAllGather, T * h * 2);
  // The all-to-all variant: a quarter of the output each way.
  s.framework.lora_adapter_all_to_all = true;
  const Workload a2a = BuildWorkload(s);
  check(a2a.layer(0).forward, "attention proj lora B all-to-all", CollectiveKind::kAllToAll, T * h / 4 * 2);
  check(a2a.layer(0).backward, "attention proj lora B grad all-to-all", CollectiveKind::kAllToAll, T * h / 4 * 2);
  // qkv's all-gather taken off userbuffers: NCCL's, exposed, and the adapter reads the gathered input.
  s.framework.tp_comm_overlap_disable_qkv = true;
  const Workload no_qkv = BuildWorkload(s);
  check(no_qkv.layer(0).forward, "qkv all-gather", CollectiveKind::kAllGather, T * h * 2);
  for (const CommOp& c : no_qkv.layer(0).forward.comms) EXPECT_NE(c.name.str(), "qkv lora A input all-gather");
  EXPECT_TRUE(CommNamed(no_qkv.layer(0).forward, "fc1 lora A input all-gather").bytes > 0);
  // Dropout "pre" on each adapter's input, before the adapter gathers it: a memory pass of 5 B per element.
  EXPECT_EQ(s.training.finetune.dropout, 0.0);  // NeMo 2's default
  s.training.finetune.dropout = 0.1;
  s.framework.tp_comm_overlap_disable_qkv = false;
  const Workload dropped = BuildWorkload(s);
  EXPECT_DOUBLE_EQ(OpBytes(dropped.layer(0).forward, "qkv lora dropout"), T / 4 * h * 5);               // the SP shard, gathered after
  EXPECT_DOUBLE_EQ(OpBytes(dropped.layer(0).forward, "attention proj lora dropout"), T * h / 4 * 5);   // the TP shard of proj's input
  // No adapters, no adapter collectives.
  std::vector<std::string> plain = sets;
  plain.pop_back();
  const Workload none = BuildWorkload(Make("llama2-70b", plain));  // kept alive: the loop reads into it
  for (const CommOp& c : none.layer(0).forward.comms) {
    EXPECT_EQ(c.name.str().find("lora"), std::string::npos) << c.name.str();
  }
}

// A frozen base projection (LoRA) has no weight gradient: its input is not
// re-gathered for one, and the reduce-scatter of its input gradient, which
// TE's bulk overlap hides behind the weight-gradient GEMM, has nothing to hide
// behind unless tp_comm_overlap_rs_dgrad pipelines it with the data-gradient
// GEMM; a recipe may do that only without context parallelism.
TEST(WorkloadTest, FrozenProjectionsInputGradientScatterNeedsRsDgradOverlap) {
  const std::vector<std::string> sets = LoraTp4SequenceParallel();
  Scenario s = Make("llama2-70b", sets);
  ASSERT_EQ(s.framework.tp_comm_overlap_rs_dgrad, RecipeSetting::kOff);  // Megatron-Core's default
  const auto has_comm = [](const PassWork& p, const std::string& name) {
    for (const CommOp& c : p.comms) if (c.name.str() == name) return true;
    return false;
  };
  const Workload bulk = BuildWorkload(s);
  EXPECT_FALSE(has_comm(bulk.layer(0).backward, "fc1 input re-gather"));
  EXPECT_EQ(CommNamed(bulk.layer(0).backward, "fc1 dgrad reduce-scatter").partner, kNoPartner);
  s.framework.tp_comm_overlap_rs_dgrad = RecipeSetting::kWithoutContextParallel;
  const Workload pipelined = BuildWorkload(s);
  const PassWork& b = pipelined.layer(0).backward;
  const CommOp& rs = CommNamed(b, "fc1 dgrad reduce-scatter");
  ASSERT_GE(rs.partner, 0);
  EXPECT_EQ(b.ops[size_t(rs.partner)].name.str(), "fc1 dgrad");
  std::vector<std::string> cp2 = sets;
  cp2.push_back("parallelism.context=2");
  Scenario split = Make("llama2-70b", cp2);
  split.framework.tp_comm_overlap_rs_dgrad = RecipeSetting::kWithoutContextParallel;
  EXPECT_EQ(CommNamed(BuildWorkload(split).layer(0).backward, "fc1 dgrad reduce-scatter").partner, kNoPartner);
  // A weight with a gradient keeps its re-gather and the bulk overlap behind its wgrad.
  std::vector<std::string> plain = sets;
  plain.pop_back();
  const Workload pre = BuildWorkload(Make("llama2-70b", plain));
  EXPECT_TRUE(has_comm(pre.layer(0).backward, "fc1 input re-gather"));
  const CommOp& wgrad_rs = CommNamed(pre.layer(0).backward, "fc1 dgrad reduce-scatter");
  ASSERT_GE(wgrad_rs.partner, 0);
  EXPECT_EQ(pre.layer(0).backward.ops[size_t(wgrad_rs.partner)].name.str(), "fc1 wgrad");
}

// The MLP activation: gelu fused in one kernel (read and write 16 bits per
// fc1 output); squared ReLU as Megatron-Core runs it, relu then pow, two
// kernels of a read and a write each; swiglu reads both halves, writes one.
TEST(WorkloadTest, SquaredReluRunsAsTwoKernels) {
  const std::vector<std::string> sets = {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "training.precision=bf16",
                                         "parallelism.tensor=1", "parallelism.pipeline=8", "cluster.nodes=1", "training.global_batch=8"};
  Scenario s = Make("gpt3-175b", sets);
  const double elems = 2048.0 * 4 * 12288;  // tokens x ffn
  const auto activation = [&](const char* name) {
    const Workload w = BuildWorkload(s);
    for (const Operator& o : w.layer(0).forward.ops) {
      if (o.name.str() == name) return std::make_pair(o.bytes, o.kernels);
    }
    return std::make_pair(0.0, 0);
  };
  EXPECT_EQ(activation("gelu"), std::make_pair(elems * 4, 1));
  s.model.activation = Activation::kSquaredRelu;
  EXPECT_EQ(activation("squared-relu"), std::make_pair(elems * 8, 2));
}

// Without userbuffers, a TE stack still reduce-scatters a column-parallel
// projection's input gradient asynchronously behind its weight-gradient GEMM
// (async_input_grad_comm); 2021 Megatron-LM waits for it first.
TEST(WorkloadTest, InputGradientScatterHidesBehindTheWgradWithoutUserbuffers) {
  Scenario s = Make("llama2-70b", {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "training.precision=bf16", "parallelism.tensor=4",
                                   "parallelism.pipeline=1", "cluster.nodes=1", "training.global_batch=8", "parallelism.sequence_parallel=true",
                                   "parallelism.tp_comm_overlap=false", "training.framework=megatron-core-2024"});
  ASSERT_TRUE(s.framework.async_input_grad_comm);
  const Workload async = BuildWorkload(s);
  const CommOp& rs = CommNamed(async.layer(0).backward, "fc1 dgrad reduce-scatter");
  EXPECT_TRUE(rs.overlapped);
  EXPECT_EQ(rs.engine, CommEngine::kNccl);
  ASSERT_GE(rs.partner, 0);
  EXPECT_EQ(async.layer(0).backward.ops[size_t(rs.partner)].name.str(), "fc1 wgrad");
  s.framework.async_input_grad_comm = false;
  EXPECT_FALSE(CommNamed(BuildWorkload(s).layer(0).backward, "fc1 dgrad reduce-scatter").overlapped);
}

// Without the parameter transpose cache, each micro batch's backward
// transposes every fp8 weight for its data-gradient GEMM on a GPU whose fp8
// GEMMs take only TN (Hopper): 1 B read and 1 B written per element.
TEST(WorkloadTest, Fp8WeightTransposePerMicroBatchWithoutTheCache) {
  const std::vector<std::string> sets = {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "training.precision=fp8",
                                         "parallelism.tensor=4", "parallelism.pipeline=1", "cluster.nodes=1", "training.global_batch=8"};
  Scenario s = Make("llama2-70b", sets);
  ASSERT_TRUE(s.node.gpu.fp8_gemm_tn_only);
  ASSERT_TRUE(s.framework.fp8_parameter_transpose_cache);
  const auto transposes = [](const Workload& w) {
    double bytes = 0;
    for (const Operator& o : w.layer(0).backward.ops) {
      if (o.name.str().find("weight transpose") != std::string::npos) bytes += o.bytes;
    }
    return bytes;
  };
  EXPECT_EQ(transposes(BuildWorkload(s)), 0.0);
  s.framework.fp8_parameter_transpose_cache = false;
  const double h = 8192, ffn = 28672, kv = 8 * 128;
  const double weights = h * (h + 2 * kv) + h * h + h * 2 * ffn + ffn * h;  // qkv, proj, fc1 (gated), fc2
  EXPECT_DOUBLE_EQ(transposes(BuildWorkload(s)), 2 * weights / 4);
  s.node.gpu.fp8_gemm_tn_only = false;  // Blackwell reads either layout
  EXPECT_EQ(transposes(BuildWorkload(s)), 0.0);
  s.node.gpu.fp8_gemm_tn_only = true;
  s.training.precision = Precision::kBf16;
  EXPECT_EQ(transposes(BuildWorkload(s)), 0.0);
}

TEST(WorkloadTest, OverlappedCollectivesNameTheirPartnerOperatorByIndex) {
  const Workload w = BuildWorkload(Make("llama2-70b", {"parallelism.tensor=8", "parallelism.pipeline=8", "cluster.node=dgx-h100",
                                                        "cluster.fabric=ndr-rail-optimized", "training.precision=bf16"}));
  int resolved = 0;
  for (const PassWork* pass : {&w.layer(0).forward, &w.layer(0).backward}) {
    for (const CommOp& c : pass->comms) {
      if (c.overlaps_op.empty()) {
        EXPECT_EQ(c.partner, kWholePass) << c.name;
        continue;
      }
      ASSERT_GE(c.partner, 0) << c.name;
      EXPECT_EQ(pass->ops[size_t(c.partner)].name, c.overlaps_op) << c.name;
      ++resolved;
    }
  }
  EXPECT_GE(resolved, 8);  // the four TP regions' collectives, forward and backward
  PassWork p;
  p.comms.push_back(CommOp{"x", CollectiveKind::kAllGather, CommGroup::kTensor, 1, true, "qkv wgrad"});
  ResolvePartners(p);
  EXPECT_EQ(p.comms[0].partner, kNoPartner);  // a frozen weight has no wgrad to hide behind
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// LoRA's trainable parameters are the adapters the workload runs, whatever
// the block: a GeGLU fc1 is gated as SwiGLU's is (2 x ffn outputs), and
// queries of heads x head_dim other than the hidden size (Gemma) size the
// qkv and proj adapters (both were sized as ungated and hidden-wide).
TEST(WorkloadTest, LoraParametersAreTheAdaptersTheWorkloadRuns) {
  const std::string lora = "training.finetune={method: lora, rank: 16, target_modules: [qkv, proj, fc1, fc2]}";
  for (const char* model : {"{layers: 4, hidden: 4096, ffn_hidden: 11008, heads: 32, vocab: 32000, activation: geglu}",
                            "{layers: 4, hidden: 4096, ffn_hidden: 11008, heads: 32, kv_heads: 8, head_dim: 256, vocab: 32000}",
                            "{layers: 4, hidden: 4096, ffn_hidden: 11008, heads: 32, vocab: 32000, activation: gelu}"}) {
    const Scenario s = Make(model, {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "training.precision=bf16",
                                    "parallelism.tensor=1", "parallelism.pipeline=1", "cluster.nodes=1", "training.global_batch=8", lora});
    double adapter_flops = 0;
    const Workload w = BuildWorkload(s);  // alive through the loop: layer() returns into it
    for (const auto& o : w.layer(0).forward.ops) {
      if (o.cls == OpClass::kGemm && o.name.str().find("lora") != std::string::npos) adapter_flops += o.flops;
    }
    EXPECT_NEAR(adapter_flops, 2 * 2048.0 * LoraLayerParameters(s.model, s.training.finetune, s.model.LayerAt(0)), 1e-9 * adapter_flops) << model;
  }
}

}  // namespace
}  // namespace trainsim
