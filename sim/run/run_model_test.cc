#include "sim/run/run_model.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "sim/run/simulate.h"
#include "sim/io/scenario_loader.h"
#include "sim/cost/checkpoint_cost.h"

namespace trainsim {
namespace {

Scenario Ref70b(std::vector<std::string> sets = {}) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-4n-8nic.yaml", sets);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

TEST(RunModelTest, CheckpointSizes) {
  const Scenario w = Ref70b({"checkpoint.contents=weights"});
  EXPECT_NEAR(CheckpointBytes(w) / std::pow(1024.0, 3), 128.5, 1.0);  // ~129 GiB: 2 bytes/param
  const Scenario f = Ref70b();
  EXPECT_DOUBLE_EQ(CheckpointBytes(f) / CheckpointBytes(w), 7.0);  // 14 bytes/param
}

// The MTP modules are trained weights: saved with the rest, though the
// published parameter count (DeepSeek-V3's 671B) leaves them out.
TEST(RunModelTest, CheckpointHoldsTheMtpModules) {
  auto at = [](const char* mtp) {
    auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-4n-8nic.yaml",
                          {"model=deepseek-v3", "parallelism.tensor=1", "parallelism.pipeline=1", "parallelism.virtual_stages=1", mtp});
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    return *s;
  };
  const Scenario none = at("model.mtp_layers=0"), one = at("model.mtp_layers=1");
  EXPECT_NEAR(CheckpointBytes(one) - CheckpointBytes(none), 14.0 * one.model.MtpParameters(), 1.0);
  EXPECT_GT(one.model.MtpParameters(), 11e9);  // a MoE layer and its projection: ~11.6B
  EXPECT_EQ(one.model.TotalParameters(4096), none.model.TotalParameters(4096));
}

TEST(RunModelTest, WriteTimeFallsWithStorageNodesUntilTheNicsBind) {
  double last = 1e30;
  for (int n : {1, 2, 4, 8}) {
    const Scenario s = Ref70b({"cluster.storage_nodes=" + std::to_string(n)});
    const double bw = CheckpointWriteBytesPerS(s);
    EXPECT_GT(bw, 0);
    const double t = CheckpointBytes(s) / bw;
    EXPECT_LT(t, last) << n;
    last = t;
  }
  // With 1000 storage nodes the writers' nodes bind: 4 nodes x the lesser of
  // 8 NICs x 50 GB/s and the XE9680's 220 GB/s host path, which the save
  // stages through; so an async save's copy (over that path) never takes
  // longer than the sync write it hides.
  const Scenario big = Ref70b({"cluster.storage_nodes=1000"});
  EXPECT_DOUBLE_EQ(CheckpointWriteBytesPerS(big), 4 * std::min(8 * 50e9, 220e9));
  EXPECT_LE(AsyncCopySeconds(big, CheckpointBytes(big)), CheckpointBytes(big) / CheckpointWriteBytesPerS(big) * (1 + 1e-12));
}

TEST(RunModelTest, EveryGpuSavesItsSliceOfTheCheckpoint) {
  // Fully parallel save: the data-parallel replicas split the weights they
  // share (and a replicated optimizer's state), so every GPU copies and
  // writes checkpoint bytes / GPUs whatever the contents and optimizer, and
  // every node's NICs carry the write.
  for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
           {}, {"checkpoint.contents=weights"}, {"parallelism.distributed_optimizer=false"}}) {
    const Scenario s = Ref70b(sets);
    EXPECT_EQ(CheckpointWriterGpus(s), s.gpus());
    EXPECT_EQ(CheckpointWritingNodes(s), s.nodes);
    EXPECT_DOUBLE_EQ(AsyncCopySeconds(s, CheckpointBytes(s)), CheckpointBytes(s) / s.gpus() / s.node.host_copy_bytes_per_s_per_gpu());
  }
  // Weights only on 4 nodes with 1000 storage nodes: the 4 nodes bind, not 2 nodes' (16 TP x PP writers).
  EXPECT_DOUBLE_EQ(CheckpointWriteBytesPerS(Ref70b({"checkpoint.contents=weights", "cluster.storage_nodes=1000"})),
                   4 * std::min(8 * 50e9, 220e9));
}

