// GPU calibration with several GEMM precisions, on synthetic measurements (no
// GPU needed): the layer step ran in tf32, the sweep also measured bf16 and
// fp8. The profile's bf16/fp16 keys must reproduce the bf16 samples, its fp8
// keys the fp8 samples, the tf32 curve must land in the sidecar, and
// `validate --profile` must predict the tf32 layer step with that curve.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "calib/calibration.h"
#include "calib/fit.h"
#include "calib/layer_prediction.h"
#include "sim/cost/gpu_cost_model.h"
#include "sim/core/hardware_profile.h"
#include "sim/io/profile_loader.h"

namespace trainsim::calib {
namespace {

std::string TempDir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("trainsim-precision-" + std::to_string(::getpid())) / name;
  std::filesystem::create_directories(d);
  return d.string();
}

struct Curve {
  double peak_flops, max_eff, k_half;
};
constexpr Curve kTf32{4e14, 0.7, 200};
constexpr Curve kBf16{8e14, 0.8, 300};
constexpr Curve kFp8{1.6e15, 0.7, 600};
// A Blackwell-like machine's block-scaled curves (each its own, so that a key
// filled from the wrong format's samples shows).
constexpr Curve kMxfp8{1.5e15, 0.75, 500};
constexpr Curve kNvfp4{3.0e15, 0.65, 900};
// 2048 x 2048 outputs are 256 tiles of 128: 64 full waves, no wave correction;
// and compute-bound at any K (1,024 FLOPs per operand byte in 16 bits), which
// the fit requires of the samples it draws a curve through.
constexpr int kSms = 4;

// Seconds of a GEMM on a machine that follows the cost model's curve exactly.
double CurveSeconds(const GemmSample& g, const Curve& c) {
  return g.Flops() / (c.peak_flops * c.max_eff * double(g.k) / (double(g.k) + c.k_half));
}

// Wide enough that GEMMs dominate the step (the launch floors of the small
// kernels would hide a wrong GEMM curve).
const LayerShape kLayers[] = {{2048, 5632, 16, 4, 512, 1}, {1024, 2816, 8, 2, 256, 2}};

Measurements SyntheticGpu(bool with_fp8, bool with_block_scaled = false) {
  Measurements m;
  m.backend = "cuda";
  m.host = "synthetic";
  m.date = "2026-01-01T00:00:00Z";
  m.device = "model GPU (float32 storage, tf32 GEMMs)";
  m.dtype = "tf32";
  m.compute_units = kSms;
  m.memory_bytes = 80e9;
  m.launch_s = 1e-9;
  for (long k : {64L, 256L, 1024L, 4096L}) {
    GemmSample t{2048, 2048, k, 1, "nn", "tf32", 0};
    t.seconds = CurveSeconds(t, kTf32);
    m.gemm.push_back(t);
    GemmSample b{2048, 2048, k, 1, "nn", "bf16", 0};
    b.seconds = CurveSeconds(b, kBf16);
    m.gemm.push_back(b);
    if (with_fp8) {
      GemmSample f{2048, 2048, k, 1, "nt", "fp8", 0};
      f.seconds = CurveSeconds(f, kFp8);
      m.gemm.push_back(f);
    }
    if (with_block_scaled) {
      GemmSample x{2048, 2048, k, 1, "nt", "mxfp8", 0};
      x.seconds = CurveSeconds(x, kMxfp8);
      m.gemm.push_back(x);
      GemmSample v{2048, 2048, k, 1, "nt", "nvfp4", 0};
      v.seconds = CurveSeconds(v, kNvfp4);
      m.gemm.push_back(v);
    }
  }
  m.memory.push_back({"copy", 1e9, 1e9 / 2e12});
  m.memory.push_back({"add", 1e7, 1e7 / 1.6e12});
  for (int s : {128, 256}) {
    AttentionSample a{1, 4, 4, s, 64, 0, 0};
    const double rate = 1e14 * s / (s + 256.0);
    a.forward_s = a.ForwardFlops() / rate;
    a.backward_s = 2.5 * a.ForwardFlops() / (0.5 * rate);
    m.attention.push_back(a);
  }
  for (const auto& s : kLayers) m.layers.push_back({s, 1e-3, 2e-3, 1e-3});  // times set by the test
  return m;
}

double OperatorSeconds(const GemmSample& g, const GpuProfile& gpu, Precision p) {
  Operator op;
  op.cls = OpClass::kGemm;
  op.m = double(g.m);
  op.n = double(g.n);
  op.k = double(g.k);
  op.batch = double(g.batch);
  op.flops = g.Flops();
  op.low_precision = true;
  return OperatorTime(op, gpu, p, false);
}

GpuProfile Load(const std::string& path) {
  const std::string abs = std::filesystem::absolute(path).string();
  return LoadGpuProfile(YAML::Node(abs), abs, "profile");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Precision, Bf16AndFp8SamplesFitTheirOwnKeys) {
  const Measurements m = SyntheticGpu(true);
  FittedProfile f;
  ASSERT_EQ(FitProfile(m, "gpu", f), "");
  EXPECT_EQ(f.profile_16bit, "bf16");
  // Each curve recovers its own machine (peak x max_eff is what the samples pin down).
  EXPECT_NEAR(f.peak_tflops * f.max_efficiency, 640, 1e-3);
  EXPECT_NEAR(f.k_half, 300, 1e-3);
  EXPECT_NEAR(f.gemm.peak_tflops * f.gemm.max_efficiency, 280, 1e-3);
  EXPECT_NEAR(f.gemm.k_half, 200, 1e-3);
  ASSERT_NE(f.LowPrecision("fp8"), nullptr);
  const FittedProfile::GemmCurve& fp8 = f.LowPrecision("fp8")->curve;
  ASSERT_EQ(fp8.samples, 4);
  EXPECT_NEAR(fp8.peak_tflops * fp8.max_efficiency, 1120, 1e-2);
  EXPECT_NEAR(fp8.k_half, 600, 1e-3);

  // The written profile, read back by the simulator's loader, reproduces the
  // bf16 samples at bf16 and fp16, and the fp8 samples at fp8.
  const std::string profile = TempDir("fit") + "/gpu.yaml";
  std::string report;
  ASSERT_EQ(WriteCalibratedProfile(m, profile, "gpu", 700, report), "");
  EXPECT_NE(report.find("GEMM bf16 (profile bf16/fp16 keys)"), std::string::npos) << report;
  EXPECT_NE(report.find("GEMM tf32 (the layer step's GEMMs; sidecar fitted.gemm)"), std::string::npos) << report;
  EXPECT_NE(report.find("GEMM fp8 (profile fp8 keys)"), std::string::npos) << report;
  const GpuProfile gpu = Load(profile);
  ASSERT_TRUE(gpu.SupportsFp8());
  for (const auto& g : m.gemm) {
    if (g.precision == "bf16") {
      EXPECT_NEAR(OperatorSeconds(g, gpu, Precision::kBf16), g.seconds, 1e-5 * g.seconds) << "k " << g.k;
      EXPECT_NEAR(OperatorSeconds(g, gpu, Precision::kFp16), g.seconds, 1e-5 * g.seconds) << "k " << g.k;
    } else if (g.precision == "fp8") {
      EXPECT_NEAR(OperatorSeconds(g, gpu, Precision::kFp8), g.seconds, 1e-5 * g.seconds) << "k " << g.k;
    }
  }
  // The profile says what its keys hold, and every GEMM number is calibrated.
  const std::string text = ReadFile(profile);
  EXPECT_NE(text.find("The bf16/fp16 keys hold the bf16 GEMM sweep"), std::string::npos) << text;
  EXPECT_NE(text.find("  fp8: "), std::string::npos) << text;
  std::istringstream lines(text);
  std::string line;
  int fp8_lines = 0;
  while (std::getline(lines, line)) {
    if (line.find("fp8: ") == std::string::npos || line[0] == '#') continue;
    ++fp8_lines;
    EXPECT_NE(line.find("# calibrated: synthetic 2026-01-01T00:00:00Z"), std::string::npos) << line;
  }
  EXPECT_EQ(fp8_lines, 3);  // peak, max_efficiency, k_half
  // The tf32 curve the layer step ran with is in the sidecar.
  const std::string side = ReadFile(MeasurementsPathFor(profile));
  EXPECT_NE(side.find("  profile_16bit: bf16\n"), std::string::npos) << side;
  EXPECT_NE(side.find("  gemm: {precision: tf32, "), std::string::npos) << side;
  EXPECT_NE(side.find("  gemm_fp8: {precision: fp8, "), std::string::npos) << side;
}

TEST(Precision, NoFp8SamplesNoFp8Keys) {
  const Measurements m = SyntheticGpu(false);
  const std::string profile = TempDir("bf16-only") + "/gpu.yaml";
  std::string report;
  ASSERT_EQ(WriteCalibratedProfile(m, profile, "gpu", 0, report), "");
  EXPECT_FALSE(Load(profile).SupportsFp8());
  EXPECT_EQ(report.find("fp8"), std::string::npos) << report;
}

// The lines of `text` that set `key` (not comments), e.g. "  mxfp8: ".
std::vector<std::string> KeyLines(const std::string& text, const std::string& key) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line[0] != '#' && line.find(key) != std::string::npos) out.push_back(line);
  }
  return out;
}

