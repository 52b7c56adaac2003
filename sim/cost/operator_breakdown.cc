#include "sim/cost/operator_breakdown.h"

#include "sim/cost/collective_model.h"
#include "sim/cost/gpu_cost_model.h"
#include "sim/cost/host_issue.h"
#include "sim/cost/step_costs.h"

namespace trainsim {

namespace {

std::string UnitName(const Workload& w, size_t kind) {
  const LayerKind& k = w.kinds[kind].kind;
  int layers = 0;
  for (int i : w.kind_of_layer) layers += size_t(i) == kind;
  std::string attention = k.attention_span == 0 ? "full attention"
                          : k.chunked           ? "chunked attention " + std::to_string(k.attention_span)
                                                : "sliding window " + std::to_string(k.attention_span);
  if (!k.rotary) attention += ", NoPE";
  return std::string("layer (") + (k.moe ? "MoE MLP" : "dense MLP") + ", " + attention + ") x " + std::to_string(layers);
}

PassBreakdown Break(const Scenario& s, const PassWork& pw, std::string unit, std::string pass, bool backward) {
  PassBreakdown b;
  b.unit = std::move(unit);
  b.pass = std::move(pass);
  const GpuProfile& g = s.node.gpu;
  for (const Operator& op : pw.ops) {
    OperatorRow r;
    r.name = op.name.str();
    r.cls = op.cls;
    r.m = op.m, r.n = op.n, r.k = op.k, r.batch = op.batch;
    r.flops = op.flops;
    r.bytes = op.bytes;
    r.time_s = OperatorTime(op, g, s.training.precision, backward);
    r.kernels = op.LaunchedKernels();
    r.graphed = op.graphed;
    b.compute_s += r.time_s;
    b.ops.push_back(std::move(r));
  }
  // Where the GPU waits for the host to issue short kernels (host_issue.h): a row of its own.
  if (s.host_s_per_kernel() > 0 && !pw.ops.empty()) {
    std::vector<double> op_s;
    for (const OperatorRow& r : b.ops) op_s.push_back(r.time_s);
    const double wait_s = HostIssuedPassTime(pw.ops, op_s.data(), s.host_s_per_kernel()) - b.compute_s;
    if (wait_s > 0) {
      OperatorRow r;
      r.name = "GPU waits for the host";
      r.host_wait = true;
      r.time_s = wait_s;
      b.compute_s += wait_s;
      b.ops.push_back(std::move(r));
    }
  }
  // Under moe_a2a_overlap a forward's or backward's expert collectives run beside
  // another micro batch's compute (a recompute's are not overlapped).
  const bool all_to_all_overlapped = s.parallelism.moe_a2a_overlap && pass != "recompute";
  for (const CommOp& c : pw.comms) {
    CommRow r;
    r.name = c.name.str();
    r.kind = c.kind;
    r.group = c.group;
    r.bytes = c.bytes;
    r.time_s = CollectiveTime(s, c);
    r.overlapped = c.overlapped;
    if (c.overlapped && c.partner >= 0 && size_t(c.partner) < pw.ops.size()) r.behind = pw.ops[size_t(c.partner)].name.str();
    if (c.overlapped && c.partner == kNoPartner) r.missing = c.overlaps_op.str();
    r.beside_other_micro_batch = all_to_all_overlapped && c.group == CommGroup::kExpert;
    b.comms.push_back(std::move(r));
  }
  b.exposed_comm_s = ExposedCommTime(s, pw, b.compute_s, backward);
  // The step's own rule for those expert all-to-alls.
  if (all_to_all_overlapped) {
    double all_to_all_s = AllToAllTime(s, pw);
    b.exposed_comm_s = WithAllToAllOverlap(s, b.exposed_comm_s, all_to_all_s, b.compute_s);
  }
  return b;
}

}  // namespace

std::vector<PassBreakdown> BreakDownPasses(const Scenario& s, const Workload& w) {
  std::vector<PassBreakdown> out;
  auto add = [&](const PassWork& pw, const std::string& unit, const char* pass, bool backward) {
    if (!pw.ops.empty() || !pw.comms.empty()) out.push_back(Break(s, pw, unit, pass, backward));
  };
  add(w.embedding_forward, "embedding", "forward", false);
  add(w.embedding_backward, "embedding", "backward", true);
  for (size_t k = 0; k < w.kinds.size(); ++k) {
    const std::string unit = UnitName(w, k);
    add(w.kinds[k].forward, unit, "forward", false);
    add(w.kinds[k].backward, unit, "backward", true);
    add(w.kinds[k].recompute, unit, "recompute", false);
  }
  // What each model chunk adds once per micro batch beside its layers (step_costs.cc), shown for the
  // first chunk: sharded data parallel's edge units, delayed fp8 scaling's amax agreement.
  PassWork chunk_forward, chunk_backward;
  for (const bool backward : {false, true}) {
    for (const CommOp& c : w.ChunkCollectives(0, backward)) {
      if (c.bytes > 0) (backward ? chunk_backward : chunk_forward).comms.push_back(c);
    }
  }
  const std::string chunk = "each model chunk (" + std::to_string(w.stages.VirtualStageLayers(0)) + " layers), beside its layers";
  add(chunk_forward, chunk, "forward", false);
  add(chunk_backward, chunk, "backward", true);
  add(w.head_forward, "LM head and loss", "forward", false);
  add(w.head_backward, "LM head and loss", "backward", true);
  return out;
}

}  // namespace trainsim
