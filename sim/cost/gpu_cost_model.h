// How long one operator takes on one GPU: GEMMs by a roofline with the
// profile's best-shape efficiency, wave quantization over the SMs and a
// small-K penalty; flash attention by its sequence-length curve; everything
// else by HBM bandwidth. The same functions serve the analytical path, the
// DES and `validate --profile` of a calibrated profile.
#pragma once

#include "models/workload.h"
#include "sim/core/hardware_profile.h"

namespace trainsim {

// The share of the SMs' time a GEMM of `tiles` output tiles keeps busy: the
// tiles run in waves of one per SM, and the last wave's idle SMs count as
// lost (NVIDIA, Matrix Multiplication Background User's Guide, "Wave
// Quantization"): tiles / (ceil(tiles / sms) x sms). Fewer tiles than SMs is
// the one-wave case.
double SmWaveFill(double tiles, int sms);

// The same for `batch` GEMMs of `tiles_each` tiles issued a kernel each over
// `streams` streams (0: one batched kernel, all tiles in one wave count): at
// most `streams` of them share the SMs at a time, so a group of small GEMMs
// leaves the SMs as idle as each group's tiles do, where one batched kernel
// would have packed every GEMM's tiles into full waves.
double StreamedWaveFill(double tiles_each, double batch, int streams, int sms);

// out_bytes: what the epilogue moves per output element; the profile's k_half
// is for a 2-byte output and the per-tile epilogue grows with the bytes.
double GemmEfficiency(const GpuProfile& gpu, Precision precision, double m, double n, double k, double batch,
                      double out_bytes = 2, int batch_streams = 0);
double OperatorTime(const Operator& op, const GpuProfile& gpu, Precision precision, bool backward = false);
double PassComputeTime(const PassWork& pass, const GpuProfile& gpu, Precision precision, bool backward);

// The profile's GEMM figures for the two formats a scenario's GEMMs run in
// (its precision for the projections, 16-bit for the rest), looked up once:
// the profile keys them by name, and a lookup per operator was a fifth of
// the analytical path. The functions above are these with a fresh lookup.
struct GpuRates {
  struct Gemm {
    double peak_clock_flops = 0;  // PeakFlops x MatmulClockFraction
    double max_eff = 0, k_half = 0;
    double split_accumulator_eff = 1;  // a split-accumulating GEMM's rate against this
  };
  GpuRates(const GpuProfile& gpu, Precision precision);
  const GpuProfile& gpu;
  Precision precision;
  Gemm low;      // GEMMs marked low_precision
  Gemm sixteen;  // the others
};
double OperatorTime(const Operator& op, const GpuRates& rates, bool backward = false);
// With host_s_per_kernel > 0, the pass as the host issues it (host_issue.h).
double PassComputeTime(const PassWork& pass, const GpuRates& rates, bool backward, double host_s_per_kernel = 0);

}  // namespace trainsim
