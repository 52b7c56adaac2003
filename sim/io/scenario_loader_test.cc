#include "sim/core/scenario.h"
#include "sim/io/scenario_loader.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace trainsim {
namespace {

const char* kBase = R"(name: t
cluster:
  node: xe9680-h100
  nodes: 4
  fabric: ndr-rail-optimized
model: llama2-70b
parallelism:
  tensor: 4
  pipeline: 4
training:
  seq_len: 4096
  global_batch: 128
)";

Expected<Scenario> ParseText(const std::string& text, const std::vector<std::string>& sets = {}) {
  YAML::Node root = YAML::Load(text);
  ApplyOverrides(root, sets);
  return ParseScenario(root, "s.yaml");
}

TEST(ScenarioTest, LoadsCatalogueModelAndResolvesDataParallel) {
  auto s = ParseText(kBase);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->gpus(), 32);
  EXPECT_EQ(s->parallelism.data, 2);
  EXPECT_EQ(s->model.layers, 80);
  EXPECT_TRUE(s->parallelism.sequence_parallel);
  EXPECT_EQ(s->node.nics_per_node, 8);
}

TEST(ScenarioTest, PipelineLayoutSplitsTheStages) {
  auto s = ParseText(kBase, {"parallelism.pipeline=4", "parallelism.tensor=8", "parallelism.pipeline_layout=E(t*21|)*3t*17L"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->stage_plan().rule(), "layout");
  EXPECT_EQ(s->stage_plan().Describe(), "21x3,17");
}

// A recipe's layout (the framework profile's pipeline_layouts) for the run's
// pipeline x virtual stages, with the model's MTP depth; not for another
// model's layer count, nor where the scenario splits by a rule of its own.
TEST(ScenarioTest, RecipeLayoutWhenTheScenarioGivesNoSplit) {
  auto s = ParseText(kBase, {"parallelism.pipeline=4", "parallelism.tensor=8"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  s->framework.pipeline_layouts["4x1"] = "Et*19|t*21|t*21|t*19mL";
  EXPECT_EQ(s->stage_plan().rule(), "layout");
  EXPECT_EQ(s->stage_plan().Describe(), "19,21x2,19");  // the model has no MTP module: the recipe builds none
  s->parallelism.first_stage_layers = 20;
  s->parallelism.last_stage_layers = 20;
  EXPECT_EQ(s->stage_plan().rule(), "first/last");
  s->parallelism.first_stage_layers = s->parallelism.last_stage_layers = 0;
  s->framework.pipeline_layouts["4x1"] = "Et*20|t*20|t*20|t*21L";  // 81 layers
  EXPECT_EQ(s->stage_plan().rule(), "even");
}

TEST(ScenarioTest, OverrideSetsNestedKey) {
  auto s = ParseText(kBase, {"cluster.nics_per_node=4", "parallelism.tensor=8"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->node.nics_per_node, 4);
  EXPECT_EQ(s->parallelism.tensor, 8);
  EXPECT_EQ(s->parallelism.data, 1);
}

// An empty key is a slip, never a key that changes nothing: "training.=3" and
// a file's `"": 5` are refused, not run as the unchanged scenario.
TEST(ScenarioTest, EmptyKeysAreRefused) {
  for (const char* set : {"training.=3", "parallelism.=5", ".training=3", "training..seq_len=2048"}) {
    try {
      ParseText(kBase, {set});
      ADD_FAILURE() << set << " was accepted";
    } catch (const InputException& e) {
      EXPECT_EQ(e.error().file, "--set") << set;
      EXPECT_NE(e.error().message.find("empty path component"), std::string::npos) << set << ": " << e.error().ToString();
    }
  }
  for (const std::string& text : {std::string(kBase) + "\"\": 5\n", std::string(kBase) + "  \"\": 5\n"}) {
    auto s = ParseText(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.error().message.find("unknown key"), std::string::npos) << s.error().ToString();
    EXPECT_GT(s.error().line, 0) << s.error().ToString();
  }
}

// recompute_layers counts the layers full recompute takes (absent: all); 0
// would be Megatron's "none" under a recompute: full, so it is refused.
TEST(ScenarioTest, RecomputeLayersIsPositive) {
  auto zero = ParseText(kBase, {"training.recompute=full", "training.recompute_layers=0"});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().key, "training.recompute_layers");
  auto two = ParseText(kBase, {"training.recompute=full", "training.recompute_layers=2"});
  ASSERT_TRUE(two.ok()) << two.error().ToString();
  EXPECT_EQ(two->training.recompute_layers, 2);
}

// A what-if on a catalogue model's key: the model's keys come inline and the
// --set changes one of them; a model file's keys are the file's.
TEST(ScenarioTest, OverrideSetsAKeyOfACatalogueModel) {
  auto s = ParseText(kBase, {"model.layers=40"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->model.layers, 40);
  EXPECT_EQ(s->model.hidden, 8192);  // the rest is the catalogue's llama2-70b
  EXPECT_EQ(s->model.name, "llama2-70b");
  auto bad = ParseText(kBase, {"model.layer=40"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().ToString().rfind("--set: model.layer: unknown key", 0), 0u) << bad.error().ToString();
  try {
    ParseText(kBase, {"model=" + std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf/gemma-7b/config.json", "model.layers=4"});
    ADD_FAILURE() << "a key of a model file was set";
  } catch (const InputException& e) {
    EXPECT_NE(e.error().ToString().find("not a catalogue model"), std::string::npos) << e.error().ToString();
  }
}

// A config.json says the architecture; the run's routing choices and MTP
// modules are set beside it ({file: ..., moe: {...}, mtp_layers}), also by
// --set on a scenario that names the file alone. A dense model takes none.
TEST(ScenarioTest, AModelFileTakesTheRunsRoutingChoices) {
  const std::string mixtral = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf/mixtral-8x7b/config.json";
  auto plain = ParseText(kBase, {"model=" + mixtral, "parallelism.tensor=1", "parallelism.pipeline=1"});
  ASSERT_TRUE(plain.ok()) << plain.error().ToString();
  EXPECT_FALSE(plain->model.moe.forced_balance);
  EXPECT_EQ(plain->model.moe.capacity_factor, 0.0);
  auto set = ParseText(kBase, {"model=" + mixtral, "parallelism.tensor=1", "parallelism.pipeline=1", "model.moe.forced_balance=true",
                               "model.moe.capacity_factor=1.25", "model.mtp_layers=1"});
  ASSERT_TRUE(set.ok()) << set.error().ToString();
  EXPECT_TRUE(set->model.moe.forced_balance);
  EXPECT_EQ(set->model.moe.capacity_factor, 1.25);
  EXPECT_EQ(set->model.mtp_layers.value_or(0), 1);
  EXPECT_EQ(set->model.moe.experts, plain->model.moe.experts);  // the architecture is the file's
  auto typo = ParseText(kBase, {"model=" + mixtral, "parallelism.tensor=1", "parallelism.pipeline=1", "model.moe.forced_balanse=true"});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().ToString().find("did you mean 'forced_balance'"), std::string::npos) << typo.error().ToString();
  const std::string dense = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf/gemma-7b/config.json";
  auto none = ParseText(kBase, {"model=" + dense, "model.moe.forced_balance=true"});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().ToString().find("a model without experts"), std::string::npos) << none.error().ToString();
}

// --set model.file=PATH names the model outright, over a catalogue name or
// inline keys; over a file form it changes the file and keeps the options.
TEST(ScenarioTest, SettingModelFileReplacesTheModel) {
  const std::string gemma = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf/gemma-7b/config.json";
  const std::string mixtral = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf/mixtral-8x7b/config.json";
  auto catalogue = ParseText(kBase, {"model.file=" + gemma});
  ASSERT_TRUE(catalogue.ok()) << catalogue.error().ToString();
  EXPECT_EQ(catalogue->model.layers, 28);  // gemma-7b's, not llama2-70b's 80
  auto inline_keys = ParseText(kBase, {"model.layers=40", "model.file=" + gemma});
  ASSERT_TRUE(inline_keys.ok()) << inline_keys.error().ToString();
  EXPECT_EQ(inline_keys->model.layers, 28);
  auto options = ParseText(kBase, {"model=" + mixtral, "parallelism.tensor=1", "parallelism.pipeline=1", "model.moe.forced_balance=true",
                                   "model.file=" + mixtral});
  ASSERT_TRUE(options.ok()) << options.error().ToString();
  EXPECT_TRUE(options->model.moe.forced_balance);  // the file form's option survives
}

// A seq_len past the config.json's max_position_embeddings runs (a
// long-context stage does) and says so; within it nothing is said.
TEST(ScenarioTest, ASeqLenPastTheTrainedContextWarns) {
  const std::string gemma = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf/gemma-7b/config.json";
  auto past = ParseText(kBase, {"model=" + gemma, "training.seq_len=16384"});
  ASSERT_TRUE(past.ok()) << past.error().ToString();
  ASSERT_GT(past->model.max_position_embeddings, 0);
  ASSERT_LT(past->model.max_position_embeddings, 16384);
  bool said = false;
  for (const std::string& w : ScenarioWarnings(*past)) said |= w.find("max_position_embeddings") != std::string::npos;
  EXPECT_TRUE(said);
  auto within = ParseText(kBase, {"model=" + gemma, "training.seq_len=" + std::to_string(past->model.max_position_embeddings)});
  ASSERT_TRUE(within.ok()) << within.error().ToString();
  for (const std::string& w : ScenarioWarnings(*within)) EXPECT_EQ(w.find("max_position_embeddings"), std::string::npos) << w;
}

// training.tokens takes no more steps than training.steps does (1e9).
TEST(ScenarioTest, TokensPastTheStepBoundAreBadInput) {
  auto past = ParseText(kBase, {"training.tokens=1e15"});  // 524,288 tokens a step: 1.9e9 steps
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().key, "training.tokens") << past.error().ToString();
  EXPECT_NE(past.error().ToString().find("implausibly large"), std::string::npos) << past.error().ToString();
  auto within = ParseText(kBase, {"training.tokens=1e14"});
  ASSERT_TRUE(within.ok()) << within.error().ToString();
  EXPECT_EQ(within->training.steps, 190734864);
}

// A capacity past every token (above experts/top_k) is no run Megatron-Core
// can make: exit 2 at the key, inline and beside a config.json alike.
TEST(ScenarioTest, ACapacityPastEveryTokenIsRefused) {
  const std::vector<std::string> mixtral_tp1 = {"model=mixtral-8x7b", "parallelism.tensor=1", "parallelism.pipeline=1"};
  auto with = [&](std::vector<std::string> sets, const std::string& cf) {
    sets.push_back("model.moe.capacity_factor=" + cf);
    return ParseText(kBase, sets);
  };
  EXPECT_TRUE(with(mixtral_tp1, "4").ok());  // 8 experts / top 2: every expert may take every token
  auto inline_past = with(mixtral_tp1, "4.5");
  ASSERT_FALSE(inline_past.ok());
  EXPECT_EQ(inline_past.error().key, "model.moe.capacity_factor") << inline_past.error().ToString();
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf/mixtral-8x7b/config.json";
  auto file_past = with({"model=" + file, "parallelism.tensor=1", "parallelism.pipeline=1"}, "16");
  ASSERT_FALSE(file_past.ok());
  EXPECT_EQ(file_past.error().key, "model.moe.capacity_factor") << file_past.error().ToString();
  EXPECT_NE(file_past.error().ToString().find("experts/top_k"), std::string::npos) << file_past.error().ToString();
}

// A capacity factor under 1 drops tokens on purpose: run, compare, plan,
// size and sweep say so (ScenarioWarnings); at 1 or above nothing is said.
TEST(ScenarioTest, ACapacityFactorUnderOneWarns) {
  const std::string mixtral = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf/mixtral-8x7b/config.json";
  auto with = [&](const std::string& cf) {
    auto s = ParseText(kBase, {"model=" + mixtral, "parallelism.tensor=1", "parallelism.pipeline=1", "model.moe.capacity_factor=" + cf});
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    return ScenarioWarnings(*s);
  };
  EXPECT_TRUE(with("1.0").empty());
  const std::vector<std::string> w = with("0.25");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("drops at least 75% of the routed token copies"), std::string::npos) << w[0];
}

// A rental price under ownership, and weights-only checkpoints of a
// pre-training run with failures modelled, are said rather than priced or
// counted as if they were what the user meant.
TEST(ScenarioTest, RentalPriceUnderOwnershipAndWeightsOnlyRestartsWarn) {
  auto warnings = [](const std::vector<std::string>& sets) {
    auto s = ParseText(kBase, sets);
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    return s.ok() ? ScenarioWarnings(*s) : std::vector<std::string>{};
  };
  const auto owned = warnings({"cost.model=ownership", "cost.node_hour_usd=1000"});
  ASSERT_EQ(owned.size(), 1u);
  EXPECT_NE(owned[0].find("cost.node_hour_usd is a rental price"), std::string::npos) << owned[0];
  EXPECT_TRUE(warnings({"cost.model=ownership"}).empty());
  const std::vector<std::string> weights = {"cluster.storage=powerscale-f710", "checkpoint.every_steps=100",
                                            "checkpoint.contents=weights", "failures.node_mtbf_hours=5000"};
  const auto restarts = warnings(weights);
  ASSERT_EQ(restarts.size(), 1u);
  EXPECT_NE(restarts[0].find("loads no optimizer state"), std::string::npos) << restarts[0];
  std::vector<std::string> no_failures = weights;
  no_failures.back() = "failures.node_mtbf_hours=0";
  EXPECT_TRUE(warnings(no_failures).empty());
}

// 26 GB200 trays at TP 8 (two trays a group): the default equal segments
// (2 x 13) split a group over the NICs; filling the racks in turn (18 + 8)
// would not, and the warning says so. Given the fill, nothing is said.
TEST(ScenarioTest, ADefaultRackFillThatSplitsTensorGroupsWarns) {
  const std::string text = R"(name: rack-fill
cluster: {node: xe9712-gb200, nodes: 26}
model: llama3.1-405b
parallelism: {tensor: 8, pipeline: 13}
training: {seq_len: 8192, global_batch: 128, precision: fp8, recompute: full}
)";
  auto s = ParseText(text);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  const std::vector<std::string> w = ScenarioWarnings(*s);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("cluster.nodes_per_nvlink_domain: 18 fills the domains in turn"), std::string::npos) << w[0];
  auto filled = ParseText(text, {"cluster.nodes_per_nvlink_domain=18"});
  ASSERT_TRUE(filled.ok()) << filled.error().ToString();
  EXPECT_TRUE(ScenarioWarnings(*filled).empty());
}

// 400G ConnectX-7 on an 800G XDR fabric: the links run at 400G, and the
// warning says the faster switches are paid for and unused.
TEST(ScenarioTest, NicsSlowerThanTheFabricWarn) {
  auto ndr = ParseText(kBase);
  ASSERT_TRUE(ndr.ok()) << ndr.error().ToString();
  EXPECT_TRUE(ScenarioWarnings(*ndr).empty());
  auto xdr = ParseText(kBase, {"cluster.fabric=xdr-rail-optimized"});
  ASSERT_TRUE(xdr.ok()) << xdr.error().ToString();
  const std::vector<std::string> w = ScenarioWarnings(*xdr);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("NICs (400 Gb/s) are slower than fabric xdr-rail-optimized's links (800 Gb/s)"), std::string::npos) << w[0];
  // 800G ConnectX-8 (XE9780) on a 400G NDR fabric: the NICs run at 400G.
  auto cx8 = ParseText(kBase, {"cluster.node=xe9780-b300", "cluster.nics_per_node=8", "cluster.fabric=ndr-rail-optimized"});
  ASSERT_TRUE(cx8.ok()) << cx8.error().ToString();
  const std::vector<std::string> w8 = ScenarioWarnings(*cx8);
  ASSERT_EQ(w8.size(), 1u);
  EXPECT_NE(w8[0].find("NICs (800 Gb/s) are faster than fabric ndr-rail-optimized's links (400 Gb/s)"), std::string::npos) << w8[0];
}

