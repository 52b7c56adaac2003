// trainsim-calib-cuda: the GPU measuring program. Reads a plan written by
// `trainsim calibrate --write-plan` (layer shapes, GEMM shapes, memory-bound
// kernels, copy sizes), measures on one GPU with cuBLAS and CUDA kernels,
// optionally NCCL collectives, and writes a measurements file (the format of
// calib/measurements.h) for `trainsim calibrate --backend cuda --measurements`.
// Every plan GEMM is timed in the layer step's math (tf32 or fp32, float32
// storage), in bf16 (cuBLAS) and in each low-precision format of
// calib/low_precision_formats.h the device has (fp8: compute capability >=
// 8.9; mxfp8 and nvfp4: >= 10.0) where the shape meets cuBLASLt's rules for it
// (calib/cuda/low_precision_gemm.h, recorded in the "nt" layout they run in;
// fp8 both with fast accumulation and with split, fp32-promoting accumulation);
// a format the device lacks is skipped with one line on stderr, a shape it
// cannot run with one line per shape.
//   trainsim-calib-cuda --plan PLAN.txt --out MEAS.yaml [--nccl] [--mpi] [--math tf32|fp32] [--device N] [--sustain-s S]
//   trainsim-calib-cuda --check      numerical checks of the GPU layer step and low-precision GEMMs (exit 77: no GPU)
// Needs only the CUDA toolkit (cuBLAS, cuBLASLt), NCCL and optionally MPI.
#include <cuda_bf16.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "calib/cuda/cuda_ops.h"
#include "calib/cuda/gpu_check.h"
#include "calib/cuda/low_precision_gemm.h"
#include "calib/gemm_layout.h"
#include "calib/layer_step.h"
#include "calib/text_format.h"
#ifdef TRAINSIM_HAVE_NCCL
#include "calib/cuda/nccl_bench.h"
#endif
#ifdef TRAINSIM_HAVE_MPI
#include <mpi.h>
#endif

using namespace trainsim::calib;

