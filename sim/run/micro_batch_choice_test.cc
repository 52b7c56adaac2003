#include "sim/run/micro_batch_choice.h"

#include <gtest/gtest.h>

#include "models/memory_model.h"
#include "sim/analytical/analytical_step.h"
#include "sim/io/scenario_loader.h"
#include "sim/run/simulate.h"

namespace trainsim {
namespace {

Scenario Load(const std::vector<std::string>& sets) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-7b-1n-8nic.yaml", sets);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

double StepAt(Scenario s, int micro_batch) {
  s.training.micro_batch = micro_batch;
  s.training.micro_batch_auto = false;
  return Simulate(s, SimulateOptions::At(Fidelity::kAnalytical)).step_time_s;
}

TEST(MicroBatchChoiceTest, AGivenMicroBatchRunsAsGiven) {
  const Scenario s = Load({"training.micro_batch=2"});
  EXPECT_FALSE(s.training.micro_batch_auto);
  const MicroBatchChoice c = ChooseMicroBatch(s);
  EXPECT_EQ(c.scenario.training.micro_batch, 2);
  EXPECT_EQ(c.rule, "given");
  const SimulationResult r = Simulate(s);
  EXPECT_EQ(r.micro_batch, 2);
  EXPECT_EQ(r.micro_batch_rule, "given");
}

// Auto takes the power of two with the shortest analytical step among those
// that fit, and Simulate runs it: no tried micro batch that fits is faster.
TEST(MicroBatchChoiceTest, AutoRunsTheFastestMicroBatchThatFits) {
  const Scenario s = Load({"training.micro_batch=auto", "training.recompute=full"});
  ASSERT_TRUE(s.training.micro_batch_auto);
  const MicroBatchChoice c = ChooseMicroBatch(s);
  EXPECT_FALSE(c.scenario.training.micro_batch_auto);
  const int chosen = c.scenario.training.micro_batch;
  EXPECT_EQ(c.rule.rfind("auto: the fastest (closed-form step) that fits of 1, 2", 0), 0u) << c.rule;
  const double chosen_s = StepAt(s, chosen);
  const long per_replica = s.training.global_batch / s.parallelism.data;
  int tried = 0;
  for (int mb = 1; mb <= kAutoMicroBatchMax && mb <= per_replica; mb *= 2) {
    if (per_replica % mb != 0) continue;
    Scenario t = s;
    t.training.micro_batch = mb;
    t.training.micro_batch_auto = false;
    if (!EstimateMemory(t, ComputeStepCosts(t).workload).fits) continue;
    ++tried;
    EXPECT_LE(chosen_s, StepAt(s, mb) * (1 + 1e-12)) << "mb " << mb << " beats the chosen " << chosen;
  }
  EXPECT_GT(tried, 1);
  const SimulationResult r = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical));
  EXPECT_EQ(r.micro_batch, chosen);
  EXPECT_EQ(r.micro_batch_rule, c.rule);
  EXPECT_DOUBLE_EQ(r.step_time_s, chosen_s);
}

// Interleaving needs the micro batches per step to be a multiple of the
// pipeline: auto never picks one that breaks it.
TEST(MicroBatchChoiceTest, AutoKeepsThePipelineRules) {
  const Scenario s = Load({"training.micro_batch=auto", "parallelism.tensor=2", "parallelism.pipeline=2",
                           "parallelism.virtual_stages=2", "training.global_batch=16"});
  const MicroBatchChoice c = ChooseMicroBatch(s);
  EXPECT_FALSE(CheckParallelism(c.scenario).has_value());
  EXPECT_EQ(c.scenario.microbatches_per_step() % 2, 0);
}

// Nothing fits: 1 runs, and the result says it does not fit.
TEST(MicroBatchChoiceTest, AutoWhereNothingFitsRunsOne) {
  const Scenario s = Load({"training.micro_batch=auto", "cluster.node=xe9680-h100", "model=llama2-70b",
                           "parallelism.tensor=1", "parallelism.pipeline=1", "training.global_batch=64"});
  const MicroBatchChoice c = ChooseMicroBatch(s);
  EXPECT_EQ(c.scenario.training.micro_batch, 1);
  EXPECT_NE(c.rule.find("none of"), std::string::npos) << c.rule;
  EXPECT_FALSE(Simulate(s).memory.fits);
}

}  // namespace
}  // namespace trainsim
