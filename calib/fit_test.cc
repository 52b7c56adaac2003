#include "calib/fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "calib/layer_prediction.h"
#include "calib/plan.h"
#include "calib/thread_collectives.h"
#include "models/workload.h"
#include "sim/cost/gpu_cost_model.h"

namespace trainsim::calib {
namespace {

// A memory-bound kernel's fixed time on the model machine.
constexpr double kMemoryKernelS = 3e-6;

// Measurements that a machine exactly following the cost model would produce.
Measurements Synthetic(double peak, double max_eff, double k_half, double bw, double mem_eff) {
  Measurements m;
  m.backend = "cpu";
  m.host = "synthetic";
  m.date = "2026-01-01T00:00:00Z";
  m.device = "model";
  m.memory_bytes = 8e9;
  m.launch_s = 1e-9;
  for (long k : {16L, 64L, 256L, 1024L}) {
    GemmSample g{512, 256, k, 1, "nn", "fp32", 0};
    g.seconds = g.Flops() / (peak * max_eff * k / (k + k_half));
    m.gemm.push_back(g);
  }
  for (double bytes : {1e8, 1e6, 1e7}) m.memory.push_back({"copy", bytes, kMemoryKernelS + bytes / bw});
  m.memory.push_back({"add", 1e6, kMemoryKernelS + 1e6 / (bw * mem_eff)});
  m.memory.push_back({"softmax_fwd", 3e6, kMemoryKernelS + 3e6 / (bw * mem_eff)});
  for (int s : {128, 512}) {
    AttentionSample a{1, 4, 4, s, 64, 0, 0};
    const double rate = 2e11 * s / (s + 256.0);
    a.forward_s = a.ForwardFlops() / rate;
    a.backward_s = 2.5 * a.ForwardFlops() / (0.5 * rate);
    m.attention.push_back(a);
  }
  for (double bytes : {1e4, 1e5, 1e6, 1e7}) m.collectives.push_back({"all-gather", "intra-node", 2, bytes, 5e-6 + bytes / 4e9});
  m.storage.push_back({2, 1e8, {0.5, 1.0}, {0.25, 0.2}});
  return m;
}

TEST(Fit, RecoversTheParametersOfAModelMachine) {
  const Measurements m = Synthetic(1e11, 0.8, 96, 2e10, 0.6);
  FittedProfile f;
  ASSERT_EQ(FitProfile(m, "t", f), "");
  EXPECT_NEAR(f.peak_tflops * f.max_efficiency, 0.08, 1e-4);
  EXPECT_NEAR(f.k_half, 96, 0.5);
  EXPECT_LT(f.gemm_fit_rms_error, 1e-6);
  EXPECT_NEAR(f.hbm_tb_per_s, 0.02, 1e-9);
  EXPECT_NEAR(f.memory_bound_efficiency, 0.6, 1e-6);
  EXPECT_NEAR(f.memory_kernel_us, kMemoryKernelS * 1e6, 1e-4);
  EXPECT_NEAR(f.attention_fwd_tflops, 0.2, 1e-6);
  EXPECT_NEAR(f.attention_half_seq, 256, 0.5);
  EXPECT_NEAR(f.attention_bwd_fwd_ratio, 0.5, 1e-9);
  ASSERT_EQ(f.collectives.size(), 1u);
  EXPECT_NEAR(f.collectives[0].fit.alpha_s, 5e-6, 1e-8);
  EXPECT_NEAR(f.collectives[0].fit.bytes_per_s, 4e9, 4e6);
  ASSERT_EQ(f.storage.size(), 1u);
  EXPECT_DOUBLE_EQ(f.storage[0].write_bytes_per_s, 2e8);  // 2 x 100 MB over the slower client's 1 s
  EXPECT_DOUBLE_EQ(f.storage[0].read_bytes_per_s, 2e8 / 0.25);
  EXPECT_NEAR(f.storage[0].write_bytes_per_s_per_client, (2e8 + 1e8) / 2, 1);
}

// Attention rates whose curve would run past five times the sweep's fastest
// GEMM at long sequences (noise on a loaded CPU: the profile refused the
// asymptote as ten times the peak) give the rates' mean, no curve.
TEST(Fit, AnAttentionCurveFasterThanTheGemmsIsNoCurve) {
  Measurements m = Synthetic(1e11, 0.8, 96, 2e10, 0.6);
  double mean = 0;
  for (AttentionSample& a : m.attention) {
    const double rate = 1e13 * a.seq_len / (a.seq_len + 1e5);  // 10 TFLOP/s at infinite length, 0.013-0.05 measured
    a.forward_s = a.ForwardFlops() / rate;
    a.backward_s = 2.5 * a.ForwardFlops() / (0.5 * rate);
    mean += rate / 1e12 / double(m.attention.size());
  }
  FittedProfile f;
  ASSERT_EQ(FitProfile(m, "t", f), "");
  EXPECT_NEAR(f.attention_fwd_tflops, mean, 1e-9);
  EXPECT_EQ(f.attention_half_seq, 1);
}

// A GPU's L2 holds a copy whose source and destination fit in it, and serves
// it faster than memory: such copies leave the bandwidth to the larger ones
// (the smallest keeps the fixed time) once the file records the cache. An
// H200's 4M-element copy ran at 1.1x its HBM copy rate and the line through it
// read 5.4 TB/s, over the datasheet's 4.8.
TEST(Fit, CopiesThatFitInTheCacheDoNotSetTheBandwidth) {
  Measurements m = Synthetic(1e11, 0.8, 96, 2e10, 0.6);
  // float32 storage (dtype fp32): a copy's footprint is twice its workload bytes.
  m.memory.push_back({"copy", 2e7, kMemoryKernelS + 2e7 / 4e10});  // 40 MB in a 64 MB cache at twice the rate
  FittedProfile blind, aware;
  ASSERT_EQ(FitProfile(m, "t", blind), "");
  EXPECT_GT(blind.hbm_tb_per_s, 0.021);  // the cached copy bends the line
  m.cache_bytes = 64e6;
  ASSERT_EQ(FitProfile(m, "t", aware), "");
  EXPECT_NEAR(aware.hbm_tb_per_s, 0.02, 1e-9);
  EXPECT_NEAR(aware.memory_kernel_us, kMemoryKernelS * 1e6, 1e-4);
  EXPECT_NEAR(aware.memory_bound_efficiency, 0.6, 1e-6);
  // With every copy inside the cache the memory's rate was not measured:
  // the cache's would stand in for it, so the fit refuses.
  m.cache_bytes = 1e12;
  FittedProfile all_cached;
  EXPECT_NE(FitProfile(m, "t", all_cached).find("fits in the device's cache"), std::string::npos);
}

// A curve's two parameters need two distinct points: GEMMs of one K (the
// same shape in two layouts) and collectives of one size are refused, not
// fitted to an arbitrary bend or latency.
TEST(Fit, OnePointOfACurveIsNotAFit) {
  Measurements m = Synthetic(1e11, 0.8, 96, 2e10, 0.6);
  m.gemm.resize(1);
  m.gemm.push_back(m.gemm[0]);
  m.gemm.back().layout = "nt";
  m.gemm.back().seconds *= 1.05;
  FittedProfile f;
  EXPECT_NE(FitProfile(m, "t", f).find("cannot fit the GEMM efficiency curve"), std::string::npos);
  AlphaBeta ab;
  EXPECT_FALSE(FitAlphaBeta({{"allreduce", "node", 8, 1e6, 1e-4}, {"allreduce", "node", 8, 1e6, 1.2e-4}}, ab));
  EXPECT_TRUE(FitAlphaBeta({{"allreduce", "node", 8, 1e6, 1e-4}, {"allreduce", "node", 8, 1e8, 2e-3}}, ab));
}

// A bf16 GEMM that reading its operands dominates (a side of 8: 8 FLOPs per
// byte, under this machine's ridge of 225) runs on the memory roofline, as
// the cost model charges it, and leaves the profile's compute curve alone;
// the layer step's own curve keeps every sample (its unfused attention runs
// such GEMMs).
TEST(Fit, MemoryBoundGemmsLeaveTheProfilesCurveAlone) {
  Measurements m = Synthetic(1e11, 0.8, 96, 2e10, 0.6);  // device reads 4e10 B/s (float32: twice the 2-byte rate)
  for (long k : {64L, 256L, 1024L, 4096L}) {
    GemmSample g{2048, 2048, k, 1, "nn", "bf16", 0};
    g.seconds = g.Flops() / (1e13 * 0.9 * k / (k + 100.0));
    m.gemm.push_back(g);
  }
  GemmSample thin{2048, 8, 4096, 1, "nn", "bf16", 0};
  thin.seconds = 2.0 * (2048.0 * 4096 + 4096.0 * 8) / 4e10;  // its operands at the device's rate
  m.gemm.push_back(thin);
  m.gemm.push_back({2048, 8, 4096, 1, "nn", "fp32", thin.seconds * 2});
  FittedProfile f;
  ASSERT_EQ(FitProfile(m, "t", f), "");
  EXPECT_EQ(f.gemm_bf16.samples, 4);
  EXPECT_NEAR(f.gemm_bf16.peak_tflops * f.gemm_bf16.max_efficiency, 9, 1e-6);
  EXPECT_NEAR(f.gemm_bf16.k_half, 100, 1e-3);
  EXPECT_LT(f.gemm_bf16.rms_error, 1e-9);
  EXPECT_EQ(f.gemm.samples, 5);  // the fp32 layer-step curve: the thin GEMM too
}

// A GEMM run back to back until the power cap: its rate over the curve's for
// the same GEMM is the curve's sustained fraction (whatever the layout; a
// precision without a curve gets none).
TEST(Fit, ASustainedRunGivesItsCurvesSustainedFraction) {
  Measurements m = Synthetic(1e11, 0.8, 96, 2e12, 0.6);
  for (long k : {64L, 256L, 1024L, 4096L}) {
    GemmSample g{2048, 2048, k, 1, "nn", "bf16", 0};
    g.seconds = g.Flops() / (1e13 * 0.9 * k / (k + 100.0));
    m.gemm.push_back(g);
  }
  const GemmSample& big = m.gemm.back();
  m.sustained.push_back({{big.m, big.n, big.k, 1, "nn", "bf16", big.seconds / 0.84}, 15});
  m.sustained.push_back({{big.m, big.n, big.k, 1, "nt", "fp8", big.seconds}, 15});  // no fp8 curve
  FittedProfile f;
  ASSERT_EQ(FitProfile(m, "t", f), "");
  EXPECT_NEAR(f.gemm_bf16.sustained_fraction, 0.84, 1e-9);
  EXPECT_EQ(f.gemm.sustained_fraction, 0);
  EXPECT_EQ(f.LowPrecision("fp8"), nullptr);
  m.sustained.resize(1);
  m.sustained[0].gemm.seconds = big.seconds / 2;  // faster back to back than the curve: a timing fault, capped
  ASSERT_EQ(FitProfile(m, "t", f), "");
  EXPECT_EQ(f.gemm_bf16.sustained_fraction, 1.0);
  m.sustained[0].gemm.seconds = big.seconds * 15000;  // a disturbed run: not taken (it wrote 6.7e-05)
  ASSERT_EQ(FitProfile(m, "t", f), "");
  EXPECT_EQ(f.gemm_bf16.sustained_fraction, 0);
}

// Where the largest copy beats the line's slope (noise), its rate is the
// bandwidth and the smallest copy's time beyond its bytes the fixed time,
// not 0.
TEST(Fit, ACopyFasterThanTheLineKeepsTheFixedTime) {
  Measurements m = Synthetic(1e11, 0.8, 96, 2e10, 0.6);
  std::erase_if(m.memory, [](const MemorySample& x) { return x.kernel == "copy"; });
  m.memory.push_back({"copy", 1e5, 4e-6 + 1e5 / 2e10});
  m.memory.push_back({"copy", 1e7, 4e-6 + 1e7 / 2e10});
  m.memory.push_back({"copy", 1e9, 1e9 / 2.001e10});  // no fixed time at all: faster than any line through the others
  FittedProfile f;
  ASSERT_EQ(FitProfile(m, "t", f), "");
  EXPECT_NEAR(f.hbm_tb_per_s, 0.02001, 1e-9);
  EXPECT_NEAR(f.memory_kernel_us, (4e-6 + 1e5 / 2e10 - 1e5 / 2.001e10) * 1e6, 1e-6);
}

TEST(Fit, RefusesMeasurementsThatCannotSupportAFit) {
  Measurements m = Synthetic(1e11, 0.8, 96, 2e10, 0.6);
  FittedProfile f;
  Measurements no_copy = m;
  std::erase_if(no_copy.memory, [](const MemorySample& x) { return x.kernel == "copy"; });
  EXPECT_NE(FitProfile(no_copy, "t", f).find("copy"), std::string::npos);
  Measurements one_gemm = m;
  one_gemm.gemm.resize(1);
  EXPECT_NE(FitProfile(one_gemm, "t", f).find("GEMM"), std::string::npos);
  Measurements no_attention = m;
  no_attention.attention.clear();
  EXPECT_NE(FitProfile(no_attention, "t", f).find("attention"), std::string::npos);
}

TEST(Fit, ProfileTextMarksEveryNumberCalibrated) {
  FittedProfile f;
  const Measurements m = Synthetic(1e11, 0.8, 96, 2e10, 0.6);
  ASSERT_EQ(FitProfile(m, "t", f), "");
  const std::string y = ProfileYaml(f, m);
  size_t numbers = 0, calibrated = 0, pos = 0;
  while ((pos = y.find('\n', pos)) != std::string::npos) {
    const size_t start = y.rfind('\n', pos - 1) + 1;
    const std::string line = y.substr(start, pos - start);
    ++pos;
    if (line.empty() || line[0] == '#' || line.back() == ':' || line.rfind("name:", 0) == 0 || line.rfind("measured_on:", 0) == 0) continue;
    ++numbers;
    calibrated += line.find("# calibrated: synthetic 2026-01-01T00:00:00Z") != std::string::npos;
  }
  EXPECT_GE(numbers, 12u);
  // Only tdp and the tile sizes are not measured; they say so.
  EXPECT_EQ(numbers - calibrated, 3u);
}

// One sequence length fits no attention curve: its half_seq is written as not
// measured, not as a calibrated 1.
TEST(Fit, OneSequenceLengthLeavesHalfSeqNotMeasured) {
  Measurements m = Synthetic(1e11, 0.8, 96, 2e10, 0.6);
  m.attention.resize(1);
  FittedProfile f;
  ASSERT_EQ(FitProfile(m, "t", f), "");
  EXPECT_FALSE(f.attention_curve);
  EXPECT_NE(ProfileYaml(f, m).find("half_seq: 1  # not measured: one sequence length"), std::string::npos) << ProfileYaml(f, m);
}

TEST(Fit, PredictionOfAModelMachineUsesTheFittedNumbers) {
  // A profile fitted to the model machine predicts GEMMs as the model does.
  const Measurements m = Synthetic(1e11, 0.8, 96, 2e10, 0.6);
  FittedProfile f;
  ASSERT_EQ(FitProfile(m, "t", f), "");
  GpuProfile gpu;
  gpu.sms = 1;
  gpu.peak_flops["bf16"] = f.peak_tflops * 1e12;
  gpu.matmul_max_eff["bf16"] = f.max_efficiency;
  gpu.matmul_k_half["bf16"] = f.k_half;
  Operator op;
  op.cls = OpClass::kGemm;
  op.m = 512;
  op.n = 256;
  op.k = 64;
  op.flops = 2.0 * 512 * 256 * 64;
  gpu.hbm_bytes_per_s = 1e15;
  EXPECT_NEAR(OperatorTime(op, gpu, Precision::kBf16), m.gemm[1].seconds, 1e-3 * m.gemm[1].seconds);
  // And a memory-bound kernel: its fixed time plus its bytes at the share of the bandwidth.
  gpu.hbm_bytes_per_s = f.hbm_tb_per_s * 1e12;
  gpu.memory_bound_efficiency = f.memory_bound_efficiency;
  gpu.memory_kernel_fixed_s = f.memory_kernel_us * 1e-6;
  Operator add;
  add.cls = OpClass::kMemoryBound;
  add.bytes = 1e6;
  const MemorySample& measured = *std::find_if(m.memory.begin(), m.memory.end(), [](const MemorySample& x) { return x.kernel == "add"; });
  EXPECT_NEAR(OperatorTime(add, gpu, Precision::kBf16), measured.seconds, 1e-6 * measured.seconds);
}

}  // namespace
}  // namespace trainsim::calib