namespace {

constexpr int kExitNoDevice = 3;
constexpr int kExitSkip = 77;  // ctest SKIP_RETURN_CODE

struct GemmItem { long m, n, k, batch; std::string layout; };
struct GroupedItem { long m, n, k, experts; std::string layout; };
// Transformer Engine's compute streams for a grouped GEMM (TE 2.x
// transformer_engine/common/util/multi_stream.cpp, num_compute_streams).
constexpr int kTeGroupedGemmStreams = 4;
struct MemoryItem { std::string kernel; double bytes; LayerShape shape; };
struct Plan {
  std::vector<LayerShape> layers;
  std::vector<GemmItem> gemms;
  std::vector<GroupedItem> grouped;
  std::vector<MemoryItem> memory;
  std::vector<long> copies;
};

// The node's host path: every visible GPU copies `bytes` between its own
// memory and pinned host memory at once, timed on the host clock from the
// first launch to the last stream's end; the best of three, per direction.
// (One GPU alone reaches its own PCIe or NVLink-C2C link; all of them at once
// meet the switches' uplinks, the CPUs' root ports and host memory.)
void NodeHostCopy(int devices, size_t bytes, double* h2d_s, double* d2h_s) {
  std::vector<void*> host(size_t(devices), nullptr), dev(size_t(devices), nullptr);
  std::vector<cudaStream_t> streams(size_t(devices), nullptr);
  for (int d = 0; d < devices; ++d) {
    CudaCheck(cudaSetDevice(d), "cudaSetDevice");
    CudaCheck(cudaMallocHost(&host[size_t(d)], bytes), "cudaMallocHost");
    CudaCheck(cudaMalloc(&dev[size_t(d)], bytes), "cudaMalloc");
    CudaCheck(cudaStreamCreate(&streams[size_t(d)]), "cudaStreamCreate");
  }
  auto all_at_once = [&](bool to_device) {
    double best = 1e30;
    for (int rep = 0; rep < 4; ++rep) {  // the first is a warm-up
      const auto t0 = std::chrono::steady_clock::now();
      for (int d = 0; d < devices; ++d) {
        CudaCheck(cudaSetDevice(d), "cudaSetDevice");
        const size_t i = size_t(d);
        CudaCheck(to_device ? cudaMemcpyAsync(dev[i], host[i], bytes, cudaMemcpyHostToDevice, streams[i])
                            : cudaMemcpyAsync(host[i], dev[i], bytes, cudaMemcpyDeviceToHost, streams[i]),
                  "cudaMemcpyAsync");
      }
      for (int d = 0; d < devices; ++d) CudaCheck(cudaStreamSynchronize(streams[size_t(d)]), "cudaStreamSynchronize");
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (rep > 0) best = std::min(best, s);
    }
    return best;
  };
  *h2d_s = all_at_once(true);
  *d2h_s = all_at_once(false);
  for (int d = 0; d < devices; ++d) {
    cudaSetDevice(d);
    cudaStreamDestroy(streams[size_t(d)]);
    cudaFree(dev[size_t(d)]);
    cudaFreeHost(host[size_t(d)]);
  }
}

bool ReadShape(std::istringstream& in, LayerShape& s) {
  return bool(in >> s.hidden >> s.ffn_hidden >> s.heads >> s.kv_heads >> s.seq_len >> s.micro_batch) && s.Valid();
}

// The plan text of calib/plan.h; exits with FILE:LINE on a malformed line.
// calib/plan.cc parses the same text inside trainsim (ParsePlanText); this
// program reads it again because it builds with the CUDA toolkit alone.
Plan ReadPlan(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "trainsim-calib-cuda: cannot read the plan '%s'\n", path.c_str());
    std::exit(2);
  }
  Plan p;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string kind, extra;
    ls >> kind;
    bool ok = false;
    if (kind == "layer") {
      LayerShape s;
      ok = ReadShape(ls, s);
      p.layers.push_back(s);
    } else if (kind == "gemm") {
      GemmItem g{};
      ok = bool(ls >> g.m >> g.n >> g.k >> g.batch) && g.m > 0 && g.n > 0 && g.k > 0 && g.batch > 0;
      if (ok && (ls >> g.layout)) ok = g.layout == "nn" || g.layout == "nt" || g.layout == "tn";
      else g.layout = "nn";
      p.gemms.push_back(g);
    } else if (kind == "grouped") {
      GroupedItem g{};
      ok = bool(ls >> g.m >> g.n >> g.k >> g.experts >> g.layout) && g.m > 0 && g.n > 0 && g.k > 0 && g.experts > 1 &&
           (g.layout == "nn" || g.layout == "nt" || g.layout == "tn");
      p.grouped.push_back(g);
    } else if (kind == "memory") {
      MemoryItem mi;
      ok = bool(ls >> mi.kernel >> mi.bytes) && mi.bytes > 0 && ReadShape(ls, mi.shape);
      p.memory.push_back(mi);
    } else if (kind == "copy") {
      long c = 0;
      ok = bool(ls >> c) && c > 0;
      p.copies.push_back(c);
    }
    if (!ok || (ls >> extra)) {
      std::fprintf(stderr, "%s:%d: %s: malformed plan line '%s'\n", path.c_str(), n, kind.c_str(), line.c_str());
      std::exit(2);
    }
  }
  if (p.layers.empty() || p.gemms.empty()) {
    std::fprintf(stderr, "%s: the plan has no layer or GEMM entries\n", path.c_str());
    std::exit(2);
  }
  return p;
}

