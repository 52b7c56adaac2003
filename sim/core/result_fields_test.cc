// The result-field table is the one list of result fields: every field it
// names is in the JSON and in the sweep CSV, and nothing else is.
#include "sim/core/result_fields.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "sim/io/result_writer.h"
#include "sim/sweep/sweep_runner.h"

namespace trainsim {
namespace {

// A result with every field set to something distinct, every optional part present.
SimulationResult EveryFieldSet() {
  SimulationResult r;
  r.name = "all-fields";
  r.gpus = 16;
  r.fidelity = "des";
  r.step_time_s = 1.5;
  r.tokens_per_s_per_gpu = 1234.5;
  r.model_tflops_per_gpu = 400.25;
  r.mfu = 0.45;
  r.breakdown = {1.0, 0.2, 0.15, 0.1, 0.05};
  r.memory.fits = false;
  r.memory.peak_gib_per_gpu = 90.5;
  r.memory.weights_gib = 10.5;
  r.memory.gradients_gib = 11.5;
  r.memory.optimizer_gib = 12.5;
  r.memory.activations_gib = 40.5;
  r.memory.workspace_gib = 2.5;
  r.slowest_stage = 3;
  r.framework = "megatron-core-2024";
  r.framework_rule = "given";
  r.precision = "fp8";
  r.memory.offloaded_activations_gib = 30.5;
  r.memory.capacity_gib = 74.5;
  r.memory.reason = "activations need 40.5 GiB";
  r.run.steps = 500;
  r.run.tokens = 2.5e11;
  r.run.time_to_train_s = 6337.5;
  r.run.checkpoint_bytes = 1.5e12;
  r.run.checkpoint_write_s = 30.5;
  r.run.checkpoint_stall_s = 3.5;
  r.run.checkpoint_overhead_s = 17.5;
  r.run.checkpoints = 5;
  r.run.restore_s = 60.5;
  r.run.expected_failures = 0.25;
  r.run.lost_work_s = 99.5;
  r.run.goodput = 0.97;
  r.run.best_checkpoint_interval_s = 3600.5;
  r.run.chosen_checkpoint_interval_s = 1800.5;
  r.run.energy_kwh = 432.5;
  r.run.facility_energy_kwh = 683.5;
  r.run.cost_usd = 820.5;
  r.run.cost_per_billion_tokens_usd = 3.25;
  r.run.cost_model = "ownership";
  r.run.capital_usd = 4.2e6;
  r.run.hot_spares = 2;
  r.run.idle_rack_nodes = 2;
  r.model.parameters = 6.738e9;
  r.model.active_parameters = 6.738e9;
  r.pipeline_layers = "8,8";
  r.pipeline_split = "balanced";
  r.nvlink_domains = "4 x 16 of 18 nodes (Megatron-Bridge's Slurm --segment); across domains: dp";
  r.parallelism = "TP4 PP4 VP5 CP1 DP2 mb1 recompute=none SP DO";
  r.warnings = {"model.moe.capacity_factor 0.5 drops at least 50% of the routed token copies"};
  r.error = "does not fit in GPU memory: activations need 40.5 GiB";
  r.error_kind = ErrorKind::kDoesNotFit;
  return r;
}

TEST(ResultFieldTableTest, IsWellFormed) {
  std::set<std::string> keys, groups_done;
  std::string group = "";
  for (const ResultField& f : ResultFields()) {
    EXPECT_TRUE(keys.insert(f.key).second) << "twice: " << f.key;
    EXPECT_FALSE(f.label.empty()) << f.key;
    EXPECT_EQ(f.key.find('.', f.key.find('.') + 1), std::string::npos) << "one level of nesting: " << f.key;
    // Text fields have a text getter, the others a number.
    EXPECT_EQ(f.is_text(), f.text != nullptr) << f.key;
    EXPECT_EQ(!f.is_text(), f.get != nullptr) << f.key;
    if (!f.part_of.empty()) {
      EXPECT_NE(FindResultField(f.part_of), nullptr) << f.key << " part of " << f.part_of;
    }
    // The fields of one JSON object are contiguous, so the writer opens each once.
    if (f.Group() != group) {
      EXPECT_TRUE(groups_done.insert(group).second) << "object " << group << " reopened at " << f.key;
      group = f.Group();
    }
  }
  EXPECT_EQ(FindResultField("run.cost_usd")->label, "Cost per run");
  EXPECT_EQ(FindResultField("no.such"), nullptr);
  EXPECT_THROW(ResultFieldOf("no.such"), std::logic_error);
  // Reading order: the breakdown right after the step time, indented.
  const auto shown = DisplayFields();
  EXPECT_EQ(shown.size(), ResultFields().size());
  const auto step = std::find(shown.begin(), shown.end(), FindResultField("step_time_s"));
  ASSERT_NE(step, shown.end());
  EXPECT_EQ((*(step + 1))->key, "breakdown_s.compute");
  EXPECT_EQ(DisplayLabel(**(step + 1)), "  compute");
}

TEST(ResultFieldTableTest, EveryFieldIsInTheJsonAndNothingElse) {
  const SimulationResult r = EveryFieldSet();
  const YAML::Node json = YAML::Load(ToJson(r));
  ASSERT_TRUE(json.IsMap());
  std::set<std::string> in_table;
  for (const ResultField& f : ResultFields()) {
    in_table.insert(f.key);
    const YAML::Node v = f.Group().empty() ? json[f.key] : json[f.Group()][f.Name()];
    if (f.list) {
      ASSERT_TRUE(v.IsSequence()) << f.key;
      ASSERT_EQ(v.size(), f.list(r).size()) << f.key;
      for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i].as<std::string>(), f.list(r)[i]) << f.key;
      continue;
    }
    ASSERT_TRUE(v.IsDefined() && (v.IsScalar() || v.IsNull())) << f.key;
    if (!f.HasFigure(r)) {
      EXPECT_TRUE(v.IsNull()) << f.key;  // a figure of a run that cannot happen
      continue;
    }
    if (f.is_text()) {
      EXPECT_EQ(v.as<std::string>(), f.text(r)) << f.key;
    } else if (f.quantity == Quantity::kBool) {
      EXPECT_EQ(v.as<bool>(), f.get(r) != 0) << f.key;
    } else {
      EXPECT_NEAR(v.as<double>(), f.get(r), 1e-5 * std::max(1.0, std::abs(f.get(r)))) << f.key;
    }
  }
  // And the JSON has no field the table does not list.
  for (const auto& top : json) {
    const std::string k = top.first.as<std::string>();
    if (top.second.IsMap()) {
      for (const auto& inner : top.second) EXPECT_TRUE(in_table.count(k + "." + inner.first.as<std::string>())) << k;
    } else {
      EXPECT_TRUE(in_table.count(k)) << k;
    }
  }
  // Every key is always there: null where the result has none (a run that
  // ran has no error, no pipeline without pipeline stages), so that a script
  // reads one shape.
  SimulationResult ran = r;
  ran.error.clear();
  ran.memory.reason.clear();
  ran.pipeline_layers.clear();
  ran.slowest_stage = -1;
  ran.nvlink_domains.clear();
  ran.warnings.clear();
  const YAML::Node j2 = YAML::Load(ToJson(ran));
  for (const char* key : {"error", "error_kind"}) {
    EXPECT_TRUE(j2[key].IsDefined() && j2[key].IsNull()) << key;
  }
  EXPECT_TRUE(j2["pipeline"]["layers"].IsDefined() && j2["pipeline"]["layers"].IsNull());
  EXPECT_TRUE(j2["memory"]["reason"].IsDefined() && j2["memory"]["reason"].IsNull());
  EXPECT_TRUE(j2["warnings"].IsSequence() && j2["warnings"].size() == 0);
  EXPECT_TRUE(j2["feasible"].as<bool>());
  // The figures of a run that ran are there; of one that cannot happen, null
  // (as a sweep's CSV leaves them empty), while what the configuration is stays.
  EXPECT_DOUBLE_EQ(j2["step_time_s"].as<double>(), r.step_time_s);
  EXPECT_TRUE(json["step_time_s"].IsNull());  // r cannot run (its error is set)
  EXPECT_TRUE(json["run"]["cost_usd"].IsNull());
  EXPECT_DOUBLE_EQ(json["memory"]["peak_gib_per_gpu"].as<double>(), r.memory.peak_gib_per_gpu);
}

