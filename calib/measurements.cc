#include "calib/measurements.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

#include "calib/low_precision_formats.h"
#include "calib/text_format.h"
#include "sim/core/hardware_profile.h"
#include "sim/io/data_paths.h"
#include "sim/io/profile_loader.h"
#include "sim/io/yaml_reader.h"

namespace trainsim::calib {
namespace {

std::string List(const std::vector<double>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + Num(v[i]);
  return o + "]";
}

// The precisions a GEMM sample may be in.
const std::vector<std::string>& SweptPrecisions() {
  static const std::vector<std::string> p = [] {
    std::vector<std::string> v{"fp32", "tf32", "bf16", "fp16"};
    for (const auto& f : kLowPrecisionFormats) v.push_back(f.name);
    return v;
  }();
  return p;
}

// Each element of a list key as a strict map; an absent key is an empty list.
template <class F>
void ForEach(YamlMap& top, const std::string& key, F f) {
  YAML::Node list = top.Raw(key);
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) top.Fail(key, "expected a list");
  for (size_t i = 0; i < list.size(); ++i) {
    YamlMap m(list[i], top.file(), key + "[" + std::to_string(i) + "]");
    f(m);
    m.Finish();
  }
}

// No kernel launch, copy or collective completes in a nanosecond (a launch
// alone is microseconds): a time at or below it is a timer or unit error.
constexpr double kShortestPlausibleS = 1e-9;

std::string TooShort(double s) {
  return Num(s) + " s is at or below 1 ns, shorter than any kernel can run: not a plausible measurement (a timer or unit error?)";
}

// A measured time in seconds: positive and above kShortestPlausibleS.
double Time(YamlMap& g, const std::string& key) {
  const double s = g.PositiveDouble(key);
  if (s <= kShortestPlausibleS) g.Fail(key, TooShort(s));
  return s;
}

// The fastest datasheet figures trainsim knows (the bundled GPU profiles):
// a measurement more than twice as fast is not of real hardware.
struct DatasheetLimits {
  std::map<std::string, std::pair<double, std::string>> peak_flops;  // precision -> (FLOP/s, GPU)
  std::pair<double, std::string> hbm_bytes_per_s{0, ""};
};

const DatasheetLimits& Limits() {
  static const DatasheetLimits limits = [] {
    DatasheetLimits l;
    for (const auto& name : CatalogueNames("hardware-profiles/gpus")) {
      try {
        const GpuProfile g = LoadGpuProfile(YAML::Node(name), "", "gpu");
        for (const auto& [p, v] : g.peak_flops) {
          if (v > l.peak_flops[p].first) l.peak_flops[p] = {v, g.name};
        }
        if (g.hbm_bytes_per_s > l.hbm_bytes_per_s.first) l.hbm_bytes_per_s = {g.hbm_bytes_per_s, g.name};
      } catch (const InputException&) {
        // A broken bundled profile is that profile's test's concern; it sets no limit here.
      }
    }
    return l;
  }();
  return limits;
}

constexpr double kPlausibleOverDatasheet = 2.0;

void CheckGemmPlausible(YamlMap& g, const GemmSample& s) {
  const auto& peaks = Limits().peak_flops;
  // tf32 and fp32 GEMMs are bounded by the 16-bit tensor peak (tf32 runs at half of it), the
  // low-precision formats by their own (where a bundled profile has one).
  const bool own = (FindLowPrecisionFormat(s.precision) || s.precision == "fp16") && peaks.count(s.precision);
  const std::string key = own ? s.precision : "bf16";
  auto it = peaks.find(key);
  if (it == peaks.end() || it->second.first <= 0) return;
  const double rate = s.Flops() / s.seconds;
  if (rate > kPlausibleOverDatasheet * it->second.first) {
    g.Fail("s", Num(s.seconds) + " s for this " + s.precision + " GEMM is " + Num(rate / 1e12) +
                    " TFLOP/s, more than twice the fastest datasheet peak trainsim knows (" + Num(it->second.first / 1e12) +
                    " TFLOP/s " + key + ", " + it->second.second + "): not a plausible measurement");
  }
}

void CheckMemoryPlausible(YamlMap& g, const MemorySample& s) {
  const auto& [hbm, gpu] = Limits().hbm_bytes_per_s;
  if (hbm <= 0) return;
  const double rate = s.bytes / s.seconds;
  if (rate > kPlausibleOverDatasheet * hbm) {
    g.Fail("s", Num(s.seconds) + " s for " + Num(s.bytes) + " bytes is " + Num(rate / 1e12) +
                    " TB/s, more than twice the fastest memory trainsim knows (" + Num(hbm / 1e12) + " TB/s, " + gpu +
                    "): not a plausible measurement");
  }
}

std::vector<double> Seconds(YamlMap& m, const std::string& key) {
  YAML::Node n = m.Raw(key);
  if (!n.IsSequence()) m.Fail(key, "expected a list of seconds");
  std::vector<double> out;
  for (const auto& v : n) {
    double d = 0;
    try {
      d = v.as<double>();
    } catch (const YAML::Exception&) {
      YamlMap::FailAt(v, m.file(), m.Path(key), "expected a number of seconds");
    }
    if (!(d > 0)) YamlMap::FailAt(v, m.file(), m.Path(key), "times must be positive");
    if (d <= kShortestPlausibleS) YamlMap::FailAt(v, m.file(), m.Path(key), TooShort(d));
    out.push_back(d);
  }
  return out;
}

// A GEMM sample's shape, layout, precision and time, checked for plausibility.
// The keys every GEMM record has: the shape, its operands' layout (nullptr
// default: the record must give it) and precision, and the measured time.
GemmSample ReadGemmShape(YamlMap& g, const char* default_layout) {
  GemmSample s;
  s.m = g.PositiveInt("m");
  s.n = g.PositiveInt("n");
  s.k = g.PositiveInt("k");
  s.layout = default_layout ? g.Choice("layout", {"nn", "nt", "tn"}, std::string(default_layout)) : g.Choice("layout", {"nn", "nt", "tn"});
  s.precision = g.Choice("precision", SweptPrecisions());
  s.seconds = Time(g, "s");
  return s;
}

GemmSample ReadGemm(YamlMap& g) {
  GemmSample s = ReadGemmShape(g, "nn");
  s.batch = g.PositiveInt("batch", 1);
  s.split_accumulator = g.Choice("accumulator", {"fast", "split"}, std::string("fast")) == "split";
  if (s.split_accumulator && s.precision != "fp8") g.Fail("accumulator", "split accumulation is a per-tensor fp8 GEMM's mode");
  CheckGemmPlausible(g, s);
  return s;
}

}  // namespace

