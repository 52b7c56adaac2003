// Where one micro batch's passes spend their time on one GPU, operator by
// operator and collective by collective: the figures the step costs are
// summed from (gpu_cost_model.h, collective_model.h, step_costs.h), laid out
// for people (`trainsim run --operators`) and for accuracy work. No figure
// here is computed differently from the step: a row is OperatorTime or
// CollectiveTime of the workload's own operator or collective.
#pragma once

#include <string>
#include <vector>

#include "models/workload.h"
#include "sim/core/scenario.h"

namespace trainsim {

struct OperatorRow {
  std::string name;
  OpClass cls = OpClass::kMemoryBound;
  long m = 0, n = 0, k = 0, batch = 1;  // GEMMs
  double flops = 0;
  double bytes = 0;   // HBM traffic
  double time_s = 0;  // OperatorTime
  bool host_wait = false;  // not an operator: the GPU waiting for the host to issue the pass's kernels
  int kernels = 0;         // the CUDA kernels it launches (0: no work, nothing launched)
  bool graphed = false;    // launched in a CUDA graph (the framework's cuda_graph_scope)
};

struct CommRow {
  std::string name;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CommGroup group = CommGroup::kTensor;
  double bytes = 0;
  double time_s = 0;        // CollectiveTime over the placed group
  bool overlapped = false;   // on a side stream behind compute (false: on the critical path)
  std::string behind;       // the operator it hides behind; empty: the whole pass (or none)
  std::string missing;      // the operator it would hide behind, absent from the pass (a frozen weight's gradient GEMM): nothing hides it
  bool beside_other_micro_batch = false;  // an expert collective under moe_a2a_overlap: beside another micro batch's compute
};

// One pass (forward, backward or recompute) of one unit: a layer kind, or
// the embedding or the LM head and loss.
struct PassBreakdown {
  std::string unit;   // "layer (dense MLP, full attention) x 80" (x: that kind's layers in the model), "embedding", "LM head and loss"
  std::string pass;   // "forward", "backward", "recompute"
  std::vector<OperatorRow> ops;
  std::vector<CommRow> comms;
  double compute_s = 0;        // sum of the operators
  double exposed_comm_s = 0;   // ExposedCommTime: what the pass's collectives add to it
};

// Every pass of the workload with operators, in model order (embedding,
// each layer kind, head); passes without operators are left out.
std::vector<PassBreakdown> BreakDownPasses(const Scenario& s, const Workload& w);

}  // namespace trainsim