TEST(ResultFieldTableTest, AFigureWithNoValueIsNullInJsonAndEmptyInCsv) {
  SimulationResult r = EveryFieldSet();
  r.run.best_checkpoint_interval_s = std::numeric_limits<double>::quiet_NaN();
  const YAML::Node json = YAML::Load(ToJson(r));
  ASSERT_TRUE(json["run"]["best_checkpoint_interval_s"].IsDefined());  // the key stays (design.md section 3)
  EXPECT_TRUE(json["run"]["best_checkpoint_interval_s"].IsNull());
  const auto keys = FlatResultKeys();
  const auto values = FlatResultValues(r);
  const size_t at = size_t(std::find(keys.begin(), keys.end(), "run.best_checkpoint_interval_s") - keys.begin());
  ASSERT_LT(at, values.size());
  EXPECT_EQ(values[at], "");  // it was "null" in a sweep's CSV
  EXPECT_TRUE(std::isnan(SimulationResult{}.run.chosen_checkpoint_interval_s));  // not 0 where the run model did not run
}

TEST(ResultFieldTableTest, EveryFieldIsASweepCsvColumn) {
  const std::vector<std::string> columns = SweepColumns(SweepSpec{});
  for (const ResultField& f : ResultFields()) {
    EXPECT_EQ(std::count(columns.begin(), columns.end(), f.key), 1) << f.key;
  }
  EXPECT_EQ(columns.size(), ResultFields().size());  // no axes: the table's fields and nothing else
  EXPECT_EQ(columns.front(), "feasible");
  EXPECT_EQ(columns.back(), "error");
  // Values line up with the keys, as the JSON writes them: of a run that
  // cannot happen (its run figures empty) and of one that ran.
  SimulationResult ran = EveryFieldSet();
  ran.error.clear();
  for (const SimulationResult& r : {EveryFieldSet(), ran}) {
  const auto keys = FlatResultKeys();
  const auto values = FlatResultValues(r);
  ASSERT_EQ(keys.size(), values.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const ResultField& f = ResultFieldOf(keys[i]);
    if (!f.HasFigure(r)) {
      EXPECT_EQ(values[i], "") << keys[i];
      EXPECT_FALSE(r.feasible() && f.Present(r)) << keys[i];
    } else if (f.is_text()) {
      EXPECT_EQ(values[i], f.text(r)) << keys[i];
    } else if (f.quantity == Quantity::kBool) {
      EXPECT_EQ(values[i], f.get(r) != 0 ? "true" : "false") << keys[i];
    } else {
      EXPECT_NEAR(std::stod(values[i]), f.get(r), 1e-5 * std::max(1.0, std::abs(f.get(r)))) << keys[i];
    }
  }
  }
}

