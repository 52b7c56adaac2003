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
#include "sim/error.h"
#include "sim/scenario.h"
#include "sim/validation.h"

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

// Loads the profile (the hardware-profiles/gpus format) and its measurements
// sidecar, predicts every measured layer step; cases are named by shape.
Expected<ValidationReport> ValidateProfile(const std::string& profile_path);

// The table of a profile validation, in milliseconds (layer steps are short).
std::string LayerValidationTable(const ValidationReport& r);

}  // namespace trainsim::calib