TEST(Precision, BlockScaledSamplesFitTheirOwnKeys) {
  // A Blackwell sweep (compute capability >= 10.0): fp8, mxfp8 and nvfp4.
  const Measurements m = SyntheticGpu(true, true);
  FittedProfile f;
  ASSERT_EQ(FitProfile(m, "gpu", f), "");
  ASSERT_EQ(f.low_precision.size(), 3u);
  EXPECT_EQ(f.low_precision[0].precision, "fp8");  // the order of kLowPrecisionFormats
  const struct {
    const char* name;
    Curve c;
  } expected[] = {{"fp8", kFp8}, {"mxfp8", kMxfp8}, {"nvfp4", kNvfp4}};
  for (const auto& x : expected) {
    ASSERT_NE(f.LowPrecision(x.name), nullptr) << x.name;
    const FittedProfile::GemmCurve& c = f.LowPrecision(x.name)->curve;
    EXPECT_EQ(c.samples, 4) << x.name;
    EXPECT_NEAR(c.peak_tflops * c.max_efficiency, x.c.peak_flops * x.c.max_eff / 1e12, 1e-2) << x.name;
    EXPECT_NEAR(c.k_half, x.c.k_half, 1e-3) << x.name;
  }

  // The written profile, read back by the simulator's loader, has the keys
  // and reproduces each format's samples when the cost model runs that precision.
  const std::string profile = TempDir("blackwell") + "/gpu.yaml";
  std::string report;
  ASSERT_EQ(WriteCalibratedProfile(m, profile, "gpu", 1000, report), "");
  EXPECT_NE(report.find("GEMM mxfp8 (profile mxfp8 keys)"), std::string::npos) << report;
  EXPECT_NE(report.find("GEMM nvfp4 (profile nvfp4 keys)"), std::string::npos) << report;
  const GpuProfile gpu = Load(profile);
  ASSERT_TRUE(gpu.Supports(Precision::kMxfp8));
  ASSERT_TRUE(gpu.Supports(Precision::kNvfp4));
  for (const auto& g : m.gemm) {
    if (g.precision == "mxfp8") {
      EXPECT_NEAR(OperatorSeconds(g, gpu, Precision::kMxfp8), g.seconds, 1e-5 * g.seconds) << "k " << g.k;
    } else if (g.precision == "nvfp4") {
      EXPECT_NEAR(OperatorSeconds(g, gpu, Precision::kNvfp4), g.seconds, 1e-5 * g.seconds) << "k " << g.k;
    } else if (g.precision == "fp8") {
      EXPECT_NEAR(OperatorSeconds(g, gpu, Precision::kFp8), g.seconds, 1e-5 * g.seconds) << "k " << g.k;
    }
  }
  // Each format's three keys (peak, max_efficiency, k_half) are calibrated
  // numbers that say what was measured.
  const std::string text = ReadFile(profile);
  for (const char* name : {"mxfp8", "nvfp4"}) {
    const std::vector<std::string> lines = KeyLines(text, std::string(name) + ": ");
    EXPECT_EQ(lines.size(), 3u) << name << "\n" << text;
    for (const auto& line : lines) {
      EXPECT_NE(line.find("# calibrated: synthetic 2026-01-01T00:00:00Z"), std::string::npos) << line;
      EXPECT_NE(line.find(name), line.rfind(name)) << "the comment names the format: " << line;
    }
  }
  EXPECT_NE(text.find("UE8M0 scale per 32 elements"), std::string::npos) << text;
  EXPECT_NE(text.find("UE4M3 scale per 16 elements"), std::string::npos) << text;
  const std::string side = ReadFile(MeasurementsPathFor(profile));
  EXPECT_NE(side.find("  gemm_mxfp8: {precision: mxfp8, "), std::string::npos) << side;
  EXPECT_NE(side.find("  gemm_nvfp4: {precision: nvfp4, "), std::string::npos) << side;
}

