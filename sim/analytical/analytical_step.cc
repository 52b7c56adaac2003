#include "sim/analytical/analytical_step.h"

#include <algorithm>


namespace trainsim {

StepTiming AnalyticalStep(const Scenario& s, const StepCosts& c) {
  const Parallelism& p = s.parallelism;
  const double m = s.microbatches_per_step();
  const double v = p.virtual_stages;
  const StageCost st = c.slowest();
  StepTiming r;
  StepBreakdown& b = r.breakdown;
  b.compute_s = m * (st.forward_compute_s + st.backward_compute_s);
  double exposed = m * (st.forward_exposed_comm_s + st.backward_exposed_comm_s);
  // Pipeline: (p-1)/v micro-batch slots of fill and drain. Activations and
  // gradients cross a stage boundary on the critical path only while the
  // pipeline fills and drains when send/recv overlaps compute: the first
  // micro batch's forward crosses all v x p - 1 boundaries of the virtual
  // stages before the last one can start its backward, and the last micro
  // batch's backward as many before the first stage ends. Interleaving
  // divides the fill's compute by v, not its transfers (the DES shows the
  // same: its step grows with v by about 2 p transfers per chunk).
  const double slot = st.forward_s() + st.backward_s();
  b.pipeline_bubble_s = (p.pipeline - 1) / v * slot;
  if (p.pipeline > 1) {
    const double fill_drain_hops = 2.0 * (v * p.pipeline - 1);
    const double hops = p.p2p_overlapped() ? fill_drain_hops : fill_drain_hops + 2.0 * m * v;
    exposed += hops * c.p2p_s;
  }
  // Data parallel: each chunk's gradient reduction overlaps the passes
  // after its last backward, its parameter gather those before its first
  // forward (OverlappedDpTime); while overlapping, NCCL's SMs slow the pass.
  const double nccl = OverlapSlowdown(s, CommEngine::kNccl);
  exposed += p.overlap_grad_reduce ? OverlappedDpTime(c.grad_reduce_chunks, st.backward_s() / v, p.virtual_stages, p.pipeline, nccl)
                                   : c.grad_reduce_s;
  exposed += p.overlap_param_gather ? OverlappedDpTime(c.param_gather_chunks, st.forward_s() / v, p.virtual_stages, p.pipeline, nccl)
                                    : c.param_gather_s;
  b.exposed_communication_s = exposed;
  b.optimizer_s = c.optimizer_s;
  // The next step's tokens arrive during this step (the DES's prefetch); a
  // read longer than the step holds the next one's first forward.
  b.data_stall_s = std::max(0.0, c.data_read_s - b.total_s());  // total_s() before it: data_stall_s is still 0
  r.step_time_s = b.total_s();
  return r;
}

}  // namespace trainsim
