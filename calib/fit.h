// Fitting (Eigen least squares): measurements -> a GPU profile in the
// hardware-profiles/gpus format, every number commented
// `# calibrated: HOST DATE what was measured`, plus alpha-beta per collective
// and storage throughput for the measurements sidecar.
//  - GEMM: seconds per FLOP against 1/K, t/F = (1 + k_half/K) / (peak * max_eff),
//    relative least squares over the sweep; peak = the best measured rate (or
//    the fit's asymptote if higher); min_kernel = the tiny-GEMM floor. The
//    profile's curves leave out samples that reading their operands dominates
//    (the memory roofline's, not the tensor cores'); the layer step's keeps
//    them, since its unfused attention runs such GEMMs. One curve
//    per precision swept: the layer step's data type (`dtype`: fp32 on the CPU,
//    tf32 on the GPU), bf16 and the low-precision formats the GPU has (fp8,
//    mxfp8, nvfp4: calib/low_precision_formats.h). The profile's bf16/fp16
//    keys take the bf16 curve where there is one, else the layer step's (CPU:
//    the fp32 numbers stand in); its fp8 / mxfp8 / nvfp4 keys each their own
//    format's curve. The layer step's curve always goes to the sidecar
//    (fitted.gemm): validation predicts the step with it.
//  - Memory: t = memory_kernel + bytes / bandwidth over the copy sweep's
//    sizes past the cache, and the smallest (alpha-beta; one size: the best
//    copy, no fixed time); in 2-byte-element equivalents, the workload's unit;
//    memory_bound_efficiency = the workload bytes of the memory-bound kernels
//    over their total time less each one's fixed time, as a fraction of the
//    bandwidth.
//  - Attention: rate(s) = fwd * s / (s + half_seq) fit the same way;
//    bwd_fwd_ratio = mean backward rate (2.5x the forward FLOPs) / forward rate.
// Never uses the layer-step measurements: those are what validation checks.
#pragma once

#include <string>
#include <vector>

#include "calib/measurements.h"
#include "calib/thread_collectives.h"

namespace trainsim::calib {

struct FittedProfile {
  std::string name;
  double memory_gib = 0;
  double hbm_tb_per_s = 0;
  int sms = 1;
  double tdp_w = 0;  // 0: not measured
  // The profile's bf16/fp16 keys: the curve of `profile_16bit` (below).
  double peak_tflops = 0;
  double max_efficiency = 0;
  double k_half = 0;
  double min_kernel_us = 0;
  double attention_fwd_tflops = 0;
  double attention_bwd_fwd_ratio = 0;
  double attention_half_seq = 0;
  // Whether half_seq was fitted (two sequence lengths or more); with one, the
  // measured rate stands at every length and the profile says half_seq is not measured.
  bool attention_curve = false;
  double memory_bound_efficiency = 0;
  double memory_kernel_us = 0;
  // Whether memory_kernel_us is the intercept of a line through two copy
  // sizes or more; else the smallest copy's time beyond its bytes (0 with one size).
  bool memory_kernel_fitted = false;
  double gemm_fit_rms_error = 0;  // relative, over the sweep, of the 16-bit keys' curve
  // A fitted GEMM curve; samples == 0: not fitted.
  struct GemmCurve {
    double peak_tflops = 0, max_efficiency = 0, k_half = 0, rms_error = 0;
    int samples = 0;
    // The rate a GEMM kept up back to back (Measurements::sustained) over this
    // curve's rate for the same GEMM: what a training step's GEMMs run at
    // against the curve. 0: not measured, or a run under 0.3 of the curve
    // (disturbed: power capping takes tens of percent, not two thirds).
    double sustained_fraction = 0;
  };
  // `gemm`: the layer step's data type (what validation predicts the step
  // with); `gemm_bf16`: the bf16 sweep where the step ran in another type.
  GemmCurve gemm, gemm_bf16;
  // The precision whose curve the profile's bf16/fp16 keys hold: "bf16" when
  // bf16 was swept (or the step ran in it), else the step's type (CPU: fp32).
  std::string profile_16bit;
  // A low-precision format that was measured (fp8, mxfp8, nvfp4, in the order
  // of kLowPrecisionFormats; a format without samples has no entry). Its
  // curve has samples == 0 where too few samples cleared the launch floor:
  // then the profile has no keys for it (the report says why).
  struct LowPrecisionFit {
    std::string precision;
    int measured = 0;  // samples in the measurements (fast-accumulating)
    GemmCurve curve;   // of the fast-accumulating samples
    // The split-accumulating samples' rate against the fast ones of the same
    // shapes (their median); 0: none measured (the format has no such mode).
    double split_accumulator_efficiency = 0;
  };
  std::vector<LowPrecisionFit> low_precision;
  // The fit of `precision`; nullptr when it was not measured.
  const LowPrecisionFit* LowPrecision(const std::string& precision) const {
    for (const auto& l : low_precision) {
      if (l.precision == precision) return &l;
    }
    return nullptr;
  }
  struct Collective {
    std::string op, scope;
    int ranks = 0;
    AlphaBeta fit;
  };
  std::vector<Collective> collectives;
  struct Storage {
    int clients = 0;
    double write_bytes_per_s = 0, read_bytes_per_s = 0;                  // aggregate
    double write_bytes_per_s_per_client = 0, read_bytes_per_s_per_client = 0;  // mean
  };
  std::vector<Storage> storage;
};

// Fails (returns a message) when the measurements cannot support a fit: the
// layer step's or the bf16 curve (where bf16 samples exist) cannot be fitted,
// or the memory or attention measurements are missing. The low-precision keys
// are optional: a format's sweep that cannot be fitted leaves them out.
std::string FitProfile(const Measurements& m, const std::string& name, FittedProfile& out);

// Bytes per element of a measured data type (fp32 and tf32: float32
// storage; bf16, fp16: 2; a low-precision format: its operand bytes).
double ElementBytes(const std::string& dtype);
// What the device moved for `two_byte_equivalents` (the workload's unit, in
// which the memory samples and the fitted bandwidth count) of data stored as
// `dtype`.
double DeviceBytes(double two_byte_equivalents, const std::string& dtype);

// The tile the fit divides each sample's SM wave fill out with (and the
// profile's tile_m and tile_n).
inline constexpr double kFitTile = 128;

// The profile YAML (loadable by LoadGpuProfile) and the sidecar (the
// measurements followed by a `fitted:` section: profile_16bit, the GEMM
// curves gemm / gemm_bf16 / gemm_fp8 / gemm_mxfp8 / gemm_nvfp4, collectives
// and storage).
std::string ProfileYaml(const FittedProfile& f, const Measurements& m);
std::string SidecarYaml(const FittedProfile& f, const Measurements& m);

}  // namespace trainsim::calib
