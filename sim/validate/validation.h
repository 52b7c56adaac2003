// Validation against measured training runs: each case of a reference file
// (shared/reference/measured.yaml format: id, source, scenario, measured,
// note) is predicted and compared. Error = (predicted - measured) / measured.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/run/simulate.h"
#include "sim/validate/release_spread.h"

namespace trainsim {

struct ValidationCase {
  std::string id;
  std::string source;
  double measured_step_time_s = 0;
  double predicted_step_time_s = 0;
  double error = 0;  // fraction
  std::vector<std::string> defaulted;  // scenario keys the source did not publish
  std::string failure;  // non-empty: could not be predicted
  ErrorKind failure_kind = ErrorKind::kBadInput;  // meaningful with a failure: bad input, or a run trainsim cannot do
  std::string gpu;      // the GPU profile the case ran on (for per-GPU summaries)
  std::string precision;  // the training precision (per-precision summaries)
  std::string family;     // the source family: the id up to its first '-' ("dgxc2502", "mlperf41")
  std::string workload;   // "dense pre-training", "MoE pre-training", "dense LoRA", "MoE full fine-tuning", ...
  std::string model;      // the model's name, else its size ("235B (22.2B active)"): cases of one model share it
  std::string experts_per_gpu;  // ExpertsPerGpuBand; empty for a dense model
  // The measured step over the releases that ran this configuration (the
  // case's note, release_spread.h); the case's own step alone when it names
  // no other. The error stays against the case's own measurement.
  MeasuredRange measured_range;
  SimulationResult result;
};

// Mean and max |error| over a set of predicted cases.
struct ErrorSummary {
  int cases = 0;
  double mean_abs_error = 0;
  double max_abs_error = 0;
  double mean_signed_error = 0;  // a bias shows here: all too fast is negative
};

// The summary of the predicted cases (those without a failure) that `keep`
// accepts; every predicted case when `keep` is empty.
ErrorSummary SummarizeErrors(const std::vector<ValidationCase>& cases,
                             const std::function<bool(const ValidationCase&)>& keep = {});

// One group of cases sharing a GPU, a precision, a source family, a kind of
// workload or a model.
struct ErrorGroup {
  std::string by;    // "gpu", "precision", "source", "workload", "kind" (GPU and workload), "model" or "experts/GPU" (MoE only)
  std::string name;  // e.g. "h100-sxm-80g", "fp8", "dgxc2502", "MoE pre-training", "30.5B (3.3B active)"
  ErrorSummary summary;
};

struct ValidationReport {
  std::vector<ValidationCase> cases;
  double mean_abs_error = 0;
  double max_abs_error = 0;
  // Per GPU profile (a calibration is per GPU: where the model is off shows
  // here), in the order the GPUs first appear.
  std::vector<std::pair<std::string, ErrorSummary>> by_gpu;
  // Per GPU, per precision, per source family, per workload kind and per
  // model, each in order of appearance.
  std::vector<ErrorGroup> groups;
  // The what-if it ran under (ValidationWhatIf): --set overrides and the
  // --cases filter, so that a saved table says it is not the baseline.
  std::vector<std::string> overrides;
  std::string cases_containing;
  std::string fidelity;  // asked for (ToString(Fidelity)); a case's own says which ran
  int predicted = 0;    // cases predicted (the summaries are over these)
  int unpredicted = 0;  // cases that name a feature trainsim lacks, or fail to parse
  // Of the predicted cases whose configuration other releases ran too: how
  // many, the median and largest spread of their measurements, and where the
  // predictions fall (faster than every release, within, slower than all).
  struct ReleaseSpread {
    int cases = 0;
    double median_spread = 0, max_spread = 0;
    int faster = 0, within = 0, slower = 0;
  } release_spread;
};

// A what-if over a reference file: how the predictions move if every run had
// used another setting (a dispatcher, an overlap, a profile). `overrides`
// ("KEY=VALUE", as --set) go into each selected case's scenario; an override
// that no case accepts is bad input naming --set. `cases_containing`, when not
// empty, selects the cases whose id contains it (the others are read, not
// predicted, and are absent from the report).
struct ValidationWhatIf {
  std::vector<std::string> overrides;
  std::string cases_containing;
  // When given, only the cases whose scenario it accepts are predicted (the
  // others are read, not predicted, and are absent from the report).
  std::function<bool(const Scenario&)> select;
};

// Of the predicted cases whose configuration other releases ran too
// (ValidationCase::measured_range), their spread and where the predictions fall.
ValidationReport::ReleaseSpread SummarizeReleaseSpread(const std::vector<ValidationCase>& cases);

// A scenario's kind of workload as the summaries group it: "dense" or "MoE",
// then "pre-training", "LoRA" or "full fine-tuning".
std::string WorkloadKind(const Scenario& s);

// A mixture of experts' routed experts per GPU (experts / EP) as the
// summaries band them: "1", "2-4" (no more than Transformer Engine's 4 grouped
// GEMM streams run at once), "5-15" and "16+"; empty for a dense model. The
// published MoE runs' errors part by these bands more than by GPU, precision
// or release (issues 13 and 14), so a prediction's track record narrows to
// its band.
std::string ExpertsPerGpuBand(const Scenario& s);

// `progress`, when given, is told the cases done of the file's cases (and
// the id of the case done) after each case.
Expected<ValidationReport> ValidateReference(
    const std::string& reference_file, Fidelity fidelity,
    const std::function<void(int cases_done, int cases_total, const std::string& id)>& progress = {},
    const ValidationWhatIf& what_if = {});

std::string ValidationTable(const ValidationReport& r);
std::string ValidationJson(const ValidationReport& r);

// Where the reference files shipped with trainsim are: DataDir()/reference
// when installed, else tests/reference in the source tree (copies of
// ../shared/reference/ and the out-of-sample holdout).
std::string ReferenceDirectory();
// The default reference file: measured.yaml there.
std::string DefaultReferenceFile();

}  // namespace trainsim
