#include "sim/cost/host_issue.h"

#include <algorithm>

namespace trainsim {

double HostIssuedPassTime(const std::vector<Operator>& ops, const double* gpu_s, double host_s_per_kernel) {
  double sum = 0;
  for (size_t i = 0; i < ops.size(); ++i) sum += gpu_s[i];
  if (host_s_per_kernel <= 0 || ops.empty()) return sum;
  // Two passes back to back (a layer kind's layers follow one another): the
  // second starts with whatever lead the host built up in the first, and its
  // length is the pass's time in the steady state.
  double host = 0, gpu = 0, first_end = 0;  // host: when it has issued everything so far
  bool waited = false;                      // the GPU waited for the host in the second pass
  for (int round = 0; round < 2; ++round) {
    bool in_graph = false;  // the op before was launched in the same CUDA graph
    for (size_t i = 0; i < ops.size(); ++i) {
      const double k = ops[i].LaunchedKernels(), g = gpu_s[i];
      if (ops[i].host_waits) host = std::max(host, gpu);
      if (k == 0) continue;
      if (ops[i].graphed) {
        // A run of captured operators is one graph launch, issued like one
        // kernel; its kernels then follow one another on the GPU.
        if (!in_graph) host += host_s_per_kernel;
        const double end = std::max(gpu, host) + g;
        waited |= round == 1 && end > gpu + g;
        gpu = end;
        in_graph = true;
        continue;
      }
      in_graph = false;
      // The op's k kernels, each g / k long, issued h apart after `host`: the
      // GPU ends when the first one it waited for (the first, or the last
      // issued) has run out the rest, or when it ran them back to back.
      const double first_issued = host + host_s_per_kernel, last_issued = host + k * host_s_per_kernel;
      const double end = std::max({gpu + g, first_issued + g, last_issued + g / k});
      waited |= round == 1 && end > gpu + g;
      gpu = end;
      host = last_issued;
    }
    if (round == 0) first_end = gpu;
  }
  return waited ? gpu - first_end : sum;
}

}  // namespace trainsim
