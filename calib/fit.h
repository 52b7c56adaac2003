// Fitting (Eigen least squares): measurements -> a GPU profile in the
// hardware-profiles/gpus format, every number commented
// `# calibrated: HOST DATE what was measured`, plus alpha-beta per collective
// and storage throughput for the measurements sidecar.
//  - GEMM: seconds per FLOP against 1/K, t/F = (1 + k_half/K) / (peak * max_eff),
//    relative least squares over the sweep; peak = the best measured rate (or
//    the fit's asymptote if higher); min_kernel = the tiny-GEMM floor.
//  - Memory: bandwidth = the best streaming copy; memory_bound_efficiency =
//    the workload bytes of the memory-bound kernels over their total time, as
//    a fraction of it.
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
  double peak_tflops = 0;
  double max_efficiency = 0;
  double k_half = 0;
  double min_kernel_us = 0;
  double attention_fwd_tflops = 0;
  double attention_bwd_fwd_ratio = 0;
  double attention_half_seq = 0;
  double memory_bound_efficiency = 0;
  double gemm_fit_rms_error = 0;  // relative, over the sweep
  // A fitted GEMM curve (the profile's numbers come from `gemm`, in the
  // measured data type; `gemm_bf16` is the GPU's bf16 sweep, for the record).
  struct GemmCurve {
    double peak_tflops = 0, max_efficiency = 0, k_half = 0, rms_error = 0;
    int samples = 0;
  };
  GemmCurve gemm, gemm_bf16;
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

// Fails (returns a message) when the measurements cannot support a fit.
std::string FitProfile(const Measurements& m, const std::string& name, FittedProfile& out);

// The profile YAML (loadable by LoadGpuProfile) and the sidecar (the
// measurements followed by a `fitted:` section).
std::string ProfileYaml(const FittedProfile& f, const Measurements& m);
std::string SidecarYaml(const FittedProfile& f, const Measurements& m);

}  // namespace trainsim::calib
