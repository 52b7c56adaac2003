// How much of a step the host's kernel issue costs: where kernels are short,
// the GPU waits for the framework's host (sim/cost/host_issue.h), and the
// prediction leans on the framework profile's host_us_per_kernel, an estimate
// until measured (trainsim calibrate --host-trace). The run summary says so
// when the share is large enough to matter.
#pragma once

#include <string>

#include "sim/core/scenario.h"

namespace trainsim {

struct HostIssueShare {
  double step_s = 0;            // the analytical step as the scenario stands
  double free_host_step_s = 0;  // the same step with a host that issues in no time
  double host_s_per_kernel = 0; // what the scenario's host spends per kernel (framework x node)

  // The part of the step the GPU spends waiting for the host, 0..1.
  double Share() const { return step_s > 0 ? (step_s - free_host_step_s) / step_s : 0; }
};

// Both steps at analytical fidelity, at the micro batch Simulate would run.
// A scenario without a host cost (or that does not simulate) gives share 0.
HostIssueShare HostIssueShareOf(const Scenario& s);

// Below this share the host cost moves the step less than the published
// runs' spread, and the summaries do not mention it.
constexpr double kHostIssueShareWorthSaying = 0.02;

// What `trainsim run` and the GUI say of it, e.g. "14% of the step
// (analytical), the host issuing kernels at 15 us each: measure your stack's
// with trainsim calibrate --host-trace"; empty below kHostIssueShareWorthSaying.
std::string HostIssueShareLine(const Scenario& s);

}  // namespace trainsim
