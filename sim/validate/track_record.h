// The track record behind one prediction: how trainsim's predictions of the
// published runs that share a scenario's GPU and kind of workload (dense or
// mixture of experts; pre-training, LoRA or full fine-tuning) come out
// against their measured step times, predicted now from the reference files
// shipped with trainsim. One prediction has no error bar of its own; this is
// the nearest one the evidence gives, and its sign says which way the model
// leans there (negative: too fast). Where enough runs share more with the
// scenario it narrows to them: a mixture of experts' band of experts per GPU
// (ExpertsPerGpuBand, where the MoE errors part), then the precision.
#pragma once

#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/validate/validation.h"

namespace trainsim {

// The fewest cases that make a narrower record (the scenario's band of experts
// per GPU, its precision); with fewer, the record keeps the wider set.
inline constexpr int kTrackRecordMinCases = 5;

struct TrackRecord {
  std::string gpu;        // the scenario's GPU profile
  std::string workload;   // its kind of workload (WorkloadKind)
  std::string experts_per_gpu;  // its ExpertsPerGpuBand where kTrackRecordMinCases runs had it; empty: every band
  std::string precision;  // its training precision where kTrackRecordMinCases runs (of the band) had it; empty: every precision
  ErrorSummary summary;   // over the files' cases of that GPU, kind (band and precision); cases 0: none there
  int files = 0;          // reference files read
};

// Every *.yaml of ReferenceDirectory(), sorted, so the record is the same
// wherever it runs; none when there is no such directory.
std::vector<std::string> DefaultReferenceFiles();

// The record of `s`'s kind over `files`, each case predicted at the
// analytical fidelity (the one the reference tables quote). A file that does
// not load is the error (naming it); a case that cannot be predicted is left
// out, as validate leaves it out of its means.
Expected<TrackRecord> TrackRecordOf(const Scenario& s, const std::vector<std::string>& files);

// One line for the run summary, e.g. "13 published MoE pre-training runs with
// 16+ experts per GPU on b200-sxm-180g: predicted 25.6% off on average (mean
// -25.6%: too fast), at worst 47.5% (trainsim validate)"; says so when there
// are none.
std::string TrackRecordText(const TrackRecord& t);

// What `run`, `compare`, `plan` and the GUI print: TrackRecordText of the
// scenario's record over DefaultReferenceFiles(), or "unavailable: " and why;
// a GPU file other than the stock profile of its name says that the record is
// the stock profile's.
// Kept per GPU, kind, band, precision and files for the process (thread-safe), so
// a second scenario of the same kind costs nothing.
std::string TrackRecordLine(const Scenario& s);

}  // namespace trainsim
