#include "sim/cost/step_costs.h"

#include <algorithm>
#include <map>

#include "sim/cost/collective_model.h"
#include "sim/cost/gpu_cost_model.h"

namespace trainsim {

double OverlapSlowdown(const Scenario& s, CommEngine engine) {
  const FrameworkProfile& f = s.framework;
  const int k = engine == CommEngine::kNccl                  ? f.nccl_overlap_sms
                : engine == CommEngine::kUserbufferPipelined ? f.userbuffer_pipelined_sms
                : engine == CommEngine::kUserbufferBulk      ? f.userbuffer_bulk_sms
                                                             : 0;
  const int sms = s.node.gpu.sms;
  return k > 0 && k < sms ? double(k) / (sms - k) : 0.0;
}

double ExposedCommTime(const Scenario& s, const PassWork& pass, double pass_compute_s, bool backward) {
  double exposed = 0, overlapped = 0, contention = 0;
  struct Partner {
    double op_s = 0;    // the operator's compute time (timed once)
    double comm_s = 0;  // overlapped comm behind it
  };
  std::map<std::string, Partner> behind;
  for (const auto& c : pass.comms) {
    const double t = CollectiveTime(s, c);
    if (!c.overlapped) {
      exposed += t;
      continue;
    }
    double partner_s = pass_compute_s;
    if (c.overlaps_op.empty()) {
      overlapped += t;
    } else {
      auto [it, fresh] = behind.try_emplace(c.overlaps_op);
      if (fresh) {
        for (const auto& op : pass.ops) {
          if (op.name == c.overlaps_op) it->second.op_s += OperatorTime(op, s.node.gpu, s.training.precision, backward);
        }
      }
      it->second.comm_s += t;
      partner_s = it->second.op_s;
    }
    // The partner loses the comm's SMs while both run; a pipelined userbuffers
    // GEMM is launched on the remaining SMs for its whole duration.
    const double shared_s = c.engine == CommEngine::kUserbufferPipelined ? partner_s : std::min(t, partner_s);
    contention += shared_s * OverlapSlowdown(s, c.engine);
  }
  for (const auto& [op_name, p] : behind) exposed += std::max(0.0, p.comm_s - p.op_s);
  return exposed + std::max(0.0, overlapped - pass_compute_s) + contention;
}

namespace {

StageCost AddPasses(const Scenario& s, const PassWork& fwd, const PassWork& bwd, double repeat) {
  const GpuProfile& g = s.node.gpu;
  const Precision pr = s.training.precision;
  StageCost c;
  const double fc = PassComputeTime(fwd, g, pr, false);
  const double bc = PassComputeTime(bwd, g, pr, true);
  c.forward_compute_s = repeat * fc;
  c.backward_compute_s = repeat * bc;
  c.forward_exposed_comm_s = repeat * ExposedCommTime(s, fwd, fc);
  c.backward_exposed_comm_s = repeat * ExposedCommTime(s, bwd, bc, true);
  return c;
}

void Accumulate(StageCost& into, const StageCost& c) {
  into.forward_compute_s += c.forward_compute_s;
  into.backward_compute_s += c.backward_compute_s;
  into.forward_exposed_comm_s += c.forward_exposed_comm_s;
  into.backward_exposed_comm_s += c.backward_exposed_comm_s;
}

}  // namespace

StepCosts ComputeStepCosts(const Scenario& s) {
  StepCosts c;
  c.workload = BuildWorkload(s);
  const Workload& w = c.workload;
  const Parallelism& p = s.parallelism;
  const double layers = double(s.model.layers) / p.pipeline;

  StageCost layer = AddPasses(s, w.layer_forward, w.layer_backward, 1.0);
  if (!w.layer_recompute.ops.empty()) {
    const GpuProfile& g = s.node.gpu;
    const double rc = PassComputeTime(w.layer_recompute, g, s.training.precision, false);
    layer.backward_compute_s += rc;
    layer.backward_exposed_comm_s += ExposedCommTime(s, w.layer_recompute, rc);
  }
  StageCost body;
  body.forward_compute_s = layers * layer.forward_compute_s;
  body.backward_compute_s = layers * layer.backward_compute_s;
  body.forward_exposed_comm_s = layers * layer.forward_exposed_comm_s;
  body.backward_exposed_comm_s = layers * layer.backward_exposed_comm_s;

  c.first = body;
  Accumulate(c.first, AddPasses(s, w.embedding_forward, w.embedding_backward, 1.0));
  c.last = p.pipeline == 1 ? c.first : body;
  Accumulate(c.last, AddPasses(s, w.head_forward, w.head_backward, 1.0));
  if (p.pipeline == 1) c.first = c.last;

  for (const auto* pass : {&w.layer_forward, &w.layer_backward}) {
    for (const auto& cm : pass->comms) {
      if (cm.group == CommGroup::kTensor) c.tp_comm_total_per_layer_s += CollectiveTime(s, cm);
    }
  }

  c.p2p_s = p.pipeline > 1 ? CollectiveTime(s, w.pipeline_p2p) : 0.0;
  if (p.gradient_replicas() > 1) {
    CommOp grads{"dp gradient " + std::string(p.distributed_optimizer ? "reduce-scatter" : "all-reduce"),
                 p.distributed_optimizer ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, CommGroup::kData,
                 w.grad_reduce_bytes, p.overlap_grad_reduce, ""};
    c.grad_reduce_s = CollectiveTime(s, grads);
    if (p.distributed_optimizer) {
      CommOp params{"dp parameter all-gather", CollectiveKind::kAllGather, CommGroup::kData, w.param_gather_bytes,
                    p.overlap_param_gather, ""};
      c.param_gather_s = CollectiveTime(s, params);
    }
  }
  const StageCost st = c.slowest();
  const double nccl = OverlapSlowdown(s, CommEngine::kNccl);
  if (p.overlap_grad_reduce) c.grad_reduce_contention_s = std::min(c.grad_reduce_s, st.backward_compute_s / p.virtual_stages) * nccl;
  if (p.overlap_param_gather) c.param_gather_contention_s = std::min(c.param_gather_s, st.forward_compute_s / p.virtual_stages) * nccl;
  const GpuProfile& g = s.node.gpu;
  c.optimizer_s = w.optimizer_bytes / (g.hbm_bytes_per_s * g.memory_bound_efficiency);
  return c;
}

}  // namespace trainsim
