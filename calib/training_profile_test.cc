#include "calib/training_profile.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "calib/fit.h"
#include "sim/core/precision.h"
#include "sim/io/profile_loader.h"

namespace trainsim::calib {
namespace {

namespace fs = std::filesystem;

class TrainingProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trainsim-training-profile-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    auto m = LoadMeasurements(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/gpu-measurements-h200.yaml");
    ASSERT_TRUE(m) << m.error().ToString();
    m_ = *m;
  }
  void TearDown() override { fs::remove_all(dir_); }
  GpuProfile Load(const std::string& path) { return LoadGpuProfile(YAML::Node(path), path, "profile"); }
  fs::path dir_;
  Measurements m_;
};

// The H200 sweep on the catalogue H200: the measured curves and memory
// replace the base's, its datasheet peaks, attention kernels, power and
// GPU-wide clock derate stay, and, without a sustained run, the fp8 curve
// loses the base's sustained override (the base took its fp8 curve from
// sustained-clock runs; the sweep ran at burst clocks).
TEST_F(TrainingProfileTest, TheBaseWithTheMeasuredKeysReplaced) {
  m_.sustained.clear();
  const std::string path = (dir_ / "h200-trained.yaml").string();
  std::string report;
  ASSERT_EQ(WriteTrainingProfile(m_, "h200-sxm-141g", path, "h200-cal.yaml", report), "");
  EXPECT_NE(report.find("h200-trained.yaml"), std::string::npos) << report;
  const GpuProfile base = Load(std::string(TRAINSIM_SOURCE_DIR) + "/hardware-profiles/gpus/h200-sxm-141g.yaml");
  const GpuProfile p = Load(path);
  FittedProfile f;
  ASSERT_EQ(FitProfile(m_, "x", f), "");
  EXPECT_EQ(p.name, "h200-trained");
  EXPECT_DOUBLE_EQ(p.PeakFlops(Precision::kBf16), base.PeakFlops(Precision::kBf16));
  EXPECT_NEAR(p.PeakFlops(Precision::kBf16) * p.MatmulMaxEfficiency(Precision::kBf16), f.peak_tflops * f.max_efficiency * 1e12,
              1e-5 * f.peak_tflops * 1e12);
  EXPECT_NEAR(p.MatmulKHalf(Precision::kBf16), f.k_half, 1e-3 * f.k_half);
  EXPECT_NEAR(p.hbm_bytes_per_s, 2 * f.hbm_tb_per_s * 1e12, 1e-5 * p.hbm_bytes_per_s);  // float32 traffic: the device's bytes
  EXPECT_LT(p.hbm_bytes_per_s, base.hbm_bytes_per_s);                                   // under the datasheet
  EXPECT_EQ(p.matmul_tile_n, int(kFitTile));
  EXPECT_DOUBLE_EQ(p.attention_fwd_flops, base.attention_fwd_flops);
  EXPECT_DOUBLE_EQ(p.tdp_w, base.tdp_w);
  EXPECT_DOUBLE_EQ(p.sustained_clock_fraction, base.sustained_clock_fraction);
  EXPECT_DOUBLE_EQ(base.MatmulClockFraction(Precision::kFp8), 1.0);
  EXPECT_DOUBLE_EQ(p.MatmulClockFraction(Precision::kFp8), base.sustained_clock_fraction);
  EXPECT_NEAR(p.MatmulSplitAccumulatorEfficiency(Precision::kFp8), 0.946, 0.01);
  // Every number says where it comes from: what was measured, the fit's fixed tile, and the base's own sources.
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("  bf16: 989  # datasheet\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  tile_n: 128  # the calibration fit's tile (128): its curves assume it; not measured\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# Set to the fit's tile, not measured: matmul.tile_m matmul.tile_n."), std::string::npos) << text;
  const size_t efficiency = text.find("    bf16: ", text.find("max_efficiency:"));
  ASSERT_NE(efficiency, std::string::npos);
  EXPECT_NE(text.substr(efficiency, text.find('\n', efficiency) - efficiency).find("# calibrated: "), std::string::npos) << text;
}

// The sweep's sustained runs (the LM head's GEMM back to back at the power
// cap, bf16 and fp8) give those precisions' clock fractions in place of the
// base's: 0.89 of the curves in both on this H200.
TEST_F(TrainingProfileTest, SustainedRunsSetThePrecisionsClockFractions) {
  ASSERT_EQ(m_.sustained.size(), 2u);
  FittedProfile f;
  ASSERT_EQ(FitProfile(m_, "x", f), "");
  const double bf16 = f.gemm_bf16.sustained_fraction, fp8 = f.LowPrecision("fp8")->curve.sustained_fraction;
  EXPECT_NEAR(bf16, 0.89, 0.04);
  EXPECT_NEAR(fp8, 0.89, 0.04);
  const std::string path = (dir_ / "sustained.yaml").string();
  std::string report;
  ASSERT_EQ(WriteTrainingProfile(m_, "h200-sxm-141g", path, "c.yaml", report), "");
  const GpuProfile p = Load(path);
  EXPECT_NEAR(p.MatmulClockFraction(Precision::kBf16), bf16, 1e-5);
  EXPECT_NEAR(p.MatmulClockFraction(Precision::kFp16), bf16, 1e-5);
  EXPECT_NEAR(p.MatmulClockFraction(Precision::kFp8), fp8, 1e-5);
}

TEST_F(TrainingProfileTest, ABaseThatDoesNotLoadOrASweepWithoutAGpuIsRefused) {
  std::string report;
  const std::string path = (dir_ / "t.yaml").string();
  const std::string e = WriteTrainingProfile(m_, "h200-sxm-14lg", path, "c.yaml", report);
  EXPECT_NE(e.find("did you mean 'h200-sxm-141g'"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(path));
  Measurements cpu = m_;
  cpu.backend = "cpu";
  EXPECT_NE(WriteTrainingProfile(cpu, "h200-sxm-141g", path, "c.yaml", report).find("--backend cuda"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::calib
