#include "calib/fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "calib/low_precision_formats.h"
#include "calib/storage_bench.h"
#include "calib/text_format.h"
#include "sim/cost/gpu_cost_model.h"

namespace trainsim::calib {

// The least sustained-over-curve rate a sustained run is taken at (fit.h).
constexpr double kLeastSustainedFraction = 0.3;
namespace {

// The cost model's SM fill (sim/cost/gpu_cost_model.h) with the tile the
// written profile names: the fitted curve is what is left of each rate.
double WaveEfficiency(const GemmSample& g, int sms) {
  return SmWaveFill(std::ceil(g.m / kFitTile) * std::ceil(g.n / kFitTile) * g.batch, sms);
}

// What a GEMM sample reads: its operands in their precision. (Writing the
// result is the epilogue, which the curve's k_half already charges.)
double GemmOperandBytes(const GemmSample& g) {
  return double(g.batch) * ElementBytes(g.precision) * (double(g.m) * g.k + double(g.k) * g.n);
}

// Fits 1/rate = a + b/x by least squares on relative error; rows carry a weight w (rate multiplier).
bool FitInverse(const std::vector<double>& rate, const std::vector<double>& x, double& a, double& b, double& rms) {
  const size_t n = rate.size();
  if (n < 2) return false;
  // Two parameters need two distinct x: samples at one x (the same GEMM in
  // two layouts) leave the curve's bend undetermined.
  if (std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; })) return false;
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd y = Eigen::VectorXd::Ones(n);
  for (size_t i = 0; i < n; ++i) {
    A(i, 0) = rate[i];
    A(i, 1) = rate[i] / x[i];
  }
  Eigen::Vector2d s = A.colPivHouseholderQr().solve(y);
  a = s(0);
  b = s(1);
  if (!(a > 0)) return false;
  if (b < 0) {  // no measurable small-size penalty: a constant rate
    b = 0;
    a = A.col(0).sum() / A.col(0).squaredNorm();
  }
  rms = std::sqrt((A * Eigen::Vector2d(a, b) - y).squaredNorm() / double(n));
  return true;
}

// The GEMM curve of one precision, from the samples dominated neither by the
// launch floor nor by reading their operands: a GEMM whose operands
// (GemmOperandBytes) take over half its time at `device_bytes_per_s` is on the
// cost model's memory roofline, not its compute curve (the unfused
// attention's batched GEMMs with a head-dim side of 128: on an H200 they ran
// at 0.55-0.75 of the curve through the projections and bent it). 0: no
// bandwidth known, every sample counts.
bool FitGemm(const Measurements& m, const std::string& precision, int sms, double device_bytes_per_s,
             FittedProfile::GemmCurve& out) {
  out = FittedProfile::GemmCurve{};
  std::vector<double> rate, kk;
  double best = 0;
  for (const auto& g : m.gemm) {
    if (g.precision != precision || g.split_accumulator) continue;  // the curve is the fast-accumulating one
    if (device_bytes_per_s > 0 && GemmOperandBytes(g) / device_bytes_per_s > 0.5 * g.seconds) continue;
    // The peak is the best rate the GPU reached: the wave correction would
    // put a GEMM of a few tiles (a router's, a side of 128 experts) far above
    // the datasheet, where cuBLAS splits K instead.
    best = std::max(best, g.Flops() / g.seconds);
    const double r = g.Flops() / g.seconds / WaveEfficiency(g, sms);
    if (g.seconds < 3 * m.launch_s) continue;
    rate.push_back(r);
    kk.push_back(double(g.k));
  }
  double a = 0, b = 0;
  if (!FitInverse(rate, kk, a, b, out.rms_error)) return false;
  const double asymptote = 1.0 / a;
  const double peak = std::max(best, asymptote);
  out.peak_tflops = peak / 1e12;
  out.max_efficiency = std::min(1.0, asymptote / peak);
  out.k_half = b / a;
  out.samples = int(rate.size());
  return true;
}

int CountSamples(const Measurements& m, const std::string& precision) {
  int n = 0;
  for (const auto& g : m.gemm) n += g.precision == precision && !g.split_accumulator;
  return n;
}