std::string MeasurementsYaml(const Measurements& m) {
  std::ostringstream o;
  o << "# trainsim calibration measurements (seconds; memory bytes as the workload model counts them)\n";
  o << "trainsim_measurements: 1\n";
  o << "backend: " << m.backend << "\n";
  o << "host: " << Quote(m.host) << "\n";
  o << "date: " << Quote(m.date) << "\n";
  o << "device: " << Quote(m.device) << "\n";
  o << "dtype: " << m.dtype << "\n";
  o << "compute_units: " << m.compute_units << "\n";
  o << "memory_bytes: " << Num(m.memory_bytes) << "\n";
  if (m.cache_bytes > 0) o << "cache_bytes: " << Num(m.cache_bytes) << "\n";
  o << "launch_s: " << Num(m.launch_s) << "\n";
  if (m.host_to_device_bytes_per_s > 0) o << "host_to_device_bytes_per_s: " << Num(m.host_to_device_bytes_per_s) << "\n";
  if (m.device_to_host_bytes_per_s > 0) o << "device_to_host_bytes_per_s: " << Num(m.device_to_host_bytes_per_s) << "\n";
  if (m.node_host_copy_gpus > 0) {
    o << "node_host_copy: {gpus: " << m.node_host_copy_gpus << ", host_to_device_bytes_per_s: " << Num(m.node_host_to_device_bytes_per_s)
      << ", device_to_host_bytes_per_s: " << Num(m.node_device_to_host_bytes_per_s) << "}\n";
  }
  auto gemm = [&](const GemmSample& g) {
    o << "m: " << g.m << ", n: " << g.n << ", k: " << g.k << ", batch: " << g.batch << ", layout: " << g.layout
      << ", precision: " << g.precision << (g.split_accumulator ? ", accumulator: split" : "");
  };
  o << "gemm:\n";
  for (const auto& g : m.gemm) {
    o << "  - {";
    gemm(g);
    o << ", s: " << Num(g.seconds) << "}\n";
  }
  if (!m.sustained.empty()) {
    o << "sustained:\n";
    for (const auto& x : m.sustained) {
      o << "  - {";
      gemm(x.gemm);
      o << ", run_s: " << Num(x.run_s) << ", s: " << Num(x.gemm.seconds) << "}\n";
    }
  }
  if (!m.grouped_gemm.empty()) {
    o << "grouped_gemm:\n";
    for (const auto& g : m.grouped_gemm) {
      const GemmSample& x = g.gemm;
      o << "  - {m: " << x.m << ", n: " << x.n << ", k: " << x.k << ", experts: " << x.batch << ", streams: " << g.streams
        << ", layout: " << x.layout << ", precision: " << x.precision << ", s: " << Num(x.seconds) << "}\n";
    }
  }
  o << "memory:\n";
  for (const auto& x : m.memory) o << "  - {kernel: " << x.kernel << ", bytes: " << Num(x.bytes) << ", s: " << Num(x.seconds) << "}\n";
  o << "attention:\n";
  for (const auto& a : m.attention) {
    o << "  - {micro_batch: " << a.micro_batch << ", heads: " << a.heads << ", kv_heads: " << a.kv_heads
      << ", seq_len: " << a.seq_len << ", head_dim: " << a.head_dim << ", forward_s: " << Num(a.forward_s)
      << ", backward_s: " << Num(a.backward_s) << "}\n";
  }
  o << "layers:\n";
  for (const auto& l : m.layers) {
    const auto& s = l.shape;
    o << "  - {hidden: " << s.hidden << ", ffn_hidden: " << s.ffn_hidden << ", heads: " << s.heads
      << ", kv_heads: " << s.kv_heads << ", seq_len: " << s.seq_len << ", micro_batch: " << s.micro_batch
      << ", forward_s: " << Num(l.forward_s) << ", backward_s: " << Num(l.backward_s)
      << ", max_rel_error: " << Num(l.max_rel_error) << "}\n";
  }
  o << "collectives:\n";
  for (const auto& c : m.collectives) {
    o << "  - {op: " << c.op << ", scope: " << c.scope << ", ranks: " << c.ranks << ", bytes: " << Num(c.bytes)
      << ", s: " << Num(c.seconds) << "}\n";
  }
  o << "storage:\n";
  for (const auto& s : m.storage) {
    o << "  - {clients: " << s.clients << ", bytes_per_client: " << Num(s.bytes_per_client)
      << ", write_s: " << List(s.write_s) << ", read_s: " << List(s.read_s) << "}\n";
  }
  return o.str();
}

