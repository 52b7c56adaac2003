#include "sim/size/cluster_sizer.h"

#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "sim/io/profile_loader.h"
#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

Scenario Ref7b(std::vector<std::string> sets = {}) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-7b-1n-8nic.yaml", sets);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

SizeOptions Question(std::vector<int> nodes, double days) {
  SizeOptions o;
  o.tokens = 2e9;
  o.days = days;
  o.node_counts = std::move(nodes);
  o.nics = {4, 8};
  o.recheck_fidelity = Fidelity::kAnalytical;
  return o;
}

TEST(ClusterSizerTest, StepsForTokensRoundUp) {
  EXPECT_EQ(StepsForTokens(2e12, 1024, 8192), 238419);
  EXPECT_EQ(StepsForTokens(1024.0 * 8192, 1024, 8192), 1);
  EXPECT_EQ(StepsForTokens(1024.0 * 8192 + 1, 1024, 8192), 2);
}

TEST(ClusterSizerTest, CandidateBatchesAreMultiplesOfPlausibleDataParallelSizes) {
  // 384 GPUs: the data-parallel size carries the factor 3, so 1024 cannot work.
  EXPECT_EQ(CandidateBatches(384, 768, 1024), (std::vector<int>{1020, 1008, 960}));
  EXPECT_EQ(CandidateBatches(512, 512, 1024), (std::vector<int>{1024}));
  EXPECT_EQ(CandidateBatches(24, 100, 101), (std::vector<int>{100}));  // no multiple of 24, 12, 6 or 3 in range: the low end
}

TEST(ClusterSizerTest, InfeasibleOptionsSayByHowMuchTheyMiss) {
  const Scenario base = Ref7b();
  // Learn the run times, then set the deadline between 1 and 4 nodes.
  const SizeReport all = SizeCluster(base, Question({1, 4}, 1e6));
  double t1 = 0, t4 = 0;
  for (const auto& c : all.candidates) {
    if (c.cluster.nodes == 1 && c.cluster.nics_per_node == 8) t1 = c.result.run.time_to_train_s;
    if (c.cluster.nodes == 4 && c.cluster.nics_per_node == 8) t4 = c.result.run.time_to_train_s;
  }
  ASSERT_GT(t1, t4);
  ASSERT_GT(t4, 0);
  const double deadline_s = (t1 + t4) / 2;
  const SizeReport r = SizeCluster(base, Question({1, 4}, deadline_s / 86400));
  ASSERT_FALSE(r.candidates.empty());
  EXPECT_EQ(r.candidates[0].cluster.nodes, 4);
  bool found = false;
  for (const auto& rej : r.rejected) {
    if (rej.cluster.nodes == 1 && rej.cluster.nics_per_node == 8) {
      found = true;
      EXPECT_NEAR(rej.misses_by_days, (t1 - deadline_s) / 86400, 1e-9);
      EXPECT_NE(rej.reason.find("misses the deadline by"), std::string::npos) << rej.reason;
    }
  }
  EXPECT_TRUE(found);
  // The answer's node-count option names the miss too.
  bool option = false;
  for (const auto& d : r.options) {
    if (d.option.rfind("1 node instead of 4", 0) == 0) {
      option = true;
      EXPECT_FALSE(d.meets_deadline);
      EXPECT_GT(d.misses_by_days, 0);
    }
  }
  EXPECT_TRUE(option);
  EXPECT_NE(SizeToText(r).find("misses the deadline by"), std::string::npos);
}

TEST(ClusterSizerTest, TimeObjectivePicksTheFastestAndCostTheCheapest) {
  const Scenario base = Ref7b({"cost.model=ownership"});
  SizeOptions o = Question({1, 2, 4}, 1e6);
  const SizeReport cheap = SizeCluster(base, o);
  o.objective = SizeObjective::kTime;
  const SizeReport fast = SizeCluster(base, o);
  ASSERT_FALSE(cheap.candidates.empty());
  ASSERT_FALSE(fast.candidates.empty());
  EXPECT_EQ(fast.candidates[0].cluster.nodes, 4);
  for (const auto& c : fast.candidates) EXPECT_LE(fast.candidates[0].result.run.time_to_train_s, c.result.run.time_to_train_s);
  for (const auto& c : cheap.candidates) EXPECT_LE(cheap.candidates[0].result.run.cost_usd, c.result.run.cost_usd);
  EXPECT_EQ(cheap.cost_model, "ownership");
  // The other NIC count is priced against the answer: fewer NICs, less capital.
  bool nic_option = false;
  for (const auto& d : cheap.options) {
    if (d.option == "4 NICs instead of 8") {
      nic_option = true;
      EXPECT_LT(d.capital_delta_usd, 0);
    }
    if (d.option == "8 NICs instead of 4") {
      nic_option = true;
      EXPECT_GT(d.capital_delta_usd, 0);
    }
  }
  EXPECT_TRUE(nic_option);
}

