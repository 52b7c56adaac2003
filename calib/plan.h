// What to measure: the microbenchmarks the workload model needs for a list of
// layer shapes. GEMM shapes and memory-bound kernels come from BuildWorkload
// of each shape's one-layer scenario (calib/layer_prediction.h), so the
// sweep covers exactly the operators a prediction will use. The plan is run
// in-process by the CPU backend, or written as text for the CUDA program:
//   layer HIDDEN FFN HEADS KV_HEADS SEQ MICRO_BATCH
//   gemm M N K BATCH [LAYOUT]
//   grouped M N K EXPERTS LAYOUT
//   memory KERNEL BYTES HIDDEN FFN HEADS KV_HEADS SEQ MICRO_BATCH
//   copy FLOATS
#pragma once

#include <string>
#include <vector>

#include "calib/layer_step.h"
#include "models/workload.h"
#include "sim/core/error.h"

namespace trainsim::calib {

// A GEMM as the layer step runs it: row-major op(A)[m,k] x op(B)[k,n], and
// which operand is stored transposed ("nn", "nt": B^T as for a data gradient,
// "tn": A^T as for a weight gradient). The cost model sees only m, n, k; the
// sweep measures each in the layout the layer uses, so the fit averages over
// the layouts in the proportions the workload has them.
struct GemmShape {
  long m = 0, n = 0, k = 0, batch = 1;
  std::string layout = "nn";
  bool operator<(const GemmShape& o) const;
  bool operator==(const GemmShape& o) const {
    return m == o.m && n == o.n && k == o.k && batch == o.batch && layout == o.layout;
  }
};

// Expert GEMMs as Transformer Engine's GroupedLinear issues them: `experts`
// GEMMs of m x n x k, one cuBLAS call each, round robin over its compute
// streams (TE's multi_stream_cublas_gemm, 4 streams, TE 2.x). The cost model
// prices such an operator as its streams fill the SMs, a few experts' tiles
// at a time (StreamedWaveFill, sim/cost/gpu_cost_model.h); measured this way
// beside the batched GEMM of the sweep, calibration says whether that holds at
// a scenario's expert shapes.
struct GroupedGemmShape {
  long m = 0, n = 0, k = 0, experts = 2;
  std::string layout = "nn";
  bool operator<(const GroupedGemmShape& o) const;
};

// A memory-bound kernel of calib/cpu_ops.h run at a layer shape:
// rmsnorm_fwd, rmsnorm_bwd, rotary_fwd, rotary_bwd, softmax_fwd, softmax_bwd,
// swiglu_fwd, swiglu_bwd, add.
struct MemoryKernel {
  std::string kernel;
  double bytes = 0;  // what the workload model counts for it
  LayerShape shape;
};

struct CalibrationPlan {
  std::vector<LayerShape> layers;
  std::vector<GemmShape> gemms;       // forward and backward shapes, deduplicated
  std::vector<GroupedGemmShape> grouped;  // a scenario's expert GEMMs as TE issues them (AddWorkloadGemms)
  std::vector<MemoryKernel> memory;   // one per memory-bound operator of each layer
  std::vector<long> copy_floats;      // streaming test sizes
};

// The kernel that implements a workload operator (by its name), or "".
std::string KernelForOperator(const std::string& op_name);
// The layout calib/layer_step.h runs a workload GEMM in (by its name).
std::string LayoutForOperator(const std::string& op_name);

CalibrationPlan MakePlan(const std::vector<LayerShape>& layers);

// Adds the GEMMs a training scenario runs per GPU (each layer kind's forward
// and backward, the embedding's and the LM head's: after TP, EP and ETP, MoE
// experts batched as the cost model runs them) to the plan's sweep, each in
// the layout its operator name implies, so that the fitted curves cover the
// shapes that scenario's prediction uses (`calibrate --scenario`), and its
// expert GEMMs once more as Transformer Engine issues them (`grouped`).
// Returns how many shapes were new.
int AddWorkloadGemms(const Workload& w, CalibrationPlan& p);
// The same for the scenario file `file` with `--set` overrides: its load or
// workload error (FILE:LINE: KEY) or how many shapes were new.
Expected<int> AddScenarioGemms(const std::string& file, const std::vector<std::string>& overrides, CalibrationPlan& p);

std::string PlanText(const CalibrationPlan& p);
Expected<CalibrationPlan> ParsePlanText(const std::string& text, const std::string& file);

// Parses "H:F:HEADS:KV:SEQ:MB" (the --shape flag); "" or an error message.
std::string ParseShapeSpec(const std::string& spec, LayerShape& out);

}  // namespace trainsim::calib