TEST(RunModelTest, YoungDalyMatchesClosedForm) {
  // Daly's higher-order interval: Young's sqrt(2 d M) to first order, M past d = 2M.
  const double x = 60.0 / (2 * 36000);
  EXPECT_DOUBLE_EQ(YoungDalyInterval(60, 36000), std::sqrt(2.0 * 60 * 36000) * (1 + std::sqrt(x) / 3 + x / 9) - 60);
  EXPECT_NEAR(YoungDalyInterval(1, 1e9), std::sqrt(2.0 * 1e9), 1e-3 * std::sqrt(2.0 * 1e9));
  EXPECT_DOUBLE_EQ(YoungDalyInterval(100, 40), 40);
  EXPECT_EQ(YoungDalyInterval(0, 100), 0);
  const Scenario s = Ref70b();
  SimulationResult r = Simulate(s);
  const double mtbf = 5000.0 * 3600 / s.nodes;
  EXPECT_DOUBLE_EQ(r.run.best_checkpoint_interval_s, YoungDalyInterval(r.run.checkpoint_stall_s, mtbf));
  EXPECT_LT(r.run.goodput, 1.0);
  EXPECT_GT(r.run.goodput, 0.5);
  EXPECT_GT(r.run.expected_failures, 0);
  EXPECT_GT(r.run.time_to_train_s, r.step_time_s * s.training.steps);
}

TEST(RunModelTest, CheckpointIntervalsThatDoNotApplyHaveNoValue) {
  // 0 read as "checkpoint continuously": where there is no failure model, no
  // storage or no checkpoint, the intervals are NaN (null in JSON, empty in CSV).
  const SimulateOptions analytical = SimulateOptions::At(Fidelity::kAnalytical);
  const SimulationResult no_failures = Simulate(Ref70b({"failures=null"}), analytical);
  ASSERT_TRUE(no_failures.error.empty()) << no_failures.error;
  EXPECT_TRUE(std::isnan(no_failures.run.best_checkpoint_interval_s));
  EXPECT_GT(no_failures.run.chosen_checkpoint_interval_s, 0);
  const SimulationResult no_checkpoints = Simulate(Ref70b({"checkpoint.every_steps=0"}), analytical);
  EXPECT_TRUE(std::isnan(no_checkpoints.run.chosen_checkpoint_interval_s));
  EXPECT_GT(no_checkpoints.run.best_checkpoint_interval_s, 0);  // failures and storage: there is a best one
  const SimulationResult no_storage =
      Simulate(Ref70b({"checkpoint=null", "data=null", "cluster.storage=null", "cluster.storage_nodes=null"}), analytical);
  ASSERT_TRUE(no_storage.error.empty()) << no_storage.error;
  EXPECT_TRUE(std::isnan(no_storage.run.best_checkpoint_interval_s));
  EXPECT_TRUE(std::isnan(no_storage.run.chosen_checkpoint_interval_s));
  EXPECT_GT(no_storage.run.expected_failures, 0);  // the failure model still ran
}

TEST(RunModelTest, AsyncCheckpointHidesMostOfItsWrite) {
  SimulationResult sync = Simulate(Ref70b());
  SimulationResult async = Simulate(Ref70b({"checkpoint.mode=async"}));
  EXPECT_DOUBLE_EQ(sync.run.checkpoint_write_s, async.run.checkpoint_write_s);
  EXPECT_LT(async.run.checkpoint_stall_s, 0.25 * sync.run.checkpoint_stall_s);
}

// The first async checkpoint finds no write in flight: it costs its copy;
// each later one also waits for the write before it (as the DES times them).
TEST(RunModelTest, TheFirstAsyncCheckpointCostsOnlyItsCopy) {
  const Scenario s = Ref70b({"checkpoint.mode=async", "checkpoint.every_steps=1", "training.steps=4"});
  const SimulationResult r = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical, false));
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.run.checkpoints, 4);
  const double copy = AsyncCopySeconds(s, CheckpointBytes(s));
  const double waits = copy + std::max(0.0, r.run.checkpoint_write_s - r.step_time_s);
  ASSERT_GT(waits, 2 * copy);  // the write outlasts a step: the later ones wait
  EXPECT_NEAR(r.run.checkpoint_overhead_s, copy + 3 * waits, 1e-9 * waits);
  EXPECT_NEAR(r.run.checkpoint_stall_s, r.run.checkpoint_overhead_s / 4, 1e-12 * waits);
}

