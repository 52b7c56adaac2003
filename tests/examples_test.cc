// Every scenario bundled in examples/ loads and runs: README.md and
// examples/README.md quote them by name, and a user's first run is one of
// them. Some are there to show a layout that does not fit (the reference
// design's 70B on one or two nodes, the sharding examples before their
// --set): those run to the memory error with their figures, never to another
// error. examples/sweeps/ holds sweep specifications, not scenarios: each
// loads and its points parse.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/io/scenario_loader.h"
#include "sim/run/simulate.h"
#include "sim/sweep/sweep_spec.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> ScenarioExamples() {
  const fs::path root = fs::path(TRAINSIM_SOURCE_DIR) / "examples";
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
    if (e.path().parent_path().filename() == "sweeps") continue;
    out.push_back(e.path());
  }
  return out;
}

TEST(ExamplesTest, EveryBundledScenarioLoadsAndRunsToAFiniteStepOrOnlyDoesNotFit) {
  const std::vector<fs::path> examples = ScenarioExamples();
  ASSERT_GE(examples.size(), 40u);  // reference-design alone has 20
  for (const fs::path& path : examples) {
    SCOPED_TRACE(path.string());
    auto s = LoadScenario(path.string());
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    const SimulationResult r = Simulate(*s, SimulateOptions::At(Fidelity::kAnalytical));
    EXPECT_TRUE(r.feasible() || r.error_kind == ErrorKind::kDoesNotFit) << r.error;
    EXPECT_TRUE(std::isfinite(r.step_time_s));
    EXPECT_GT(r.step_time_s, 0);
  }
}

// The sweep files: each loads, and each of its points is a scenario or a
// reason it cannot be one (a point whose EP does not divide the ranks keeps
// its row with that reason).
TEST(ExamplesTest, EveryBundledSweepLoadsAndItsPointsParse) {
  const fs::path root = fs::path(TRAINSIM_SOURCE_DIR) / "examples" / "sweeps";
  int sweeps = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.path().extension() != ".yaml") continue;
    SCOPED_TRACE(e.path().string());
    ++sweeps;
    auto spec = LoadSweepSpec(e.path().string());
    ASSERT_TRUE(spec.ok()) << spec.error().ToString();
    ASSERT_FALSE(spec->points.empty());
    int scenarios = 0;
    for (const SweepPoint& p : spec->points) scenarios += spec->PointScenario(p).ok();
    EXPECT_GT(scenarios, 0);
  }
  EXPECT_GE(sweeps, 5);
}

}  // namespace
}  // namespace trainsim
