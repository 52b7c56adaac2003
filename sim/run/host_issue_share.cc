#include "sim/run/host_issue_share.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/run/simulate.h"

namespace trainsim {

HostIssueShare HostIssueShareOf(const Scenario& s) {
  HostIssueShare h;
  h.host_s_per_kernel = s.host_s_per_kernel();
  if (h.host_s_per_kernel <= 0) return h;
  const SimulationResult with_host = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical));
  Scenario free_host = s;
  free_host.framework.host_s_per_kernel = 0;
  // Both at the micro batch the scenario runs (an auto one is chosen once).
  if (s.training.micro_batch_auto && with_host.micro_batch > 0) {
    free_host.training.micro_batch = with_host.micro_batch;
    free_host.training.micro_batch_auto = false;
  }
  const SimulationResult without = Simulate(free_host, SimulateOptions::At(Fidelity::kAnalytical));
  if (!(with_host.step_time_s > 0) || !(without.step_time_s > 0)) return h;
  h.step_s = with_host.step_time_s;
  // A free host never makes a step slower; the minimum keeps the share in 0..1.
  h.free_host_step_s = std::min(without.step_time_s, with_host.step_time_s);
  return h;
}

std::string HostIssueShareLine(const Scenario& s) {
  const HostIssueShare h = HostIssueShareOf(s);
  if (h.Share() < kHostIssueShareWorthSaying) return "";
  std::ostringstream line;
  line.precision(2);
  line << std::lround(100 * h.Share()) << "% of the step (analytical), the host issuing kernels at " << h.host_s_per_kernel * 1e6
       << " us each: measure your stack's with trainsim calibrate --host-trace; CUDA graphs (a framework profile's "
          "cuda_graph_scope) launch a graph's kernels at once";
  return line.str();
}

}  // namespace trainsim