// The split-accumulating rate against the fast one, the median over the
// shapes measured both ways above the launch floor; 0 when none was.
double FitSplitAccumulator(const Measurements& m, const std::string& precision) {
  std::vector<double> ratios;
  for (const auto& split : m.gemm) {
    if (!split.split_accumulator || split.precision != precision || split.seconds < 3 * m.launch_s) continue;
    for (const auto& fast : m.gemm) {
      if (fast.split_accumulator || fast.precision != precision || fast.m != split.m || fast.n != split.n || fast.k != split.k ||
          fast.batch != split.batch || fast.layout != split.layout) {
        continue;
      }
      ratios.push_back(fast.seconds / split.seconds);
      break;
    }
  }
  if (ratios.empty()) return 0;
  std::sort(ratios.begin(), ratios.end());
  const size_t h = ratios.size() / 2;
  return ratios.size() % 2 ? ratios[h] : (ratios[h - 1] + ratios[h]) / 2;
}

// Memory bandwidth, a kernel's fixed time and the memory-bound kernels' share
// of the bandwidth, into `f`, as the cost model charges them: a kernel takes
// memory_kernel_fixed + bytes / (bandwidth x memory_bound_efficiency); "" or
// why not. The copy sweep over sizes gives the bandwidth (its slope) and the
// fixed time (its intercept); one size gives the bandwidth alone. Copies that
// fit in the cache are left out when larger ones were measured: they run at
// the cache's rate (an H200's 17 MB copy beat its HBM's datasheet rate and
// bent the line to 5.4 TB/s), and the tensors of a training step do not fit;
// the smallest copy stays, since its time is the fixed time whatever holds
// its bytes.
std::string FitMemory(const Measurements& m, FittedProfile& f) {
  double kern_bytes = 0, kern_s = 0;
  int kernels = 0;
  std::vector<CollectiveSample> copies;
  const MemorySample* smallest_cached = nullptr;
  for (const auto& x : m.memory) {
    if (x.kernel == "copy") {
      // The copy's source and destination as the device held them, in its data type.
      if (m.cache_bytes > 0 && DeviceBytes(x.bytes, m.dtype) <= m.cache_bytes) {
        if (!smallest_cached || x.bytes < smallest_cached->bytes) smallest_cached = &x;
      } else {
        copies.push_back({"copy", "device", 1, x.bytes, x.seconds});
      }
    } else {
      kern_bytes += x.bytes;
      kern_s += x.seconds;
      ++kernels;
    }
  }
  if (smallest_cached) {
    if (copies.empty()) {
      // Every copy fits in the cache: their rate is the cache's, not the
      // memory's, and a profile fitted to it would halve every memory-bound time.
      return "every 'copy' measurement fits in the device's cache (" + std::to_string(std::llround(m.cache_bytes)) +
             " bytes): measure a copy larger than the cache to fit the memory bandwidth";
    } else {
      copies.push_back({"copy", "device", 1, smallest_cached->bytes, smallest_cached->seconds});
    }
  }
  double copy_best = 0;
  for (const auto& c : copies) copy_best = std::max(copy_best, c.bytes / c.seconds);
  if (copy_best <= 0) return "no streaming ('copy') measurement: cannot fit the memory bandwidth";
  if (kern_s <= 0) return "no memory-bound kernel measurements: cannot fit memory_bound_efficiency";
  AlphaBeta copy_fit;
  double bandwidth = copy_best;
  if (FitAlphaBeta(copies, copy_fit) && copy_fit.bytes_per_s >= copy_best) {
    bandwidth = copy_fit.bytes_per_s;
    f.memory_kernel_us = copy_fit.alpha_s * 1e6;
    f.memory_kernel_fitted = true;
  } else {
    // The line's slope under the best copy's rate (noise: an H200's largest
    // copy beat it by 0.1%): that rate is the bandwidth, and the smallest
    // copy's time beyond its bytes at it the fixed time (0 with one size).
    const auto smallest = std::min_element(copies.begin(), copies.end(),
                                           [](const CollectiveSample& a, const CollectiveSample& b) { return a.bytes < b.bytes; });
    f.memory_kernel_us = std::max(0.0, smallest->seconds - smallest->bytes / bandwidth) * 1e6;
  }
  // Kernels shorter than their fixed time (a noisy intercept) keep the share
  // their whole time gives.
  const double streaming_s = kern_s - kernels * f.memory_kernel_us * 1e-6;
  f.hbm_tb_per_s = bandwidth / 1e12;
  f.memory_bound_efficiency = std::min(1.0, kern_bytes / (streaming_s > 0 ? streaming_s : kern_s) / bandwidth);
  return "";
}

}  // namespace

