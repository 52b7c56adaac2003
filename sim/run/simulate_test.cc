// Simulate's progress callback and cancel flag (what the GUI's progress bar
// and Cancel, and the CLI's --progress, rely on).
#include "sim/run/simulate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

Scenario Reference(const std::vector<std::string>& sets) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-7b-1n-8nic.yaml", sets);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

TEST(SimulateTest, DesReportsStepsDoneUpToTheRunsSteps) {
  SimulateOptions opt;
  opt.fidelity = Fidelity::kDes;
  std::vector<std::pair<int, int>> calls;
  opt.progress = [&](int done, int total) { calls.emplace_back(done, total); };
  const SimulationResult r = Simulate(Reference({"training.steps=50", "checkpoint.every_steps=20"}), opt);
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_GE(calls.size(), 3u);
  EXPECT_EQ(calls.front(), std::make_pair(0, 50));
  EXPECT_EQ(calls.back(), std::make_pair(50, 50));
  for (size_t i = 1; i < calls.size(); ++i) EXPECT_GE(calls[i].first, calls[i - 1].first);
}

TEST(SimulateTest, DesStopsWhenCanceledAndSaysSo) {
  SimulateOptions opt;
  opt.fidelity = Fidelity::kDes;
  std::atomic<bool> cancel{false};
  opt.cancel = &cancel;
  int last_done = -1;
  opt.progress = [&](int done, int) {
    last_done = done;
    if (done >= 1) cancel = true;  // after the first step
  };
  DesStats stats;
  opt.des_stats = &stats;
  const SimulationResult r = Simulate(Reference({"training.steps=50", "checkpoint.every_steps=20"}), opt);
  EXPECT_EQ(r.error, "canceled");
  EXPECT_TRUE(stats.canceled);
  EXPECT_LT(last_done, 50);
  // Uncanceled, the same run is whole.
  cancel = false;
  opt.progress = nullptr;
  EXPECT_TRUE(Simulate(Reference({"training.steps=50", "checkpoint.every_steps=20"}), opt).error.empty());
}

// What the planner ranks by is Simulate's analytical figures, whatever the
// run: with checkpoints, ownership pricing, and one failures outpace.
// Asking for a timeline (run --trace, the GUI) never changes a figure: it had
// shown step 1's own time, which differs from step 0's in its last bits (the
// GUI coloured an unchanged row as a change), and later moved the checkpoint
// stall and the time to train by 1e-8.
TEST(SimulateTest, ATimelineLeavesTheFiguresAsTheyAre) {
  for (const char* example : {"reference-design/llama2-70b-4n-8nic.yaml", "moe/mixtral-8x7b-8n-8nic.yaml"}) {
    auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/" + example, {});
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    const SimulationResult plain = Simulate(*s, SimulateOptions::At(Fidelity::kDes));
    const SimulationResult traced = Simulate(*s, SimulateOptions::At(Fidelity::kDes, true));
    ASSERT_TRUE(plain.error.empty()) << plain.error;
    EXPECT_FALSE(traced.timeline.empty()) << example;
    EXPECT_TRUE(plain.timeline.empty()) << example;
    EXPECT_EQ(traced.step_time_s, plain.step_time_s) << example;
    EXPECT_EQ(traced.breakdown.exposed_communication_s, plain.breakdown.exposed_communication_s) << example;
    EXPECT_EQ(traced.breakdown.pipeline_bubble_s, plain.breakdown.pipeline_bubble_s) << example;
    EXPECT_EQ(traced.run.checkpoint_stall_s, plain.run.checkpoint_stall_s) << example;
    EXPECT_EQ(traced.run.time_to_train_s, plain.run.time_to_train_s) << example;
    EXPECT_EQ(traced.run.cost_usd, plain.run.cost_usd) << example;
  }
}

TEST(SimulateTest, RunFiguresAreSimulatesAnalyticalFigures) {
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{}, {"cost.model=ownership", "training.steps=5000"}, {"failures.node_mtbf_hours=0.01"}}) {
    const Scenario s = Reference(sets);
    const StepCosts costs = ComputeStepCosts(s);
    const SimulationResult full = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical), costs);
    const SimulationResult figures = SimulateRunFigures(s, costs);
    EXPECT_EQ(figures.step_time_s, full.step_time_s);
    EXPECT_EQ(figures.breakdown.exposed_communication_s, full.breakdown.exposed_communication_s);
    // The same number, or both unknown (NaN) where the run cannot make progress.
    const auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    EXPECT_TRUE(same(figures.run.time_to_train_s, full.run.time_to_train_s));
    EXPECT_TRUE(same(figures.run.cost_usd, full.run.cost_usd));
    EXPECT_EQ(figures.error, full.error);
    EXPECT_EQ(figures.error_kind, full.error_kind);
  }
  EXPECT_NE(SimulateRunFigures(Reference({"failures.node_mtbf_hours=0.01"}), ComputeStepCosts(Reference({"failures.node_mtbf_hours=0.01"}))).error, "");
}

// A cost that comes out NaN (a bug, e.g. a zero-sized operator's 0 / 0) is
// never a result: Simulate and the searches' figures both report it as an
// internal error naming the figure, so the CLI exits 1 instead of printing
// "-nan s" with status 0.
TEST(SimulateTest, ANonFiniteStepIsAnInternalErrorNotAResult) {
  const Scenario s = Reference({});
  StepCosts costs = ComputeStepCosts(s);
  costs.optimizer_s = std::nan("");
  for (const SimulationResult& r : {Simulate(s, SimulateOptions::At(Fidelity::kAnalytical), costs), SimulateRunFigures(s, costs)}) {
    EXPECT_EQ(r.error_kind, ErrorKind::kInternal);
    EXPECT_NE(r.error.find("step_time_s"), std::string::npos) << r.error;
    EXPECT_FALSE(r.feasible());
  }
}

// Experts that outnumber the routed tokens leave some with none: their GEMMs
// have no rows, and the step stays a finite number (it came out NaN).
TEST(SimulateTest, MoreExpertsThanRoutedTokensStillGiveAFiniteStep) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/moe/mixtral-8x7b-8n-8nic.yaml", {"model.moe.experts=80000"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  const SimulationResult r = Simulate(*s);
  EXPECT_TRUE(std::isfinite(r.step_time_s));
  EXPECT_GT(r.step_time_s, 0);
  EXPECT_EQ(r.error_kind, ErrorKind::kDoesNotFit) << r.error;  // 563T parameters
}

}  // namespace
}  // namespace trainsim