// Progress: every cluster tried is named as it starts, counted up to the
// number tried, then the DES re-checks of the best few.
TEST(ClusterSizerTest, ReportsProgressByClusterThenRecheck) {
  SizeOptions o = Question({1, 2}, 1e6);
  o.recheck_fidelity = Fidelity::kDes;
  o.recheck_top = 1;
  std::vector<std::string> lines;
  o.progress = [&](int done, int total, const std::string& phase, const std::string& what) {
    lines.push_back(phase + " " + std::to_string(done) + "/" + std::to_string(total) + (what.empty() ? "" : " " + what));
  };
  const SizeReport r = SizeCluster(Ref7b(), o);
  ASSERT_FALSE(r.candidates.empty());
  ASSERT_EQ(r.clusters, 4);
  const std::vector<std::string> want = {"sizing 0/4 1 x xe9680-h100, 4 NICs", "sizing 1/4 2 x xe9680-h100, 4 NICs",
                                         "sizing 2/4 1 x xe9680-h100, 8 NICs", "sizing 3/4 2 x xe9680-h100, 8 NICs",
                                         "sizing 4/4"};
  ASSERT_GE(lines.size(), want.size() + 2);
  EXPECT_EQ(std::vector<std::string>(lines.begin(), lines.begin() + 5), want);
  EXPECT_EQ(lines[5].rfind("re-checking with the DES 0/1 ", 0), 0u) << lines[5];
  EXPECT_EQ(lines.back(), "re-checking with the DES 1/1");
}

// The DES re-check sees contention the closed form does not: no candidate
// left unchecked may beat the (re-checked) answer on its closed-form figure.
TEST(ClusterSizerTest, NoUncheckedCandidateBeatsTheRecheckedAnswer) {
  SizeOptions o = Question({1, 2}, 1e6);
  o.recheck_fidelity = Fidelity::kDes;
  o.recheck_top = 1;
  const SizeReport r = SizeCluster(Ref7b(), o);
  ASSERT_FALSE(r.candidates.empty());
  EXPECT_TRUE(r.candidates[0].rechecked);
  EXPECT_GE(r.rechecked, 1);
  EXPECT_LE(r.rechecked, 2);  // at most twice recheck_top
  for (const SizeCandidate& c : r.candidates) {
    if (!c.rechecked && r.rechecked < 2) {
      EXPECT_GE(c.objective, r.candidates[0].objective) << SizeToText(r);
    }
  }
}

// 3 nodes (24 GPUs) and a global batch of 128: the factor 3 cannot go to
// data parallelism, so with the batch fixed it goes to a pipeline of 3
// stages (uneven: 32 layers); a batch range lets data parallelism take it.
TEST(ClusterSizerTest, ABatchRangeLetsNodeCountsThatDoNotDivideTheBatchRun) {
  const Scenario base = Ref7b();  // global batch 128
  SizeOptions o = Question({3}, 1e6);
  o.nics = {8};
  const SizeReport fixed = SizeCluster(base, o);
  ASSERT_EQ(fixed.candidates.size(), 1u) << SizeToText(fixed);
  EXPECT_EQ(fixed.candidates[0].config.pipeline % 3, 0) << Describe(fixed.candidates[0].config);
  EXPECT_EQ(fixed.candidates[0].global_batch, 128);
  o.batch_min = 96;
  o.batch_max = 128;
  const SizeReport ranged = SizeCluster(base, o);
  ASSERT_EQ(ranged.candidates.size(), 1u) << SizeToText(ranged);
  const SizeCandidate& c = ranged.candidates[0];
  EXPECT_TRUE(c.global_batch % 3 == 0 || c.config.pipeline % 3 == 0) << c.global_batch << " " << Describe(c.config);
  EXPECT_EQ(c.steps, StepsForTokens(2e9, c.global_batch, base.training.seq_len));
  EXPECT_LE(c.analytical.run.time_to_train_s, fixed.candidates[0].analytical.run.time_to_train_s * (1 + 1e-9));
}

