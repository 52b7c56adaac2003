// What a training framework's host spends issuing one kernel, read from an
// Nsight Systems trace of a real step: the measured value of a framework
// profile's `host_us_per_kernel` (sim/cost/host_issue.h prices a pass with it).
//
// The input is the CUDA API trace as Nsight Systems exports it,
//   nsys stats --report cuda_api_trace --format csv --output TRACE report.nsys-rep
// one row per CUDA runtime or driver call with its start, duration, name and
// thread ("Start (ns)", "Duration (ns)", "Name", ..., "Pid", "Tid"; another
// --timeunit is read from the header), rows in start order. Lines before the
// header (what nsys prints as it works) are skipped.
//
// The estimate: on each thread that launches kernels, the host time from one
// launch to the next is what issuing the first cost (Python, autograd, the
// dispatcher, the launch call). Time inside calls that wait for the GPU
// (cuda*Synchronize, a synchronous cudaMemcpy) is not issuing and is taken
// out, and so is the part of a launch call beyond the trace's median launch
// call (a launch that blocks because the launch queue is full: the GPU, not
// the host, set that pace). A gap still longer than `idle_gap_s` is the
// thread idle, not issuing (the autograd thread during the forward, the data
// loader, the optimizer's step between iterations), and is left out. A CUDA
// graph launch counts as one launch, as the cost model issues a graph. Take
// the trace over steady-state steps (after warm-up), with nsys's default CUDA
// tracing: with --cuda-trace-all-apis a runtime launch also shows the driver
// call inside it, and would count twice.
#pragma once

#include <cstdint>
#include <istream>
#include <string>

#include "sim/core/error.h"

namespace trainsim::calib {

struct HostLaunchCostOptions {
  // A gap between two launches longer than this (after sync time is taken
  // out) is idle time and is left out of the mean.
  double idle_gap_s = 1e-3;
  // The most launches read (8 bytes kept per launch): a trace of a few
  // steady-state steps has well under this; a longer one is refused.
  int64_t max_launches = 64'000'000;
};

// The measured host cost per kernel and what it was measured over.
struct HostLaunchCost {
  double host_s_per_kernel = 0;  // mean issuing gap over the counted gaps
  double median_gap_s = 0;       // median of the same gaps
  int64_t launches = 0;          // kernel and graph launches in the trace
  int64_t counted_gaps = 0;      // launch-to-launch gaps in the mean
  int64_t idle_gaps = 0;         // gaps left out as idle
  int threads = 0;               // threads that launched
  double sync_s = 0;             // time in synchronizing calls, taken out of the gaps
  double queue_wait_s = 0;       // launch calls' time beyond the median one, taken out too
};

// Reads the trace from `in`; `file` names it in errors (FILE:LINE: COLUMN:
// what). Bad input: no header with Start, Duration, Name and Tid columns, a
// row whose fields are not numbers where they must be, rows out of start
// order on a thread, fewer than two launches on any thread, or more than
// `max_launches` launches.
Expected<HostLaunchCost> ReadHostLaunchCost(std::istream& in, const std::string& file,
                                            const HostLaunchCostOptions& options = {});

// The framework profile that `trainsim calibrate --host-trace` writes: `name`,
// `based_on: base`, and `host_us_per_kernel` as measured divided by the node's
// `host_op_time_factor` (the profile's figure is per DGX H100 Xeon; a node
// scales it), with a comment saying what was measured, where and when.
std::string HostCostFrameworkProfileText(const std::string& name, const std::string& base, const HostLaunchCost& cost,
                                         const std::string& trace_file, const std::string& node_name,
                                         double host_op_time_factor);

}  // namespace trainsim::calib
