#include "sim/cost/operator_breakdown.h"

#include <gtest/gtest.h>

#include "sim/cost/collective_model.h"
#include "sim/cost/step_costs.h"
#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

Scenario Load(std::vector<std::string> sets) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-7b-1n-8nic.yaml", sets);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

// The breakdown is the step's own arithmetic laid out: on one pipeline rank,
// its passes times the layers of each kind add up to the stage's compute.
TEST(OperatorBreakdownTest, ReconcilesWithTheStageCosts) {
  for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
           {"parallelism.tensor=2"}, {"parallelism.tensor=1", "training.recompute=selective"}, {"model=mixtral-8x7b", "parallelism.tensor=1", "parallelism.expert=8"}}) {
    const Scenario s = Load(sets);
    const StepCosts c = ComputeStepCosts(s);
    ASSERT_EQ(s.parallelism.pipeline, 1);
    const std::vector<PassBreakdown> passes = BreakDownPasses(s, c.workload);
    double forward = 0, backward = 0;
    for (const PassBreakdown& p : passes) {
      // "layer (...) x N": N layers of that kind on the rank; embedding and head once.
      const double layers = p.unit.rfind("layer", 0) == 0 ? std::stod(p.unit.substr(p.unit.rfind(' ') + 1)) : 1.0;
      double sum = 0;
      for (const OperatorRow& r : p.ops) sum += r.time_s;
      EXPECT_DOUBLE_EQ(sum, p.compute_s) << p.unit << " " << p.pass;
      (p.pass == "forward" ? forward : backward) += layers * p.compute_s;
    }
    EXPECT_NEAR(forward, c.slowest().forward_compute_s, 1e-9 * forward) << sets[0];
    EXPECT_NEAR(backward, c.slowest().backward_compute_s, 1e-9 * backward) << sets[0];
  }
}

// Under moe_a2a_overlap the expert all-to-alls run beside another micro
// batch's compute: a layer pass's exposed communication is the step's own
// (WithAllToAllOverlap), well under the same pass's without the overlap.
TEST(OperatorBreakdownTest, AllToAllOverlapAsTheStepCountsIt) {
  const std::vector<std::string> moe = {"model=mixtral-8x7b", "cluster.nodes=2", "parallelism.tensor=1", "parallelism.pipeline=2",
                                        "parallelism.virtual_stages=2", "parallelism.expert=8"};
  std::vector<std::string> overlapped = moe;
  overlapped.push_back("parallelism.moe_a2a_overlap=true");
  const Scenario plain = Load(moe), s = Load(overlapped);
  const auto layer_forward = [](const Scenario& x) {
    for (const PassBreakdown& p : BreakDownPasses(x, BuildWorkload(x))) {
      if (p.unit.rfind("layer", 0) == 0 && p.pass == "forward") return p;
    }
    return PassBreakdown{};
  };
  const PassBreakdown a = layer_forward(plain), b = layer_forward(s);
  ASSERT_FALSE(b.comms.empty());
  double all_to_all_s = AllToAllTime(s, BuildWorkload(s).layer(0).forward);
  ASSERT_GT(all_to_all_s, 0);
  EXPECT_DOUBLE_EQ(b.exposed_comm_s, WithAllToAllOverlap(s, a.exposed_comm_s, all_to_all_s, b.compute_s));
  EXPECT_LT(b.exposed_comm_s, 0.5 * a.exposed_comm_s);
}

// What a model chunk adds once per micro batch beside its layers is a unit of
// its own: delayed fp8 scaling's amax all-reduce over the stage after the
// chunk's forward and after its backward, as the stage cost charges it.
// Each row says how many kernels its operator launches and whether a CUDA
// graph launches them (the framework's cuda_graph_scope).
TEST(OperatorBreakdownTest, RowsCountKernelsAndMarkGraphs) {
  Scenario s = Load({"model=mixtral-8x7b", "parallelism.tensor=1", "parallelism.expert=8"});
  s.framework.cuda_graph_modules = kGraphAttention;
  const std::vector<PassBreakdown> passes = BreakDownPasses(s, BuildWorkload(s));
  int graphed = 0, expert_kernels = 0;
  for (const PassBreakdown& p : passes) {
    for (const OperatorRow& r : p.ops) {
      if (r.host_wait) continue;
      EXPECT_GE(r.kernels, 1) << r.name;
      graphed += r.graphed;
      if (r.name == "flash attention") {
        EXPECT_TRUE(r.graphed);
      }
      if (r.name == "expert fc1") {
        EXPECT_FALSE(r.graphed);
        expert_kernels = r.kernels;
      }
    }
  }
  EXPECT_GT(graphed, 0);
  EXPECT_EQ(expert_kernels, 1);  // one local expert per GPU at EP 8
}

TEST(OperatorBreakdownTest, ChunkCollectivesAreAUnitOfTheirOwn) {
  const Scenario s = Load({"parallelism.tensor=2", "training.precision=fp8", "cluster.nodes=2", "training.global_batch=64",
                           "training.framework=megatron-core-2024"});
  const StepCosts c = ComputeStepCosts(s);
  const std::vector<PassBreakdown> passes = BreakDownPasses(s, c.workload);
  int found = 0;
  for (const PassBreakdown& p : passes) {
    if (p.unit.rfind("each model chunk", 0) != 0) continue;
    ++found;
    ASSERT_EQ(p.comms.size(), 1u) << p.pass;
    EXPECT_EQ(p.comms[0].name, "fp8 amax all-reduce");
    EXPECT_EQ(p.comms[0].group, CommGroup::kStage);
    EXPECT_FALSE(p.comms[0].overlapped);
    EXPECT_DOUBLE_EQ(p.exposed_comm_s, p.comms[0].time_s);
    EXPECT_DOUBLE_EQ(p.comms[0].time_s, CollectiveTime(s, c.workload.ChunkAmaxReduce(0, p.pass == "backward")));
  }
  EXPECT_EQ(found, 2);
  // bf16: no amax history, no such unit.
  const Scenario bf16 = Load({"parallelism.tensor=2", "cluster.nodes=2", "training.global_batch=64"});
  for (const PassBreakdown& p : BreakDownPasses(bf16, ComputeStepCosts(bf16).workload)) EXPECT_NE(p.unit.rfind("each model chunk", 0), 0u) << p.unit;
}

// Each collective says what it hides behind, and a TP collective with comm
// overlap names its GEMM.
TEST(OperatorBreakdownTest, NamesWhatEachCollectiveHidesBehind) {
  const Scenario s = Load({"parallelism.tensor=8"});
  const std::vector<PassBreakdown> passes = BreakDownPasses(s, ComputeStepCosts(s).workload);
  bool found = false;
  for (const PassBreakdown& p : passes) {
    for (const CommRow& c : p.comms) {
      if (c.name == "fc1 all-gather") {
        found = true;
        EXPECT_TRUE(c.overlapped);
        EXPECT_EQ(c.behind, "fc1");
        EXPECT_GT(c.time_s, 0);
      }
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace trainsim