// A recipe's activation offload (Megatron-Bridge's Llama 3 70B GB200 FP8-CS
// preset: cpu_offloading_num_layers=40) is the default of a run that can
// offload (pipeline 1, no recompute); the scenario's own value wins.
TEST(ScenarioTest, FrameworkActivationOffloadWhereTheRunCanTakeIt) {
  const std::string fw = "training.framework=megatron-bridge-llama3-70b-gb200";
  auto s = ParseText(kBase, {fw, "parallelism.pipeline=1", "parallelism.tensor=8", "training.precision=fp8"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->training.activation_offload_layers, 40);  // the FP8-CS preset's
  auto bf16 = ParseText(kBase, {fw, "parallelism.pipeline=1", "parallelism.tensor=8", "training.precision=bf16"});
  ASSERT_TRUE(bf16.ok()) << bf16.error().ToString();
  EXPECT_EQ(bf16->training.activation_offload_layers, 20);  // the BF16 preset's (its by_precision entry)
  auto pp = ParseText(kBase, {fw});  // pipeline 4: Megatron-Core offloads nothing
  ASSERT_TRUE(pp.ok()) << pp.error().ToString();
  EXPECT_EQ(pp->training.activation_offload_layers, 0);
  auto rc = ParseText(kBase, {fw, "parallelism.pipeline=1", "parallelism.tensor=8", "training.recompute=full"});
  ASSERT_TRUE(rc.ok()) << rc.error().ToString();
  EXPECT_EQ(rc->training.activation_offload_layers, 0);
  auto own = ParseText(kBase, {fw, "parallelism.pipeline=1", "parallelism.tensor=8", "training.activation_offload_layers=0"});
  ASSERT_TRUE(own.ok()) << own.error().ToString();
  EXPECT_EQ(own->training.activation_offload_layers, 0);
}

TEST(ScenarioTest, FrameworkOverlapSmsMustLeaveSmsForCompute) {
  auto s = ParseText(kBase, {"training.framework=" + std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/framework-too-many-sms.yaml"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().ToString().find("training.framework: framework 'too-many-sms' lets an overlapped collective hold 400 SMs"),
            std::string::npos) << s.error().ToString();
}

// Without parallelism.expert_tensor an expert keeps its whole MLP (the 2025
// recipes' 1), unless the framework follows Megatron-Core's own default, the
// tensor-parallel size; a scenario that sets it keeps its value.
TEST(ScenarioTest, ExpertTensorDefaultIsTheFrameworks) {
  const std::vector<std::string> moe = {"model=mixtral-8x7b", "parallelism.expert=2"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), moe.begin(), moe.end());
    auto s = ParseText(kBase, more);
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    return s.ok() ? s->parallelism.expert_tensor : -1;
  };
  EXPECT_EQ(with({}), 1);
  EXPECT_EQ(with({"training.framework=nemo-24.12"}), 4);
  EXPECT_EQ(with({"training.framework=nemo-24.12", "parallelism.expert_tensor=1"}), 1);
  // A layout the default does not divide says where expert_tensor came from.
  auto folded = ParseText(kBase, {"model=mixtral-8x7b", "parallelism.expert=8", "training.framework=nemo-24.12"});
  ASSERT_FALSE(folded.ok());
  EXPECT_NE(folded.error().ToString().find("nemo-24.12 splits experts over the TP ranks"), std::string::npos) << folded.error().ToString();
  auto dense = ParseText(kBase, {"training.framework=nemo-24.12"});
  ASSERT_TRUE(dense.ok()) << dense.error().ToString();
  EXPECT_EQ(dense->parallelism.expert_tensor, 1);
}

