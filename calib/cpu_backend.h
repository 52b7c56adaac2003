// The CPU backend of `trainsim calibrate`: runs a CalibrationPlan on this
// machine with calib/cpu_ops.h (one thread: Eigen GEMMs, host kernels),
// the layer steps of calib/layer_step.h, collectives between threads and a
// storage test, and returns the measurements. Each benchmark is repeated
// until it has run `min_seconds` (at least `min_reps` times) and reports its
// best time: the least disturbed run on a shared machine. Compute benchmarks
// and the layer step are timed in the thread's CPU time (they run on one
// thread), so that other processes on the machine do not inflate them;
// collectives and storage, which wait on other threads and the disk, use
// wall-clock time.
#pragma once

#include <functional>
#include <string>

#include "calib/measurements.h"
#include "calib/plan.h"

namespace trainsim::calib {

struct CpuCalibrationOptions {
  double min_seconds = 0.05;
  int min_reps = 5;
  int max_reps = 10;
  int collective_ranks = 2;        // threads; <2 skips the collectives
  std::string storage_dir;         // "" skips the storage test
  int storage_clients = 2;
  double storage_bytes_per_client = 64.0 * 1024 * 1024;
  // Told the fraction of the measuring done (by timed benchmarks, a layer
  // step's four counting four GEMMs' worth) and the phase; may be empty.
  std::function<void(double fraction, const std::string& phase)> progress;
};

// Best-of timing of fn in thread CPU seconds (one warm-up call first; the
// caches are flushed before each timed call, untimed, so that operands come
// from memory as they do inside a training step).
double TimeBest(const std::function<void()>& fn, double min_seconds, int min_reps, int max_reps);

// How far the sweep's first GEMM may time apart at the end of the run from
// its start before the run warns that the machine's speed changed
// (Measurements::warnings): best-of timings of an idle core repeat within a
// few percent.
inline constexpr double kSpeedDriftTolerance = 0.05;

// Returns "" or a one-line error; fills `out`.
std::string RunCpuCalibration(const CalibrationPlan& plan, const CpuCalibrationOptions& o, Measurements& out);

// "host", "2026-11-29T16:00:00Z": where and when, for the profile's comments.
std::string HostName();
std::string UtcNow();

}  // namespace trainsim::calib