// A real point of a sweep: its row has a value in every column the table
// gives (the model's size included), and a run figure of an infeasible one is empty.
TEST(ResultFieldTableTest, SweepRowsCarryEveryField) {
  auto spec = ParseSweepSpec(R"(base:
  name: fields
  cluster: {node: xe9680-h100, nodes: 1, fabric: ndr-rail-optimized}
  model: llama2-7b
  parallelism: {tensor: 1}
  training: {seq_len: 4096, global_batch: 64, steps: 10}
axes:
  model: [llama2-7b, llama2-70b]
)",
                             "fields.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  const auto columns = SweepColumns(*spec);
  auto column = [&](const std::string& k) { return std::find(columns.begin(), columns.end(), k) - columns.begin(); };
  ASSERT_EQ(spec->points.size(), 2u);
  std::vector<std::string> ok, big;
  RunSweepPoint(*spec, spec->points[0], Fidelity::kAnalytical, ok, nullptr);
  RunSweepPoint(*spec, spec->points[1], Fidelity::kAnalytical, big, nullptr);
  ASSERT_EQ(ok.size(), columns.size());
  ASSERT_EQ(big.size(), columns.size());
  EXPECT_EQ(ok[column("feasible")], "true");
  EXPECT_GT(std::stod(ok[column("model.parameters")]), 6e9);
  EXPECT_EQ(ok[column("model.active_parameters")], ok[column("model.parameters")]);
  EXPECT_EQ(ok[column("error_kind")], "");
  EXPECT_FALSE(ok[column("run.cost_usd")].empty());
  // No failure model and no checkpoints: the intervals do not apply, an empty cell (not 0: "continuously").
  EXPECT_EQ(ok[column("run.best_checkpoint_interval_s")], "");
  EXPECT_EQ(ok[column("run.chosen_checkpoint_interval_s")], "");
  // 70B on one node does not fit: what it is stays, what a run would take is empty.
  EXPECT_EQ(big[column("feasible")], "false");
  EXPECT_EQ(big[column("error_kind")], "does not fit");
  EXPECT_GT(std::stod(big[column("model.parameters")]), 6e10);
  EXPECT_FALSE(big[column("memory.peak_gib_per_gpu")].empty());
  EXPECT_TRUE(big[column("run.cost_usd")].empty());
  EXPECT_TRUE(big[column("step_time_s")].empty());
}

}  // namespace
}  // namespace trainsim