TEST(RunModelTest, AsyncCheckpointMustFitInHostMemory) {
  // 70B full state (~900 GiB, 14 B per parameter) over 4 nodes stages ~225 GiB per node.
  Scenario s = Ref70b({"checkpoint.mode=async"});
  EXPECT_NEAR(CheckpointBytes(s) / CheckpointWritingNodes(s) / std::pow(1024.0, 3), 225, 1);
  EXPECT_TRUE(Simulate(s).error.empty());
  s.node.host_memory_bytes = 200.0 * 1024 * 1024 * 1024;
  const SimulationResult r = Simulate(s);
  EXPECT_NE(r.error.find("async checkpoint does not fit in host memory"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("stages 225 GiB"), std::string::npos) << r.error;
  EXPECT_EQ(r.run.time_to_train_s, 0);
  // The same node checkpoints synchronously: nothing is staged on the host.
  s.checkpoint.mode = CheckpointMode::kSync;
  EXPECT_TRUE(Simulate(s).error.empty());
}

TEST(RunModelTest, CostAndEnergyScaleWithTime) {
  const Scenario s = Ref70b({"failures.node_mtbf_hours=0"});
  SimulationResult r = Simulate(s);
  const double hours = r.run.time_to_train_s / 3600;
  EXPECT_NEAR(r.run.cost_usd, hours * (4 * 98.32 + 4 * 2.0), 1e-6 * r.run.cost_usd);
  // The nodes idle (2.5 kW) through the checkpoints' stalls, else draw load power (10.2 kW); storage draws throughout.
  const double stall_hours = r.run.checkpoint_overhead_s / 3600;
  ASSERT_GT(stall_hours, 0);
  EXPECT_NEAR(r.run.energy_kwh, (hours - stall_hours) * 4 * 10.2 + stall_hours * 4 * 2.5 + hours * 4 * 0.8, 1e-6 * r.run.energy_kwh);
  EXPECT_DOUBLE_EQ(r.run.goodput, r.run.time_to_train_s > 0 ? (r.step_time_s * 500) / r.run.time_to_train_s : 1);
}

TEST(RunModelTest, NodesIdleWhileRestartingAfterFailures) {
  const Scenario s = Ref70b({"failures.node_mtbf_hours=20", "failures.restart_minutes=30"});
  SimulationResult r = Simulate(s);
  ASSERT_GT(r.run.expected_failures, 0.1);
  // A restart lasts 30 min unless the next failure (MTBF 20 h / 4 nodes) cuts it short; the checkpoints' stalls idle too.
  const double m = 5.0, hours = r.run.time_to_train_s / 3600, restart_h = r.run.expected_failures * m * (1 - std::exp(-0.5 / m));
  const double idle_h = restart_h + r.run.checkpoint_overhead_s / 3600;
  const double expected = 4 * (10.2 * (hours - idle_h) + 2.5 * idle_h) + 4 * 0.8 * hours;
  EXPECT_NEAR(r.run.energy_kwh, expected, 1e-6 * expected);
  EXPECT_LT(r.run.goodput, 0.9);
}

// A checkpoint interval longer than the run writes none: a failure loses the
// work since the start, not half an interval never reached.
TEST(RunModelTest, FailureWithNoCheckpointWrittenGoesBackToTheStart) {
  const SimulationResult none = Simulate(Ref70b({"checkpoint.every_steps=100000", "failures.node_mtbf_hours=2000"}),
                                         SimulateOptions::At(Fidelity::kAnalytical));
  ASSERT_TRUE(none.error.empty()) << none.error;
  EXPECT_EQ(none.run.checkpoints, 0);
  ASSERT_GT(none.run.expected_failures, 0);
  const double productive = none.run.time_to_train_s * none.run.goodput;
  // Each failure loses at least half of the run's productive time.
  EXPECT_GT(none.run.lost_work_s, none.run.expected_failures * productive / 2);
}

TEST(RunModelTest, H200NodeIsTheH100NodeWithFasterAndLargerMemory) {
  // Same chassis, fabric and tensor cores: the HBM3e GPU runs the same scenario
  // faster (memory-bound kernels, shorter GEMM epilogues) and has room to spare.
  const SimulationResult h100 = Simulate(Ref70b(), SimulateOptions::At(Fidelity::kAnalytical));
  const SimulationResult h200 = Simulate(Ref70b({"cluster.node=xe9680-h200"}), SimulateOptions::At(Fidelity::kAnalytical));
  EXPECT_LT(h200.step_time_s, h100.step_time_s);
  EXPECT_GT(h200.step_time_s, 0.85 * h100.step_time_s);  // compute-bound: the peaks are the same
  EXPECT_GT(h200.memory.capacity_gib, 1.7 * h100.memory.capacity_gib);
  EXPECT_DOUBLE_EQ(h200.memory.peak_gib_per_gpu, h100.memory.peak_gib_per_gpu);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Failures faster than the work between checkpoints can be redone: no
// finite time to train, so an error rather than a sentinel (issue 20).
TEST(RunModelTest, RunThatCannotMakeProgressIsAnError) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-8n-8nic.yaml",
                        {"failures.node_mtbf_hours=0.001"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  const SimulationResult r = Simulate(*s);
  EXPECT_NE(r.error.find("cannot make progress"), std::string::npos) << r.error;
  // What it would take is unknown (null in JSON), not $0 a sorted sweep would pick; what the cluster is stays.
  EXPECT_TRUE(std::isnan(r.run.time_to_train_s));
  EXPECT_TRUE(std::isnan(r.run.cost_usd));
  EXPECT_TRUE(std::isnan(r.run.goodput));
  EXPECT_GT(r.run.capital_usd, 0);
}

// Where checkpointing every step still trains under 1% of the time (the
// restart and restore alone outlast the time between failures), the error
// says no interval helps instead of asking for more checkpoints.
TEST(RunModelTest, CannotMakeProgressNamesWhatWouldHelp) {
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-16n-8nic.yaml";
  auto blocked = LoadScenario(file, {"training.steps=5000", "failures.node_mtbf_hours=0.5", "checkpoint.every_steps=1"});
  ASSERT_TRUE(blocked.ok()) << blocked.error().ToString();
  const SimulationResult b = Simulate(*blocked, SimulateOptions::At(Fidelity::kAnalytical));
  EXPECT_NE(b.error.find("no checkpoint interval helps"), std::string::npos) << b.error;
  auto sparse = LoadScenario(file, {"training.steps=50000", "failures.node_mtbf_hours=50", "checkpoint.every_steps=50000"});
  ASSERT_TRUE(sparse.ok()) << sparse.error().ToString();
  const SimulationResult s = Simulate(*sparse, SimulateOptions::At(Fidelity::kAnalytical));
  EXPECT_NE(s.error.find("checkpoint more often"), std::string::npos) << s.error;
}

// A checkpoint interval longer than the run writes no checkpoint: the run is
// one segment, whatever the interval (3e8 steps once read "cannot make progress").
TEST(RunModelTest, AnIntervalBeyondTheRunIsNoCheckpoint) {
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-16n-4nic.yaml";
  SimulateOptions opt;
  opt.fidelity = Fidelity::kAnalytical;
  auto beyond = LoadScenario(file, {"checkpoint.every_steps=300000000"});
  auto none = LoadScenario(file, {"checkpoint.every_steps=0"});
  ASSERT_TRUE(beyond.ok() && none.ok());
  const SimulationResult a = Simulate(*beyond, opt), b = Simulate(*none, opt);
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.run.checkpoints, 0);
  EXPECT_DOUBLE_EQ(a.run.time_to_train_s, b.run.time_to_train_s);
}

// The expected time of a stretch of work under exponential failures (Daly
// 2006): finite however frequent the failures, first order where rare.
TEST(RunModelTest, ExpectedSegmentTimeIsDalysExpectation) {
  EXPECT_DOUBLE_EQ(ExpectedSegmentTime(100, 10, 0), 100);
  EXPECT_DOUBLE_EQ(ExpectedSegmentTime(0, 10, 1000), 0);
  EXPECT_NEAR(ExpectedSegmentTime(1000, 600, 1350), 1350 * std::exp(600 / 1350.0) * std::expm1(1000 / 1350.0), 1e-9);
  const double w = 100, rr = 20, m = 1e7;  // rare failures: W (1 + (W/2 + R) / M)
  EXPECT_NEAR(ExpectedSegmentTime(w, rr, m), w * (1 + (w / 2 + rr) / m), 1e-8 * w);  // second order: 3e-9 here
}

// A run that writes no checkpoint restarts from its start after a failure:
// a pre-training run from scratch reads nothing back, a fine-tuning run its
// 16-bit base model; one that checkpoints reads its last checkpoint.
TEST(RunModelTest, WithoutCheckpointsARestartReadsOnlyTheStartingPoint) {
  const auto restore_s = [](std::vector<std::string> sets) {
    sets.push_back("failures.node_mtbf_hours=5000");
    const SimulationResult r = Simulate(Ref70b(sets), SimulateOptions::At(Fidelity::kAnalytical));
    EXPECT_TRUE(r.error.empty()) << r.error;
    return r.run.restore_s;
  };
  EXPECT_EQ(restore_s({"checkpoint.every_steps=0"}), 0);
  EXPECT_EQ(restore_s({"checkpoint.every_steps=1000"}), 0);  // longer than the run's 500 steps: none written
  EXPECT_EQ(restore_s({"checkpoint.every_steps=500"}), 0);   // the only one written at the last step: no restart reads it
  const Scenario s = Ref70b();
  const double base_s = s.storage->latency_s + 2 * s.model.TotalParameters(s.training.seq_len) / CheckpointReadBytesPerS(s);
  EXPECT_NEAR(restore_s({"checkpoint.every_steps=0", "training.finetune.method=full"}), base_s, 1e-9 * base_s);
  EXPECT_NEAR(restore_s({"checkpoint.every_steps=0", "training.finetune.method=lora"}), base_s, 1e-9 * base_s);
  EXPECT_NEAR(restore_s({}), s.storage->latency_s + CheckpointBytes(s) / CheckpointReadBytesPerS(s), 1e-9);
}

// Failures about as frequent as a checkpoint interval: the run still ends,
// at Daly's expectation, where the first-order model once said 13x longer
// (or that it never ends).
TEST(RunModelTest, FrequentFailuresTakeTheExponentialExpectation) {
  const Scenario s = Ref70b({"failures.node_mtbf_hours=1.5"});
  const SimulationResult r = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical));
  ASSERT_TRUE(r.error.empty()) << r.error;
  const double m = 1.5 * 3600 / s.nodes, rec = s.failures.restart_s + r.run.restore_s;
  const double segment = r.run.chosen_checkpoint_interval_s + r.run.checkpoint_stall_s;
  // 500 steps, every 100: no remainder; a failure before the first checkpoint restarts from scratch (nothing to read).
  const double expected = ExpectedSegmentTime(segment, s.failures.restart_s, m) + (r.run.checkpoints - 1) * ExpectedSegmentTime(segment, rec, m);
  EXPECT_NEAR(r.run.time_to_train_s, expected, 1e-9 * expected);
  EXPECT_NEAR(r.run.expected_failures, expected / m, 1e-9 * expected);
  EXPECT_NEAR(r.run.lost_work_s, expected - r.step_time_s * 500 - r.run.checkpoint_overhead_s, 1e-6 * expected);
  EXPECT_GT(r.run.goodput, 0.2);
  EXPECT_LT(r.run.goodput, 0.5);
}