TEST(Precision, HopperSweepHasNoBlockScaledKeys) {
  // compute capability 9.0: the tool measures fp8 but no mxfp8/nvfp4 samples.
  const Measurements m = SyntheticGpu(true, false);
  const std::string profile = TempDir("hopper") + "/gpu.yaml";
  std::string report;
  ASSERT_EQ(WriteCalibratedProfile(m, profile, "gpu", 700, report), "");
  const GpuProfile gpu = Load(profile);
  EXPECT_TRUE(gpu.Supports(Precision::kFp8));
  EXPECT_FALSE(gpu.Supports(Precision::kMxfp8));
  EXPECT_FALSE(gpu.Supports(Precision::kNvfp4));
  const std::string text = ReadFile(profile);
  EXPECT_EQ(text.find("mxfp8"), std::string::npos) << text;
  EXPECT_EQ(text.find("nvfp4"), std::string::npos) << text;
  EXPECT_EQ(report.find("mxfp8"), std::string::npos) << report;
}

TEST(Precision, UnfittableBlockScaledSweepLeavesOnlyItsKeysOut) {
  // One nvfp4 sample (the others skipped): no nvfp4 keys, the profile and the
  // report say why, and the mxfp8 keys are unaffected.
  Measurements m = SyntheticGpu(true, true);
  int kept = 0;
  std::erase_if(m.gemm, [&](const GemmSample& g) { return g.precision == "nvfp4" && kept++ > 0; });
  const std::string profile = TempDir("one-nvfp4") + "/gpu.yaml";
  std::string report;
  ASSERT_EQ(WriteCalibratedProfile(m, profile, "gpu", 1000, report), "");
  const GpuProfile gpu = Load(profile);
  EXPECT_TRUE(gpu.Supports(Precision::kMxfp8));
  EXPECT_FALSE(gpu.Supports(Precision::kNvfp4));
  const std::string text = ReadFile(profile);
  EXPECT_NE(text.find("# nvfp4: 1 nvfp4 GEMM samples could not be fitted"), std::string::npos) << text;
  EXPECT_TRUE(KeyLines(text, "nvfp4: ").empty()) << text;
  EXPECT_NE(report.find("GEMM nvfp4: 1 samples, too few above the launch floor to fit: no nvfp4 keys"), std::string::npos)
      << report;
}

