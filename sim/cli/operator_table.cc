#include "sim/cli/operator_table.h"

#include <cstdio>

#include "sim/cost/collective_model.h"
#include "sim/cost/step_costs.h"

namespace trainsim::cli {

namespace {

std::string Line(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

const char* ClassName(OpClass c) {
  switch (c) {
    case OpClass::kGemm: return "gemm";
    case OpClass::kAttention: return "attention";
    case OpClass::kMemoryBound: return "memory";
  }
  return "?";
}

}  // namespace

std::string OperatorTable(const Scenario& s, const Workload& w) {
  const std::vector<PassBreakdown> passes = BreakDownPasses(s, w);
  const RankLayout layout = s.layout();
  std::string o;
  bool any_graphed = false;
  o += "operators of one micro batch on one GPU (" + s.node.gpu.name + ", " + ToString(s.training.precision) + ")\n";
  for (const PassBreakdown& p : passes) {
    o += "\n" + p.unit + ", " + p.pass + "\n";
    o += Line("  %-34s %-9s %-22s %10s %10s %10s %8s  %s\n", p.ops.empty() ? "collective" : "operator", "class", "m x n x k (x batch)", "GFLOP", "MB",
              "time us", "kernels", "rate");
    for (const OperatorRow& r : p.ops) {
      std::string shape;
      if (r.cls == OpClass::kGemm) {
        shape = std::to_string(r.m) + "x" + std::to_string(r.n) + "x" + std::to_string(r.k);
        if (r.batch > 1) shape += " x" + std::to_string(r.batch);
      }
      const std::string rate = r.time_s <= 0 || r.host_wait ? ""
                               : r.cls == OpClass::kMemoryBound ? Line("%.0f GB/s", r.bytes / r.time_s / 1e9)
                                                                : Line("%.0f TFLOP/s", r.flops / r.time_s / 1e12);
      const std::string kernels = r.host_wait ? "" : std::to_string(r.kernels) + (r.graphed ? "*" : " ");
      any_graphed |= r.graphed;
      o += Line("  %-34s %-9s %-22s %10.1f %10.1f %10.1f %8s  %s\n", r.name.c_str(), r.host_wait ? "host" : ClassName(r.cls), shape.c_str(), r.flops / 1e9,
                r.bytes / 1e6, r.time_s * 1e6, kernels.c_str(), rate.c_str());
    }
    if (!p.ops.empty()) o += Line("  %-34s %-9s %-22s %10s %10s %10.1f\n", "compute", "", "", "", "", p.compute_s * 1e6);
    for (const CommRow& c : p.comms) {
      // Where its slowest group runs: a group across NVLink domains takes the NICs.
      const GroupSpan span = layout.Span(c.group);
      const std::string where = span.on_nvlink() ? "" : Line("; over the NICs (%d NVLink domains)", span.domains);
      // A collective longer than the operator it hides behind shows for the rest.
      double behind_s = 0;
      for (const OperatorRow& r : p.ops) {
        if (r.name == c.behind) behind_s += r.time_s;
      }
      const std::string outlasts = c.time_s > behind_s && behind_s > 0 ? Line(" (outlasts it by %.1f us)", (c.time_s - behind_s) * 1e6) : "";
      const std::string how = (c.beside_other_micro_batch ? "beside another micro batch's compute (moe_a2a_overlap)"
                               : !c.overlapped        ? "on the critical path"
                               : !c.missing.empty() ? "on the critical path (no " + c.missing + " to hide behind)"
                               : c.behind.empty()   ? "overlapped with the pass"
                                                    : "behind " + c.behind + outlasts) +
                              where;
      o += Line("  %-34s %-9s %-22s %10s %10.1f %10.1f %8s  %s\n", c.name.c_str(), "comm", (ToString(c.group) + " " + ToString(c.kind)).c_str(), "",
                c.bytes / 1e6, c.time_s * 1e6, "", how.c_str());
    }
    if (!p.comms.empty()) o += Line("  %-34s %-9s %-22s %10s %10s %10.1f\n", "exposed communication", "", "", "", "", p.exposed_comm_s * 1e6);
  }
  if (any_graphed) o += "\n* launched in a CUDA graph (the framework's cuda_graph_scope): the host issues the graph, not its kernels\n";
  // The data-parallel collectives of the step, beside its micro batches: the step's breakdown counts what of them shows.
  if (!w.rank_state.empty()) {
    const StepDpCollectives dp = DpCollectivesOf(s, w.rank_state[0]);
    std::string rows;
    const auto row = [&](const CommOp& c, const char* overlapped_with) {
      if (c.bytes <= 0) return;
      const GroupSpan span = layout.Span(c.group);
      const std::string where = span.on_nvlink() ? "" : Line("; over the NICs (%d NVLink domains)", span.domains);
      const std::string how = c.overlapped ? std::string("overlapped with the ") + overlapped_with + " but for the last bucket" : "after the passes, on the critical path";
      rows += Line("  %-34s %-9s %-22s %10s %10.1f %10.1f %8s  %s\n", c.name.str().c_str(), "comm", (ToString(c.group) + " " + ToString(c.kind)).c_str(), "",
                   c.bytes / 1e6, CollectiveTime(s, c) * 1e6, "", (how + where).c_str());
    };
    for (const CommOp& c : dp.gradients) row(c, "backward");
    for (const CommOp& c : dp.parameters) row(c, "next forward");
    if (!rows.empty()) o += "\nonce per step, on the first pipeline stage (its parameters' share)\n" + rows;
  }
  // Multi-token prediction's modules are passes already listed, run again on the last stage (step_costs.cc).
  if (w.mtp_layers > 0) {
    o += Line("\nmulti-token prediction: %d module%s on the last pipeline stage, each one more layer of the last layer's kind\n"
              "  (forward, backward and any recompute, as listed) and one more LM head and loss pass\n",
              w.mtp_layers, w.mtp_layers == 1 ? "" : "s");
  }
  if (s.training.activation_offload_layers > 0) {
    const ActivationOffloadTimes off = ActivationOffload(s, w);
    o += Line("\nactivation offload, %d layers, each copy behind the next layer's pass\n", off.layers);
    o += Line("  %-34s %-9s %-22s %10s %10.1f %10.1f  %s\n", "activations to host (forward)", "copy", "host path", "", off.bytes / 1e6,
              off.copy_s * 1e6, Line("%.0f us exposed", off.forward_exposed_s * 1e6).c_str());
    o += Line("  %-34s %-9s %-22s %10s %10.1f %10.1f  %s\n", "activations back (backward)", "copy", "host path", "", off.bytes / 1e6,
              off.copy_s * 1e6, Line("%.0f us exposed", off.backward_exposed_s * 1e6).c_str());
  }
  return o;
}

}  // namespace trainsim::cli
