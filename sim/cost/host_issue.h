// The host's side of a pass: the framework issues each kernel from the CPU
// (Python, the PyTorch dispatcher, the launch), one after another, and the
// GPU runs a kernel once it has been issued and the one before it is done.
// Long kernels hide the host (it runs ahead and queues them); a pass of many
// short kernels waits for it. A device-to-host sync (Operator::host_waits)
// lets the host issue nothing more until the GPU has caught up, so what
// follows it starts from an empty queue.
#pragma once

#include <vector>

#include "models/workload.h"

namespace trainsim {

// The pass's time on the GPU when it follows a pass like it (a layer kind's
// layers run back to back): op i takes gpu_s[i] in ops[i].kernels equal
// kernels and the host spends host_s_per_kernel issuing each. Exactly the sum
// of gpu_s when the GPU never waits for the host (host_s_per_kernel 0, or
// kernels long enough to hide it). An op with no flops and no bytes launches
// nothing. Not modelled: the depth of the launch queue (the host may run any
// distance ahead between syncs) and the collectives between the operators.
// A run of operators marked graphed (Operator::graphed) is one CUDA graph
// launch: the host issues it as one kernel and the GPU runs its kernels back
// to back.
// Precondition: gpu_s holds ops.size() times.
double HostIssuedPassTime(const std::vector<Operator>& ops, const double* gpu_s, double host_s_per_kernel);

}  // namespace trainsim
