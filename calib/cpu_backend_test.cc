#include "calib/cpu_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "calib/calibration.h"
#include "calib/layer_prediction.h"
#include "calib/storage_bench.h"
#include "calib/thread_collectives.h"

namespace trainsim::calib {
namespace {

std::string TempDir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("trainsim-cpu-backend-" + std::to_string(::getpid())) / name;
  std::filesystem::create_directories(d);
  return d.string();
}

// The whole loop at a tiny shape and minimal timing: measure, fit, write,
// load, predict. (Accuracy of the prediction is a benchmark, not a unit test.)
TEST(CpuBackend, CalibrateWriteAndValidateLoop) {
  CpuCalibrationOptions o;
  o.min_seconds = 0.001;
  o.min_reps = 1;
  o.max_reps = 2;
  o.storage_dir = TempDir("storage");
  o.storage_bytes_per_client = 1 << 20;
  CalibrationPlan plan = MakePlan({{64, 176, 4, 2, 32, 1}, {64, 176, 2, 2, 64, 1}});
  plan.grouped.push_back(GroupedGemmShape{32, 96, 64, 4, "tn"});  // a scenario's experts, as TE issues them
  Measurements m;
  // Progress runs from the start to 1 and never backwards, through every phase.
  std::vector<double> fractions;
  std::vector<std::string> phases;
  o.progress = [&](double f, const std::string& phase) {
    fractions.push_back(f);
    if (phases.empty() || phases.back() != phase) phases.push_back(phase);
  };
  ASSERT_EQ(RunCpuCalibration(plan, o, m), "");
  ASSERT_GT(fractions.size(), plan.gemms.size());
  EXPECT_LT(fractions.front(), 0.05);
  EXPECT_EQ(fractions.back(), 1.0);
  for (size_t i = 1; i < fractions.size(); ++i) EXPECT_GE(fractions[i], fractions[i - 1]);
  EXPECT_EQ(phases.size(), 7u);  // gemm, memory, layers, collectives, storage x2, done
  EXPECT_EQ(phases.back(), "measurements done");
  EXPECT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.gemm.size(), plan.gemms.size());
  ASSERT_EQ(m.grouped_gemm.size(), 1u);
  EXPECT_EQ(m.grouped_gemm[0].experts(), 4);
  EXPECT_EQ(m.grouped_gemm[0].streams, 1);  // the CPU twin: one thread, one stream
  EXPECT_GT(m.grouped_gemm[0].gemm.seconds, 0);
  EXPECT_EQ(m.storage.size(), 2u);  // one client and two
  EXPECT_FALSE(m.collectives.empty());
  for (const auto& l : m.layers) EXPECT_GT(l.forward_s, 0);
  const std::string profile = TempDir("out") + "/cpu-test.yaml";
  std::string report;
  ASSERT_EQ(WriteCalibratedProfile(m, profile, "cpu-test", 0, report), "");
  EXPECT_NE(report.find("GEMM fp32 (stands in for the profile's bf16/fp16 keys): peak"), std::string::npos) << report;
  EXPECT_NE(report.find("grouped GEMM fp32 32x96x64 x 4 experts (a call per expert on 1 stream): measured"), std::string::npos) << report;
  auto rep = ValidateProfile(profile);
  ASSERT_TRUE(rep) << rep.error().ToString();
  ASSERT_EQ(rep->cases.size(), 2u);
  for (const auto& c : rep->cases) EXPECT_GT(c.predicted_step_time_s, 0);
}

TEST(CpuBackend, ValidateProfileErrors) {
  auto missing = ValidateProfile("/nonexistent/p.yaml");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().ToString().find("not found"), std::string::npos);
  const std::string dir = TempDir("nosidecar");
  const std::string p = std::string(TRAINSIM_SOURCE_DIR) + "/hardware-profiles/gpus/h100-sxm-80g.yaml";
  auto no_sidecar = ValidateProfile(p);
  ASSERT_FALSE(no_sidecar);
  EXPECT_NE(no_sidecar.error().ToString().find("measurements file"), std::string::npos);
}

TEST(CpuBackend, StorageBenchmarkReportsPerClient) {
  StorageOptions so;
  so.dir = TempDir("st");
  so.clients = 2;
  so.bytes_per_client = 1 << 20;
  StorageSample s;
  ASSERT_EQ(RunStorageBenchmark(so, s), "");
  ASSERT_EQ(s.write_s.size(), 2u);
  EXPECT_GT(AggregateWriteBytesPerS(s), 0);
  EXPECT_TRUE(std::filesystem::is_empty(so.dir));  // files removed
  so.dir = "/nonexistent/dir";
  EXPECT_NE(RunStorageBenchmark(so, s).find("not a directory"), std::string::npos);
}

TEST(CpuBackend, ThreadCollectivesCoverEveryOperation) {
  const auto samples = RunThreadCollectives(2, {4096, 65536}, 2);
  ASSERT_EQ(samples.size(), 10u);
  for (const auto& s : samples) EXPECT_GT(s.seconds, 0) << s.op;
  EXPECT_TRUE(RunThreadCollectives(1, {4096}, 1).empty());
  // One sample per (op, size), in that order, each sized as nccl-tests counts
  // "size" (whole floats per rank chunk). Which of two sizes took longer is
  // not asserted: on a loaded 2-core CI machine a 4 KiB exchange between two
  // threads can wait longer for a core than 16 MiB takes to copy (timing
  // belongs in `trainsim bench`, not in a unit test).
  const char* const ops[] = {"all-reduce", "all-gather", "reduce-scatter", "send-recv", "all-to-all"};
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].op, ops[i / 2]);
    EXPECT_EQ(samples[i].scope, "intra-node");
    EXPECT_EQ(samples[i].ranks, 2);
    EXPECT_DOUBLE_EQ(samples[i].bytes, i % 2 == 0 ? 4096 : 65536) << samples[i].op;
  }
  const auto odd = RunThreadCollectives(3, {4096}, 1);  // 341 floats per rank chunk
  ASSERT_EQ(odd.size(), 5u);
  for (const auto& s : odd) EXPECT_DOUBLE_EQ(s.bytes, 3 * 341 * sizeof(float)) << s.op;
}

}  // namespace
}  // namespace trainsim::calib
