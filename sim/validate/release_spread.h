// The same configuration measured on other releases of a software stack, as
// a reference case's note records it. A published performance table is
// re-run with every release, and one configuration's throughput can move by
// tens of percent between two releases of the same stack; that spread bounds
// what any prediction of one release can promise, so validate reports where
// each prediction falls among them. Nothing here changes a case's error,
// which is always against the measurement the case itself records.
#pragma once

#include <string>
#include <vector>

namespace trainsim {

// One other release's measurement of a case's configuration.
struct ReleaseMeasurement {
  std::string release;              // "26.02.01"
  double tokens_per_s_per_gpu = 0;  // > 0
};

// The releases a note lists after "same config (tokens/s/GPU):", in order:
// "older containers, same config (tokens/s/GPU): 26.04: 5810, 26.02.01: 5984"
// (published-2025.yaml's convention). None when the note lists none; the
// list ends at the first entry that is not "NAME: NUMBER" (a note goes on
// after a ';').
std::vector<ReleaseMeasurement> OtherReleasesInNote(const std::string& note);

// A case's measured step time over every release that ran its configuration.
struct MeasuredRange {
  double min_step_time_s = 0;
  double max_step_time_s = 0;
  int releases = 1;  // the case's own and the others

  // (max - min) / min: how far the releases moved the same configuration.
  double Spread() const { return min_step_time_s > 0 ? (max_step_time_s - min_step_time_s) / min_step_time_s : 0; }
  // -1: the prediction is faster than every release's step, +1 slower, 0 within.
  int Place(double predicted_step_time_s) const {
    return predicted_step_time_s < min_step_time_s ? -1 : predicted_step_time_s > max_step_time_s ? 1 : 0;
  }
};

// The range over the case's own step time and the other releases'. At one
// configuration (global batch, GPUs) the step time is inversely proportional
// to the throughput: another release's step is step_s x tokens_per_s_per_gpu
// / its tokens_per_s_per_gpu. Without the case's throughput (<= 0) the range
// is its own step time alone.
MeasuredRange RangeOverReleases(double step_s, double tokens_per_s_per_gpu, const std::vector<ReleaseMeasurement>& others);

}  // namespace trainsim