// A memory-bound kernel of the plan on fresh device buffers; returns seconds per call.
double TimeMemoryKernel(CudaOps& ops, const MemoryItem& mi) {
  const LayerShape& s = mi.shape;
  const int T = int(s.tokens()), h = s.hidden, f = s.ffn_hidden;
  const size_t blocks = size_t(s.micro_batch) * s.heads, scores = blocks * s.seq_len * s.seq_len;
  const float scale = 1.0f / std::sqrt(float(s.head_dim()));
  std::vector<DeviceBuffer> b;
  auto buf = [&](size_t n) {
    b.emplace_back(n);
    std::vector<float> init(n);
    FillDeterministic(init.data(), n, b.size(), 1.0f);
    ops.Upload(b.back().data(), init);
    return b.back().data();
  };
  b.reserve(8);
  const std::string& k = mi.kernel;
  const cudaStream_t st = ops.stream();
  if (k == "rmsnorm_fwd") {
    float *x = buf(size_t(T) * h), *g = buf(h), *y = buf(size_t(T) * h), *r = buf(T);
    return TimeOnStream(st, [&] { ops.RmsNormForward(x, g, y, r, T, h); });
  }
  if (k == "rmsnorm_bwd") {
    float *dy = buf(size_t(T) * h), *x = buf(size_t(T) * h), *g = buf(h), *r = buf(T), *res = buf(size_t(T) * h),
          *dx = buf(size_t(T) * h), *dg = buf(h);
    return TimeOnStream(st, [&] { ops.RmsNormBackward(dy, x, g, r, res, dx, dg, T, h); });
  }
  if (k == "rotary_fwd" || k == "rotary_bwd") {
    float* q = buf(size_t(T) * s.qkv_width());
    return TimeOnStream(st, [&] { ops.RotaryForward(q, s.micro_batch, s.seq_len, s.heads, s.kv_heads, s.head_dim()); });
  }
  if (k == "softmax_fwd") {
    float* p = buf(scores);
    return TimeOnStream(st, [&] { ops.SoftmaxForward(p, blocks, s.seq_len, scale); });
  }
  if (k == "softmax_bwd") {
    float *p = buf(scores), *dp = buf(scores);
    return TimeOnStream(st, [&] { ops.SoftmaxBackward(p, dp, blocks, s.seq_len, scale); });
  }
  if (k == "swiglu_fwd") {
    float *u = buf(size_t(T) * 2 * f), *g = buf(size_t(T) * f);
    return TimeOnStream(st, [&] { ops.SwigluForward(u, g, T, f); });
  }
  if (k == "swiglu_bwd") {
    float *u = buf(size_t(T) * 2 * f), *dg = buf(size_t(T) * f), *du = buf(size_t(T) * 2 * f);
    return TimeOnStream(st, [&] { ops.SwigluBackward(u, dg, du, T, f); });
  }
  if (k == "add") {
    float *a = buf(size_t(T) * h), *c = buf(size_t(T) * h), *o = buf(size_t(T) * h);
    return TimeOnStream(st, [&] { ops.Add(a, c, o, size_t(T) * h); });
  }
  throw std::runtime_error("plan names an unknown memory kernel '" + k + "'");
}

int Usage() {
  std::fprintf(stderr,
               "usage: trainsim-calib-cuda --plan PLAN.txt --out MEASUREMENTS.yaml [--nccl] [--mpi] [--math tf32|fp32] [--device N]\n"
               "                           [--sustain-s S]   (the sustained-rate run per precision, 1-600 s, default 15; 0 skips it)\n"
               "       trainsim-calib-cuda --check\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string plan_path, out_path, math_name = "tf32";
  double sustain_s = 15;
  bool nccl = false, use_mpi = false, check_only = false;
  int device = -1;  // --device, else 0, or under --mpi the rank's index among its host's ranks
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(Usage());
      return argv[++i];
    };
    if (a == "--plan") plan_path = value();
    else if (a == "--out") out_path = value();
    else if (a == "--nccl") nccl = true;
    else if (a == "--mpi") use_mpi = true;
    else if (a == "--check") check_only = true;
    else if (a == "--math") math_name = value();
    else if (a == "--device") {
      // A number and nothing else: atoi would read "abc" as device 0.
      const std::string v = value();
      char* end = nullptr;
      const long d = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || d < 0 || d > 1024) return Usage();
      device = int(d);
    } else if (a == "--sustain-s") {
      const std::string v = value();
      char* end = nullptr;
      sustain_s = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0') return Usage();
    } else return Usage();
  }
  if (math_name != "tf32" && math_name != "fp32") return Usage();
  // A run under a second is mostly its ramp: its rate says nothing sustained.
  if (!(sustain_s == 0 || (sustain_s >= 1 && sustain_s <= 600))) return Usage();
  if (!check_only && (plan_path.empty() || out_path.empty())) return Usage();
#ifdef TRAINSIM_HAVE_MPI
  if (use_mpi) MPI_Init(&argc, &argv);