double DeviceBytes(double two_byte_equivalents, const std::string& dtype) {
  return two_byte_equivalents * ElementBytes(dtype) / 2;
}

double ElementBytes(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "tf32") return 4;
  if (dtype == "bf16" || dtype == "fp16") return 2;
  const LowPrecisionFormat* f = FindLowPrecisionFormat(dtype);
  return f ? f->OperandBytes() : 2;
}

std::string FitProfile(const Measurements& m, const std::string& name, FittedProfile& f) {
  f = FittedProfile{};
  f.name = name;
  f.memory_gib = m.memory_bytes / (1024.0 * 1024.0 * 1024.0);
  f.sms = std::max(1, m.compute_units);
  // The memory first: the profile's GEMM curves leave out the samples that
  // reading their operands dominates (FitGemm).
  if (std::string e = FitMemory(m, f); !e.empty()) return e;
  const double device_bytes_per_s = DeviceBytes(f.hbm_tb_per_s * 1e12, m.dtype);
  // GEMM efficiency curve in the layer step's data type: validation predicts
  // the measured step with it. Every sample counts here, the memory-bound ones
  // too: the step's unfused attention runs exactly those batched GEMMs, where
  // training runs fused attention and keeps only the projections' GEMMs, the
  // compute-bound ones the profile's keys below are fitted to.
  if (!FitGemm(m, m.dtype, f.sms, 0, f.gemm)) {
    return "cannot fit the GEMM efficiency curve: need at least two " + m.dtype + " GEMM shapes above the launch floor";
  }
  // The profile's 16-bit keys: the bf16 sweep where there is one (GPU), so that
  // the profile predicts bf16 training; else the layer step's type stands in.
  const FittedProfile::GemmCurve* sixteen = &f.gemm;
  f.profile_16bit = m.dtype;
  if (m.dtype != "bf16" && CountSamples(m, "bf16") > 0) {
    if (!FitGemm(m, "bf16", f.sms, device_bytes_per_s, f.gemm_bf16)) {
      return "cannot fit the bf16 GEMM efficiency curve: need at least two bf16 GEMM shapes above the launch floor";
    }
    sixteen = &f.gemm_bf16;
    f.profile_16bit = "bf16";
  }
  f.peak_tflops = sixteen->peak_tflops;
  f.max_efficiency = sixteen->max_efficiency;
  f.k_half = sixteen->k_half;
  f.gemm_fit_rms_error = sixteen->rms_error;
  // The low-precision formats the device has; optional: a profile without a
  // format's keys is a GPU without it (fp8 on A100, mxfp8/nvfp4 on Hopper), and
  // the cost model treats it so.
  for (const auto& lf : kLowPrecisionFormats) {
    FittedProfile::LowPrecisionFit l;
    l.precision = lf.name;
    l.measured = CountSamples(m, lf.name);
    if (l.measured == 0) continue;
    FitGemm(m, lf.name, f.sms, device_bytes_per_s, l.curve);
    l.split_accumulator_efficiency = FitSplitAccumulator(m, lf.name);
    f.low_precision.push_back(l);
  }
  // The sustained runs against their curve's time for the same GEMM: the
  // curve is what the fraction derates, and the sweep's own sample of a long
  // GEMM already ran partly throttled (an H200's LM-head GEMM: 0.89 of its
  // sample, 0.88 of the curve).
  for (const auto& s : m.sustained) {
    const GemmSample& g = s.gemm;
    FittedProfile::GemmCurve* c = g.precision == "bf16" ? &f.gemm_bf16 : nullptr;
    for (auto& l : f.low_precision) {
      if (l.precision == g.precision) c = &l.curve;
    }
    if (c == nullptr || c->samples == 0) continue;
    const double curve_s = g.Flops() / (c->peak_tflops * 1e12 * c->max_efficiency * WaveEfficiency(g, f.sms) *
                                        double(g.k) / (double(g.k) + c->k_half));
    // Power capping derates a GEMM by tens of percent, not to a third: a run
    // that slow was disturbed (another job, a throttled clock) and is not taken.
    const double fraction = std::min(1.0, curve_s / g.seconds);
    if (fraction >= kLeastSustainedFraction) c->sustained_fraction = fraction;
  }
  f.min_kernel_us = m.launch_s * 1e6;
  // Attention curve over sequence length.
  std::vector<double> arate, aseq;
  double ratio_sum = 0;
  for (const auto& at : m.attention) {
    const double fwd = at.ForwardFlops() / at.forward_s;
    const double bwd = 2.5 * at.ForwardFlops() / at.backward_s;
    arate.push_back(fwd);
    aseq.push_back(at.seq_len);
    ratio_sum += bwd / fwd;
  }
  if (m.attention.empty()) return "no attention measurements: cannot fit the attention parameters";
  double aa = 0, ab = 0, arms = 0;
  std::vector<double> distinct = aseq;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  // A curve whose rate at long sequences is past five times the sweep's fastest
  // GEMM is no curve: noise (a loaded CPU flattened it through three points,
  // to ten times the peak, which a profile refuses); attention is matmuls
  // and a softmax, never faster than the GEMMs. Then the rates' mean stands.
  if (distinct.size() >= 2 && FitInverse(arate, aseq, aa, ab, arms) && aa > 0 && 1.0 / aa <= 5 * f.peak_tflops * 1e12) {
    f.attention_fwd_tflops = 1.0 / aa / 1e12;
    f.attention_half_seq = std::max(1.0, ab / aa);
    f.attention_curve = true;
  } else {  // one sequence length: the measured rate, no curve
    double mean = 0;
    for (double r : arate) mean += r / arate.size();
    f.attention_fwd_tflops = mean / 1e12;
    f.attention_half_seq = 1;
  }
  // The backward's rate as measured, per FLOP of its five matmuls against the
  // forward's two: it can beat the forward's (cuDNN's backward on H200 ran
  // 1.3x), so it is written as measured; only a rate no kernel reaches is refused.
  const double ratio = ratio_sum / double(m.attention.size());
  if (!(ratio >= kLeastAttentionBwdFwdRatio && ratio <= kMostAttentionBwdFwdRatio)) {
    return "attention backward / forward rate " + std::to_string(ratio) + " is not a measurement (backward_s or forward_s wrong?)";
  }
  f.attention_bwd_fwd_ratio = ratio;
  // Collectives: alpha-beta per (op, scope, ranks).
  std::map<std::tuple<std::string, std::string, int>, std::vector<CollectiveSample>> groups;
  for (const auto& c : m.collectives) groups[{c.op, c.scope, c.ranks}].push_back(c);
  for (const auto& [key, samples] : groups) {
    FittedProfile::Collective c{std::get<0>(key), std::get<1>(key), std::get<2>(key), {}};
    if (FitAlphaBeta(samples, c.fit)) f.collectives.push_back(c);
  }
  for (const auto& s : m.storage) {
    FittedProfile::Storage st;
    st.clients = s.clients;
    st.write_bytes_per_s = AggregateWriteBytesPerS(s);
    st.read_bytes_per_s = AggregateReadBytesPerS(s);
    for (int c = 0; c < s.clients; ++c) {
      st.write_bytes_per_s_per_client += s.bytes_per_client / s.write_s[c] / s.clients;
      st.read_bytes_per_s_per_client += s.bytes_per_client / s.read_s[c] / s.clients;
    }
    f.storage.push_back(st);
  }
  return "";
}

