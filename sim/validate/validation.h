// Validation against measured training runs: each case of a reference file
// (shared/reference/measured.yaml format: id, source, scenario, measured,
// note) is predicted and compared. Error = (predicted - measured) / measured.
#pragma once

#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/run/simulate.h"

namespace trainsim {

struct ValidationCase {
  std::string id;
  std::string source;
  double measured_step_time_s = 0;
  double predicted_step_time_s = 0;
  double error = 0;  // fraction
  std::vector<std::string> defaulted;  // scenario keys the source did not publish
  std::string failure;  // non-empty: could not be predicted
  std::string gpu;      // the GPU profile the case ran on (for per-GPU summaries)
  SimulationResult result;
};

// Mean and max |error| over a set of predicted cases.
struct ErrorSummary {
  int cases = 0;
  double mean_abs_error = 0;
  double max_abs_error = 0;
};

struct ValidationReport {
  std::vector<ValidationCase> cases;
  double mean_abs_error = 0;
  double max_abs_error = 0;
  // Per GPU profile (a calibration is per GPU: where the model is off shows
  // here), in the order the GPUs first appear.
  std::vector<std::pair<std::string, ErrorSummary>> by_gpu;
};

Expected<ValidationReport> ValidateReference(const std::string& reference_file, Fidelity fidelity);

std::string ValidationTable(const ValidationReport& r);
std::string ValidationJson(const ValidationReport& r);

// The default reference file: DataDir()/reference/measured.yaml when
// installed, else ../shared/reference/measured.yaml next to the source tree.
std::string DefaultReferenceFile();

}  // namespace trainsim