// A misspelt required section is reported as the key written, at its line,
// not as the section missing.
TEST(ScenarioTest, MisspeltRequiredSectionNamesTheKeyWritten) {
  auto s = ParseText("name: s\ncluster: {node: xe9680-h100, nodes: 1}\nmodel: llama3-8b\n"
                     "paralelism: {tensor: 1}\ntraining: {seq_len: 4096, global_batch: 8}\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "s.yaml:4: paralelism: unknown key (did you mean 'parallelism'?)");
  // A truncation ("trainin"), a transposition of the model key ("modle") and
  // a short node key ("nod") are named at their lines too.
  auto truncated = ParseText("name: s\ncluster: {node: xe9680-h100, nodes: 1}\nmodel: llama3-8b\n"
                             "parallelism: {tensor: 1}\ntrainin: {seq_len: 4096, global_batch: 8}\n");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().ToString(), "s.yaml:5: trainin: unknown key (did you mean 'training'?)");
  auto model = ParseText("name: s\ncluster: {node: xe9680-h100, nodes: 1}\nmodle: llama3-8b\n"
                         "parallelism: {tensor: 1}\ntraining: {seq_len: 4096, global_batch: 8}\n");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().ToString(), "s.yaml:3: modle: unknown key (did you mean 'model'?)");
  auto node = ParseText("name: s\ncluster:\n  nod: xe9680-h100\n  nodes: 1\nmodel: llama3-8b\n"
                        "parallelism: {tensor: 1}\ntraining: {seq_len: 4096, global_batch: 8}\n");
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.error().ToString(), "s.yaml:3: cluster.nod: unknown key (did you mean 'node'?)");
  // Truly absent, it is still a missing section.
  auto absent = ParseText("name: s\ncluster: {node: xe9680-h100, nodes: 1}\nmodel: llama3-8b\n"
                          "training: {seq_len: 4096, global_batch: 8}\n");
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error().ToString().find("parallelism: missing required section"), std::string::npos) << absent.error().ToString();
  // A sweep file where a scenario goes is named as one.
  auto sweep = ParseText("base: ../examples/x.yaml\naxes:\n  cluster.nodes: [1, 2]\n");
  ASSERT_FALSE(sweep.ok());
  EXPECT_EQ(sweep.error().ToString().rfind("s.yaml:3: axes: this is a sweep file (base and axes), not a scenario", 0), 0u)
      << sweep.error().ToString();
}