std::string ProfileYaml(const FittedProfile& f, const Measurements& m) {
  std::ostringstream o;
  const std::string cal = "# calibrated: " + m.host + " " + m.date + " ";
  const bool cpu = m.backend == "cpu";
  const std::string dt = m.dtype;
  o << "# GPU profile written by `trainsim calibrate --backend " << m.backend << "` on " << m.device << ".\n";
  o << "# Every number below was measured on " << m.host << " at " << m.date << ", unless its comment says\n";
  o << "# otherwise (see the sidecar " << f.name << "-measurements.yaml for the raw samples and the collective\n";
  o << "# and storage fits).\n";
  const bool bf16_keys_are_bf16 = f.profile_16bit == "bf16";
  if (!bf16_keys_are_bf16) {
    o << "# The layer step ran in " << dt << ": the bf16/fp16 keys hold the " << dt << " measurements so that the\n";
    o << "# workload model (which counts 2-byte activations) predicts that step; bandwidths are therefore in\n";
    o << "# 2-byte-element equivalents (elements/s x 2), consistent with the workload's byte counts.\n";
  } else if (dt != "bf16") {
    o << "# The bf16/fp16 keys hold the bf16 GEMM sweep (bf16 in and out, fp32 accumulation); the layer step\n";
    o << "# ran in " << dt << " (float32 storage): its GEMM curve is in the sidecar (fitted.gemm), where\n";
    o << "# `trainsim validate --profile` takes it from to predict that step. Bandwidths are in 2-byte-element\n";
    o << "# equivalents (elements/s x 2), consistent with the workload's byte counts.\n";
  }
  // The low-precision formats with a fitted curve: each writes its own keys.
  std::vector<std::pair<const LowPrecisionFormat*, const FittedProfile::GemmCurve*>> low;
  for (const auto& l : f.low_precision) {
    if (l.curve.samples > 0) {
      low.push_back({FindLowPrecisionFormat(l.precision), &l.curve});
      continue;
    }
    o << "# " << l.precision << ": " << l.measured << " " << l.precision
      << " GEMM samples could not be fitted (fewer than two above the launch floor):\n";
    o << "# no " << l.precision << " keys (the GPU is treated as one without " << l.precision << ").\n";
  }
  o << "name: " << f.name << "\n";
  // A CPU's profile predicts the layer step it measured; a node that names it as its GPU is refused.
  if (cpu) o << "measured_on: cpu  # trainsim calibrate --backend cpu: for trainsim validate --profile, not a cluster's GPU\n";
  o << "memory_gib: " << Num(f.memory_gib) << "  " << cal << (cpu ? "host memory (sysconf)" : "cudaGetDeviceProperties totalGlobalMem") << "\n";
  o << "hbm_tb_per_s: " << Num(f.hbm_tb_per_s) << "  " << cal << "streaming copy sweep over the layer's tensor sizes, those that do not fit in the cache\n";
  o << "sms: " << f.sms << "  " << cal << (cpu ? "threads used by the measurements (the wave width)" : "multiProcessorCount") << "\n";
  if (f.tdp_w > 0) o << "tdp_w: " << Num(f.tdp_w) << "  # given on the command line (--tdp-w)\n";
  else o << "tdp_w: 1  # not measured: no power reading on this backend (placeholder; pass --tdp-w)\n";
  // What each 16-bit key's numbers were measured in.
  const std::string src16 = f.profile_16bit;
  auto stands_in = [&](const char* key) {
    if (src16 == key) return std::string();
    if (src16 == "bf16") return std::string(" (bf16 stands in for ") + key + ": same tensor-core rate)";
    return " (" + src16 + " stands in for " + key + ")";
  };
  auto rms = [](const FittedProfile::GemmCurve& c) {
    return " (rms " + Num(100 * c.rms_error) + "% over " + std::to_string(c.samples) + " shapes)";
  };
  const FittedProfile::GemmCurve& c16 = f.gemm_bf16.samples > 0 ? f.gemm_bf16 : f.gemm;
  o << "peak_tflops:\n";
  for (const char* k : {"bf16", "fp16"}) {
    o << "  " << k << ": " << Num(f.peak_tflops) << "  " << cal << "best " << src16 << " GEMM rate of the sweep" << stands_in(k) << "\n";
  }
  for (const auto& [lf, c] : low) {
    o << "  " << lf->name << ": " << Num(c->peak_tflops) << "  " << cal << "best " << lf->name << " GEMM rate of the sweep ("
      << lf->what << ")\n";
  }
  o << "matmul:\n";
  o << "  max_efficiency:\n";
  for (const char* k : {"bf16", "fp16"}) {
    o << "    " << k << ": " << Num(f.max_efficiency) << "  " << cal << "asymptote of the fitted " << src16 << " GEMM curve / peak"
      << rms(c16) << "\n";
  }
  for (const auto& [lf, c] : low) {
    o << "    " << lf->name << ": " << Num(c->max_efficiency) << "  " << cal << "asymptote of the fitted " << lf->name
      << " GEMM curve / peak" << rms(*c) << "\n";
  }
  o << "  tile_m: " << Num(kFitTile) << "  # the tile the fit divides the SM fill out with\n";
  o << "  tile_n: " << Num(kFitTile) << "  # the tile the fit divides the SM fill out with\n";
  o << "  k_half:\n";
  for (const char* k : {"bf16", "fp16"}) {
    o << "    " << k << ": " << Num(std::max(f.k_half, 1e-3)) << "  " << cal << "fitted " << src16
      << " GEMM curve, K at half efficiency\n";
  }
  for (const auto& [lf, c] : low) {
    o << "    " << lf->name << ": " << Num(std::max(c->k_half, 1e-3)) << "  " << cal << "fitted " << lf->name
      << " GEMM curve, K at half efficiency\n";
  }
  bool split_header = false;
  for (const auto& entry : low) {
    const LowPrecisionFormat* lf = entry.first;
    const auto* l = f.LowPrecision(lf->name);
    if (l == nullptr || l->split_accumulator_efficiency <= 0) continue;
    if (!split_header) o << "  split_accumulator_efficiency:\n";
    split_header = true;
    o << "    " << lf->name << ": " << Num(std::min(1.0, l->split_accumulator_efficiency)) << "  " << cal
      << "median over the sweep of the fast-accumulating time / the split-accumulating (fp32-promoting) time\n";
  }
  o << "  min_kernel_us: " << Num(f.min_kernel_us) << "  " << cal << "tiny GEMM (8x8x8) time\n";
  o << "attention:\n";
  o << "  fwd_tflops: " << Num(f.attention_fwd_tflops) << "  " << cal << "unfused attention core forward, causal FLOPs, fitted over seq_len\n";
  o << "  bwd_fwd_ratio: " << Num(f.attention_bwd_fwd_ratio) << "  " << cal << "attention backward rate / forward rate\n";
  if (f.attention_curve) {
    o << "  half_seq: " << Num(f.attention_half_seq) << "  " << cal << "fitted attention curve\n";
  } else {
    o << "  half_seq: " << Num(f.attention_half_seq) << "  # not measured: one sequence length, no curve (the rate above at every "
      << "length); measure two or more (--shape with other seq_len)\n";
  }
  o << "memory_bound_efficiency: " << Num(f.memory_bound_efficiency) << "  " << cal
    << "norm/rotary/softmax/swiglu/add kernels, workload bytes / (time - fixed time) / bandwidth\n";
  if (f.memory_kernel_fitted) {
    o << "memory_kernel_us: " << Num(f.memory_kernel_us) << "  " << cal
      << "fixed time of a memory-bound kernel: the intercept of the copy sweep over sizes\n";
  } else {
    o << "memory_kernel_us: " << Num(f.memory_kernel_us) << "  # estimate: no line through the copy sizes (one size, or a noisy "
      << "slope): the smallest copy's time beyond its bytes at the bandwidth above; measure copies of several sizes\n";
  }
  return o.str();
}

