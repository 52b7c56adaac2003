#include "sim/analytical/analytical_step.h"

#include <algorithm>
#include <vector>

#include "sim/cost/collective_model.h"

namespace trainsim {

namespace {

// Where the pipeline's stages sit: their GPUs, the NVLink domain's, and
// whether every boundary is alike (stages of whole domains cross the NICs at
// each one; a pipeline group on NVLink crosses none).
struct StagePlacement {
  RankLayout layout;
  long stage_gpus = 0;
  long domain_gpus = 0;
  bool whole_domains = false;
  bool on_nvlink = false;
  explicit StagePlacement(const Scenario& s)
      : layout(s.layout()),
        stage_gpus(s.gpus() / s.parallelism.pipeline),
        domain_gpus(std::max(layout.shape().nvlink_domain_gpus, layout.shape().gpus_per_node)),
        whole_domains(stage_gpus % domain_gpus == 0),
        on_nvlink(layout.Span(CommGroup::kPipeline).on_nvlink()) {}
  // A stage's sends to both neighbours leave through its GPUs' NICs.
  bool EveryHopCrossesTheNics() const { return whole_domains && !on_nvlink; }
};

// The transfers of the pipeline's fill and drain: the first micro batch's
// forward crosses the v x p - 1 boundaries of the virtual stages in turn
// (virtual stage k is chunk k / p of stage k mod p: boundary b takes stage b
// to b + 1, and the last, stage p - 1 back to stage 0 for the next chunk, v - 1
// times), and the last micro batch's backward as many. Each crossing takes
// its own boundary's link, as the DES sends it: two stages in one NVLink
// domain over NVLink, else over the NICs (the slowest pair of the stages'
// GPUs, which pair up at the same place in each stage). A job whose stages
// are whole domains crosses the NICs at every boundary: `hop_s` each.
double FillDrainTransfersS(const Scenario& s, const StagePlacement& at, const CommOp& p2p, double hop_s) {
  const int p = s.parallelism.pipeline, v = s.parallelism.virtual_stages;
  const RankLayout& layout = at.layout;
  const long stage_gpus = at.stage_gpus, domain_gpus = at.domain_gpus;
  const double hops = 2.0 * (double(v) * p - 1);
  if (at.whole_domains || at.on_nvlink) return hops * hop_s;  // every hop alike
  double on_nvlink_s = -1, across_s = -1;  // a pair of ranks within one domain, or across two: the two prices there are
  std::vector<double> boundary_s(static_cast<size_t>(p));
  for (int b = 0; b < p; ++b) {
    const long first = b < p - 1 ? b * stage_gpus : 0;
    const long apart = b < p - 1 ? stage_gpus : (p - 1) * stage_gpus;
    long crossing = -1;
    for (long j = 0; j < std::min(stage_gpus, domain_gpus) && crossing < 0; ++j) {
      if (layout.DomainOfGpu(first + j) != layout.DomainOfGpu(first + j + apart)) crossing = j;
    }
    double& price = crossing < 0 ? on_nvlink_s : across_s;
    if (price < 0) price = PlanCollective(s, p2p, layout.Span(2, int(apart), first + std::max(0L, crossing))).Time();
    boundary_s[size_t(b)] = price;
  }
  double chain_s = 0;  // one micro batch through every virtual stage
  for (int b = 0; b < p; ++b) chain_s += (b < p - 1 ? v : v - 1) * boundary_s[size_t(b)];
  return 2 * chain_s;
}

}  // namespace

StepTiming AnalyticalStep(const Scenario& s, const StepCosts& c) {
  const Parallelism& p = s.parallelism;
  const double m = s.microbatches_per_step();
  const double v = p.virtual_stages;
  const StageCost st = c.slowest();
  StepTiming r;
  StepBreakdown& b = r.breakdown;
  b.compute_s = m * (st.forward_compute_s + st.backward_compute_s);
  double exposed = m * (st.forward_exposed_comm_s + st.backward_exposed_comm_s);
  // Pipeline: fill and drain (StepCosts::FillDrainS). Activations and
  // gradients cross a stage boundary on the critical path only while the
  // pipeline fills and drains when send/recv overlaps compute: the first
  // micro batch's forward crosses all v x p - 1 boundaries of the virtual
  // stages before the last one can start its backward, and the last micro
  // batch's backward as many before the first stage ends. Interleaving
  // divides the fill's compute by v, not its transfers (the DES shows the
  // same: its step grows with v by about 2 p transfers per chunk).
  b.pipeline_bubble_s = c.FillDrainS(p.virtual_stages, m);
  if (p.pipeline > 1) {
    const StagePlacement at(s);
    exposed += FillDrainTransfersS(s, at, c.workload.pipeline_p2p, c.p2p_s);
    if (!p.p2p_overlapped()) {
      // Without overlap every micro batch's sends wait too, at the slowest boundary's pace.
      exposed += 2.0 * m * v * c.p2p_s;
    } else {
      // In the 1F1B steady state a stage's backward needs the gradient its
      // neighbour sent at the end of the previous slot, which travels while
      // this stage runs its forward; the forward needs the activation sent
      // while it ran its backward. A hop longer than the pass that hides it
      // holds every slot by the difference: interleaving's short chunks on
      // a slow network (Llama 2 70B PP 4 VP 20 on 100 Gb/s RoCE: 3.3 ms
      // forward chunks against 3.5 ms hops), as the DES's slots show. Where
      // both neighbours are across the NICs, a GPU's activation and
      // gradient sends alternate on its share of them: one still in flight
      // when the next starts shares it, so a hop as long as the forward
      // chunk takes twice its time. Where one neighbour is in the NVLink
      // domain (two stages a node, an NVL72 rack's inner boundaries) only
      // one direction leaves through the NICs.
      const double forward_chunk_s = st.forward_s() / v, backward_chunk_s = st.backward_s() / v;
      const double shared = at.EveryHopCrossesTheNics() ? std::min(1.0, c.p2p_s / std::max(forward_chunk_s, 1e-12)) : 0.0;
      const double hop_s = c.p2p_s * (1 + shared);
      exposed += m * v * (std::max(0.0, hop_s - forward_chunk_s) + std::max(0.0, hop_s - backward_chunk_s));
    }
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
