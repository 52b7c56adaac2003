#include "sim/report/result_format.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "sim/report/comparison.h"

namespace trainsim {
namespace {

TEST(ResultFieldsTest, ValuesReadInSensibleScales) {
  EXPECT_EQ(FormatValue(*FindResultField("run.time_to_train_s"), 6337), "1.76 h");
  EXPECT_EQ(FormatValue(*FindResultField("run.time_to_train_s"), 5 * 86400.0), "5.00 days");
  EXPECT_EQ(FormatValue(*FindResultField("run.time_to_train_s"), 600), "10.00 min");
  EXPECT_EQ(FormatValue(*FindResultField("step_time_s"), 0.01904), "19.04 ms");
  EXPECT_EQ(FormatValue(*FindResultField("step_time_s"), 3.258), "3.258 s");
  EXPECT_EQ(FormatValue(*FindResultField("run.cost_usd"), 12345.4), "$12,345");
  EXPECT_EQ(FormatValue(*FindResultField("mfu"), 0.565), "56.5%");
  EXPECT_EQ(FormatValue(*FindResultField("memory.peak_gib_per_gpu"), 52.13), "52.1 GiB");
  EXPECT_EQ(FormatValue(*FindResultField("run.checkpoint_bytes"), 1.5 * 1024 * 1024 * 1024), "1.5 GiB");
  EXPECT_EQ(FormatValue(*FindResultField("memory.fits"), 0), "no");
  EXPECT_EQ(FormatValue(*FindResultField("model.parameters"), 68976648192), "68,976,648,192");
  EXPECT_EQ(FormatValue(*FindResultField("gpus"), 1024), "1024");
}

TEST(ResultFieldsTest, DeltasAreSignedInTheRowsScaleAndCleanAtZero) {
  const ResultField& cost = *FindResultField("run.cost_usd");
  EXPECT_EQ(FormatDelta(cost, 822.1, 862.4), "+$40");
  EXPECT_EQ(FormatDelta(cost, 862.4, 822.1), "-$40");
  EXPECT_EQ(FormatDelta(*FindResultField("mfu"), 0.565, 0.5307), "-3.4 pp");
  // An unchanged value recomputed in another order is no change.
  EXPECT_EQ(CleanDelta(0.2753, 0.2753 + 2.274e-13), 0.0);
  EXPECT_EQ(CleanRelative(0.2753, 0.2753 - 2.274e-13), 0.0);
  // From nothing to something is no percentage (compare printed 0.0%): n/a, and null in JSON.
  EXPECT_EQ(CleanRelative(0, 0), 0.0);
  EXPECT_TRUE(std::isnan(CleanRelative(0, 0.0307)));
  EXPECT_EQ(FormatRelative(CleanRelative(0, 0.0307)), "n/a");
  EXPECT_EQ(FormatDelta(*FindResultField("step_time_s"), 0.2753, 0.2753 + 2.274e-13), "0.0 ms");
  EXPECT_NE(CleanDelta(1.0, 1.001), 0.0);
}

TEST(ComparisonTest, HeadlineSaysWhatBChangesInTimeCostAndEnergy) {
  SimulationResult a, b;
  a.name = "8 NICs";
  b.name = "4 NICs";
  a.run.time_to_train_s = 6337;
  b.run.time_to_train_s = 6337 * 1.072;
  a.run.cost_usd = 750;
  b.run.cost_usd = 804;
  a.run.energy_kwh = b.run.energy_kwh = 100;
  b.step_time_s = 1;
  b.breakdown.compute_s = 0.71;
  b.breakdown.exposed_communication_s = 0.18;
  EXPECT_EQ(Headline(a, b), "4 NICs: +7.2% time to train (+0.13 h), +$54 per run (+7.2%), 0.0 kWh; step 71% compute, 18% exposed communication");
  // With the clusters priced, what B saves (or costs) in capital.
  a.run.capital_usd = 1956480;
  b.run.capital_usd = 1730240;
  EXPECT_EQ(Headline(a, b),
            "4 NICs: +7.2% time to train (+0.13 h), +$54 per run (+7.2%), -$226,240 capital (-11.6%), 0.0 kWh; "
            "step 71% compute, 18% exposed communication");
  b.error = "does not fit in GPU memory: 90 GiB of 80";
  EXPECT_EQ(Headline(a, b), "4 NICs: cannot run: does not fit in GPU memory: 90 GiB of 80");
  // Against a baseline that cannot run: no difference to state, B's own figures.
  EXPECT_EQ(Headline(b, a).find("+7.2%"), std::string::npos) << Headline(b, a);
  EXPECT_NE(Headline(b, a).find("the baseline cannot run: does not fit"), std::string::npos) << Headline(b, a);
}

// A row reads in its largest side's unit, but a side that unit would print as
// zero keeps its own: 10 kWh beside 20 MWh is not "0.0 MWh".
TEST(ComparisonTest, ASmallValueBesideALargeOneKeepsItsOwnUnit) {
  SimulationResult a, b;
  a.name = "big";
  b.name = "small";
  a.run.energy_kwh = 20000;
  b.run.energy_kwh = 10.1;
  const std::string table = ComparisonTable(a, b);
  EXPECT_EQ(table.find(" 0.0 MWh"), std::string::npos) << table;
  EXPECT_NE(table.find("20.0 MWh"), std::string::npos) << table;
  EXPECT_NE(table.find("10.1 kWh"), std::string::npos) << table;
}

// Two scenarios of different models compare different work: the headline says so before its deltas.
TEST(ComparisonTest, HeadlineNamesAnotherModel) {
  SimulationResult a, b;
  a.name = "70b";
  b.name = "8b";
  a.model.parameters = 70.6e9;
  b.model.parameters = 8.03e9;
  a.run.time_to_train_s = 3600;
  b.run.time_to_train_s = 600;
  EXPECT_EQ(Headline(a, b).rfind("8b: another model (8.0B parameters against 70.6B): -83.3% time to train", 0), 0u) << Headline(a, b);
  b.model.parameters = a.model.parameters;
  EXPECT_EQ(Headline(a, b).find("another model"), std::string::npos);
}

// A run figure of a scenario that cannot run reads "cannot run", with no
// delta, as in the GUI's table; what the configuration is still shows.
TEST(ComparisonTest, RunFiguresOfARunThatCannotHappenReadCannotRun) {
  SimulationResult a, b;
  a.name = "4n";
  b.name = "2n";
  a.gpus = 32;
  b.gpus = 16;
  a.run.cost_usd = 764;
  b.run.cost_usd = 761;
  a.memory.peak_gib_per_gpu = 70.3;
  b.memory.peak_gib_per_gpu = 94.6;
  b.error = "does not fit in GPU memory";
  for (const std::string& t : {ComparisonTable(a, b), ComparisonTable({a, b, a})}) {
    EXPECT_EQ(t.find("$761"), std::string::npos) << t;
    EXPECT_EQ(t.find("-$3"), std::string::npos) << t;
    EXPECT_NE(t.find("cannot run"), std::string::npos) << t;
    EXPECT_NE(t.find("94.6 GiB"), std::string::npos) << t;
    EXPECT_NE(t.find("-50.0%"), std::string::npos) << t;  // GPUs: a fact of the configuration
  }
}

TEST(ComparisonTest, TableNamesBothScenariosInFull) {
  SimulationResult a, b;
  a.name = "llama2-70b-16n-8nic";
  b.name = "llama2-70b-16n-8nic [cluster.nics_per_node=4]";
  const std::string t = ComparisonTable(a, b);
  EXPECT_NE(t.find("A: llama2-70b-16n-8nic (analytical)"), std::string::npos) << t;
  EXPECT_NE(t.find("B: llama2-70b-16n-8nic [cluster.nics_per_node=4]"), std::string::npos) << t;
  EXPECT_EQ(t.find("e-1"), std::string::npos) << t;
}

// Three or more scenarios: a column each, each later one against the first,
// and a headline per later one; two give the two-scenario table.
TEST(ComparisonTest, ThreeScenariosEachAgainstTheFirst) {
  SimulationResult a, b, c;
  a.name = "h100";
  b.name = "b200";
  c.name = "gb200";
  a.step_time_s = 10;
  b.step_time_s = 5;
  c.step_time_s = 4;
  const std::string t = ComparisonTable({a, b, c});
  for (const char* want : {"A: h100 (analytical)", "C: gb200 (analytical)", "B vs A", "C vs A", "-50.0%", "-60.0%"}) {
    EXPECT_NE(t.find(want), std::string::npos) << want << "\n" << t;
  }
  EXPECT_EQ(t.find("B - A"), std::string::npos) << t;  // no absolute delta column with more than two
  EXPECT_NE(t.find("\nb200: "), std::string::npos) << t;
  EXPECT_NE(t.find("\ngb200: "), std::string::npos) << t;
  EXPECT_EQ(ComparisonTable({a, b}), ComparisonTable(a, b));
  EXPECT_EQ(ComparisonJson({a, b}), ComparisonJson(a, b));
  const YAML::Node j = YAML::Load(ComparisonJson({a, b, c}));  // JSON is YAML
  ASSERT_EQ(j["scenarios"].size(), 3u);
  EXPECT_EQ(j["scenarios"][2].as<std::string>(), "gb200");
  ASSERT_EQ(j["headlines"].size(), 2u);
  bool step = false;
  for (const auto& f : j["fields"]) {
    if (f["field"].as<std::string>() != "step_time_s") continue;
    step = true;
    ASSERT_EQ(f["values"].size(), 3u);
    EXPECT_DOUBLE_EQ(f["values"][2].as<double>(), 4);
    ASSERT_EQ(f["relative"].size(), 2u);
    EXPECT_NEAR(f["relative"][1].as<double>(), -0.6, 1e-12);
  }
  EXPECT_TRUE(step);
}

// A script reading compare --json gets what run --json gets: each side's
// warnings, and those about the comparison.
TEST(ComparisonTest, JsonCarriesEachSidesWarnings) {
  SimulationResult a, b, c;
  a.name = "a";
  b.name = "b";
  c.name = "c";
  b.warnings = {"framework x has no mxfp8 recipe", "another"};
  const YAML::Node two = YAML::Load(ComparisonJson(a, b, {"priced apart"}));
  // Lists on every side, as run --json and comparison_warnings have them.
  ASSERT_TRUE(two["a_warnings"].IsSequence());
  EXPECT_EQ(two["a_warnings"].size(), 0u);
  ASSERT_EQ(two["b_warnings"].size(), 2u);
  EXPECT_EQ(two["b_warnings"][0].as<std::string>(), "framework x has no mxfp8 recipe");
  ASSERT_EQ(two["comparison_warnings"].size(), 1u);
  EXPECT_EQ(two["comparison_warnings"][0].as<std::string>(), "priced apart");
  const YAML::Node three = YAML::Load(ComparisonJson({a, b, c}));
  ASSERT_EQ(three["warnings"].size(), 3u);
  ASSERT_TRUE(three["warnings"][0].IsSequence());
  EXPECT_EQ(three["warnings"][1][1].as<std::string>(), "another");
  EXPECT_EQ(three["comparison_warnings"].size(), 0u);
}

}  // namespace
}  // namespace trainsim