TEST(ClusterSizerTest, NicCountsTheNodeDoesNotTakeAreRejectedWithTheReason) {
  SizeOptions o = Question({1}, 1e6);
  o.nics = {2};
  const SizeReport r = SizeCluster(Ref7b(), o);
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_NE(r.rejected[0].reason.find("takes 4, 8 NICs, not 2"), std::string::npos) << r.rejected[0].reason;
}

// Without --nics each node profile is sized with the scenario's NIC count
// where it can take that many and with its own where it cannot: a question
// over GB200 trays (4 GPUs, 4 NICs) and DGX B200 (8 GPUs, 8 NICs, fixed)
// sizes both, and prices the other node with its own NICs against the
// answer, at as many GPUs where a node count tried gives them.
// A node whose GPU lacks the scenario's precision cannot run it: rejected
// with the reason (it was sized in another precision and could be the answer).
TEST(ClusterSizerTest, NodesWhoseGpuLacksThePrecisionAreRejectedWithTheReason) {
  Scenario base = Ref7b({"cluster.node=xe9680l-b200", "training.precision=nvfp4"});
  SizeOptions o = Question({1}, 1e6);
  o.nics = {8};
  o.node_profiles = {LoadNodeProfile(YAML::Node("xe9680-h100"), "--node", "--node"), base.node};
  const SizeReport r = SizeCluster(base, o);
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].cluster.node, "xe9680l-b200");
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_EQ(r.rejected[0].cluster.node, "xe9680-h100");
  EXPECT_NE(r.rejected[0].reason.find("has no block-scaled tensor cores for nvfp4"), std::string::npos) << r.rejected[0].reason;
  EXPECT_NE(SizeToJson(r).find("\"misses_by_days\":null"), std::string::npos);
}

TEST(ClusterSizerTest, WithoutNicsEachNodeTakesTheScenariosCountOrItsOwn) {
  const Scenario base = Ref7b({"cluster.node=gb200-nvl72", "cluster.nics_per_node=4", "cluster.nodes=2"});
  ASSERT_EQ(base.node.nics_per_node, 4);
  SizeOptions o;
  o.tokens = 2e9;
  o.days = 1e6;
  o.node_counts = {2, 4};
  o.recheck_fidelity = Fidelity::kAnalytical;
  for (const char* name : {"gb200-nvl72", "dgx-b200"}) o.node_profiles.push_back(LoadNodeProfile(YAML::Node(name), "--node", "--node"));
  const SizeReport r = SizeCluster(base, o);
  EXPECT_TRUE(r.rejected.empty()) << SizeToText(r);
  ASSERT_EQ(r.candidates.size(), 4u) << SizeToText(r);
  for (const SizeCandidate& c : r.candidates) EXPECT_EQ(c.cluster.nics_per_node, c.cluster.node == "dgx-b200" ? 8 : 4) << c.cluster.node;
  const SizeCandidate& a = r.candidates[0];
  // The other node at as many GPUs where {2, 4} nodes of it give them, else at as many nodes.
  const bool dgx = a.cluster.node == "dgx-b200";
  const int other_nodes = dgx ? (a.cluster.nodes == 2 ? 4 : a.cluster.nodes) : (a.cluster.nodes == 4 ? 2 : a.cluster.nodes);
  const std::string nodes_a = other_nodes != a.cluster.nodes ? std::to_string(a.cluster.nodes) + " nodes, " : "";
  const std::string nodes_b = other_nodes != a.cluster.nodes ? std::to_string(other_nodes) + " nodes, " : "";
  const std::string other = dgx ? "gb200-nvl72 (" + nodes_b + "4 NICs) instead of dgx-b200 (" + nodes_a + "8 NICs)"
                                : "dgx-b200 (" + nodes_b + "8 NICs) instead of gb200-nvl72 (" + nodes_a + "4 NICs)";
  bool priced = false;
  for (const auto& d : r.options) priced |= d.option == other && d.misses_by_days >= 0;
  EXPECT_TRUE(priced) << other << "\n" << SizeToText(r);
}