std::string SidecarYaml(const FittedProfile& f, const Measurements& m) {
  std::ostringstream o;
  o << MeasurementsYaml(m);
  o << "fitted:\n";
  auto curve = [&](const char* key, const std::string& precision, const FittedProfile::GemmCurve& c) {
    if (c.samples == 0) return;
    o << "  " << key << ": {precision: " << precision << ", peak_tflops: " << Num(c.peak_tflops)
      << ", max_efficiency: " << Num(c.max_efficiency) << ", k_half: " << Num(c.k_half)
      << ", rms_relative_error: " << Num(c.rms_error) << ", shapes: " << c.samples;
    if (c.sustained_fraction > 0) o << ", sustained_fraction: " << Num(c.sustained_fraction);
    o << "}\n";
  };
  // What the profile's bf16/fp16 keys hold; where it is not the layer step's
  // type, validation predicts the step with `gemm` instead.
  o << "  profile_16bit: " << f.profile_16bit << "\n";
  curve("gemm", m.dtype, f.gemm);  // the layer step's data type
  curve("gemm_bf16", "bf16", f.gemm_bf16);
  for (const auto& l : f.low_precision) curve(("gemm_" + l.precision).c_str(), l.precision, l.curve);
  o << "  collectives:\n";
  for (const auto& c : f.collectives) {
    o << "    - {op: " << c.op << ", scope: " << c.scope << ", ranks: " << c.ranks << ", alpha_us: " << Num(c.fit.alpha_s * 1e6)
      << ", bandwidth_gb_per_s: " << Num(c.fit.bytes_per_s / 1e9) << "}\n";
  }
  o << "  storage:\n";
  for (const auto& s : f.storage) {
    o << "    - {clients: " << s.clients << ", write_gb_per_s: " << Num(s.write_bytes_per_s / 1e9)
      << ", read_gb_per_s: " << Num(s.read_bytes_per_s / 1e9)
      << ", write_gb_per_s_per_client: " << Num(s.write_bytes_per_s_per_client / 1e9)
      << ", read_gb_per_s_per_client: " << Num(s.read_bytes_per_s_per_client / 1e9) << "}\n";
  }
  return o.str();
}

}  // namespace trainsim::calib
