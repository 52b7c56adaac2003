#include "calib/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <time.h>
#include <fstream>
#include <limits>

#include "calib/cpu_ops.h"
#include "calib/gemm_layout.h"
#include "calib/layer_step.h"
#include "calib/storage_bench.h"
#include "calib/thread_collectives.h"

namespace trainsim::calib {
namespace {

// CPU time of this thread: on a machine shared with other work, the time
// the measured code ran, without the slices the scheduler gave to others.
double ThreadSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto p = line.find(':');
      if (p != std::string::npos) return line.substr(p + 2);
    }
  }
  return "unknown CPU";
}

std::vector<float> Filled(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  FillDeterministic(v.data(), n, seed, 1.0f);
  return v;
}

// Operands of `count` GEMMs of one shape and layout, one after another, and
// each GEMM's pointers and cuBLAS-style call.
struct GemmOperands {
  std::vector<float> a, b, c;
  BatchPointers<float> ptr;
  GemmCall call;
  GemmOperands(long m, long n, long k, long count, const std::string& layout)
      : a(Filled(size_t(count) * m * k, 1)),
        b(Filled(size_t(count) * k * n, 2)),
        c(size_t(count) * m * n),
        ptr(a.data(), b.data(), c.data(), m, n, k, count),
        call(GemmCallFor(m, n, k, layout)) {}
};

// Runs one memory-bound kernel of the plan at its shape, on fresh buffers.
std::function<void()> MemoryKernelFn(const MemoryKernel& mk, CpuOps& ops, std::vector<std::vector<float>>& bufs) {
  const LayerShape& s = mk.shape;
  const int T = int(s.tokens()), h = s.hidden, f = s.ffn_hidden;
  const size_t blocks = size_t(s.micro_batch) * s.heads;
  const float scale = 1.0f / std::sqrt(float(s.head_dim()));
  auto buf = [&](size_t n) -> float* {
    bufs.push_back(Filled(n, bufs.size() + 11));
    return bufs.back().data();
  };
  bufs.reserve(8);
  const std::string& k = mk.kernel;
  if (k == "rmsnorm_fwd") {
    float *x = buf(size_t(T) * h), *g = buf(h), *y = buf(size_t(T) * h), *r = buf(T);
    return [=, &ops] { ops.RmsNormForward(x, g, y, r, T, h); };
  }
  if (k == "rmsnorm_bwd") {
    float *dy = buf(size_t(T) * h), *x = buf(size_t(T) * h), *g = buf(h), *r = buf(T), *res = buf(size_t(T) * h),
          *dx = buf(size_t(T) * h), *dg = buf(h);
    std::fill(r, r + T, 1.0f);
    return [=, &ops] { ops.RmsNormBackward(dy, x, g, r, res, dx, dg, T, h); };
  }
  if (k == "rotary_fwd" || k == "rotary_bwd") {
    float* qkv = buf(size_t(T) * s.qkv_width());
    const bool fwd = k == "rotary_fwd";
    return [=, &ops] {
      if (fwd) ops.RotaryForward(qkv, s.micro_batch, s.seq_len, s.heads, s.kv_heads, s.head_dim());
      else ops.RotaryBackward(qkv, s.micro_batch, s.seq_len, s.heads, s.kv_heads, s.head_dim());
    };
  }
  if (k == "softmax_fwd") {
    float* p = buf(blocks * s.seq_len * s.seq_len);
    return [=, &ops] { ops.SoftmaxForward(p, blocks, s.seq_len, scale); };
  }
  if (k == "softmax_bwd") {
    float *p = buf(blocks * s.seq_len * s.seq_len), *dp = buf(blocks * s.seq_len * s.seq_len);
    return [=, &ops] { ops.SoftmaxBackward(p, dp, blocks, s.seq_len, scale); };
  }
  if (k == "swiglu_fwd") {
    float *u = buf(size_t(T) * 2 * f), *g = buf(size_t(T) * f);
    return [=, &ops] { ops.SwigluForward(u, g, T, f); };
  }
  if (k == "swiglu_bwd") {
    float *u = buf(size_t(T) * 2 * f), *dg = buf(size_t(T) * f), *du = buf(size_t(T) * 2 * f);
    return [=, &ops] { ops.SwigluBackward(u, dg, du, T, f); };
  }
  if (k == "add") {
    float *a = buf(size_t(T) * h), *b = buf(size_t(T) * h), *o = buf(size_t(T) * h);
    return [=, &ops] { ops.Add(a, b, o, size_t(T) * h); };
  }
  return {};
}

}  // namespace

