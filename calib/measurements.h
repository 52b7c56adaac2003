// The measurements file: what a calibration backend measured, before any
// fitting. The CPU backend (calib/cpu_backend.h) fills it in memory; the
// standalone CUDA program (calib/cuda/) writes the same YAML with printf, so
// that fitting (calib/fit.h) happens in trainsim, never on the GPU node.
// Times are seconds; `bytes` of memory-bound kernels are what the workload
// model counts for the operator (2 bytes per activation element), so that the
// fitted bandwidth is in the model's units whatever the measured data type.
#pragma once

#include <string>
#include <vector>

#include "calib/layer_step.h"
#include "sim/core/error.h"

namespace trainsim::calib {

// One GEMM of the sweep: row-major [m,k] x [k,n], `batch` of them.
struct GemmSample {
  long m = 0, n = 0, k = 0, batch = 1;
  std::string layout = "nn";  // nn, nt (B stored transposed), tn (A stored transposed)
  // fp32, tf32, bf16, fp16, or a low-precision format of calib/low_precision_formats.h
  // (fp8, mxfp8, nvfp4: quantized inputs with their scales, bf16 output).
  std::string precision = "fp32";
  double seconds = 0;
  // A per-tensor fp8 GEMM measured with cuBLASLt's fast accumulation off
  // (partial sums promoted to fp32), as training frameworks run the
  // backward's; the others accumulate fast, as the forward's.
  bool split_accumulator = false;
  double Flops() const { return 2.0 * double(m) * n * k * batch; }
};

// Expert GEMMs measured as Transformer Engine issues them (calib/plan.h
// GroupedGemmShape): one expert's GEMM whose batch is the experts (at least
// 2), its `seconds` for all of them, from the first launch to the last one's
// end, issued round robin on `streams` streams (not one batched call).
struct GroupedGemmSample {
  GemmSample gemm;
  int streams = 1;
  long experts() const { return gemm.batch; }
};

// A memory-bound kernel ("copy" is the streaming-bandwidth test).
struct MemorySample {
  std::string kernel;  // one of MemoryKernelNames()
  double bytes = 0;  // workload-model bytes (bf16-equivalent)
  double seconds = 0;
};

// The kernels a measurements file's memory section may hold: "copy" and the
// memory-bound kernels both backends run (calib/cpu_ops.h, calib/cuda/),
// forward and backward, which calib/plan.h KernelForOperator names.
const std::vector<std::string>& MemoryKernelNames();

// The unfused attention core (scores, softmax, values) of one layer shape.
struct AttentionSample {
  int micro_batch = 1, heads = 0, kv_heads = 0, seq_len = 0, head_dim = 0;
  double forward_s = 0, backward_s = 0;
  // Causal FLOPs as the flash-attention convention counts them (half the scores).
  double ForwardFlops() const { return 4.0 * micro_batch * heads * double(seq_len) * seq_len * head_dim * 0.5; }
};

// A whole layer step, forward and backward, and how well it agreed with the
// reference implementation (max |a-b| / max |b| over the checked outputs; <0: not checked).
struct LayerSample {
  LayerShape shape;
  double forward_s = 0, backward_s = 0;
  double max_rel_error = -1;
};

// A GEMM run back to back for `run_s` seconds: the rate it keeps up once the
// GPU meets its power cap, which a training step's GEMMs run at, where the
// sweep's short, separated GEMMs run at burst clocks. `gemm.seconds` is per
// GEMM over the run's last third.
struct SustainedSample {
  GemmSample gemm;
  double run_s = 0;
};

struct CollectiveSample {
  std::string op;     // all-reduce, all-gather, reduce-scatter, send-recv, all-to-all
  std::string scope;  // intra-node (threads, NVLink) or inter-node
  int ranks = 0;
  double bytes = 0;   // buffer size per rank, as nccl-tests counts "size"
  double seconds = 0;
};

struct StorageSample {
  int clients = 0;
  double bytes_per_client = 0;
  std::vector<double> write_s, read_s;  // per client (write includes fsync)
};

struct Measurements {
  std::string backend;  // cpu | cuda
  std::string host, date, device;
  std::string dtype = "fp32";
  int compute_units = 1;         // SMs (GPU) or threads (CPU): the wave-quantization width
  double memory_bytes = 0;       // device (or host) memory
  // The last-level cache (a GPU's L2): copies whose source and destination fit
  // in it run at the cache's rate, not the memory's, and the fit leaves them
  // out of the bandwidth. 0: not recorded (every copy counts).
  double cache_bytes = 0;
  double host_to_device_bytes_per_s = 0;  // 0: not measured
  double device_to_host_bytes_per_s = 0;
  // The node's host path: every visible GPU copying at once, aggregate (what
  // a node profile's pcie_gb_per_s means: async checkpoint staging and
  // activation offload share it). 0 GPUs: not measured.
  int node_host_copy_gpus = 0;
  double node_host_to_device_bytes_per_s = 0;
  double node_device_to_host_bytes_per_s = 0;
  std::vector<GemmSample> gemm;
  std::vector<SustainedSample> sustained;  // empty: not measured
  std::vector<GroupedGemmSample> grouped_gemm;  // empty: not measured (no scenario's experts in the plan)
  double launch_s = 0;  // a tiny GEMM: the per-kernel floor
  std::vector<MemorySample> memory;
  std::vector<AttentionSample> attention;
  std::vector<LayerSample> layers;
  std::vector<CollectiveSample> collectives;
  std::vector<StorageSample> storage;
  // What the run noticed that may spoil its figures (the machine's speed
  // changing while it measured), one line each: told the user, not written.
  std::vector<std::string> warnings;
};

// Writes the YAML text (the format the CUDA program also emits).
std::string MeasurementsYaml(const Measurements& m);

// Parses a measurements file strictly: "FILE:LINE: KEY: what" on bad input.
Expected<Measurements> LoadMeasurements(const std::string& path);

// Writes `text` to `path` atomically: a temporary file beside it, flushed, then
// renamed over it. Returns "" or a one-line error, among them
// NotAFileToWrite's (sim/io/data_paths.h: never a device or pipe replaced by a file).
std::string WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace trainsim::calib
