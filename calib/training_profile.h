// A GPU profile for training predictions out of a calibration. The profile
// `calibrate -o` writes describes the step it measured (float32 storage,
// unfused attention, bandwidths in 2-byte equivalents of float32 traffic,
// no power reading) and validates against it; a training scenario run on it
// would take that attention core for flash attention and a placeholder for
// the TDP. The training profile is instead a base profile (a catalogue GPU
// or a file: its attention kernels, power, clocks, with their sources) with
// the keys the sweep measured replaced:
//   memory_gib, sms, hbm_tb_per_s (the bytes the device moved), the GEMM
//   curves (matmul.max_efficiency and k_half of bf16/fp16 and of each
//   low-precision format fitted; tile_m/tile_n, the fit's tile),
//   matmul.split_accumulator_efficiency, min_kernel_us,
//   memory_bound_efficiency, memory_kernel_us.
// The sweep's short GEMMs run at burst clocks. Where the measurements hold a
// sustained run of a precision (a GEMM back to back until the power cap), its
// rate over the sweep's is that precision's matmul.sustained_clock_fraction;
// otherwise the base's GPU-wide sustained_clock_fraction derates the measured
// curve as it derates its own, and the base's per-precision override (a curve
// it took from sustained measurements) goes.
#pragma once

#include <string>

#include "calib/fit.h"
#include "calib/measurements.h"

namespace trainsim::calib {

// Resolves `base` (a GPU profile name or path) into `path` and loads it:
// "" or a one-line error ("--base: unknown gpu profile ... (did you mean ...)",
// or the base file's own FILE:LINE: KEY error).
std::string CheckTrainingBase(const std::string& base, std::string& path);

// Fits `m` (a GPU sweep: dtype tf32 or fp32 with a bf16 sweep) and writes the
// training profile at `path` atomically, named by the file's stem; then loads
// it back with the library's loader. `base` is a GPU profile name or path;
// `calibration_path` the calibration profile written from the same
// measurements, which the header names. The base's datasheet peaks stay
// (MFU is reckoned against them): a measured curve's asymptote becomes its
// max_efficiency against that peak. Returns "" or a one-line error (a base
// that does not load names its file). `fitted`: the fit of `m` already made
// (WriteCalibratedProfile's), so it is not made twice; null: fit here.
std::string WriteTrainingProfile(const Measurements& m, const std::string& base, const std::string& path,
                                 const std::string& calibration_path, std::string& report,
                                 const FittedProfile* fitted = nullptr);

}  // namespace trainsim::calib