void FlushCaches() {
  // Twice the last-level cache, written: evicts the operands of the previous
  // repetition, as the other operators of a training step would.
  static std::vector<char> junk = [] {
    const long l3 = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
    return std::vector<char>(size_t(std::max(l3 > 0 ? 2 * l3 : 0L, 64L << 20)), 1);
  }();
  static char round = 0;
  ++round;
  for (size_t i = 0; i < junk.size(); i += 64) junk[i] = round;
}

double TimeBest(const std::function<void()>& fn, double min_seconds, int min_reps, int max_reps) {
  fn();  // warm-up: page in buffers
  double best = std::numeric_limits<double>::infinity(), total = 0;
  // At least min_reps, then until min_seconds of timed work, but no more than
  // max_reps: the untimed flushes would otherwise dominate for tiny kernels.
  for (int rep = 0; rep < min_reps || (total < min_seconds && rep < max_reps); ++rep) {
    FlushCaches();  // not timed
    const double t0 = ThreadSeconds();
    fn();
    const double dt = ThreadSeconds() - t0;
    best = std::min(best, dt);
    total += dt;
  }
  return best;
}

std::string HostName() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string RunCpuCalibration(const CalibrationPlan& plan, const CpuCalibrationOptions& o, Measurements& m) {
  if (plan.layers.empty()) return "no layer shapes to calibrate";
  // Progress in benchmark-time units: a timed benchmark runs for about its
  // least time (min_seconds, or half of it), so the units done over the units
  // planned track the time spent. Collectives and storage count as a few
  // benchmarks each (their length is their own).
  const double collective_units = o.collective_ranks >= 2 ? 8 : 0;
  const double storage_units = o.storage_dir.empty() ? 0 : 8.0 * (o.storage_clients > 1 ? 2 : 1);
  const double total_units = 0.2 + double(plan.gemms.size() + plan.grouped.size()) + 0.5 * double(plan.copy_floats.size() + plan.memory.size()) +
                             4.0 * double(plan.layers.size()) + collective_units + storage_units;
  double done_units = 0;
  std::string phase;
  auto say = [&](const std::string& s) {
    phase = s;
    if (o.progress) o.progress(done_units / total_units, phase);
  };
  auto did = [&](double units) {
    done_units += units;
    if (o.progress) o.progress(std::min(1.0, done_units / total_units), phase);
  };
  m = Measurements{};
  m.backend = "cpu";
  m.host = HostName();
  m.date = UtcNow();
  m.device = CpuModel() + " (1 thread, Eigen float32)";
  m.dtype = "fp32";
  m.compute_units = 1;
  m.memory_bytes = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE));
  CpuOps ops;

  say("gemm sweep: " + std::to_string(plan.gemms.size()) + " shapes");
  {
    std::vector<float> a = Filled(64, 1), b = Filled(64, 2), c(64);
    // The floor is the best of many calls whatever the sweep's repetitions: a
    // call of a microsecond that the OS preempts once would otherwise raise the
    // floor to milliseconds and push every GEMM of a small plan below it (the
    // fit then has no sample; seen on a loaded 2-core machine).
    m.launch_s = TimeBest([&] { ops.Gemm(false, false, 8, 8, 8, 1, a.data(), 8, b.data(), 8, 0, c.data(), 8); }, o.min_seconds / 5,
                          std::max(o.min_reps, 50), std::max(o.max_reps, 200));
    did(0.2);
  }
  for (const auto& g : plan.gemms) {
    const GemmOperands x(g.m, g.n, g.k, g.batch, g.layout);
    const double t = TimeBest([&] {
      ops.BatchedGemm(x.call.ta, x.call.tb, int(g.m), int(g.n), int(g.k), 1, x.ptr.a, x.call.lda, x.ptr.b, x.call.ldb, 0, x.ptr.c,
                      int(g.n), int(g.batch));
    }, o.min_seconds, o.min_reps, o.max_reps);
    m.gemm.push_back(GemmSample{g.m, g.n, g.k, g.batch, g.layout, "fp32", t});
    did(1);
  }
  // The experts' GEMMs one call each, as Transformer Engine issues them; one
  // thread is one stream.
  for (const auto& g : plan.grouped) {
    const GemmOperands x(g.m, g.n, g.k, g.experts, g.layout);
    const double t = TimeBest([&] {
      for (size_t e = 0; e < x.ptr.c.size(); ++e) {
        ops.Gemm(x.call.ta, x.call.tb, int(g.m), int(g.n), int(g.k), 1, x.ptr.a[e], x.call.lda, x.ptr.b[e], x.call.ldb, 0, x.ptr.c[e],
                 int(g.n));
      }
    }, o.min_seconds, o.min_reps, o.max_reps);
    m.grouped_gemm.push_back(GroupedGemmSample{GemmSample{g.m, g.n, g.k, g.experts, g.layout, "fp32", t}, 1});
    did(1);
  }

  say("memory: streaming copy and " + std::to_string(plan.memory.size()) + " memory-bound kernels");
  for (long n : plan.copy_floats) {
    std::vector<float> src = Filled(size_t(n), 3);
    std::vector<float> dst(src.size());
    const double t = TimeBest([&] { std::memcpy(dst.data(), src.data(), size_t(n) * sizeof(float)); }, o.min_seconds / 2, o.min_reps, o.max_reps);
    // Read + write of n elements, counted at the workload's 2 bytes per element.
    m.memory.push_back(MemorySample{"copy", 2.0 * 2.0 * double(n), t});
    did(0.5);
  }
  for (const auto& mk : plan.memory) {
    std::vector<std::vector<float>> bufs;
    auto fn = MemoryKernelFn(mk, ops, bufs);
    if (!fn) return "plan names an unknown memory kernel '" + mk.kernel + "'";
    m.memory.push_back(MemorySample{mk.kernel, mk.bytes, TimeBest(fn, o.min_seconds / 2, o.min_reps, o.max_reps)});
    did(0.5);
  }

  say("attention and layer steps: " + std::to_string(plan.layers.size()) + " shapes");
  for (const auto& s : plan.layers) {
    const LayerInputs in = MakeLayerInputs(s);
    LayerStep<CpuOps> layer(ops, s, in);
    layer.Forward();
    AttentionSample a{s.micro_batch, s.heads, s.kv_heads, s.seq_len, s.head_dim(), 0, 0};
    a.forward_s = TimeBest([&] { layer.AttentionForwardOnly(); }, o.min_seconds, o.min_reps, o.max_reps);
    a.backward_s = TimeBest([&] { layer.AttentionBackwardOnly(); }, o.min_seconds, o.min_reps, o.max_reps);
    m.attention.push_back(a);
    LayerSample l;
    l.shape = s;
    l.forward_s = TimeBest([&] { layer.Forward(); }, o.min_seconds, o.min_reps, o.max_reps);
    l.backward_s = TimeBest([&] { layer.Backward(); }, o.min_seconds, o.min_reps, o.max_reps);
    m.layers.push_back(l);
    did(4);
  }
  // The sweep's first GEMM again: the profile fits GEMMs timed at the start
  // and validates layer steps timed at the end, so a machine whose speed
  // changed in between (another job on its cores, a clock that dropped)
  // mixes two speeds in it. Thread CPU time does not hide that.
  if (!plan.gemms.empty() && !m.gemm.empty()) {
    const auto& g = plan.gemms.front();
    const GemmOperands x(g.m, g.n, g.k, g.batch, g.layout);
    const double again = TimeBest([&] {
      ops.BatchedGemm(x.call.ta, x.call.tb, int(g.m), int(g.n), int(g.k), 1, x.ptr.a, x.call.lda, x.ptr.b, x.call.ldb, 0, x.ptr.c,
                      int(g.n), int(g.batch));
    }, o.min_seconds, o.min_reps, o.max_reps);
    const double change = again / m.gemm.front().seconds - 1;
    if (std::fabs(change) > kSpeedDriftTolerance) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "the machine's speed changed while it was measured: the first GEMM (%ldx%ldx%ld) took %+.0f%% at the end against "
                    "the start (other work on its cores?); the profile mixes two speeds: rerun it on an idle machine",
                    long(g.m), long(g.n), long(g.k), 100 * change);
      m.warnings.push_back(buf);
    }
  }

  if (o.collective_ranks >= 2) {
    say("collectives: " + std::to_string(o.collective_ranks) + (o.collective_ranks == 1 ? " thread" : " threads"));
    std::vector<double> sizes;
    for (double b = 64 * 1024; b <= 16 * 1024 * 1024; b *= 4) sizes.push_back(b);
    m.collectives = RunThreadCollectives(o.collective_ranks, sizes, 5);
    did(collective_units);
  }
  if (!o.storage_dir.empty()) {
    for (int clients : {1, o.storage_clients}) {
      if (clients < 1 || (clients == 1 && !m.storage.empty())) continue;
      say("storage: " + std::to_string(clients) + " client(s) at " + o.storage_dir);
      StorageSample s;
      StorageOptions so;
      so.dir = o.storage_dir;
      so.clients = clients;
      so.bytes_per_client = o.storage_bytes_per_client;
      const std::string err = RunStorageBenchmark(so, s);
      if (!err.empty()) return err;
      m.storage.push_back(s);
      did(8);
      if (o.storage_clients == 1) break;
    }
  }
  if (o.progress) o.progress(1, "measurements done");
  return "";
}

}  // namespace trainsim::calib
