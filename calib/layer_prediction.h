// Predicting a calibrated layer step with the library's own models: the
// scenario of one layer (tensor = pipeline = 1, unfused attention, no
// recompute, no dropout) goes through models/workload.h BuildWorkload and
// sim/gpu_cost_model.h PassComputeTime, exactly as a training scenario does.
// The same path predicts the CPU and the GPU layer step; `validate --profile`
// compares the predictions with the layer steps the calibration measured.
#pragma once

#include <string>

#include "calib/layer_step.h"
#include "calib/measurements.h"
#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/validate/validation.h"

namespace trainsim::calib {

// The one-layer scenario of a shape on a GPU profile.
Scenario LayerScenario(const LayerShape& shape, const GpuProfile& gpu);

struct LayerPrediction {
  double forward_s = 0, backward_s = 0;
  double step_s() const { return forward_s + backward_s; }
};
LayerPrediction PredictLayerStep(const LayerShape& shape, const GpuProfile& gpu);

// The measurements file beside a profile: PROFILE.yaml -> PROFILE-measurements.yaml.
std::string MeasurementsPathFor(const std::string& profile_path);

// The GEMM curve the measured layer steps ran with, where the profile's
// bf16/fp16 keys hold another precision (GPU: the keys hold the bf16 sweep, the
// step ran in tf32). Reads the sidecar's `fitted:` section (calib/fit.h
// SidecarYaml): when fitted.profile_16bit differs from `layer_dtype`, writes
// fitted.gemm (which must be in `layer_dtype`) into `gpu`'s bf16/fp16 keys and
// returns true; otherwise leaves `gpu` alone and returns false (CPU profiles,
// whose keys hold the step's type, and sidecars written before the bf16 keys
// were calibrated, which have no profile_16bit). FILE:LINE error when the
// curve is needed and missing or malformed.
Expected<bool> UseLayerGemmCurve(const std::string& sidecar_path, const std::string& layer_dtype, GpuProfile& gpu);

// Loads the profile (the hardware-profiles/gpus format) and its measurements
// sidecar, predicts every measured layer step (with the step's own GEMM curve,
// UseLayerGemmCurve, in memory); cases are named by shape.
Expected<ValidationReport> ValidateProfile(const std::string& profile_path);

// The table of a profile validation, in milliseconds (layer steps are short).
std::string LayerValidationTable(const ValidationReport& r);

}  // namespace trainsim::calib