TEST(ScenarioTest, UnknownKeySuggestsClosest) {
  auto s = ParseText(std::string(kBase) + "trainig:\n  steps: 3\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "s.yaml:13: trainig: unknown key (did you mean 'training'?)");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Each kind of bad input gets one line naming file, line and key.
struct BadInput {
  const char* what;
  std::vector<std::string> sets;
  const char* expected;
};

class ScenarioErrorTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(ScenarioErrorTest, GivesOneLineError) {
  const BadInput& b = GetParam();
  auto s = ParseText(kBase, b.sets);
  ASSERT_FALSE(s.ok()) << b.what;
  const std::string msg = s.error().ToString();
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  EXPECT_EQ(msg, b.expected) << b.what;
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, ScenarioErrorTest,
    ::testing::Values(
        BadInput{"negative nodes", {"cluster.nodes=-4"}, "--set: cluster.nodes: must be positive, got -4"},
        BadInput{"zero seq", {"training.seq_len=0"}, "--set: training.seq_len: must be positive, got 0"},
        BadInput{"wrong type", {"training.global_batch=lots"}, "--set: training.global_batch: expected a number, got 'lots'"},
        BadInput{"fraction", {"parallelism.tensor=2.5"}, "--set: parallelism.tensor: expected a whole number, got 2.5"},
        BadInput{"micro batch neither a number nor auto", {"training.micro_batch=atuo"},
                 "--set: training.micro_batch: expected a positive whole number or auto, got 'atuo'"},
        BadInput{"zero micro batch", {"training.micro_batch=0"}, "--set: training.micro_batch: must be positive, got 0"},
        BadInput{"tp does not divide gpus", {"parallelism.tensor=3"}, "--set: parallelism.tensor: tensor x pipeline x context = 12 does not divide the 32 GPUs"},
        BadInput{"fp4", {"training.precision=fp4"}, "--set: training.precision: 'fp4': the 4-bit training format trainsim models is nvfp4"},
        BadInput{"cp does not divide gpus", {"parallelism.context=3"}, "--set: parallelism.context: tensor x pipeline x context = 48 does not divide the 32 GPUs"},
        BadInput{"explicit data mismatch", {"parallelism.data=4"}, "--set: parallelism.data: tensor x pipeline x context x data = 64 but the cluster has 32 GPUs"},
        BadInput{"uneven middle stages", {"parallelism.pipeline=4", "parallelism.tensor=8", "parallelism.first_stage_layers=21"},
                 "--set: parallelism.first_stage_layers: the 59 layers left for the 3 middle stages do not divide evenly"},
        BadInput{"first stage layers and interleaving", {"parallelism.pipeline=4", "parallelism.tensor=8", "parallelism.virtual_stages=2", "parallelism.first_stage_layers=21"},
                 "--set: parallelism.first_stage_layers: 21 layers do not divide into the 2 virtual stages of the rank"},
        BadInput{"layout one layer short", {"parallelism.pipeline=4", "parallelism.tensor=8", "parallelism.pipeline_layout=Et*20|t*20|t*20|t*19L"},
                 "--set: parallelism.pipeline_layout: \"Et*20|t*20|t*20|t*19L\": it places 79 transformer layers (t); the model has 80"},
        BadInput{"layout with an unknown layer", {"parallelism.pipeline=2", "parallelism.tensor=8", "parallelism.pipeline_layout=Et*40|t*40X"},
                 "--set: parallelism.pipeline_layout: \"Et*40|t*40X\": invalid character 'X' at character 11 (known: E embedding, t transformer "
                 "layer, m MTP module, L loss, | between stages, x*n and (...)*n repeat)"},
        BadInput{"tp x pp would overflow", {"parallelism.tensor=65536", "parallelism.pipeline=65536"},
                 "--set: parallelism.tensor: 65536 is more than the cluster's 32 GPUs"},
        BadInput{"gpus would overflow", {"cluster.nodes=536870913"},
                 "--set: cluster.nodes: 536870913 nodes x 8 GPUs = 4294967304 GPUs: more than the 4194304 GPUs trainsim simulates"},
        BadInput{"tp does not divide heads", {"model=llama2-13b", "parallelism.tensor=16", "parallelism.pipeline=2", "cluster.nodes=4"},
                 "--set: parallelism.tensor: tensor 16 does not divide the 40 attention heads"},
        BadInput{"batch not divisible", {"training.global_batch=127"}, "--set: training.global_batch: global_batch 127 is not divisible by micro_batch x data = 1 x 2"},
        BadInput{"unknown model", {"model=llama2-71b"}, "--set: model: unknown model 'llama2-71b' (did you mean 'llama2-70b'?); catalogue: models/catalogue/, or give a path"},
        BadInput{"unknown node", {"cluster.node=xe9680"}, "--set: cluster.node: unknown node profile 'xe9680' (did you mean 'xe9680-h100'?); known: dgx-a100, dgx-b200, dgx-h100, gb200-nvl72, gb300-nvl72, xe9680-h100, xe9680-h200, xe9680l-b200, xe9712-gb200, xe9780-b300"},
        BadInput{"nics not allowed", {"cluster.nics_per_node=6"}, "--set: cluster.nics_per_node: node 'xe9680-h100' takes 4, 8 NICs, not 6"},
        BadInput{"segment on an hgx node", {"cluster.nodes_per_nvlink_domain=2"},
                 "--set: cluster.nodes_per_nvlink_domain: node 'xe9680-h100' has 1 node per NVLink domain, not 2"},
        BadInput{"segment past the rack", {"cluster.node=gb200-nvl72", "cluster.nodes=4", "cluster.nodes_per_nvlink_domain=19"},
                 "--set: cluster.nodes_per_nvlink_domain: node 'gb200-nvl72' has 18 nodes per NVLink domain, not 19"},
        BadInput{"bad choice", {"training.precision=bf61"}, "--set: training.precision: 'bf61' is not one of: bf16, fp16, fp8, fp8-blockwise, fp8-rowwise, mxfp8, nvfp4 (did you mean 'bf16'?)"},
        BadInput{"unknown nested key", {"training.seqlen=4"}, "--set: training.seqlen: unknown key (did you mean 'seq_len'?)"},
        BadInput{"checkpoint without storage", {"checkpoint.every_steps=10"}, "--set: checkpoint.every_steps: checkpoints need cluster.storage"},
        BadInput{"data loading without storage", {"data.bytes_per_token=4"},
                 "--set: data.bytes_per_token: the token loader reads from cluster.storage, which this scenario has none of"},
        BadInput{"sharding and distributed optimizer disagree", {"parallelism.data_sharding=none", "parallelism.distributed_optimizer=true"},
                 "--set: parallelism.data_sharding: data_sharding: none disagrees with distributed_optimizer: true; give one of them"},
        BadInput{"unknown sharding", {"parallelism.data_sharding=zero3"},
                 "--set: parallelism.data_sharding: 'zero3' is not one of: none, optimizer, gradients, full (zero3 is 'full')"},
        BadInput{"sharding group does not divide", {"parallelism.data_sharding=full", "parallelism.sharding_group=3"},
                 "--set: parallelism.sharding_group: sharding_group 3 does not divide data x context = 2"},
        BadInput{"zero sharding group", {"parallelism.data_sharding=full", "parallelism.sharding_group=0"},
                 "--set: parallelism.sharding_group: must be positive, got 0"},
        BadInput{"zero first stage layers", {"parallelism.first_stage_layers=0"},
                 "--set: parallelism.first_stage_layers: must be positive, got 0"},
        BadInput{"moe recompute of a dense model", {"training.recompute=selective", "training.recompute_modules=[moe_act]"},
                 "--set: training.recompute_modules: moe, moe_act and shared_experts need a mixture-of-experts model (model.moe)"},
        BadInput{"dispatcher of a dense model", {"parallelism.moe_dispatcher=deepep"},
                 "--set: parallelism.moe_dispatcher: moe_dispatcher needs a mixture-of-experts model (model.moe)"},
        BadInput{"sharding by another name", {"parallelism.data_sharding=FSDP"},
                 "--set: parallelism.data_sharding: 'FSDP' is not one of: none, optimizer, gradients, full (FSDP is 'full')"},
        BadInput{"sharding group without sharding", {"parallelism.data_sharding=none", "parallelism.sharding_group=2"},
                 "--set: parallelism.sharding_group: a sharding group needs parallelism.data_sharding (optimizer, gradients or full)"},
        BadInput{"offload with pipeline", {"training.activation_offload_layers=8"},
                 "--set: training.activation_offload_layers: Megatron-Core has no pipeline parallelism with CPU offloading (pipeline is 4)"},
        BadInput{"offload every layer", {"parallelism.pipeline=1", "training.activation_offload_layers=80"},
                 "--set: training.activation_offload_layers: 80 layers: offloading can be done only for fewer layers than the 80 of the model"},
        BadInput{"offload with recompute", {"parallelism.pipeline=1", "training.recompute=selective", "training.activation_offload_layers=8"},
                 "--set: training.activation_offload_layers: CPU offloading does not work with activation recomputation (training.recompute)"},
        BadInput{"negative offload", {"training.activation_offload_layers=-1"},
                 "--set: training.activation_offload_layers: must not be negative, got -1"},
        BadInput{"unknown finetune method", {"training.finetune={method: qlora}"},
                 "--set: training.finetune.method: 'qlora' is not one of: full, lora (did you mean 'lora'?)"},
        BadInput{"rank on full finetune", {"training.finetune={method: full, rank: 8}"},
                 "--set: training.finetune.rank: only method: lora takes rank"},
        BadInput{"one part named twice", {"training.finetune={method: lora, target_modules: [w1, w3, gate_proj, up_proj]}"},
                 "--set: training.finetune.target_modules: 'gate_proj' and 'w3' name the same adapter"},
        BadInput{"unknown target module", {"training.finetune={method: lora, target_modules: [qkv, gate]}"},
                 "--set: training.finetune.target_modules: 'gate' is not one of qkv, proj, fc1, fc2 (or Megatron's linear_qkv, "
                 "linear_proj, linear_fc1, linear_fc2; PEFT's q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, "
                 "all-linear; Mixtral's w1, w3, w2); did you mean 'gate_proj'?"}),
    // Test names from `what` ("unknown node" -> unknown_node), not the parameter's bytes.
    [](const ::testing::TestParamInfo<BadInput>& info) {
      std::string name = info.param.what;
      for (char& c : name) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

// A block-scaled format on Hopper cannot run (no block-scaled tensor cores):
// exit 1 with the reason, not bad input; on Blackwell the same scenario runs.
TEST(ScenarioTest, BlockScaledFormatsNeedBlackwell) {
  for (const char* prec : {"mxfp8", "nvfp4"}) {
    auto h = ParseText(kBase, {std::string("training.precision=") + prec});
    ASSERT_FALSE(h.ok()) << prec;
    EXPECT_EQ(h.error().kind, ErrorKind::kUnsupported);
    EXPECT_EQ(ExitStatus(h.error().kind), 1);
    EXPECT_NE(h.error().ToString().find("has no block-scaled tensor cores for " + std::string(prec)), std::string::npos)
        << h.error().ToString();
    auto b = ParseText(kBase, {std::string("training.precision=") + prec, "cluster.node=dgx-b200"});
    ASSERT_TRUE(b.ok()) << b.error().ToString();
    EXPECT_EQ(ToString(b->training.precision), prec);
  }
  // Likewise fp8 on Ampere: no fp8 tensor cores, exit 1.
  for (const char* prec : {"fp8", "fp8-blockwise"}) {
    auto a = ParseText(kBase, {"cluster.node=dgx-a100", "cluster.fabric=hdr-fat-tree", std::string("training.precision=") + prec});
    ASSERT_FALSE(a.ok()) << prec;
    EXPECT_EQ(ExitStatus(a.error().kind), 1);
    EXPECT_NE(a.error().ToString().find("training.precision: GPU 'a100-sxm-80g' has no fp8 tensor cores"), std::string::npos)
        << a.error().ToString();
  }
  auto hopper_blockwise = ParseText(kBase, {"training.precision=fp8-blockwise"});
  ASSERT_TRUE(hopper_blockwise.ok()) << hopper_blockwise.error().ToString();
}

TEST(ScenarioTest, MalformedYamlNamesLine) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/malformed.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString().rfind(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/malformed.yaml:5: malformed YAML", 0), 0u)
      << s.error().ToString();
}

TEST(ScenarioTest, MissingFileIsAnError) {
  auto s = LoadScenario("/nonexistent/scenario.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "/nonexistent/scenario.yaml: cannot open file");
}

// TRAINSIM_DATA_DIR one level off (the profiles' folder itself) lists no catalogue: the error
// says where it looked rather than "known: " and nothing.
TEST(ScenarioTest, EmptyProfileCatalogueSaysWhereItLooked) {
  const std::string dir = ::testing::TempDir() + "/trainsim-empty-data";
  std::filesystem::create_directories(dir);
  ASSERT_EQ(::setenv("TRAINSIM_DATA_DIR", dir.c_str(), 1), 0);
  auto s = ParseText(kBase);
  ::unsetenv("TRAINSIM_DATA_DIR");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "s.yaml:3: cluster.node: unknown node profile 'xe9680-h100': no profiles in " + dir + "/hardware-profiles/nodes");
}

TEST(ScenarioTest, EveryExampleLoads) {
  for (const char* n : {"llama2-7b-1n-8nic", "llama2-70b-4n-8nic", "llama2-70b-16n-4nic"}) {
    auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/" + n + ".yaml");
    EXPECT_TRUE(s.ok()) << n << ": " << s.error().ToString();
  }
}

TEST(ScenarioTest, HuggingFaceConfigByPath) {
  auto s = ParseText(kBase, {"model=" + std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/llama-2-7b-hf-config.json",
                             "parallelism.pipeline=1", "parallelism.tensor=1"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->model.layers, 32);
  EXPECT_EQ(s->model.hidden, 4096);
  EXPECT_EQ(s->model.ffn_hidden, 11008);
  EXPECT_EQ(s->model.kv_heads, 32);
  EXPECT_EQ(s->model.activation, Activation::kSwiGlu);
  EXPECT_EQ(s->model.norm, NormKind::kRmsNorm);
  EXPECT_FALSE(s->model.tied_embeddings);
}

TEST(ScenarioTest, FrameworkDefaultsComeFromTheNodeAndCanBeOverridden) {
  auto s = ParseText(kBase);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->framework.name, "megatron-core-2024");
  EXPECT_TRUE(s->parallelism.overlap_grad_reduce);
  auto o = ParseText(kBase, {"training.framework=megatron-lm-2022", "parallelism.overlap_grad_reduce=true"});
  ASSERT_TRUE(o.ok()) << o.error().ToString();
  EXPECT_EQ(o->training.attention, AttentionKernel::kUnfused);
  EXPECT_FALSE(o->parallelism.distributed_optimizer);
  EXPECT_TRUE(o->parallelism.overlap_grad_reduce);
}

TEST(ScenarioTest, DataShardingReplacesDistributedOptimizer) {
  auto d = ParseText(kBase, {"parallelism.distributed_optimizer=false"});
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  EXPECT_EQ(d->parallelism.data_sharding, DataSharding::kNone);
  auto f = ParseText(kBase, {"parallelism.data_sharding=full", "parallelism.sharding_group=1"});
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_EQ(f->parallelism.data_sharding, DataSharding::kFull);
  EXPECT_TRUE(f->parallelism.distributed_optimizer);  // its readers see a sharded optimizer
  EXPECT_EQ(f->parallelism.shard_group(), 1);
  EXPECT_EQ(f->parallelism.shard_replicas(), 2);
  auto n = ParseText(kBase, {"parallelism.data_sharding=none", "parallelism.distributed_optimizer=false"});
  ASSERT_TRUE(n.ok()) << n.error().ToString();
  EXPECT_FALSE(n->parallelism.distributed_optimizer);
  // The torchtitan / FSDP2 profile shards fully by default.
  auto t = ParseText(kBase, {"training.framework=torchtitan-fsdp2-2025"});
  ASSERT_TRUE(t.ok()) << t.error().ToString();
  EXPECT_EQ(t->parallelism.data_sharding, DataSharding::kFull);
}

// The flash-attn 2 kernel needs the GPU profile's figures for it: Hopper
// has them, a Blackwell profile none (bad input, naming the key).
TEST(ScenarioTest, Flash2AttentionNeedsTheGpusFigures) {
  auto hopper = ParseText(kBase, {"training.attention=flash2"});
  ASSERT_TRUE(hopper.ok()) << hopper.error().ToString();
  EXPECT_EQ(hopper->training.attention, AttentionKernel::kFlash2);
  auto blackwell = ParseText(kBase, {"training.attention=flash2", "cluster.node=dgx-b200"});
  ASSERT_FALSE(blackwell.ok());
  EXPECT_EQ(blackwell.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(blackwell.error().ToString().find("training.attention: flash2 (the flash-attn 2 kernel) has no figures in GPU profile"), std::string::npos)
      << blackwell.error().ToString();
}

// A framework's recipe gives the recompute of a scenario that names none.
TEST(ScenarioTest, RecomputeDefaultsToTheFrameworksRecipe) {
  auto recipe = ParseText(kBase, {"training.framework=dgxc-25.01-nemotron4-340b"});
  ASSERT_TRUE(recipe.ok()) << recipe.error().ToString();
  EXPECT_EQ(recipe->training.recompute, Recompute::kSelective);
  EXPECT_EQ(recipe->training.attention, AttentionKernel::kFlash2);
  auto none = ParseText(kBase, {"training.framework=dgxc-25.01-nemotron4-340b", "training.recompute=none"});
  ASSERT_TRUE(none.ok()) << none.error().ToString();
  EXPECT_EQ(none->training.recompute, Recompute::kNone);
  auto plain = ParseText(kBase);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->training.recompute, Recompute::kNone);
}

// Megatron-Core overlaps TP communication only with sequence parallelism:
// without it the overlap is off by default and refused when asked for.
TEST(ScenarioTest, TpCommOverlapNeedsSequenceParallel) {
  auto off = ParseText(kBase, {"parallelism.sequence_parallel=false"});
  ASSERT_TRUE(off.ok()) << off.error().ToString();
  ASSERT_GT(off->parallelism.tensor, 1);
  EXPECT_FALSE(off->parallelism.tp_comm_overlap);
  auto asked = ParseText(kBase, {"parallelism.sequence_parallel=false", "parallelism.tp_comm_overlap=true"});
  ASSERT_FALSE(asked.ok());
  EXPECT_EQ(asked.error().key, "parallelism.tp_comm_overlap") << asked.error().ToString();
}

TEST(ScenarioTest, FinetuneLoraTakesRankAlphaAndTargets) {
  auto s = ParseText(kBase, {"training.finetune={method: lora, rank: 8, target_modules: [qkv, fc2]}"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  const Finetune& f = s->training.finetune;
  EXPECT_TRUE(f.lora());
  EXPECT_EQ(f.rank, 8);
  EXPECT_DOUBLE_EQ(f.alpha, 16);
  EXPECT_TRUE(f.targets.qkv && f.targets.fc2);
  EXPECT_FALSE(f.targets.proj || f.targets.fc1);
  // Without target_modules the framework's default: MLPerf's NeMo LoRA adapts the attention projections.
  auto framework = ParseText(kBase, {"training.finetune={method: lora}", "training.framework=mlperf-training-4.1-nemo-lora"});
  ASSERT_TRUE(framework.ok()) << framework.error().ToString();
  EXPECT_TRUE(framework->training.finetune.targets.qkv && framework->training.finetune.targets.proj);
  EXPECT_FALSE(framework->training.finetune.targets.fc1 || framework->training.finetune.targets.fc2);
  EXPECT_DOUBLE_EQ(framework->training.finetune.dropout, 0.1);  // and its adapter dropout
  // Hugging Face PEFT's per-matrix names map onto Megatron's fused projections, whose parts go together.
  auto peft = ParseText(kBase, {"training.finetune={method: lora, target_modules: [q_proj, k_proj, v_proj, down_proj]}"});
  ASSERT_TRUE(peft.ok()) << peft.error().ToString();
  EXPECT_EQ(peft->training.finetune.targets, (LoraTargets{true, false, false, true}));
  auto bare = ParseText(kBase, {"training.finetune={method: lora, target_modules: qkv}"});
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.error().ToString().find("expected a list of projections: [qkv]"), std::string::npos) << bare.error().ToString();
  auto all_linear = ParseText(kBase, {"training.finetune={method: lora, target_modules: all-linear}"});
  ASSERT_TRUE(all_linear.ok()) << all_linear.error().ToString();
  EXPECT_EQ(all_linear->training.finetune.targets, LoraTargets{});
  auto typo = ParseText(kBase, {"training.finetune={method: lora, target_modules: all_linear}"});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().ToString().find("did you mean 'all-linear'?"), std::string::npos) << typo.error().ToString();
  auto q_only = ParseText(kBase, {"training.finetune={method: lora, target_modules: [q_proj, v_proj]}"});
  ASSERT_FALSE(q_only.ok());
  EXPECT_NE(q_only.error().ToString().find("q_proj, k_proj and v_proj are one fused projection"), std::string::npos) << q_only.error().ToString();
  auto twice = ParseText(kBase, {"training.finetune={method: lora, target_modules: [fc2, down_proj]}"});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().ToString().find("'down_proj' and 'fc2' name the same adapter"), std::string::npos) << twice.error().ToString();
  auto dropout = ParseText(kBase, {"training.finetune={method: lora, dropout: 1.0}"});
  ASSERT_FALSE(dropout.ok());
  EXPECT_EQ(dropout.error().ToString(), "--set: training.finetune.dropout: must be below 1");
  auto full = ParseText(kBase, {"training.finetune={method: full}"});
  ASSERT_TRUE(full.ok()) << full.error().ToString();
  EXPECT_EQ(full->training.finetune.method, FinetuneMethod::kFull);
}

TEST(ScenarioTest, TokensDecideTheSteps) {
  // 2e12 tokens at 128 x 4096 per step: ceil(3814697.27) steps.
  auto s = ParseText(kBase, {"training.tokens=2e12"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->training.steps, 3814698);
  EXPECT_DOUBLE_EQ(s->training.tokens, 2e12);
  // Steps that agree are accepted.
  auto agree = ParseText(kBase, {"training.tokens=5242880", "training.steps=10"});
  ASSERT_TRUE(agree.ok()) << agree.error().ToString();
  EXPECT_EQ(agree->training.steps, 10);
}

TEST(ScenarioTest, TokensAndStepsThatDisagreeAreBadInput) {
  auto s = ParseText(kBase, {"training.tokens=2e12", "training.steps=500"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().key, "training.steps");
  EXPECT_NE(s.error().message.find("disagree with training.tokens"), std::string::npos) << s.error().ToString();
  auto huge = ParseText(kBase, {"training.tokens=1e30"});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().key, "training.tokens");
}

TEST(ScenarioTest, OwnershipLoadsTheSiteAndNeedsPurchasePrices) {
  auto s = ParseText(kBase, {"cost.model=ownership"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->cost.model, CostBasis::kOwnership);
  EXPECT_EQ(s->cost.site.name, "us-colocation");
  EXPECT_GE(s->cost.site.pue, 1.0);
  auto rental_site = ParseText(kBase, {"cost.site=us-colocation"});
  ASSERT_FALSE(rental_site.ok());
  EXPECT_EQ(rental_site.error().key, "cost.site");
  auto no_price = ParseText(kBase, {"cost.model=ownership", "cluster.node=dgx-a100", "parallelism.tensor=8", "parallelism.pipeline=1"});
  ASSERT_FALSE(no_price.ok());
  EXPECT_NE(no_price.error().message.find("ownership needs purchase prices"), std::string::npos) << no_price.error().ToString();
  auto bad = ParseText(kBase, {"cost.model=lease"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().key, "cost.model");
}

TEST(ScenarioTest, SpareProbabilityMustBeBelowOne) {
  auto s = ParseText(kBase, {"failures.node_mtbf_hours=5000", "failures.spare_probability=1"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().key, "failures.spare_probability");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// An override that breaks a check placed at another key of the file is named
// in the message: the file's line is not what the user changed.
TEST(ScenarioTest, CrossKeyErrorsNameTheOverridesTheyWereCheckedWith) {
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-8n-8nic.yaml";
  const auto s = LoadScenario(file, {"training.micro_batch=3"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().key, "training.global_batch");
  EXPECT_NE(s.error().ToString().find("is not divisible by micro_batch x data = 3 x 4 (with --set training.micro_batch=3)"), std::string::npos)
      << s.error().ToString();
  // An error at the overridden key itself is placed at --set, with nothing added.
  const auto t = LoadScenario(file, {"training.global_batch=127"});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().ToString().find("(with --set"), std::string::npos) << t.error().ToString();
}

// compare's --set-a and --set-b: each error names the flag that gave the value,
// the last one of a key winning as it does when applied.
TEST(ScenarioTest, OverrideErrorsNameTheFlagThatGaveThem) {
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-8n-8nic.yaml";
  std::vector<Override> sets = OverridesFrom("--set", {"training.precision=fp8"});
  sets.push_back(Override{"--set-b", "training.precision=fp9"});
  const auto bad_value = LoadScenarioWithFlags(file, sets);
  ASSERT_FALSE(bad_value.ok());
  EXPECT_EQ(bad_value.error().file, "--set-b") << bad_value.error().ToString();
  EXPECT_EQ(bad_value.error().key, "training.precision");
  // The shared --set's value is its own.
  const auto shared = LoadScenarioWithFlags(file, {Override{"--set", "training.precision=fp9"}, Override{"--set-b", "training.seq_len=2048"}});
  ASSERT_FALSE(shared.ok());
  EXPECT_EQ(shared.error().file, "--set") << shared.error().ToString();
  // A malformed override names its flag too.
  const auto malformed = LoadScenarioWithFlags(file, {Override{"--set-a", "training.seq_len"}});
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().file, "--set-a");
  // A check across keys lists every override it ran with, each after its flag.
  const auto cross = LoadScenarioWithFlags(file, {Override{"--set", "training.seq_len=2048"}, Override{"--set-b", "training.micro_batch=3"}});
  ASSERT_FALSE(cross.ok());
  EXPECT_NE(cross.error().ToString().find("(with --set training.seq_len=2048 --set-b training.micro_batch=3)"), std::string::npos)
      << cross.error().ToString();
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A precision the framework profile has no recipe for is simulated with that
// stack's kernels and said: the GB200 tray's default 2024 stack under nvfp4,
// not Megatron-Bridge's, which has the recipe; a profile's list is checked.
TEST(ScenarioLoaderTest, APrecisionTheFrameworkHasNoRecipeForIsSaid) {
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/examples/blackwell/llama3.1-70b-xe9712-gb200-16n.yaml";
  auto fp8 = LoadScenario(file);
  ASSERT_TRUE(fp8.ok()) << fp8.error().ToString();
  EXPECT_EQ(FrameworkPrecisionWarning(*fp8), "");
  auto nvfp4 = LoadScenario(file, {"training.precision=nvfp4"});
  ASSERT_TRUE(nvfp4.ok()) << nvfp4.error().ToString();
  EXPECT_EQ(FrameworkPrecisionWarning(*nvfp4),
            "warning: framework megatron-core-2024 (xe9712-gb200's default) has no nvfp4 recipe (its precisions: bf16, fp16, fp8); the run "
            "takes that stack's kernels, casts and overlaps in nvfp4: name one that trains in it (training.framework)");
  auto bridge = LoadScenario(file, {"training.precision=nvfp4", "training.framework=megatron-bridge-perf"});
  ASSERT_TRUE(bridge.ok()) << bridge.error().ToString();
  EXPECT_EQ(FrameworkPrecisionWarning(*bridge), "");
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "fw-precisions.yaml") << "name: fw-precisions\nbased_on: megatron-core-2024\nprecisions: [bf16, fp9]\n";
  auto bad = LoadScenario(file, {"training.framework=" + dir + "fw-precisions.yaml"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(bad.error().ToString().find("precisions: 'fp9' is not a training precision"), std::string::npos) << bad.error().ToString();
}

}  // namespace
}  // namespace trainsim