const std::vector<std::string>& MemoryKernelNames() {
  static const std::vector<std::string> names = {"copy",       "add",        "rmsnorm_fwd", "rmsnorm_bwd", "rotary_fwd",
                                                 "rotary_bwd", "softmax_fwd", "softmax_bwd", "swiglu_fwd", "swiglu_bwd"};
  return names;
}

Expected<Measurements> LoadMeasurements(const std::string& path) {
  try {
    YamlMap top(LoadYamlFile(path), path);
    Measurements m;
    if (top.PositiveInt("trainsim_measurements") != 1) top.Fail("trainsim_measurements", "unsupported version (expected 1)");
    m.backend = top.Choice("backend", {"cpu", "cuda"});
    m.host = top.String("host");
    m.date = top.String("date");
    m.device = top.String("device");
    m.dtype = top.Choice("dtype", {"fp32", "tf32", "bf16"}, std::string("fp32"));
    // Past any GPU or host trainsim could calibrate by orders of magnitude: a
    // corrupt file, whose wave correction or cache model would give a nonsense fit.
    m.compute_units = top.PositiveInt("compute_units");
    if (m.compute_units > 4096) top.Fail("compute_units", std::to_string(m.compute_units) + " compute units: not a plausible GPU or host (at most 4096)");
    m.memory_bytes = top.PositiveDouble("memory_bytes");
    if (m.memory_bytes > 64.0 * (1LL << 40)) top.Fail("memory_bytes", "must be positive and at most 64 TiB, got " + Num(m.memory_bytes));
    m.cache_bytes = top.NonNegativeDouble("cache_bytes", 0);
    if (m.cache_bytes > 64.0 * (1LL << 30)) top.Fail("cache_bytes", "must be at most 64 GiB, got " + Num(m.cache_bytes));
    m.launch_s = top.PositiveDouble("launch_s");
    m.host_to_device_bytes_per_s = top.NonNegativeDouble("host_to_device_bytes_per_s", 0);
    m.device_to_host_bytes_per_s = top.NonNegativeDouble("device_to_host_bytes_per_s", 0);
    if (auto n = top.OptMap("node_host_copy")) {
      m.node_host_copy_gpus = n->PositiveInt("gpus");
      m.node_host_to_device_bytes_per_s = n->PositiveDouble("host_to_device_bytes_per_s");
      m.node_device_to_host_bytes_per_s = n->PositiveDouble("device_to_host_bytes_per_s");
      n->Finish();
    }
    ForEach(top, "gemm", [&](YamlMap& g) { m.gemm.push_back(ReadGemm(g)); });
    ForEach(top, "sustained", [&](YamlMap& g) {
      SustainedSample s;
      s.gemm = ReadGemm(g);
      s.run_s = g.PositiveDouble("run_s");
      m.sustained.push_back(s);
    });
    ForEach(top, "grouped_gemm", [&](YamlMap& g) {
      GroupedGemmSample s;
      s.gemm = ReadGemmShape(g, nullptr);
      s.gemm.batch = g.PositiveInt("experts");
      if (s.gemm.batch < 2) g.Fail("experts", "a grouped GEMM has at least 2 experts");
      s.streams = g.PositiveInt("streams");
      // As fast as the same work batched at most: the datasheet's bound holds for both.
      CheckGemmPlausible(g, s.gemm);
      m.grouped_gemm.push_back(s);
    });
    ForEach(top, "memory", [&](YamlMap& g) {
      MemorySample s;
      s.kernel = g.Choice("kernel", MemoryKernelNames());
      s.bytes = g.PositiveDouble("bytes");
      s.seconds = Time(g, "s");
      CheckMemoryPlausible(g, s);
      m.memory.push_back(s);
    });
    ForEach(top, "attention", [&](YamlMap& g) {
      AttentionSample a;
      a.micro_batch = g.PositiveInt("micro_batch");
      a.heads = g.PositiveInt("heads");
      a.kv_heads = g.PositiveInt("kv_heads");
      a.seq_len = g.PositiveInt("seq_len");
      a.head_dim = g.PositiveInt("head_dim");
      a.forward_s = Time(g, "forward_s");
      a.backward_s = Time(g, "backward_s");
      m.attention.push_back(a);
    });
    ForEach(top, "layers", [&](YamlMap& g) {
      LayerSample l;
      l.shape.hidden = g.PositiveInt("hidden");
      l.shape.ffn_hidden = g.PositiveInt("ffn_hidden");
      l.shape.heads = g.PositiveInt("heads");
      l.shape.kv_heads = g.PositiveInt("kv_heads");
      l.shape.seq_len = g.PositiveInt("seq_len");
      l.shape.micro_batch = g.PositiveInt("micro_batch");
      if (!l.shape.Valid()) g.Fail("heads", "inconsistent layer shape (hidden % heads, heads % kv_heads, even head_dim)");
      l.forward_s = Time(g, "forward_s");
      l.backward_s = Time(g, "backward_s");
      // -1 (as written) or absent: not measured; anything else must be a
      // non-negative number ("lots" is an error, not -1).
      l.max_rel_error = -1;
      if (g.Has("max_rel_error")) {
        const YAML::Node e = g.Raw("max_rel_error");
        if (!(e.IsScalar() && e.Scalar() == "-1")) l.max_rel_error = g.NonNegativeDouble("max_rel_error");
      }
      m.layers.push_back(l);
    });
    ForEach(top, "collectives", [&](YamlMap& g) {
      CollectiveSample c;
      c.op = g.Choice("op", {"all-reduce", "all-gather", "reduce-scatter", "send-recv", "all-to-all"});
      c.scope = g.Choice("scope", {"intra-node", "inter-node"});
      c.ranks = g.PositiveInt("ranks");
      c.bytes = g.PositiveDouble("bytes");
      c.seconds = Time(g, "s");
      m.collectives.push_back(c);
    });
    ForEach(top, "storage", [&](YamlMap& g) {
      StorageSample s;
      s.clients = g.PositiveInt("clients");
      s.bytes_per_client = g.PositiveDouble("bytes_per_client");
      s.write_s = Seconds(g, "write_s");
      s.read_s = Seconds(g, "read_s");
      if (int(s.write_s.size()) != s.clients || int(s.read_s.size()) != s.clients) {
        g.Fail("write_s", "expected one write and one read time per client");
      }
      m.storage.push_back(s);
    });
    top.Allow("fitted");  // a profile's sidecar carries the fit results after the measurements
    top.Allow("profile_fingerprint");  // and the fingerprint of the profile written with it
    top.Finish();
    if (m.gemm.empty()) top.Fail("gemm", "no GEMM measurements: nothing to fit a profile from");
    return m;
  } catch (const InputException& e) {
    return e.error();
  }
}

std::string WriteFileAtomically(const std::string& path, const std::string& text) {
  if (std::string e = NotAFileToWrite(path); !e.empty()) return e;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return "cannot write '" + tmp + "': " + std::strerror(errno);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  const int err = errno;
  std::fclose(f);
  if (!ok) {
    std::remove(tmp.c_str());
    return "cannot write '" + tmp + "': " + std::strerror(err);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return "cannot rename '" + tmp + "' to '" + path + "': " + ec.message();
  }
  return "";
}

}  // namespace trainsim::calib
