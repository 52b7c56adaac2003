#include "sim/plan/planner.h"
#include "sim/io/scenario_loader.h"
#include "sim/plan/plan_space.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace trainsim {
namespace {

// Llama 2 70B on 8 XE9680 nodes (64 H100), global batch 128, seq 4096, with
// NeMo's layout (TP 4, PP 4, 20 interleaved chunks).
const char* k70b = R"(name: plan-70b
cluster:
  node: xe9680-h100
  nodes: 8
  fabric: ndr-rail-optimized
model: llama2-70b
parallelism:
  tensor: 4
  pipeline: 4
  virtual_stages: 20
training:
  seq_len: 4096
  global_batch: 128
  steps: 500
)";

Expected<Scenario> ParseText(const std::string& text, const std::vector<std::string>& sets = {}) {
  YAML::Node root = YAML::Load(text);
  ApplyOverrides(root, sets);
  return ParseScenario(root, "p.yaml");
}

// The planner's divisibility check says what the parser says about the same settings.
TEST(PlannerTest, CheckParallelismAgreesWithTheParser) {
  auto base = ParseText(k70b);
  ASSERT_TRUE(base.ok()) << base.error().ToString();
  struct Case {
    std::vector<std::string> sets;
    PlanConfig c;
  };
  auto cfg = [](int tp, int pp, int vp, int cp, int dp, int mb) {
    PlanConfig c;
    c.tensor = tp;
    c.pipeline = pp;
    c.virtual_stages = vp;
    c.context = cp;
    c.data = dp;
    c.micro_batch = mb;
    c.sequence_parallel = tp > 1;
    return c;
  };
  const std::vector<Case> cases = {
      {{"parallelism.tensor=3", "parallelism.virtual_stages=1", "parallelism.pipeline=1"}, cfg(3, 1, 1, 1, 21, 1)},
      {{"parallelism.pipeline=3", "parallelism.virtual_stages=1", "parallelism.tensor=1"}, cfg(1, 3, 1, 1, 21, 1)},
      {{"parallelism.pipeline=16", "parallelism.virtual_stages=1", "parallelism.tensor=1", "parallelism.data=4"}, cfg(1, 16, 1, 1, 4, 1)},
      {{"parallelism.virtual_stages=3"}, cfg(4, 4, 3, 1, 4, 1)},
      {{"parallelism.pipeline=1", "parallelism.virtual_stages=2"}, cfg(4, 1, 2, 1, 16, 1)},
      {{"training.micro_batch=64"}, cfg(4, 4, 20, 1, 4, 64)},
      {{"parallelism.pipeline=8", "parallelism.virtual_stages=10", "parallelism.tensor=1", "training.micro_batch=4"}, cfg(1, 8, 10, 1, 8, 4)},
      {{"parallelism.context=3", "parallelism.tensor=1", "parallelism.pipeline=1", "parallelism.virtual_stages=1"}, cfg(1, 1, 1, 3, 21, 1)},
      {{"parallelism.tensor=8", "parallelism.pipeline=2", "parallelism.virtual_stages=1"}, cfg(8, 2, 1, 1, 4, 1)},  // consistent
  };
  for (const auto& c : cases) {
    auto parsed = ParseText(k70b, c.sets);
    Scenario s = *base;
    ApplyConfig(s, c.c);
    auto checked = CheckParallelism(s);
    if (parsed.ok()) {
      EXPECT_FALSE(checked.has_value()) << Describe(c.c) << ": " << checked->key << ": " << checked->message;
    } else {
      ASSERT_TRUE(checked.has_value()) << Describe(c.c) << " passes but the parser says " << parsed.error().ToString();
      EXPECT_EQ(checked->message, parsed.error().message) << Describe(c.c);
      EXPECT_EQ(checked->key, parsed.error().key) << Describe(c.c);
    }
  }
}

TEST(PlannerTest, ConfigRoundTripsThroughTheScenario) {
  auto base = ParseText(k70b);
  ASSERT_TRUE(base.ok());
  const PlanConfig c = ConfigOf(*base);
  EXPECT_EQ(Describe(c), "TP4 PP4 VP20 CP1 DP4 mb1 recompute=none SP DO");
  Scenario s = *base;
  PlanConfig other = c;
  other.tensor = 8;
  other.recompute = Recompute::kSelective;
  ApplyConfig(s, other);
  EXPECT_EQ(ConfigOf(s), other);
}