// An async checkpoint's best interval is never shorter than its write (a
// shorter one makes training wait for the write) and does not depend on the
// interval chosen.
TEST(RunModelTest, AsyncBestIntervalCoversTheWrite) {
  for (const char* every : {"checkpoint.every_steps=1", "checkpoint.every_steps=100"}) {
    const SimulationResult r = Simulate(Ref70b({"checkpoint.mode=async", "cluster.storage_nodes=1", every}),
                                        SimulateOptions::At(Fidelity::kAnalytical));
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_GE(r.run.best_checkpoint_interval_s, r.run.checkpoint_write_s - r.run.checkpoint_stall_s - 1e-9) << every;
  }
  const auto best = [](const char* every) {
    return Simulate(Ref70b({"checkpoint.mode=async", every}), SimulateOptions::At(Fidelity::kAnalytical)).run.best_checkpoint_interval_s;
  };
  EXPECT_DOUBLE_EQ(best("checkpoint.every_steps=1"), best("checkpoint.every_steps=100"));
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Failures that outpace restarts: restarts cut short by the next failure
// never add up to more than the run, so energy stays positive (failures x
// restart once came to more than the wall time: -3830 kWh).
TEST(RunModelTest, RestartsNeverOutlastTheRun) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-16n-8nic.yaml", {"failures.node_mtbf_hours=1"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  const SimulationResult r = Simulate(*s, SimulateOptions::At(Fidelity::kAnalytical));
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_GT(r.run.expected_failures * s->failures.restart_s, r.run.time_to_train_s);  // the case
  EXPECT_GT(r.run.energy_kwh, 0);
  const double idle_kwh = s->nodes * s->node.power_idle_w / 1000 * r.run.time_to_train_s / 3600;
  EXPECT_GE(r.run.energy_kwh, idle_kwh);
}

}  // namespace
}  // namespace trainsim