TEST(ClusterSizerTest, StorageNodeCountsAreAnOptionPricedAgainstTheAnswer) {
  SizeOptions o = Question({2}, 1e6);
  o.nics = {8};
  o.storage_nodes = {2, 4};
  const SizeReport r = SizeCluster(Ref7b({"cost.model=ownership"}), o);
  ASSERT_EQ(r.candidates.size(), 2u);
  const SizeCandidate& a = r.candidates[0];
  const int other = a.cluster.storage_nodes == 2 ? 4 : 2;
  bool found = false;
  for (const auto& d : r.options) {
    if (d.option == std::to_string(other) + " storage nodes instead of " + std::to_string(a.cluster.storage_nodes)) {
      found = true;
      // Two F710 nodes more or fewer: their purchase price, no more.
      EXPECT_NEAR(std::fabs(d.capital_delta_usd), 2 * 70000.0, 1e-6);
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A node, node count or NIC count named twice is one cluster, sized once;
// each node profile is sized with the asked-for NIC counts it takes (a GB200
// tray, one NIC per GPU, among 4 and 8: 4), not rejected for the others.
TEST(ClusterSizerTest, EachClusterOnceWithTheNicCountsItsNodeTakes) {
  SizeOptions o = Question({2, 2, 4}, 1e6);
  o.nics = {4, 8, 8};
  for (const char* name : {"xe9680-h100", "xe9680-h100", "gb200-nvl72"}) {
    o.node_profiles.push_back(LoadNodeProfile(YAML::Node(name), "--node", "--node"));
  }
  const SizeReport r = SizeCluster(Ref7b(), o);
  EXPECT_EQ(r.clusters, 2 * (2 + 1));
  for (const SizeRejection& x : r.rejected) EXPECT_EQ(x.reason.find("NICs, not"), std::string::npos) << x.reason;
  for (const SizeCandidate& c : r.candidates) {
    if (c.cluster.node == "gb200-nvl72") {
      EXPECT_EQ(c.cluster.nics_per_node, 4);
    }
  }
}

// A node profile without a purchase price (DGX H100 here) has no capital to
// weigh against the answer's: the option says nothing about capital.
TEST(ClusterSizerTest, AnUnpricedNodeHasNoCapitalDelta) {
  SizeOptions o = Question({1}, 1e6);
  o.nics = {8};
  for (const char* name : {"xe9680-h100", "dgx-h100"}) o.node_profiles.push_back(LoadNodeProfile(YAML::Node(name), "--node", "--node"));
  const SizeReport r = SizeCluster(Ref7b(), o);
  ASSERT_FALSE(r.candidates.empty());
  bool seen = false;
  for (const SizeOptionDelta& d : r.options) {
    if (d.option.find("instead of") == std::string::npos || d.misses_by_days < 0) continue;
    seen = true;
    EXPECT_FALSE(d.capital_known) << d.option;
    EXPECT_EQ(d.capital_delta_usd, 0) << d.option;
  }
  EXPECT_TRUE(seen);
  const std::string text = SizeToText(r);
  const size_t line = text.find(" instead of ");
  ASSERT_NE(line, std::string::npos) << text;
  EXPECT_EQ(text.substr(line, text.find('\n', line) - line).find("capital"), std::string::npos) << text;
  EXPECT_NE(SizeToJson(r).find("\"capital_delta_usd\":null"), std::string::npos) << SizeToJson(r);
}

// size --json writes each candidate's settings as plan --json does: for a
// mixture of experts its EP, ETP and dispatcher too, so the settings given
// back to `run --set` reproduce the candidate.
TEST(ClusterSizerTest, JsonSettingsAreThePlansIncludingExpertParallelism) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/moe/mixtral-8x7b-8n-8nic.yaml");
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  SizeOptions o = Question({8}, 1e6);
  o.nics = {8};
  const SizeReport r = SizeCluster(*s, o);
  ASSERT_FALSE(r.candidates.empty());
  const YAML::Node j = YAML::Load(SizeToJson(r));
  const YAML::Node p = j["candidates"][0]["parallelism"];
  ASSERT_TRUE(p["expert"].IsDefined()) << SizeToJson(r);
  EXPECT_EQ(p["expert"].as<int>(), r.candidates[0].config.expert);
  EXPECT_TRUE(p["moe_dispatcher"].IsDefined());
  EXPECT_EQ(j["candidates"][0]["training"]["global_batch"].as<int>(), r.candidates[0].global_batch);
  EXPECT_EQ(j["candidates"][0]["training"]["steps"].as<int>(), r.candidates[0].steps);
  // A dense model's settings carry no MoE keys.
  const SizeReport dense = SizeCluster(Ref7b(), Question({1}, 1e6));
  ASSERT_FALSE(dense.candidates.empty());
  EXPECT_FALSE(YAML::Load(SizeToJson(dense))["candidates"][0]["parallelism"]["expert"].IsDefined());
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Whole racks of a rack-scale node (18 GB200 trays) are tried on it alone: on
// 8-GPU nodes such counts force layouts no one would pick.
TEST(ClusterSizerTest, WholeRackCountsAreTriedOnRackScaleNodesOnly) {
  SizeOptions o = Question({2}, 1e6);
  o.nics = {4, 8};
  o.whole_rack_counts = {2, 18};
  for (const char* name : {"xe9680-h100", "gb200-nvl72"}) o.node_profiles.push_back(LoadNodeProfile(YAML::Node(name), "--node", "--node"));
  const SizeReport r = SizeCluster(Ref7b(), o);
  EXPECT_EQ(r.clusters, 2 * 1 + 1 * 2);  // H100: 2 nodes at 4 and 8 NICs; GB200: 2 and 18 trays at 4
  for (const SizeCandidate& c : r.candidates) EXPECT_FALSE(c.cluster.node == "xe9680-h100" && c.cluster.nodes == 18);
  for (const SizeRejection& x : r.rejected) EXPECT_FALSE(x.cluster.node == "xe9680-h100" && x.cluster.nodes == 18);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A cluster whose GPUs share little with the fixed global batch is slow for
// that reason, and its rejection says so (9 nodes, 72 GPUs, under a batch of
// 64: data parallelism at most 8, model parallelism 9 or more).
TEST(ClusterSizerTest, AClusterTheBatchDoesNotFitSaysWhy) {
  SizeOptions o = Question({8, 9}, 1e-6);
  o.nics = {8};
  const SizeReport r = SizeCluster(Ref7b({"training.global_batch=64"}), o);
  bool nine = false;
  for (const SizeRejection& x : r.rejected) {
    if (x.cluster.nodes == 9 && x.misses_by_days > 0) {
      nine = true;
      EXPECT_NE(x.reason.find("share a factor of 8 only, so model parallelism takes 9 or more (--batch LO..HI"), std::string::npos) << x.reason;
    }
    if (x.cluster.nodes == 8) {
      EXPECT_EQ(x.reason.find("share a factor"), std::string::npos) << x.reason;
    }
  }
  EXPECT_TRUE(nine) << SizeToText(r);
}

// A cluster fast enough but for its failures says so, and, with no
// checkpoint, that each failure restarts the run.
TEST(ClusterSizerTest, AMissMostlyLostToFailuresSaysWhy) {
  SizeOptions o = Question({1}, 1e-6);
  o.nics = {8};
  const SizeReport r = SizeCluster(Ref7b({"checkpoint.every_steps=0", "failures.node_mtbf_hours=20"}), o);
  ASSERT_EQ(r.rejected.size(), 1u) << SizeToText(r);
  EXPECT_NE(r.rejected[0].reason.find("; goodput "), std::string::npos) << r.rejected[0].reason;
  EXPECT_NE(r.rejected[0].reason.find("each failure restarts the run from step 0"), std::string::npos) << r.rejected[0].reason;
  // Storage, but an interval past the run's steps: the interval is what to change.
  const SizeReport late = SizeCluster(Ref7b({"checkpoint.every_steps=100000", "failures.node_mtbf_hours=20"}), o);
  ASSERT_EQ(late.rejected.size(), 1u) << SizeToText(late);
  EXPECT_NE(late.rejected[0].reason.find("checkpoint more often"), std::string::npos) << late.rejected[0].reason;
  // Checkpointed, the same cluster loses little: no hint.
  const SizeReport c = SizeCluster(Ref7b({"failures.node_mtbf_hours=20"}), o);
  ASSERT_EQ(c.rejected.size(), 1u) << SizeToText(c);
  EXPECT_EQ(c.rejected[0].reason.find("restarts the run"), std::string::npos) << c.rejected[0].reason;
}

// Counts of one node refused for one reason are one line, in order: a
// GB200 tray asked for 8 NICs is not a line a count.
TEST(ClusterSizerTest, CountsRefusedForOneReasonAreOneLine) {
  SizeReport r;
  for (const int n : {24, 16, 18}) r.rejected.push_back({{"xe9712-gb200", n, 8, 0, 4 * n}, "node 'xe9712-gb200' takes 4 NICs, not 8", 0});
  r.rejected.push_back({{"xe9680-h100", 16, 8, 0, 128}, "takes 110.0 days", 50});
  const std::string text = SizeToText(r);
  EXPECT_NE(text.find("  16, 18, 24 x xe9712-gb200, 8 NICs: node 'xe9712-gb200' takes 4 NICs, not 8\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  16 x xe9680-h100, 8 NICs: takes 110.0 days\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace trainsim