TEST(Precision, UnfittableBf16SweepIsAnError) {
  Measurements m = SyntheticGpu(false);
  int kept = 0;
  std::erase_if(m.gemm, [&](const GemmSample& g) { return g.precision == "bf16" && kept++ > 0; });
  FittedProfile f;
  EXPECT_NE(FitProfile(m, "gpu", f).find("bf16"), std::string::npos);
}

TEST(Precision, ValidationPredictsTheTf32LayerStepFromTheSidecar) {
  Measurements m = SyntheticGpu(true);
  const std::string dir = TempDir("validate");
  const std::string profile = dir + "/gpu.yaml";
  std::string report;
  ASSERT_EQ(WriteCalibratedProfile(m, profile, "gpu", 0, report), "");
  // A machine whose layer step follows the workload model exactly with the
  // tf32 curve: the measured steps are what the model predicts with it. (The
  // fit does not use layer steps, so rewriting with them changes no number.)
  GpuProfile tf32 = Load(profile);
  for (const char* k : {"bf16", "fp16"}) {
    tf32.peak_flops[k] = kTf32.peak_flops;
    tf32.matmul_max_eff[k] = kTf32.max_eff;
    tf32.matmul_k_half[k] = kTf32.k_half;
  }
  for (auto& l : m.layers) {
    const LayerPrediction p = PredictLayerStep(l.shape, tf32);
    l.forward_s = p.forward_s;
    l.backward_s = p.backward_s;
  }
  ASSERT_EQ(WriteCalibratedProfile(m, profile, "gpu", 0, report), "");
  auto rep = ValidateProfile(profile);
  ASSERT_TRUE(rep) << rep.error().ToString();
  ASSERT_EQ(rep->cases.size(), 2u);
  EXPECT_LT(rep->max_abs_error, 1e-4);
  EXPECT_NE(rep->cases[0].source.find("sidecar's tf32 curve"), std::string::npos) << rep->cases[0].source;
  // The profile's own (bf16) keys would predict a faster step: the sidecar's curve matters here.
  const GpuProfile bf16 = Load(profile);
  EXPECT_LT(PredictLayerStep(kLayers[0], bf16).step_s(), 0.9 * (m.layers[0].forward_s + m.layers[0].backward_s));

  // The sidecar without the tf32 curve: a located one-line error.
  const std::string sidecar = MeasurementsPathFor(profile);
  std::string side = ReadFile(sidecar);
  const size_t at = side.find("  gemm: {precision: tf32");
  ASSERT_NE(at, std::string::npos);
  side.erase(at, side.find('\n', at) + 1 - at);
  std::ofstream(sidecar) << side;
  auto missing = ValidateProfile(profile);
  ASSERT_FALSE(missing);
  const std::string e = missing.error().ToString();
  EXPECT_NE(e.find(sidecar + ":"), std::string::npos) << e;
  EXPECT_NE(e.find("fitted.gemm"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  // A curve in the wrong precision is refused too.
  std::string wrong = ReadFile(sidecar);
  const size_t fitted = wrong.find("fitted:\n");
  ASSERT_NE(fitted, std::string::npos);
  wrong.insert(fitted + 8, "  gemm: {precision: bf16, peak_tflops: 800, max_efficiency: 0.8, k_half: 300}\n");
  std::ofstream(sidecar) << wrong;
  auto wrong_precision = ValidateProfile(profile);
  ASSERT_FALSE(wrong_precision);
  EXPECT_NE(wrong_precision.error().ToString().find("fitted.gemm.precision"), std::string::npos)
      << wrong_precision.error().ToString();
  // No sidecar at all.
  std::filesystem::remove(sidecar);
  auto no_sidecar = ValidateProfile(profile);
  ASSERT_FALSE(no_sidecar);
  EXPECT_NE(no_sidecar.error().ToString().find("GEMM curve they ran with"), std::string::npos);
}

TEST(Precision, CpuProfilesKeepTheirFp32Keys) {
  // No bf16 samples (the CPU backend): the 16-bit keys hold the fp32 curve and
  // validation leaves the profile as it is.
  Measurements m = SyntheticGpu(false);
  m.backend = "cpu";
  m.dtype = "fp32";
  std::erase_if(m.gemm, [](const GemmSample& g) { return g.precision == "bf16"; });
  for (auto& g : m.gemm) g.precision = "fp32";
  const std::string profile = TempDir("cpu") + "/cpu.yaml";
  std::string report;
  ASSERT_EQ(WriteCalibratedProfile(m, profile, "cpu", 0, report), "");
  EXPECT_NE(ReadFile(profile).find("the bf16/fp16 keys hold the fp32 measurements"), std::string::npos);
  EXPECT_NE(ReadFile(MeasurementsPathFor(profile)).find("  profile_16bit: fp32\n"), std::string::npos);
  GpuProfile gpu = Load(profile);
  const double before = gpu.PeakFlops(Precision::kBf16);
  auto used = UseLayerGemmCurve(MeasurementsPathFor(profile), "fp32", gpu);
  ASSERT_TRUE(used) << used.error().ToString();
  EXPECT_FALSE(*used);
  EXPECT_EQ(gpu.PeakFlops(Precision::kBf16), before);
  EXPECT_NEAR(before, kTf32.peak_flops * kTf32.max_eff / gpu.MatmulMaxEfficiency(Precision::kBf16), 1e-5 * before);
}

// fp8 measured both ways (Hopper): the curve is the fast-accumulating
// samples' (the forward's), and the split-accumulating ones (the backward's)
// give the profile's split_accumulator_efficiency, which the simulator reads
// back. The measurements keep the mode through their text form; a 16-bit
// sample cannot claim it.
TEST(Precision, SplitAccumulatingFp8SamplesGiveTheirOwnRatio) {
  Measurements m = SyntheticGpu(true);
  const size_t n = m.gemm.size();
  for (size_t i = 0; i < n; ++i) {
    if (m.gemm[i].precision != "fp8") continue;
    GemmSample split = m.gemm[i];
    split.split_accumulator = true;
    split.seconds = m.gemm[i].seconds / 0.85;
    m.gemm.push_back(split);
  }
  FittedProfile f;
  ASSERT_EQ(FitProfile(m, "gpu", f), "");
  const FittedProfile::LowPrecisionFit* fp8 = f.LowPrecision("fp8");
  ASSERT_NE(fp8, nullptr);
  EXPECT_EQ(fp8->measured, 4);
  EXPECT_NEAR(fp8->curve.peak_tflops * fp8->curve.max_efficiency, 1120, 1e-2);  // the split samples stay out of the curve
  EXPECT_NEAR(fp8->curve.k_half, 600, 1e-3);
  EXPECT_NEAR(fp8->split_accumulator_efficiency, 0.85, 1e-9);
  const std::string profile = TempDir("split") + "/gpu.yaml";
  std::string report;
  ASSERT_EQ(WriteCalibratedProfile(m, profile, "gpu", 700, report), "");
  EXPECT_NE(report.find("GEMM fp8 split accumulator (the backward's): 0.850"), std::string::npos) << report;
  const GpuProfile gpu = Load(profile);
  EXPECT_NEAR(gpu.MatmulSplitAccumulatorEfficiency(Precision::kFp8), 0.85, 1e-6);
  EXPECT_DOUBLE_EQ(gpu.MatmulSplitAccumulatorEfficiency(Precision::kBf16), 1.0);
  // Round trip of the measurements' text.
  const std::string path = TempDir("split") + "/m.yaml";
  std::ofstream(path) << MeasurementsYaml(m);
  auto back = LoadMeasurements(path);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  int split = 0;
  for (const auto& g : back->gemm) split += g.split_accumulator;
  EXPECT_EQ(split, 4);
  std::string text = MeasurementsYaml(m);
  const std::string bf16 = "precision: bf16, ";
  text.replace(text.find(bf16), bf16.size(), "precision: bf16, accumulator: split, ");
  std::ofstream(path) << text;
  auto bad = LoadMeasurements(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().ToString().find("accumulator"), std::string::npos) << bad.error().ToString();
}

}  // namespace
}  // namespace trainsim::calib