// A scenario's own first and last stage sizes are for its pipeline: other
// shapes split evenly (or as the recipe does) instead of being refused for a
// split that does not divide them, and the scenario's own shape keeps them.
TEST(PlannerTest, OwnStageSplitStaysWithItsShape) {
  // 80 layers as 14 + 4 x 13 + 14 on PP6: no other pipeline takes 14 and 14.
  auto s = ParseText(k70b, {"parallelism.pipeline=6", "parallelism.virtual_stages=1", "parallelism.tensor=8", "cluster.nodes=12",
                            "parallelism.first_stage_layers=14", "parallelism.last_stage_layers=14", "training.recompute=full"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  PlanOptions opt;
  opt.recheck_fidelity = Fidelity::kAnalytical;
  opt.top_k = 50;
  const PlanReport r = Plan(*s, opt);
  ASSERT_TRUE(r.baseline.has_value()) << (r.baseline_rejection ? r.baseline_rejection->reason : "");
  std::set<int> pipelines;
  for (const auto& c : r.candidates) pipelines.insert(c.config.pipeline);
  EXPECT_GT(pipelines.size(), 1u);  // not only PP6
  for (const auto& c : r.candidates) {
    Scenario x = *s;
    ApplyPlannedConfig(x, *s, c.config);
    const bool own = c.config.pipeline == 6 && c.config.virtual_stages == 1;
    EXPECT_EQ(x.parallelism.first_stage_layers, own ? 14 : 0) << Describe(c.config);
    EXPECT_FALSE(CheckParallelism(x).has_value()) << Describe(c.config);
  }
  // --json says to clear the split where a candidate runs without it, so its settings re-run as ranked.
  const YAML::Node j = YAML::Load(PlanToJson(r));
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const bool own = r.candidates[i].config.pipeline == 6 && r.candidates[i].config.virtual_stages == 1;
    const YAML::Node split = j["candidates"][i]["parallelism"]["first_stage_layers"];
    EXPECT_EQ(split.IsDefined() && split.IsNull(), !own) << Describe(r.candidates[i].config);
  }
}

// A configuration the DES declines (more pipeline passes a step than it
// bounds itself to) still runs: it keeps its analytical figure and rank, the
// table says so, and --json carries the reason beside a feasible result.
TEST(PlannerTest, ACandidateTheDesDeclinesKeepsItsAnalyticalRank) {
  auto s = ParseText(k70b, {"training.global_batch=65536", "parallelism.tensor=8", "parallelism.pipeline=8", "parallelism.virtual_stages=1"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  PlanOptions opt;
  opt.top_k = 2;
  opt.only_tensor = 8;
  opt.only_pipeline = 8;  // data parallel 1: 65,536 micro batches, past the DES's bound at any interleaving
  const PlanReport r = Plan(*s, opt);
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_EQ(r.recheck_fidelity, "des");
  for (const PlanCandidate& c : r.candidates) {
    EXPECT_FALSE(c.recheck_refused.empty());
    EXPECT_TRUE(c.result.error.empty()) << c.result.error;
    EXPECT_DOUBLE_EQ(c.result.step_time_s, c.analytical.step_time_s);
  }
  EXPECT_LE(r.candidates[0].objective, r.candidates[1].objective);
  const std::string text = PlanToText(r);
  EXPECT_NE(text.find("step(des)"), std::string::npos) << text;
  EXPECT_NE(text.find("refused*"), std::string::npos) << text;
  EXPECT_EQ(text.find("failed"), std::string::npos) << text;
  EXPECT_NE(PlanToJson(r).find("\"recheck_refused\":"), std::string::npos);
}

// Interleaving is searched where the layers split into chunks of whole
// layers that are nearly even, not only where the chunks divide them: 94
// layers on 2 ranks in 12 chunks each (3 and 4 layers).
TEST(PlannerTest, VirtualStagesIncludeNearlyEvenUnevenSplits) {
  auto s = ParseText(k70b, {"model.layers=94"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  const PlanOptions opt;
  const SearchContext x{&*s, &opt, s->gpus()};
  PlanConfig c;
  c.pipeline = 2;
  const auto vp = std::find_if(PlanDimensions().begin(), PlanDimensions().end(), [](const PlanDimension& d) { return d.label == "VP"; });
  ASSERT_NE(vp, PlanDimensions().end());
  const std::vector<int> values = vp->values(c, x);
  for (int v : {1, 47, 12, 16}) EXPECT_NE(std::find(values.begin(), values.end(), v), values.end()) << v;
  EXPECT_EQ(std::find(values.begin(), values.end(), 30), values.end());  // chunks of 1 and 2 layers: far from even
}

// The scenario's HSDP group (sharding_group) stays with the candidates it
// divides; the others shard over all their data x context ranks.
TEST(PlannerTest, OwnShardingGroupStaysWhereItDivides) {
  auto s = ParseText(k70b, {"parallelism.data_sharding=full", "parallelism.sharding_group=4", "parallelism.virtual_stages=1"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  for (int pipeline : {4, 8}) {  // data 4, then 2
    PlanConfig c = ConfigOf(*s);
    c.pipeline = pipeline;
    c.data = 64 / (c.tensor * pipeline);
    Scenario x = *s;
    ApplyPlannedConfig(x, *s, c);
    EXPECT_EQ(x.parallelism.sharding_group, pipeline == 4 ? 4 : 0);
    EXPECT_FALSE(CheckParallelism(x).has_value()) << Describe(c);
  }
}

// The plan for the reference case finds a configuration at least as fast as
// NeMo's default, which is itself feasible.
// With micro_batch: auto the scenario's own row is what run gives: the
// micro batch auto chooses (16 here), not the placeholder 1 it holds.
TEST(PlannerTest, OwnSettingsTakeTheAutoMicroBatch) {
  auto s = ParseText(k70b, {"parallelism.tensor=8", "parallelism.pipeline=1", "parallelism.virtual_stages=1",
                            "training.recompute=full"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  ASSERT_TRUE(s->training.micro_batch_auto);
  PlanOptions opt;
  opt.recheck_fidelity = Fidelity::kAnalytical;
  opt.top_k = 1;
  const PlanReport r = Plan(*s, opt);
  const SimulationResult run = Simulate(*s, SimulateOptions::At(Fidelity::kAnalytical));
  ASSERT_GT(run.micro_batch, 1);
  EXPECT_EQ(r.baseline_config.micro_batch, run.micro_batch);
  ASSERT_TRUE(r.baseline.has_value());
  EXPECT_NEAR(r.baseline->analytical.step_time_s, run.step_time_s, 1e-12);
}

TEST(PlannerTest, BestIsAtLeastAsFastAsNemoDefault) {
  auto s = ParseText(k70b);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  PlanOptions opt;
  opt.recheck_fidelity = Fidelity::kAnalytical;
  opt.top_k = 5;
  const PlanReport r = Plan(*s, opt);
  ASSERT_EQ(r.candidates.size(), 5u);
  ASSERT_TRUE(r.baseline.has_value()) << (r.baseline_rejection ? r.baseline_rejection->reason : "");
  const SimulationResult nemo = Simulate(*s, SimulateOptions::At(Fidelity::kAnalytical));
  ASSERT_TRUE(nemo.error.empty()) << nemo.error;
  EXPECT_NEAR(r.baseline->analytical.step_time_s, nemo.step_time_s, 1e-12);  // the planner's mutation = the parser's scenario
  EXPECT_LE(r.candidates[0].analytical.step_time_s, nemo.step_time_s);
  EXPECT_GE(r.baseline_rank, 1);
  for (size_t i = 1; i < r.candidates.size(); ++i) {
    EXPECT_LE(r.candidates[i - 1].objective, r.candidates[i].objective);
  }
  // Every candidate is a consistent, fitting configuration of the same cluster and batch.
  for (const auto& c : r.candidates) {
    Scenario x = *s;
    ApplyConfig(x, c.config);
    EXPECT_FALSE(CheckParallelism(x).has_value()) << Describe(c.config);
    EXPECT_TRUE(c.analytical.memory.fits) << Describe(c.config);
    EXPECT_EQ(c.config.tensor * c.config.pipeline * c.config.context * c.config.data, 64);
  }
  EXPECT_EQ(r.searched, r.feasible + r.rejected_divisibility + r.rejected_memory + r.rejected_other);
  EXPECT_GT(r.rejected_memory, 0);
  // Without tensor or pipeline parallelism 70B fits on 64 GPUs only fully
  // sharded (FSDP: 18 B per parameter / 64 plus two gathered layers).
  for (const auto& c : r.candidates) {
    if (c.config.tensor == 1 && c.config.pipeline == 1 && c.config.context == 1) {
      EXPECT_EQ(c.config.data_sharding, DataSharding::kFull) << Describe(c.config);
    }
  }
  for (const auto& rej : r.rejected) {
    if (rej.config.tensor == 1 && rej.config.pipeline == 1 && rej.config.context == 1) {
      EXPECT_EQ(rej.category, "memory");
    }
  }
}

TEST(PlannerTest, RecheckRunsTheTopKAtTheRecheckFidelity) {
  auto s = ParseText(std::string(k70b), {"model=llama2-7b", "parallelism.tensor=1", "parallelism.pipeline=1",
                                         "parallelism.virtual_stages=1", "cluster.nodes=1"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  PlanOptions opt;
  opt.top_k = 3;
  opt.recheck_fidelity = Fidelity::kDes;
  const PlanReport r = Plan(*s, opt);
  ASSERT_EQ(r.candidates.size(), 3u);
  for (const auto& c : r.candidates) {
    EXPECT_GT(c.result.step_time_s, 0);
    EXPECT_GT(c.analytical.step_time_s, 0);
  }
  // The text says how it lists the rows and, for families that run with
  // some settings only, why the others fail (design.md: plan shows why).
  const std::string text = PlanToText(r);
  EXPECT_NE(text.find("the analytical ranking's top 3 re-checked with the des"), std::string::npos) << text;
  ASSERT_FALSE(r.rejected_members.empty());
  const std::string header = "settings that fail in families that run (least demanding failing member):\n  ";
  const size_t at = text.find(header);
  ASSERT_NE(at, std::string::npos) << text;
  const std::string first = text.substr(at + header.size(), text.find('\n', at + header.size()) - at - header.size());
  EXPECT_TRUE(std::any_of(r.rejected_members.begin(), r.rejected_members.end(),
                          [&](const PlanRejection& rej) { return first.ends_with(": " + rej.reason); }))
      << first;
}

// Progress: the search counts configurations up to the number searched, then
// the DES re-checks count up to the top K plus the baseline; never backwards.
TEST(PlannerTest, ReportsProgressBySearchThenRecheck) {
  auto s = ParseText(std::string(k70b), {"model=llama2-7b", "parallelism.tensor=1", "parallelism.pipeline=1",
                                         "parallelism.virtual_stages=1", "cluster.nodes=1"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  PlanOptions opt;
  opt.top_k = 2;
  struct Report {
    long done, total;
    std::string phase;
  };
  std::vector<Report> seen;
  opt.progress = [&](long done, long total, const std::string& phase) { seen.push_back({done, total, phase}); };
  const PlanReport r = Plan(*s, opt);
  ASSERT_GE(seen.size(), 4u);
  EXPECT_EQ(seen.front().phase, "searching");
  EXPECT_EQ(seen.front().done, 0);
  EXPECT_EQ(seen.front().total, r.searched);
  EXPECT_EQ(seen.back().phase, "re-checking with the DES");
  EXPECT_EQ(seen.back().done, seen.back().total);
  EXPECT_EQ(seen.back().total, long(r.candidates.size()) + (r.baseline ? 1 : 0));
  bool search_finished = false;
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_LE(seen[i].done, seen[i].total);
    if (seen[i].phase == "searching" && seen[i].done == seen[i].total) search_finished = true;
    if (i > 0 && seen[i].phase == seen[i - 1].phase) {
      EXPECT_GE(seen[i].done, seen[i - 1].done);
    }
    if (seen[i].phase != "searching") {
      EXPECT_TRUE(search_finished) << "re-checks before the search ended";
    }
  }
  // Without a re-check there is no second phase.
  seen.clear();
  opt.recheck_fidelity = Fidelity::kAnalytical;
  Plan(*s, opt);
  ASSERT_FALSE(seen.empty());
  for (const auto& x : seen) EXPECT_EQ(x.phase, "searching");
}

TEST(PlannerTest, CostObjectiveRanksByRunCost) {
  auto s = ParseText(k70b);
  ASSERT_TRUE(s.ok());
  PlanOptions opt;
  opt.objective = PlanObjective::kCost;
  opt.recheck_fidelity = Fidelity::kAnalytical;
  const PlanReport r = Plan(*s, opt);
  ASSERT_FALSE(r.candidates.empty());
  EXPECT_DOUBLE_EQ(r.candidates[0].objective, r.candidates[0].analytical.run.cost_usd);
  EXPECT_GT(r.candidates[0].objective, 0);
}

TEST(PlannerTest, ExplainDifferenceListsTheLargestComponentsFirst) {
  SimulationResult best, other;
  best.step_time_s = 10;
  best.breakdown.compute_s = 8;
  best.breakdown.exposed_communication_s = 1;
  best.breakdown.pipeline_bubble_s = 1;
  other = best;
  other.breakdown.exposed_communication_s = 1.2;
  other.breakdown.pipeline_bubble_s = 1.5;
  other.breakdown.compute_s = 7.995;  // below 0.1% of a step: not mentioned
  EXPECT_EQ(ExplainDifference(best, other), "+0.500 s pipeline bubble, +0.200 s exposed communication");
  EXPECT_EQ(ExplainDifference(best, best), "no component differs by more than 0.1% of a step");
}

TEST(PlannerTest, JsonHasTheContractShape) {
  auto s = ParseText(k70b);
  ASSERT_TRUE(s.ok());
  PlanOptions opt;
  opt.recheck_fidelity = Fidelity::kAnalytical;
  opt.top_k = 3;
  const PlanReport r = Plan(*s, opt);
  const YAML::Node j = YAML::Load(PlanToJson(r));
  ASSERT_TRUE(j["candidates"].IsSequence());
  ASSERT_EQ(j["candidates"].size(), 3u);
  const YAML::Node c0 = j["candidates"][0];
  EXPECT_TRUE(c0["parallelism"]["tensor"].IsScalar());
  EXPECT_TRUE(c0["parallelism"]["virtual_stages"].IsScalar());
  EXPECT_TRUE(c0["training"]["micro_batch"].IsScalar());
  EXPECT_TRUE(c0["training"]["recompute"].IsScalar());
  EXPECT_NEAR(c0["result"]["step_time_s"].as<double>(), r.candidates[0].result.step_time_s, 1e-5 * r.candidates[0].result.step_time_s);
  ASSERT_TRUE(j["rejected"].IsSequence());
  EXPECT_EQ(j["rejected"].size(), r.rejected.size() + r.rejected_members.size());
  EXPECT_EQ(c0["parallelism"]["data_sharding"].as<std::string>(), ToString(r.candidates[0].config.data_sharding));
  // Thousands are rejected here, and every family of 70B on 64 GPUs may find a
  // member that fits with FSDP: "rejected" was then []. Now one example per
  // family with a rejection, the families that cannot work first.
  ASSERT_GT(r.rejected_memory + r.rejected_divisibility, 0);
  ASSERT_GT(j["rejected"].size(), 0u);
  long examples_rejected = 0;
  bool feasible_seen = false;
  for (const auto& rej : j["rejected"]) {
    EXPECT_FALSE(rej["reason"].as<std::string>().empty());
    EXPECT_TRUE(rej["parallelism"]["pipeline"].IsScalar());
    const long feasible = rej["family_feasible"].as<long>();
    EXPECT_GT(rej["family_rejected"].as<long>(), 0);
    EXPECT_FALSE(feasible_seen && feasible == 0) << "whole families first";
    feasible_seen = feasible_seen || feasible > 0;
    examples_rejected += rej["family_rejected"].as<long>();
  }
  // The examples' families hold every rejected configuration.
  EXPECT_EQ(examples_rejected, r.rejected_divisibility + r.rejected_memory + r.rejected_other);
  EXPECT_EQ(j["searched"].as<long>(), r.searched);
}

// --- The built CLI (skipped when it has not been built) ---------------------

std::string RunCli(const std::string& args, int& status) {
  // ctest runs test cases in parallel processes: one output file per process.
  const std::string out = ::testing::TempDir() + "plan_cli_out." + std::to_string(::getpid()) + ".txt";
  const int rc = std::system((std::string(TRAINSIM_BINARY_DIR) + "/bin/trainsim " + args + " > " + out + " 2>&1").c_str());
  status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(PlanCliTest, JsonForTheReferenceCase) {
  if (!std::filesystem::exists(std::string(TRAINSIM_BINARY_DIR) + "/bin/trainsim")) GTEST_SKIP() << "trainsim not built";
  int status = -1;
  const std::string out = RunCli(std::string("plan ") + TRAINSIM_SOURCE_DIR +
                                     "/examples/reference-design/llama2-70b-8n-8nic.yaml --recheck analytical --top 3 --json",
                                 status);
  ASSERT_EQ(status, 0) << out;
  const YAML::Node j = YAML::Load(out);
  ASSERT_EQ(j["candidates"].size(), 3u) << out;
  EXPECT_LE(j["candidates"][0]["result"]["step_time_s"].as<double>(), j["baseline"]["result"]["step_time_s"].as<double>());
  EXPECT_EQ(j["baseline"]["parallelism"]["virtual_stages"].as<int>(), 20);
}

TEST(PlanCliTest, BadInputIsOneLineAndExitTwo) {
  if (!std::filesystem::exists(std::string(TRAINSIM_BINARY_DIR) + "/bin/trainsim")) GTEST_SKIP() << "trainsim not built";
  int status = -1;
  EXPECT_EQ(RunCli("plan /nonexistent.yaml", status), "/nonexistent.yaml: cannot open file\n");
  EXPECT_EQ(status, 2);
  EXPECT_EQ(RunCli(std::string("plan ") + TRAINSIM_SOURCE_DIR + "/examples/reference-design/llama2-70b-8n-8nic.yaml --objective speed", status),
            "trainsim plan: --objective: 'speed' is not one of: time, cost\n");
  EXPECT_EQ(status, 2);
  EXPECT_EQ(RunCli(std::string("plan ") + TRAINSIM_SOURCE_DIR + "/examples/moe/mixtral-8x7b-8n-8nic.yaml --moe-dispatchers alltoall,deeperp", status),
            "trainsim plan: --moe-dispatchers: 'deeperp' is not one of: alltoall, deepep, hybridep, allgather\n");
  EXPECT_EQ(status, 2);
  EXPECT_EQ(RunCli(std::string("plan ") + TRAINSIM_SOURCE_DIR + "/examples/moe/mixtral-8x7b-8n-8nic.yaml --moe-a2a-overlap yes", status),
            "trainsim plan: --moe-a2a-overlap: 'yes' is not one of: off, on\n");
  EXPECT_EQ(status, 2);
  // plan searches a layout that does not fit (CLI golden cli_plan_own_layout_does_not_divide), but a
  // malformed value, a batch no run can have or expert parallelism of a dense model is bad input.
  const std::string dense = std::string("plan ") + TRAINSIM_SOURCE_DIR + "/examples/reference-design/llama2-70b-8n-8nic.yaml --set ";
  for (const std::string set : {"parallelism.tensor=four", "parallelism.tensor=-4", "parallelism.virtual_stages=0",
                                "training.micro_batch=banana", "training.global_batch=-5", "parallelism.expert=3"}) {
    const std::string out = RunCli(dense + set, status);
    EXPECT_EQ(status, 2) << set << ": " << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_EQ(out.rfind("--set:", 0), 0u) << out;
  }
}

// The MoE dispatcher and the all-to-all overlap are software choices: the
// planner keeps the scenario's unless told which to try, and tries them only
// where they differ (EP > 1). Qwen3-235B-A22B with its experts across nodes:
// a deduplicating dispatcher with the overlap beats the all-to-all without it.
TEST(PlannerTest, TriesTheMoeDispatchersItIsGiven) {
  auto s = ParseText(R"(name: plan-moe-dispatch
cluster: {node: xe9680-h100, nodes: 32}
model: qwen3-235b-a22b
parallelism: {tensor: 2, pipeline: 8, virtual_stages: 4, expert: 32, sequence_parallel: true}
training: {seq_len: 4096, global_batch: 2048, micro_batch: 1, precision: fp8, recompute: selective}
)");
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  ASSERT_EQ(s->parallelism.moe_dispatcher, MoeDispatcher::kAllToAll);
  PlanOptions o;
  o.recheck_fidelity = Fidelity::kAnalytical;
  o.top_k = 3;
  const PlanReport kept = Plan(*s, o);
  ASSERT_FALSE(kept.candidates.empty());
  for (const PlanCandidate& c : kept.candidates) {
    EXPECT_EQ(c.config.moe_dispatcher, MoeDispatcher::kAllToAll);
    EXPECT_EQ(c.config.moe_a2a_overlap, s->parallelism.moe_a2a_overlap);
  }
  o.moe_dispatchers = {MoeDispatcher::kAllToAll, MoeDispatcher::kDeepEp};
  o.moe_a2a_overlaps = {false, true};
  const PlanReport tried = Plan(*s, o);
  ASSERT_FALSE(tried.candidates.empty());
  const PlanConfig& best = tried.candidates[0].config;
  EXPECT_GT(tried.searched, kept.searched);
  // DeepEP's reach (20 NVLink domains) rules out its widest expert groups: "failed otherwise", said with an example.
  EXPECT_GT(tried.rejected_other, 0);
  ASSERT_TRUE(tried.other_example.has_value());
  EXPECT_NE(tried.other_example->reason.find("DeepEP reaches at most"), std::string::npos) << tried.other_example->reason;
  EXPECT_NE(PlanToText(tried).find("failed otherwise, as "), std::string::npos);
  EXPECT_EQ(kept.rejected_other, 0);
  EXPECT_FALSE(kept.other_example.has_value());
  EXPECT_EQ(best.moe_dispatcher, MoeDispatcher::kDeepEp);
  EXPECT_TRUE(best.moe_a2a_overlap);
  EXPECT_LT(tried.candidates[0].objective, kept.candidates[0].objective);
  EXPECT_NE(Describe(best).find("deepep A2AOV"), std::string::npos) << Describe(best);
  EXPECT_NE(PlanToJson(tried).find("\"moe_dispatcher\":\"deepep\""), std::string::npos);
  // The chosen settings survive the trip through a scenario.
  Scenario applied = *s;
  ApplyConfig(applied, best);
  EXPECT_EQ(applied.parallelism.moe_dispatcher, MoeDispatcher::kDeepEp);
  EXPECT_EQ(ConfigOf(applied), best);
}

TEST(PlannerTest, SearchesExpertParallelismForAMixtureOfExperts) {
  // Mixtral 8x7B on 2 nodes: EP is searched over the divisors of the 8
  // experts that divide TP x CP x DP, and every candidate keeps its experts
  // sharded accordingly; a dense model's report has no EP column.
  auto s = ParseText(R"(name: plan-moe
cluster: {node: xe9680-h100, nodes: 2}
model: mixtral-8x7b
parallelism: {tensor: 1, pipeline: 1, expert: 1}
training: {seq_len: 4096, global_batch: 128, precision: bf16}
)");
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  PlanOptions o;
  o.recheck_fidelity = Fidelity::kAnalytical;
  const PlanReport r = Plan(*s, o);
  ASSERT_FALSE(r.candidates.empty());
  EXPECT_TRUE(r.mixture_of_experts);
  bool expert_parallel = false;
  for (const PlanCandidate& c : r.candidates) {
    EXPECT_EQ(8 % c.config.expert, 0);
    EXPECT_EQ((long(c.config.tensor) * c.config.context * c.config.data) % (long(c.config.expert) * c.config.expert_tensor), 0);
    expert_parallel = expert_parallel || c.config.expert > 1;
    if (c.config.expert > 1) {
      EXPECT_NE(Describe(c.config).find("EP" + std::to_string(c.config.expert)), std::string::npos);
    }
  }
  // EP 1 replicates all eight experts on every GPU (46.7B parameters): it does not fit.
  EXPECT_TRUE(expert_parallel);
  EXPECT_FALSE(r.baseline.has_value());
  EXPECT_NE(PlanToText(r).find(" EP "), std::string::npos);
  auto dense = ParseText(k70b);
  ASSERT_TRUE(dense.ok());
  EXPECT_EQ(PlanToText(Plan(*dense, o)).find(" EP "), std::string::npos);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// The rank `plan` gives the scenario's own settings is their row in the
// table it prints: after the DES re-check re-ranks the top K, not the
// analytical rank before it (it said #5 beside row #3).
TEST(PlannerTest, BaselineRankIsItsRowAfterTheRecheck) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-16n-8nic.yaml");
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  PlanOptions opt;
  opt.top_k = 8;
  const PlanReport r = Plan(*s, opt);
  ASSERT_TRUE(r.baseline.has_value());
  const auto row = std::find_if(r.candidates.begin(), r.candidates.end(), [&](const PlanCandidate& c) { return c.config == r.baseline->config; });
  ASSERT_NE(row, r.candidates.end()) << "the example's settings are among its best 8";
  EXPECT_EQ(r.baseline_rank, 1 + int(row - r.candidates.begin()));
}

}  // namespace
}  // namespace trainsim
