// Calibration: measure the hardware, fit a profile. The pieces:
//   calib/plan.h             what to measure (from the workload model of the layer shapes)
//   calib/cpu_backend.h      measuring on the CPU; calib/cuda/ the standalone GPU program
//   calib/measurements.h     the measurements file both write
//   calib/fit.h              measurements -> profile (Eigen fits)
//   calib/layer_prediction.h the workload model's prediction of a layer step (validate --profile)
// This header holds the steps the `trainsim calibrate` verb strings together.
#pragma once

#include <string>
#include <vector>

#include "calib/fit.h"
#include "calib/layer_step.h"
#include "calib/measurements.h"
#include "sim/core/hardware_profile.h"

namespace trainsim::calib {

// Small Llama-style shapes for the CPU suite: the whole CPU calibration
// stays well under a minute on one core.
std::vector<LayerShape> DefaultCpuShapes();
// Shapes for a single GPU (Llama 2 7B-like widths at short sequences, kept
// small enough for an 8-minute calibration).
std::vector<LayerShape> DefaultGpuShapes();

// The sidecar's last line: `profile_fingerprint: "<TextFingerprint of the
// profile's text>"`; validate --profile refuses a pair that does not match.
std::string ProfileFingerprintLine(const std::string& profile_text);

// What the cost model says `g`'s grouped expert GEMMs take on `gpu` (one
// operator of `experts` kernels, at the profile's 16-bit GEMM curve), to set
// beside the measured time: the report shows whether the model's fill of the
// SMs across experts holds as Transformer Engine issues them.
double GroupedGemmPredictedSeconds(const GpuProfile& gpu, const GroupedGemmSample& g);

// Fits `m` and writes PROFILE (hardware-profiles/gpus format) and its sidecar
// PROFILE-measurements.yaml, each atomically (the sidecar first, fingerprinting
// the profile); then loads the profile back with the library's loader.
// Returns "" or a one-line error. `report` gets a human-readable summary of the fit;
// `fitted`, when given, the fit itself (for a training profile from the same measurements).
std::string WriteCalibratedProfile(const Measurements& m, const std::string& profile_path, const std::string& name,
                                   double tdp_w, std::string& report, FittedProfile* fitted = nullptr);

}  // namespace trainsim::calib