#else
  if (use_mpi) {
    std::fprintf(stderr, "trainsim-calib-cuda: --mpi: this build has no MPI\n");
    return 2;
  }
#endif
  std::string why;
  const int devices = CudaDeviceCount(&why);
  if (devices == 0) {
    std::fprintf(stderr, "trainsim-calib-cuda: no CUDA device: %s\n", why.c_str());
    return check_only ? kExitSkip : kExitNoDevice;
  }
  if (device < 0) {
    device = 0;
#ifdef TRAINSIM_HAVE_MPI
    // One rank per GPU: every rank on GPU 0 would time its sweep under the
    // others' load while the rest of the node idled.
    if (use_mpi) {
      MPI_Comm node;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
      int local = 0;
      MPI_Comm_rank(node, &local);
      MPI_Comm_free(&node);
      device = local % devices;
    }
#endif
  }
  if (device >= devices) {
    std::fprintf(stderr, "trainsim-calib-cuda: --device %d: this node has %d CUDA devices\n", device, devices);
    return 2;
  }
  try {
    CudaCheck(cudaSetDevice(device), "cudaSetDevice");
    std::string detail;
    const double err32 = GpuLayerCheck(CheckShape(), GemmMath::kFp32, &detail);
    std::fprintf(stderr, "layer step check (fp32 GEMMs) vs host reference: max rel error %.2e (%s)\n", err32, detail.c_str());
    const double err_tf32 = GpuLayerCheck(CheckShape(), GemmMath::kTf32, &detail);
    std::fprintf(stderr, "layer step check (tf32 GEMMs) vs host reference: max rel error %.2e (%s)\n", err_tf32, detail.c_str());
    // Low-precision formats: each checked here, before any timing; a device,
    // shape or cuBLASLt that cannot run one costs that format's samples only,
    // a wrong result fails the check.
    struct LowPrecisionSweep {
      const LowPrecisionFormat* f;
      int samples;
    };
    std::vector<LowPrecisionSweep> lowp;  // the formats to sweep
    bool lowp_wrong = false;
    for (const auto& f : kLowPrecisionFormats) {
      const std::string problem = LowPrecisionDeviceProblem(f, device);
      if (!problem.empty()) {
        std::fprintf(stderr, "%s GEMMs skipped: %s\n", f.name, problem.c_str());
        continue;
      }
      try {
        // Two 128-row scale tiles, one partial; fp8 also batched (block-scaled formats run unbatched).
        const double err = LowPrecisionGemmCheck(f, 160, 192, 256, f.BlockScaled() ? 1 : 2, &detail);
        if (err < 0) {
          std::fprintf(stderr, "%s GEMMs skipped: %s\n", f.name, detail.c_str());
        } else {
          std::fprintf(stderr, "%s GEMM check vs host reference: %s\n", f.name, detail.c_str());
          if (err < kLowPrecisionCheckTolerance) {
            lowp.push_back({&f, 0});
          } else {
            lowp_wrong = true;
            std::fprintf(stderr, "%s GEMMs skipped: the %s GEMM disagrees with the host reference\n", f.name, f.name);
          }
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s GEMMs skipped: %s\n", f.name, e.what());
      }
    }
    const bool pass = err32 < 1e-4 && err_tf32 < 2e-2;
    if (check_only) return pass && !lowp_wrong ? 0 : 1;
    if (!pass) {
      std::fprintf(stderr, "trainsim-calib-cuda: the GPU layer step disagrees with the host reference: not measuring\n");
      return 1;
    }
    const Plan plan = ReadPlan(plan_path);
    const GemmMath math = math_name == "tf32" ? GemmMath::kTf32 : GemmMath::kFp32;
    CudaOps ops(math);
    cudaDeviceProp prop{};
    CudaCheck(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    std::ostringstream y;
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    y << "# trainsim calibration measurements (seconds; memory bytes as the workload model counts them)\n"
      << "trainsim_measurements: 1\nbackend: cuda\nhost: " << Quote(host) << "\ndate: " << Quote(date)
      << "\ndevice: " << Quote(std::string(prop.name) + " (float32 storage, " + math_name + " GEMMs)")
      << "\ndtype: " << math_name << "\ncompute_units: " << prop.multiProcessorCount
      << "\nmemory_bytes: " << Num(double(prop.totalGlobalMem)) << "\ncache_bytes: " << Num(double(prop.l2CacheSize)) << "\n";
    // Launch floor: a tiny GEMM.
    {
      DeviceBuffer a(64), b(64), c(64);
      const double t = TimeOnStream(ops.stream(), [&] { ops.Gemm(false, false, 8, 8, 8, 1, a.data(), 8, b.data(), 8, 0, c.data(), 8); }, 50);
      y << "launch_s: " << Num(t) << "\n";
    }
    // Host <-> device copies of 256 MiB through pinned memory.
    {
      const size_t bytes = size_t(256) << 20;
      void* pinned = nullptr;
      CudaCheck(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
      DeviceBuffer d(bytes / sizeof(float));
      const double h2d = TimeOnStream(ops.stream(), [&] { cudaMemcpyAsync(d.data(), pinned, bytes, cudaMemcpyHostToDevice, ops.stream()); }, 3);
      const double d2h = TimeOnStream(ops.stream(), [&] { cudaMemcpyAsync(pinned, d.data(), bytes, cudaMemcpyDeviceToHost, ops.stream()); }, 3);
      cudaFreeHost(pinned);
      y << "host_to_device_bytes_per_s: " << Num(bytes / h2d) << "\ndevice_to_host_bytes_per_s: " << Num(bytes / d2h) << "\n";
      // Every GPU of the node at once (not under --mpi: there each rank
      // measures its own GPU while the others run their own work).
      if (!use_mpi) {
        double all_h2d = 0, all_d2h = 0;
        NodeHostCopy(devices, bytes, &all_h2d, &all_d2h);
        CudaCheck(cudaSetDevice(device), "cudaSetDevice");
        y << "node_host_copy: {gpus: " << devices << ", host_to_device_bytes_per_s: " << Num(devices * double(bytes) / all_h2d)
          << ", device_to_host_bytes_per_s: " << Num(devices * double(bytes) / all_d2h) << "}\n";
      }
    }
    std::string swept = math_name + ", bf16";
    for (const auto& l : lowp) swept += std::string(", ") + l.f->name;
    std::fprintf(stderr, "gemm sweep: %zu shapes (%s)\n", plan.gemms.size(), swept.c_str());
    y << "gemm:\n";
    for (const auto& g : plan.gemms) {
      DeviceBuffer a(size_t(g.batch) * g.m * g.k), b(size_t(g.batch) * g.k * g.n), c(size_t(g.batch) * g.m * g.n);
      FillRandom(a.data(), a.size(), 1, ops.stream());
      FillRandom(b.data(), b.size(), 2, ops.stream());
      const BatchPointers<float> ptr(a.data(), b.data(), c.data(), g.m, g.n, g.k, g.batch);
      // In the layout the layer step runs this GEMM in (B or A stored transposed).
      const GemmCall call = GemmCallFor(g.m, g.n, g.k, g.layout);
      const double t = TimeOnStream(ops.stream(), [&] {
        if (g.batch == 1) {
          ops.Gemm(call.ta, call.tb, int(g.m), int(g.n), int(g.k), 1, a.data(), call.lda, b.data(), call.ldb, 0, c.data(), int(g.n));
        } else {
          ops.BatchedGemm(call.ta, call.tb, int(g.m), int(g.n), int(g.k), 1, ptr.a, call.lda, ptr.b, call.ldb, 0, ptr.c, int(g.n),
                          int(g.batch));
        }
      });
      y << "  - {m: " << g.m << ", n: " << g.n << ", k: " << g.k << ", batch: " << g.batch << ", layout: " << g.layout
        << ", precision: " << math_name << ", s: " << Num(t) << "}\n";
      // The same shape and layout in bf16 (the precision training runs in: the
      // profile's bf16/fp16 keys); the float buffers are reused as bf16 arrays
      // (half their size).
      FillRandomBf16(a.data(), a.size(), 3, ops.stream());
      FillRandomBf16(b.data(), b.size(), 4, ops.stream());
      const double t_bf16 = TimeOnStream(ops.stream(), [&] {
        ops.GemmBf16(call.ta, call.tb, int(g.m), int(g.n), int(g.k), a.data(), b.data(), c.data(), int(g.batch));
      });
      y << "  - {m: " << g.m << ", n: " << g.n << ", k: " << g.k << ", batch: " << g.batch << ", layout: " << g.layout
        << ", precision: bf16, s: " << Num(t_bf16) << "}\n";
      // And in each low-precision format (the profile's fp8 / mxfp8 / nvfp4
      // keys), in the "nt" layout cuBLASLt's kernels need (low-precision
      // training transposes operands into it); the float buffers hold the
      // quantized operands and the bf16 output. Any failure skips this shape's
      // sample of that format only.
      for (auto& l : lowp) {
        const LowPrecisionFormat& f = *l.f;
        const std::string why_not = LowPrecisionShapeProblem(f, g.m, g.n, g.k, g.batch);
        if (!why_not.empty()) {
          std::fprintf(stderr, "  %s gemm %ldx%ldx%ld batch %ld skipped: %s\n", f.name, g.m, g.n, g.k, g.batch, why_not.c_str());
          continue;
        }
        try {
          LowPrecisionGemm lg(f, ops.stream(), g.m, g.n, g.k, g.batch);
          if (!lg.why_not().empty()) {
            std::fprintf(stderr, "  %s gemm %ldx%ldx%ld batch %ld skipped: %s\n", f.name, g.m, g.n, g.k, g.batch,
                         lg.why_not().c_str());
            continue;
          }
          FillRandomOperand(f, a.data(), size_t(g.batch) * g.m * g.k, 5, ops.stream());
          FillRandomOperand(f, b.data(), size_t(g.batch) * g.n * g.k, 6, ops.stream());
          CudaCheck(cudaGetLastError(), "FillRandomOperand");
          const double t_low = TimeOnStream(ops.stream(), [&] { lg.Run(a.data(), b.data(), c.data()); });
          y << "  - {m: " << g.m << ", n: " << g.n << ", k: " << g.k << ", batch: " << g.batch
            << ", layout: nt, precision: " << f.name << ", s: " << Num(t_low) << "}\n";
          ++l.samples;
          if (!f.BlockScaled()) {  // and as the backward runs it: fp32 promotions (the fit's split_accumulator_efficiency)
            LowPrecisionGemm split(f, ops.stream(), g.m, g.n, g.k, g.batch, /*split_accumulator=*/true);
            if (split.why_not().empty()) {
              const double t_split = TimeOnStream(ops.stream(), [&] { split.Run(a.data(), b.data(), c.data()); });
              y << "  - {m: " << g.m << ", n: " << g.n << ", k: " << g.k << ", batch: " << g.batch
                << ", layout: nt, precision: " << f.name << ", accumulator: split, s: " << Num(t_split) << "}\n";
            }
          }
        } catch (const std::exception& e) {
          std::fprintf(stderr, "  %s gemm %ldx%ldx%ld batch %ld skipped: %s\n", f.name, g.m, g.n, g.k, g.batch, e.what());
        }
      }
    }
    for (const auto& l : lowp) std::fprintf(stderr, "%s: %d of %zu shapes measured\n", l.f->name, l.samples, plan.gemms.size());
    if (!plan.grouped.empty()) {
      std::fprintf(stderr, "grouped expert GEMMs: %zu shapes (bf16, a cuBLAS call per expert on %d streams, as Transformer Engine)\n",
                   plan.grouped.size(), kTeGroupedGemmStreams);
      y << "grouped_gemm:\n";
      for (const auto& g : plan.grouped) {
        // Float buffers used as bf16 arrays of the same element count (half their bytes).
        DeviceBuffer a(size_t(g.experts) * g.m * g.k), b(size_t(g.experts) * g.k * g.n), c(size_t(g.experts) * g.m * g.n);
        FillRandomBf16(a.data(), a.size(), 3, ops.stream());
        FillRandomBf16(b.data(), b.size(), 4, ops.stream());
        const GemmCall call = GemmCallFor(g.m, g.n, g.k, g.layout);
        const double t = TimeOnStream(ops.stream(), [&] {
          ops.GroupedGemmBf16(call.ta, call.tb, int(g.m), int(g.n), int(g.k), a.data(), b.data(), c.data(), int(g.experts),
                              kTeGroupedGemmStreams);
        });
        y << "  - {m: " << g.m << ", n: " << g.n << ", k: " << g.k << ", experts: " << g.experts << ", streams: " << kTeGroupedGemmStreams
          << ", layout: " << g.layout << ", precision: bf16, s: " << Num(t) << "}\n";
      }
    }
    std::fprintf(stderr, "memory: %zu copies, %zu kernels\n", plan.copies.size(), plan.memory.size());
    y << "memory:\n";
    for (long n : plan.copies) {
      DeviceBuffer a{size_t(n)}, b{size_t(n)};
      const double t = TimeOnStream(ops.stream(), [&] { cudaMemcpyAsync(b.data(), a.data(), size_t(n) * sizeof(float), cudaMemcpyDeviceToDevice, ops.stream()); });
      y << "  - {kernel: copy, bytes: " << Num(2.0 * 2.0 * double(n)) << ", s: " << Num(t) << "}\n";
    }
    for (const auto& mi : plan.memory) {
      y << "  - {kernel: " << mi.kernel << ", bytes: " << Num(mi.bytes) << ", s: " << Num(TimeMemoryKernel(ops, mi)) << "}\n";
    }
    CudaCheck(cudaGetLastError(), "memory kernels");
    std::fprintf(stderr, "attention and layer steps: %zu shapes\n", plan.layers.size());
    std::ostringstream att, lay;
    for (const auto& s : plan.layers) {
      const LayerInputs in = MakeLayerInputs(s);
      LayerStep<CudaOps> layer(ops, s, in);
      layer.Forward();
      const double af = TimeOnStream(ops.stream(), [&] { layer.AttentionForwardOnly(); });
      const double ab = TimeOnStream(ops.stream(), [&] { layer.AttentionBackwardOnly(); });
      att << "  - {micro_batch: " << s.micro_batch << ", heads: " << s.heads << ", kv_heads: " << s.kv_heads
          << ", seq_len: " << s.seq_len << ", head_dim: " << s.head_dim() << ", forward_s: " << Num(af)
          << ", backward_s: " << Num(ab) << "}\n";
      const double lf = TimeOnStream(ops.stream(), [&] { layer.Forward(); });
      const double lb = TimeOnStream(ops.stream(), [&] { layer.Backward(); });
      CudaCheck(cudaGetLastError(), "layer step");
      // max_rel_error: this layer code against the host reference at the check shape.
      lay << "  - {hidden: " << s.hidden << ", ffn_hidden: " << s.ffn_hidden << ", heads: " << s.heads
          << ", kv_heads: " << s.kv_heads << ", seq_len: " << s.seq_len << ", micro_batch: " << s.micro_batch
          << ", forward_s: " << Num(lf) << ", backward_s: " << Num(lb)
          << ", max_rel_error: " << Num(math == GemmMath::kTf32 ? err_tf32 : err32) << "}\n";
      std::fprintf(stderr, "  layer h%d s%d b%d: forward %.3f ms, backward %.3f ms\n", s.hidden, s.seq_len, s.micro_batch,
                   lf * 1e3, lb * 1e3);
    }
    y << "attention:\n" << att.str() << "layers:\n" << lay.str();
    // Sustained rates, last: they leave the GPU hot, which slowed an H200's
    // copies measured after them by 10%. The sweep's GEMMs are short and
    // apart, so they run at burst clocks; a training step keeps the tensor
    // cores busy for seconds and meets the power cap (an H200 at 700 W: 0.88
    // of the curves' rates in bf16 and fp8). The plan's largest unbatched GEMM,
    // back to back for --sustain-s seconds in bf16 and in each low-precision
    // format.
    const GemmItem* big = nullptr;
    for (const auto& g : plan.gemms) {
      if (g.batch == 1 && (big == nullptr || double(g.m) * g.n * g.k > double(big->m) * big->n * big->k)) big = &g;
    }
    if (sustain_s > 0 && big != nullptr) {
      const GemmItem& g = *big;
      DeviceBuffer a(size_t(g.m) * g.k), b(size_t(g.k) * g.n), c(size_t(g.m) * g.n);
      const GemmCall call = GemmCallFor(g.m, g.n, g.k, g.layout);
      const double flops = 2.0 * double(g.m) * g.n * g.k;
      auto record = [&](const char* precision, const std::string& layout, double t) {
        y << "  - {m: " << g.m << ", n: " << g.n << ", k: " << g.k << ", batch: 1, layout: " << layout << ", precision: " << precision
          << ", run_s: " << Num(sustain_s) << ", s: " << Num(t) << "}\n";
        std::fprintf(stderr, "sustained %s %ldx%ldx%ld: %.0f TFLOP/s back to back over the last third of %.0f s\n", precision, g.m,
                     g.n, g.k, flops / t / 1e12, sustain_s);
      };
      y << "sustained:\n";
      FillRandomBf16(a.data(), a.size(), 3, ops.stream());
      FillRandomBf16(b.data(), b.size(), 4, ops.stream());
      record("bf16", g.layout, SustainedTimeOnStream(ops.stream(), [&] {
               ops.GemmBf16(call.ta, call.tb, int(g.m), int(g.n), int(g.k), a.data(), b.data(), c.data(), 1);
             }, sustain_s));
      for (const auto& l : lowp) {
        const LowPrecisionFormat& f = *l.f;
        if (!LowPrecisionShapeProblem(f, g.m, g.n, g.k, 1).empty()) continue;
        try {
          LowPrecisionGemm lg(f, ops.stream(), g.m, g.n, g.k, 1);
          if (!lg.why_not().empty()) continue;
          FillRandomOperand(f, a.data(), size_t(g.m) * g.k, 5, ops.stream());
          FillRandomOperand(f, b.data(), size_t(g.n) * g.k, 6, ops.stream());
          record(f.name, "nt", SustainedTimeOnStream(ops.stream(), [&] { lg.Run(a.data(), b.data(), c.data()); }, sustain_s));
        } catch (const std::exception& e) {
          std::fprintf(stderr, "  sustained %s skipped: %s\n", f.name, e.what());
        }
      }
    }
    y << "collectives:\n";
    if (nccl) {
#ifdef TRAINSIM_HAVE_NCCL
      std::vector<double> sizes;
      for (double b = 64 * 1024; b <= 256.0 * 1024 * 1024; b *= 4) sizes.push_back(b);
      std::vector<NcclSample> samples;
      bool root = true;
      const std::string e = RunNcclBenchmarks(sizes, use_mpi, samples, root);
      if (!e.empty()) std::fprintf(stderr, "trainsim-calib-cuda: NCCL collectives skipped: %s\n", e.c_str());
      for (const auto& c : samples) {
        y << "  - {op: " << c.op << ", scope: " << c.scope << ", ranks: " << c.ranks << ", bytes: " << Num(c.bytes)
          << ", s: " << Num(c.seconds) << "}\n";
      }
      if (!root) {
#ifdef TRAINSIM_HAVE_MPI
        MPI_Finalize();
#endif
        return 0;  // rank 0 writes the file
      }
#else
      std::fprintf(stderr, "trainsim-calib-cuda: --nccl: this build has no NCCL (not found at configure time)\n");
#endif
    }
    y << "storage:\n";  // measured by trainsim on the host (--storage)
    // Atomic write: temp file, then rename.
    const std::string tmp = out_path + ".tmp." + std::to_string(getpid());
    {
      std::ofstream o(tmp, std::ios::binary);
      o << y.str();
      o.flush();
      if (!o) {
        std::fprintf(stderr, "trainsim-calib-cuda: cannot write '%s'\n", tmp.c_str());
        return 1;
      }
    }
    if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
      std::fprintf(stderr, "trainsim-calib-cuda: cannot rename '%s' to '%s': %s\n", tmp.c_str(), out_path.c_str(), std::strerror(errno));
      return 1;
    }
    std::fprintf(stderr, "wrote %s\n", out_path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainsim-calib-cuda: %s\n", e.what());
    return 1;
  }
#ifdef TRAINSIM_HAVE_MPI
  if (use_mpi) MPI_Finalize();
#endif
  return 0;
}
