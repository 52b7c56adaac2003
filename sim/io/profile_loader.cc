#include "sim/io/profile_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <optional>
#include <set>

#include "sim/core/pipeline_layout.h"
#include "sim/core/scenario.h"
#include "sim/core/text_format.h"
#include "sim/io/data_paths.h"
#include "sim/io/file_cache.h"
#include "sim/io/yaml_reader.h"

namespace trainsim {
namespace {

constexpr double kGB = 1e9;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The numbers a hardware profile may hold in each unit its keys are named in
// (the key's own, or the nearest enclosing key's: power_w.load,
// peak_tflops.bf16; a key "<unit>_per_<x>" is in that unit too:
// write_gb_per_s_per_node): far past any hardware made, so that a slip
// (1e308, 1e-300, a wrong unit) is bad input at its line, not a figure that
// overflows the simulation (a step of 0 s, or of 1e303 s, a DES that
// aborts). A rate has a floor too: near 0 it is a divisor. Longer units first.
struct UnitBound {
  const char* unit;
  double min;  // of a non-zero value
  double max;
};
constexpr UnitBound kUnitBounds[] = {
    // Floors far under a CPU's (`calibrate --backend cpu` under a sanitizer measures 0.0005 TFLOP/s).
    {"_tb_per_s", 1e-9, 1e3},    // HBM: 8 TB/s on B200
    {"_gb_per_s", 1e-6, 1e5},    // links and memories: NVLink 5 is 1,800 GB/s
    {"_gbit_per_s", 1e-6, 1e6},  // NICs and switch ports: 800 Gb/s
    {"_tflops", 1e-6, 1e5},      // dense tensor peaks: 15,000 TFLOP/s (nvfp4, B300)
    {"_hour_usd", 0, 1e6},       // rental prices per hour, as cost.node_hour_usd
    {"_usd", 0, 1e9},            // purchase prices
    {"_us", 0, 1e6},             // latencies and kernel floors: at most a second
    {"_ns", 0, 1e6},
    {"_ms", 0, 1e4},
    {"_w", 0, 1e7},              // power: an NVL72 rack draws ~130 kW
    {"_gib", 0, 1e6},
    {"_mib", 0, 1e6},
    {"_bytes", 0, 1e3},          // bytes per element or parameter
};
constexpr UnitBound kUnitless = {"", 0, 1e9};  // counts, ratios and factors

// The unit `key` is named in, if any.
const UnitBound* UnitOf(const std::string& key) {
  for (const UnitBound& u : kUnitBounds) {
    if (key.ends_with(u.unit) || key.find(std::string(u.unit) + "_per_") != std::string::npos) return &u;
  }
  return nullptr;
}

// Fails at the first number of a profile document outside its unit's bounds
// (kUnitBounds; kUnitless for a key named in none).
void CheckPlausibleNumbers(const YAML::Node& node, const std::string& file, const std::string& path, const UnitBound& bound) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) continue;
      const std::string& key = kv.first.Scalar();
      const UnitBound* own = UnitOf(key);
      CheckPlausibleNumbers(kv.second, file, path.empty() ? key : path + "." + key, own ? *own : bound);
    }
  } else if (node.IsSequence()) {
    for (const auto& e : node) CheckPlausibleNumbers(e, file, path, bound);
  } else if (node.IsScalar() && node.Tag() != "!") {
    char* end = nullptr;
    const double x = std::strtod(node.Scalar().c_str(), &end);
    if (end == node.Scalar().c_str() || *end != '\0' || !std::isfinite(x) || x == 0) return;
    const bool large = std::fabs(x) > bound.max;
    if (!large && std::fabs(x) >= bound.min) return;
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", large ? bound.max : bound.min);
    YamlMap::FailAt(node, file, path, std::string(large ? "implausibly large: " : "implausibly small: ") + node.Scalar() + " (at " +
                                          (large ? "most " : "least ") + limit + " in its unit)");
  }
}

// A profile file's document, its numbers checked against their units' bounds
// (a framework profile's precision overrides, read from other files).
YAML::Node LoadProfileYaml(const std::string& path) {
  YAML::Node root = LoadYamlFile(path);
  CheckPlausibleNumbers(root, path, "", kUnitless);
  return root;
}

// Finds the file a profile reference names; fails at the reference.
std::string ResolveProfile(const YAML::Node& ref, const std::string& from_file, const std::string& key,
                           const std::string& kind) {
  if (!ref.IsDefined() || ref.IsNull()) YamlMap::FailAt(ref, from_file, key, "missing required key");
  if (!ref.IsScalar()) YamlMap::FailAt(ref, from_file, key, "expected a profile name or path");
  const std::string name = ref.Scalar();
  if (LooksLikePath(name)) {
    if (auto p = ResolvePath(name, from_file)) return *p;
    YamlMap::FailAt(ref, from_file, key, "profile file '" + name + "' " + UnresolvedPathReason(name, from_file));
  }
  const auto names = CatalogueNames("hardware-profiles/" + kind);
  for (const auto& n : names) {
    if (n == name) return DataDir() + "/hardware-profiles/" + kind + "/" + n + ".yaml";
  }
  // The catalogue folders are plurals (gpus, nodes, fabrics, sites) but for storage.
  const std::string singular = kind.ends_with('s') ? kind.substr(0, kind.size() - 1) : kind;
  const std::string what = "unknown " + singular + " profile '" + name + "'";
  // A data directory without this catalogue (TRAINSIM_DATA_DIR pointing one level too deep or
  // shallow) lists nothing: say where it looked instead.
  if (names.empty()) YamlMap::FailAt(ref, from_file, key, what + ": no profiles in " + DataDir() + "/hardware-profiles/" + kind);
  const std::string hint = ClosestMatch(name, names);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  YamlMap::FailAt(ref, from_file, key, what + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") + "; known: " + list);
}

std::map<std::string, double> RatesMap(YamlMap& parent, const std::string& key, double scale, bool fraction) {
  std::map<std::string, double> out;
  YamlMap m = parent.Map(key);
  // Keys: the GemmRateKey of each precision (sim/core/precision.h) and fp32.
  for (const char* p : {"bf16", "fp16", "fp8", "mxfp8", "nvfp4", "fp32"}) {
    if (m.Has(p)) out[p] = (fraction ? m.Fraction(p) : m.PositiveDouble(p)) * scale;
  }
  m.Finish();
  return out;
}

double AttentionBwdFwdRatio(YamlMap& a) {
  return a.BoundedDouble("bwd_fwd_ratio", std::nullopt,
                         [](double x) { return x >= kLeastAttentionBwdFwdRatio && x <= kMostAttentionBwdFwdRatio; },
                         "must be between 0.05 and 4 (the backward's FLOP rate over the forward's)");
}

GpuProfile ParseGpu(const YAML::Node& root, const std::string& path) {
  YamlMap m(root, path);
  GpuProfile g;
  g.name = m.String("name");
  g.source_file = path;
  g.cpu_stand_in = m.Choice("measured_on", {"gpu", "cpu"}, "gpu") == "cpu";
  g.memory_bytes = m.PositiveDouble("memory_gib") * kGiB;
  // Units caught where no accelerator comes near: bytes or MiB in a GiB key,
  // GB/s in a TB/s key (B300's 288 GiB and 8 TB/s are today's most).
  if (g.memory_bytes > 16384 * kGiB) m.Fail("memory_gib", "is in GiB: above 16384 no GPU comes near (bytes or MiB given?)");
  if (m.Has("usable_memory_fraction")) {
    char default_gib[32];
    std::snprintf(default_gib, sizeof default_gib, "%g", kDefaultReservedMemoryGib);
    m.Fail("usable_memory_fraction", std::string("replaced by reserved_memory_gib, the GiB of HBM training cannot use (a fixed amount, not a share; ") +
                                         default_gib + " unless given)");
  }
  g.reserved_memory_bytes = m.NonNegativeDouble("reserved_memory_gib", kDefaultReservedMemoryGib) * kGiB;
  if (g.reserved_memory_bytes >= g.memory_bytes) {
    // Name the key the file holds: a small memory_gib against the default reserve is that line's.
    if (m.Has("reserved_memory_gib")) m.Fail("reserved_memory_gib", "must be below memory_gib");
    m.Fail("memory_gib", Fmt("%g GiB leaves nothing once the ", g.memory_bytes / kGiB) + Fmt("%g GiB training cannot use are reserved", g.reserved_memory_bytes / kGiB) +
                             " (reserved_memory_gib's default)");
  }
  g.hbm_bytes_per_s = m.PositiveDouble("hbm_tb_per_s") * 1e12;
  if (g.hbm_bytes_per_s > 100e12) m.Fail("hbm_tb_per_s", "is in TB/s: above 100 no GPU comes near (GB/s given?)");
  g.sms = m.PositiveInt("sms");
  g.tdp_w = m.PositiveDouble("tdp_w");
  if (m.Has("nvlink_gb_per_s")) g.nvlink_bytes_per_s = m.PositiveDouble("nvlink_gb_per_s") * kGB;
  g.peak_flops = RatesMap(m, "peak_tflops", 1e12, false);
  if (!g.peak_flops.count("bf16") && !g.peak_flops.count("fp16")) m.Fail("peak_tflops", "needs bf16 or fp16");
  YamlMap mm = m.Map("matmul");
  g.matmul_max_eff = RatesMap(mm, "max_efficiency", 1.0, true);
  g.matmul_k_half = RatesMap(mm, "k_half", 1.0, false);
  if (mm.Has("sustained_clock_fraction")) g.matmul_clock_fraction = RatesMap(mm, "sustained_clock_fraction", 1.0, true);
  if (mm.Has("split_accumulator_efficiency")) g.matmul_split_accumulator_eff = RatesMap(mm, "split_accumulator_efficiency", 1.0, true);
  g.matmul_tile_m = mm.PositiveInt("tile_m", 128);
  g.matmul_tile_n = mm.PositiveInt("tile_n", 128);
  g.matmul_min_kernel_s = mm.NonNegativeDouble("min_kernel_us", 0) * 1e-6;
  g.fp8_gemm_tn_only = mm.Bool("fp8_tn_only", false);
  mm.Finish();
  YamlMap a = m.Map("attention");
  g.attention_fwd_flops = a.PositiveDouble("fwd_tflops") * 1e12;
  // The attention kernel's matmuls run on the tensor cores, at most at their
  // peak. A unit mistake is an order of magnitude; a calibrated profile's
  // measured peak and attention rate may cross by noise (a CPU under load).
  double fastest = 0;
  for (const auto& [precision, flops] : g.peak_flops) fastest = std::max(fastest, flops);
  if (g.attention_fwd_flops > 10 * fastest) {
    char most[64];
    std::snprintf(most, sizeof most, "%g", fastest / 1e12);
    a.Fail("fwd_tflops", std::string("ten times the GPU's fastest peak_tflops, ") + most + ", or more: no kernel runs faster than its tensor cores (a unit mistake?)");
  }
  g.attention_bwd_fwd_ratio = AttentionBwdFwdRatio(a);
  g.attention_half_seq = a.PositiveDouble("half_seq", 512);
  if (auto f2 = a.OptMap("flash2")) {
    g.attention_flash2_fwd_flops = f2->PositiveDouble("fwd_tflops") * 1e12;
    g.attention_flash2_bwd_fwd_ratio = AttentionBwdFwdRatio(*f2);
    f2->Finish();
  }
  if (auto hd = a.OptMap("head_dim_efficiency")) {
    // Points hdimN (N != 128, which is 1.0 by definition); `backward:` replaces some for the backward.
    static const std::vector<int> kHeadDims = {32, 64, 96, 160, 192, 256};
    auto read = [](YamlMap& map, std::map<int, double>& into) {
      for (int d : kHeadDims) {
        const std::string key = "hdim" + std::to_string(d);
        if (map.Has(key)) into[d] = map.Fraction(key);
      }
    };
    g.attention_head_dim_efficiency[128] = 1.0;
    read(*hd, g.attention_head_dim_efficiency);
    g.attention_head_dim_backward_efficiency = g.attention_head_dim_efficiency;
    if (auto b = hd->OptMap("backward")) {
      read(*b, g.attention_head_dim_backward_efficiency);
      b->Finish();
    }
    hd->Finish();
  }
  a.Finish();
  g.memory_bound_efficiency = m.Fraction("memory_bound_efficiency", 0.8);
  g.memory_kernel_fixed_s = m.NonNegativeDouble("memory_kernel_us", 2) * 1e-6;
  g.sustained_clock_fraction = m.Fraction("sustained_clock_fraction", 1.0);
  m.Finish();
  return g;
}

NodeProfile ParseNode(const YAML::Node& root, const std::string& path) {
  YamlMap m(root, path);
  NodeProfile n;
  n.name = m.String("name");
  n.gpu = LoadGpuProfile(m.Raw("gpu"), path, "gpu");
  if (n.gpu.cpu_stand_in) {
    m.Fail("gpu", "'" + n.gpu.name + "' is a profile of a CPU (trainsim calibrate --backend cpu, measured_on: cpu): it predicts the "
                  "layer step it measured (trainsim validate --profile), not a GPU of a training cluster; name a GPU profile");
  }
  n.gpus_per_node = m.PositiveInt("gpus_per_node");
  n.nvlink_domain_gpus = m.PositiveInt("nvlink_domain_gpus", n.gpus_per_node);
  if (n.nvlink_domain_gpus % n.gpus_per_node != 0) {
    m.Fail("nvlink_domain_gpus", "an NVLink domain of " + std::to_string(n.nvlink_domain_gpus) + " GPUs is not a whole number of " +
                                     std::to_string(n.gpus_per_node) + "-GPU nodes");
  }
  n.nics_per_node = m.PositiveInt("nics_per_node");
  YAML::Node allowed = m.Raw("nics_allowed");
  if (allowed.IsDefined()) {
    if (!allowed.IsSequence()) m.Fail("nics_allowed", "expected a list of NIC counts");
    for (const auto& v : allowed) {
      int c = 0;
      try {
        c = v.as<int>();
      } catch (const YAML::Exception&) {
        YamlMap::FailAt(v, path, "nics_allowed", "expected whole numbers");
      }
      if (c <= 0) YamlMap::FailAt(v, path, "nics_allowed", "NIC counts must be positive");
      n.nics_allowed.push_back(c);
    }
    if (!n.TakesNics(n.nics_per_node)) {
      m.Fail("nics_allowed", "does not hold the profile's own nics_per_node " + std::to_string(n.nics_per_node));
    }
  } else {
    n.nics_allowed = {n.nics_per_node};
  }
  n.nic_bytes_per_s = m.PositiveDouble("nic_gbit_per_s") * kGB / 8;
  n.nvlink_bytes_per_s = m.PositiveDouble("nvlink_gb_per_s") * kGB;
  // A node file names its GPU by one key; the NVLink and power it declares
  // belong to some GPU: where the GPU's own profile cannot have them, the
  // file was written for another GPU (a B300 chassis naming an H100).
  if (n.gpu.nvlink_bytes_per_s > 0 && n.nvlink_bytes_per_s > n.gpu.nvlink_bytes_per_s * (1 + 1e-9)) {
    m.Fail("nvlink_gb_per_s", Fmt("%g GB/s per direction is more than ", n.nvlink_bytes_per_s / kGB) + n.gpu.name + "'s NVLink carries (" +
                                  Fmt("%g", n.gpu.nvlink_bytes_per_s / kGB) + "): is gpu: the GPU this node holds?");
  }
  YamlMap in = m.Map("intra_node");
  n.nvls = in.Bool("nvls", false);
  n.intra_allreduce_bus_bytes_per_s = in.PositiveDouble("allreduce_bus_gb_per_s") * kGB;
  n.intra_ring_bus_bytes_per_s = in.PositiveDouble("ring_bus_gb_per_s") * kGB;
  n.intra_latency_s = in.NonNegativeDouble("latency_us") * 1e-6;
  n.intra_half_chunk_bytes = in.NonNegativeDouble("half_chunk_mib", 0) * 1024 * 1024;
  // NCCL's measured rates set the collectives' times; the NVLink rate is the
  // links they share in the DES. A ring moves no faster than its links, and
  // NVLink SHARP's in-switch reduction at most doubles an all-reduce's bus
  // rate (each GPU sends its buffer once and receives the sum once): a rate
  // past that is a unit slip (NVLink in TB/s) or another node's figure.
  const double nvlink_gb = n.nvlink_bytes_per_s / kGB;
  if (n.intra_ring_bus_bytes_per_s > n.nvlink_bytes_per_s * (1 + 1e-9)) {
    in.Fail("ring_bus_gb_per_s", Fmt("%g GB/s is more than the NVLink it runs over carries", n.intra_ring_bus_bytes_per_s / kGB) +
                                     Fmt(" (nvlink_gb_per_s %g): a ring moves no faster than its links", nvlink_gb));
  }
  if (n.intra_allreduce_bus_bytes_per_s > (n.nvls ? 2 : 1) * n.nvlink_bytes_per_s * (1 + 1e-9)) {
    in.Fail("allreduce_bus_gb_per_s", Fmt("%g GB/s is more than ", n.intra_allreduce_bus_bytes_per_s / kGB) +
                                          (n.nvls ? Fmt("twice the NVLink it runs over (nvlink_gb_per_s %g), NVLink SHARP's most", nvlink_gb)
                                                  : Fmt("the NVLink it runs over carries (nvlink_gb_per_s %g; no nvls)", nvlink_gb)));
  }
  in.Finish();
  n.pcie_bytes_per_s = m.PositiveDouble("pcie_gb_per_s") * kGB;
  n.host_memory_bytes = m.PositiveDouble("host_memory_gib") * kGiB;
  n.host_op_time_factor = m.PositiveDouble("host_op_time_factor", 1.0);
  YamlMap pw = m.Map("power_w");
  n.power_load_w = pw.PositiveDouble("load");
  if (n.power_load_w < n.gpus_per_node * n.gpu.tdp_w) {
    pw.Fail("load", Fmt("%g W is below what the node's ", n.power_load_w) + std::to_string(n.gpus_per_node) + " " + n.gpu.name +
                        Fmt(" draw at their TDP alone (%g W each): is gpu: the GPU this node holds?", n.gpu.tdp_w));
  }
  n.power_idle_w = pw.NonNegativeDouble("idle");
  if (n.power_idle_w > n.power_load_w) pw.Fail("idle", "idle power above the load power");
  pw.Finish();
  // Required, so a profile without a price never costs a run $0 unseen (0 is
  // a price a user can give: a cluster that is not rented).
  n.node_hour_usd = m.NonNegativeDouble("node_hour_usd");
  n.nic_port_hour_usd = m.NonNegativeDouble("nic_port_hour_usd", 0);
  if (auto o = m.OptMap("ownership")) {
    n.capital_usd = o->NonNegativeDouble("capital_usd", 0);
    n.nic_capital_usd = o->NonNegativeDouble("nic_usd", 0);
    o->Finish();
  }
  n.default_nics_per_node = n.nics_per_node;
  n.framework = m.OptString("framework").value_or("megatron-core-2024");
  // The framework a scenario on this node runs unless it names one, and the
  // fabric the node is sold or published with (design.md 3b): resolved here,
  // so a wrong name is this file's error at its line, not the scenario's.
  if (m.Has("framework")) ResolveProfile(m.Raw("framework"), path, "framework", "frameworks");
  if (m.Has("default_fabric")) n.default_fabric = ResolveProfile(m.Raw("default_fabric"), path, "default_fabric", "fabrics");
  n.source_file = path;
  m.Finish();
  return n;
}

FabricProfile ParseFabric(const YAML::Node& root, const std::string& path) {
  YamlMap m(root, path);
  FabricProfile f;
  f.name = m.String("name");
  f.topology = m.Choice("topology", {"rail-optimized", "fat-tree"}) == "fat-tree" ? FabricTopology::kFatTree
                                                                                   : FabricTopology::kRailOptimized;
  f.link_bytes_per_s = m.PositiveDouble("link_gbit_per_s") * kGB / 8;
  f.achieved_bytes_per_s = m.PositiveDouble("achieved_gb_per_s") * kGB;
  if (f.achieved_bytes_per_s > f.link_bytes_per_s) m.Fail("achieved_gb_per_s", "exceeds the link rate");
  f.nodes_per_su = m.PositiveInt("nodes_per_su");
  f.switch_radix = m.PositiveInt("switch_radix");
  f.switch_latency_s = m.NonNegativeDouble("switch_latency_ns") * 1e-9;
  f.inter_node_latency_s = m.NonNegativeDouble("inter_node_latency_us") * 1e-6;
  f.spine_oversubscription = m.PositiveDouble("spine_oversubscription", 1.0);
  // o:1 is leaf ports down per port up: below 1 a leaf would have more
  // uplinks than nodes, which buys spines and moves nothing faster.
  if (f.spine_oversubscription < 1) m.Fail("spine_oversubscription", "must be at least 1 (1: non-blocking; 2: half as many uplinks as node ports)");
  if (auto o = m.OptMap("ownership")) {
    f.switch_capital_usd = o->NonNegativeDouble("switch_usd", 0);
    f.link_capital_usd = o->NonNegativeDouble("link_usd", 0);
    o->Finish();
  }
  m.Finish();
  return f;
}

// A group of numbers (a map key) that a derived profile may restate in part:
// the base's value, where it gave one (> 0), stands in for a number left out;
// without one the number is required.
template <class T>
std::optional<T> BaseValue(T v) {
  return v > 0 ? std::optional<T>(v) : std::nullopt;
}

// A flex dispatcher's measured NVLink rates (DispatcherNvlinkRates) from its
// section: `nvlink_fraction` by "ranksN" (N EP members in one NVLink domain)
// and, optionally, `nvlink_gb_per_s_per_sm`; a derived profile's replace its
// base's where it gives them.
void ReadDispatcherNvlink(YamlMap& d, DispatcherNvlinkRates& r) {
  if (auto fractions = d.OptMap("nvlink_fraction")) {
    r.dispatch_fraction.clear();
    r.combine_fraction.clear();
    for (const auto& entry : fractions->node()) {
      const std::string key = entry.first.Scalar();
      long ranks = 0;
      if (key.rfind("ranks", 0) == 0 && key.size() > 5 && key.size() <= 11 && key.find_first_not_of("0123456789", 5) == std::string::npos) {
        ranks = std::strtol(key.c_str() + 5, nullptr, 10);
      }
      if (ranks < 2 || ranks > 100000) fractions->Fail(key, "expected ranksN (2 <= N <= 100000: the EP group's members in one NVLink domain)");
      YamlMap point = fractions->Map(key);
      r.dispatch_fraction[int(ranks)] = point.Fraction("dispatch");
      r.combine_fraction[int(ranks)] = point.Fraction("combine");
      point.Finish();
    }
    if (r.dispatch_fraction.empty()) d.Fail("nvlink_fraction", "needs at least one ranksN point");
    fractions->Finish();
  }
  if (auto per_sm = d.OptMap("nvlink_gb_per_s_per_sm")) {
    r.dispatch_bytes_per_s_per_sm = per_sm->PositiveDouble("dispatch") * 1e9;
    r.combine_bytes_per_s_per_sm = per_sm->PositiveDouble("combine") * 1e9;
    per_sm->Finish();
  }
}

// The keys of a framework profile that say how it trains (all but its name,
// its base, its provenance and its by_precision entries), read over f: a
// derived profile's (or a by_precision entry's) defaults are f's values.
void ReadRecipeKeys(YamlMap& m, FrameworkProfile& f, bool derived, const std::string& path) {
  // A key a whole profile must give defaults to the base's value in a derived one.
  auto inherited = [derived](auto base) -> std::optional<decltype(base)> {
    if (derived) return base;
    return std::nullopt;
  };
  f.attention_kernel = AttentionKernelNamed(m.Choice("attention_kernel", AttentionKernelNames(), inherited(ToString(f.attention_kernel))));
  f.dropout = m.NonNegativeDouble("dropout", f.dropout);
  if (f.dropout >= 1) m.Fail("dropout", "must be below 1");
  f.tp_comm_overlap = m.Bool("tp_comm_overlap", inherited(f.tp_comm_overlap));
  f.async_input_grad_comm = m.Bool("async_input_grad_comm", f.async_input_grad_comm);
  f.overlap_grad_reduce = m.Bool("overlap_grad_reduce", inherited(f.overlap_grad_reduce));
  f.overlap_param_gather = m.Bool("overlap_param_gather", inherited(f.overlap_param_gather));
  f.overlap_p2p = m.Bool("overlap_p2p", inherited(f.overlap_p2p));
  f.moe_a2a_overlap = m.Bool("moe_a2a_overlap", f.moe_a2a_overlap);
  f.moe_dispatcher = MoeDispatcherNamed(m.Choice("moe_dispatcher", MoeDispatcherNames(), ToString(f.moe_dispatcher)));
  const bool sharding_inherited = derived && !m.Has("distributed_optimizer");
  f.distributed_optimizer = m.Bool("distributed_optimizer", inherited(f.distributed_optimizer));
  {
    const std::string implied = sharding_inherited ? ToString(f.data_sharding) : f.distributed_optimizer ? "optimizer" : "none";
    const std::string ds = m.Choice("data_sharding", DataShardingNames(), implied);
    f.data_sharding = DataShardingNamed(ds);
    if ((f.data_sharding != DataSharding::kNone) != f.distributed_optimizer) {
      m.Fail("data_sharding", ds + " disagrees with distributed_optimizer");
    }
  }
  f.sequence_parallel = m.Bool("sequence_parallel", inherited(f.sequence_parallel));
  f.wgrad_out_bytes = m.PositiveDouble("wgrad_out_bytes", f.wgrad_out_bytes);
  const std::string scaling = f.fp8_scaling == Fp8Scaling::kCurrent ? "current" : "delayed";
  f.fp8_scaling = m.Choice("fp8_scaling", {"delayed", "current"}, inherited(scaling)) == "current" ? Fp8Scaling::kCurrent : Fp8Scaling::kDelayed;
  f.fp8_amax_reduction = Fp8AmaxReductionNamed(m.Choice("fp8_amax_reduction", Fp8AmaxReductionNames(), ToString(f.fp8_amax_reduction)));
  f.userbuffers_fp8_reduce_scatter = m.Bool("userbuffers_fp8_reduce_scatter", f.userbuffers_fp8_reduce_scatter);
  f.fp8_backward_split_accumulator = m.Bool("fp8_backward_split_accumulator", f.fp8_backward_split_accumulator);
  if (YAML::Node targets = m.Raw("lora_target_modules"); targets.IsDefined()) f.lora_targets = ParseLoraTargets(targets, path, m.Path("lora_target_modules"));
  f.lora_dropout = m.NonNegativeDouble("lora_dropout", f.lora_dropout);
  if (f.lora_dropout >= 1) m.Fail("lora_dropout", "must be below 1");
  f.lora_adapter_all_to_all = m.Bool("lora_adapter_all_to_all", f.lora_adapter_all_to_all);
  f.tp_comm_overlap_disable_qkv = m.Bool("tp_comm_overlap_disable_qkv", f.tp_comm_overlap_disable_qkv);
  f.tp_comm_overlap_rs_dgrad =
      RecipeSettingNamed(m.Choice("tp_comm_overlap_rs_dgrad", RecipeSettingNames(), ToString(f.tp_comm_overlap_rs_dgrad)));
  f.fp8_parameter_transpose_cache = m.Bool("fp8_parameter_transpose_cache", f.fp8_parameter_transpose_cache);
  f.recompute = RecomputeNamed(m.Choice("recompute", RecomputeNames(), ToString(f.recompute)));
  if (YAML::Node mods = m.Raw("recompute_modules"); mods.IsDefined()) {
    if (f.recompute != Recompute::kSelective) m.Fail("recompute_modules", "needs recompute: selective (Megatron-Core's recompute_modules)");
    f.recompute_modules = ParseRecomputeModules(mods, path, m.Path("recompute_modules"));
  }
  f.recompute_layers = m.NonNegativeInt("recompute_layers", f.recompute_layers);
  if (f.recompute_layers > 0 && f.recompute != Recompute::kFull) {
    m.Fail("recompute_layers", "needs recompute: full (Megatron-Core's recompute_num_layers with recompute_method block)");
  }
  {
    const std::string policy = m.Choice("selective_recompute_policy", {"modules", "torchtitan_op"},
                                        f.selective_recompute_torchtitan_op ? "torchtitan_op" : "modules");
    f.selective_recompute_torchtitan_op = policy == "torchtitan_op";
    if (f.selective_recompute_torchtitan_op && f.recompute_modules != 0) {
      m.Fail("selective_recompute_policy", "torchtitan_op chooses what it recomputes; recompute_modules is Megatron-Core's");
    }
  }
  f.activation_offload_layers = m.NonNegativeInt("activation_offload_layers", f.activation_offload_layers);
  if (YAML::Node layouts = m.Raw("pipeline_layouts"); layouts.IsDefined()) {
    const std::string key = m.Path("pipeline_layouts");
    if (!layouts.IsMap()) YamlMap::FailAt(layouts, path, key, "expected a map from pipeline x virtual stages (\"16x1\") to a layout");
    for (const auto& entry : layouts) {  // over the base's: a recipe overrides the layouts it names
      const std::string shape = entry.first.Scalar();
      const size_t x = shape.find('x');
      int pipeline = 0, virtual_stages = 0;
      try {
        size_t used = 0;
        if (x != std::string::npos) pipeline = std::stoi(shape.substr(0, x), &used);
        if (used != x) pipeline = 0;
        if (pipeline > 0) virtual_stages = std::stoi(shape.substr(x + 1), &used);
        if (used != shape.size() - x - 1) virtual_stages = 0;
      } catch (const std::exception&) {
        pipeline = 0;
      }
      if (pipeline < 1 || virtual_stages < 1) YamlMap::FailAt(entry.first, path, key, "\"" + shape + "\": expected pipeline x virtual stages, as \"16x1\"");
      if (!entry.second.IsScalar()) YamlMap::FailAt(entry.second, path, key + "." + shape, "expected a layout string");
      std::string why;
      const auto layout = PipelineLayout::Parse(entry.second.Scalar(), &why);
      if (!layout) YamlMap::FailAt(entry.second, path, key + "." + shape, why);
      if (long(layout->stages()) != long(pipeline) * virtual_stages) {
        YamlMap::FailAt(entry.second, path, key + "." + shape, "has " + std::to_string(layout->stages()) + " stages, not " + shape);
      }
      f.pipeline_layouts[shape] = entry.second.Scalar();
    }
  }
  if (auto o = m.OptMap("overlap_sms")) {
    f.nccl_overlap_sms = o->NonNegativeInt("nccl", f.nccl_overlap_sms);
    f.userbuffer_pipelined_sms = o->NonNegativeInt("userbuffers_pipelined", f.userbuffer_pipelined_sms);
    f.userbuffer_bulk_sms = o->NonNegativeInt("userbuffers_bulk", f.userbuffer_bulk_sms);
    f.deepep_sms = o->NonNegativeInt("deepep", f.deepep_sms);
    f.hybridep_sms = o->NonNegativeInt("hybridep", f.hybridep_sms);
    o->Finish();
  }
  if (auto d = m.OptMap("deepep")) {
    f.deepep_max_nvlink_peers = d->PositiveInt("max_nvlink_peers", BaseValue(f.deepep_max_nvlink_peers));
    f.deepep_max_rdma_peers = d->PositiveInt("max_rdma_peers", BaseValue(f.deepep_max_rdma_peers));
    if (auto beyond = f.deepep_beyond_peers_dispatch_bytes_per_s > 0 ? d->OptMap("beyond_nvlink_peers_gb_per_s")
                                                                       : std::optional<YamlMap>(d->Map("beyond_nvlink_peers_gb_per_s"))) {
      f.deepep_beyond_peers_dispatch_bytes_per_s = beyond->PositiveDouble("dispatch", BaseValue(f.deepep_beyond_peers_dispatch_bytes_per_s / 1e9)) * 1e9;
      f.deepep_beyond_peers_combine_bytes_per_s = beyond->PositiveDouble("combine", BaseValue(f.deepep_beyond_peers_combine_bytes_per_s / 1e9)) * 1e9;
      beyond->Finish();
    }
    ReadDispatcherNvlink(*d, f.deepep_nvlink);
    d->Finish();
  }
  if (auto h = m.OptMap("hybridep")) {
    ReadDispatcherNvlink(*h, f.hybridep_nvlink);
    h->Finish();
  }
  f.userbuffer_pipelined_splits = m.PositiveInt("userbuffers_pipelined_splits", f.userbuffer_pipelined_splits);
  f.moe_dropless_load_factor = m.PositiveDouble("moe_dropless_load_factor", f.moe_dropless_load_factor);
  if (f.moe_dropless_load_factor < 1) m.Fail("moe_dropless_load_factor", "the busiest expert carries at least the mean load (>= 1)");
  f.grad_reduce_bytes = m.PositiveInt("grad_reduce_bytes", f.grad_reduce_bytes);
  f.optimizer_state_bytes = m.PositiveDouble("optimizer_state_bytes", f.optimizer_state_bytes);
  if (f.grad_reduce_bytes != 2 && f.grad_reduce_bytes != 4) m.Fail("grad_reduce_bytes", "must be 2 or 4");
  if (auto ce = m.OptMap("cross_entropy_bytes_per_logit")) {
    f.cross_entropy_forward_bytes = ce->PositiveDouble("forward", inherited(f.cross_entropy_forward_bytes));
    f.cross_entropy_backward_bytes = ce->PositiveDouble("backward", inherited(f.cross_entropy_backward_bytes));
    f.cross_entropy_saved_bytes = ce->PositiveDouble("saved", f.cross_entropy_saved_bytes);
    ce->Finish();
  }
  if (auto ee = m.OptMap("eager_elementwise")) {
    auto op = [&](const char* key, FrameworkProfile::EagerElementwise& e) {
      if (auto o = ee->OptMap(key)) {
        e.forward_bytes = o->PositiveDouble("forward", BaseValue(e.forward_bytes));
        e.backward_bytes = o->PositiveDouble("backward", BaseValue(e.backward_bytes));
        e.kernels = o->PositiveInt("kernels", BaseValue(e.kernels));
        if (o->Has("backward_kernels")) e.backward_kernels = o->PositiveInt("backward_kernels");
        o->Finish();
      }
    };
    op("norm", f.eager_norm);
    op("rotary", f.eager_rotary);
    op("gated_activation", f.eager_gated_activation);
    f.eager_attention_copies = ee->Bool("attention_copies", f.eager_attention_copies);
    ee->Finish();
  }
  f.activation_clamp = m.NonNegativeDouble("activation_clamp", f.activation_clamp);
  if (auto c = m.OptMap("activation_clamp_pass")) {
    FrameworkProfile::ActivationClampPass& p = f.activation_clamp_pass;
    p.forward_bytes = c->NonNegativeDouble("forward", p.forward_bytes);
    p.backward_bytes = c->NonNegativeDouble("backward", p.backward_bytes);
    p.kernels = c->NonNegativeInt("kernels", p.kernels);
    p.backward_kernels = c->NonNegativeInt("backward_kernels", p.backward_kernels);
    p.host_sync = c->Bool("host_sync", p.host_sync);
    if ((p.forward_bytes > 0 || p.backward_bytes > 0) != (p.kernels > 0)) {
      c->Fail("kernels", "passes that move bytes launch kernels, and kernels move bytes: give both or neither");
    }
    c->Finish();
  }
  f.mtp_layers = m.NonNegativeInt("mtp_layers", f.mtp_layers);
  f.moe_expert_bias = m.Bool("moe_expert_bias", f.moe_expert_bias);
  f.moe_probs_on_fc2_input = m.Bool("moe_probs_on_fc2_input", f.moe_probs_on_fc2_input);
  if (auto eb = m.OptMap("moe_expert_bias_bytes_per_element")) {
    f.moe_expert_bias_forward_bytes = eb->NonNegativeDouble("forward", f.moe_expert_bias_forward_bytes);
    f.moe_expert_bias_backward_bytes = eb->NonNegativeDouble("backward", f.moe_expert_bias_backward_bytes);
    eb->Finish();
  }
  if (auto b = m.OptMap("grad_bucket_params")) {
    f.grad_bucket_min_params = b->NonNegativeDouble("min", f.grad_bucket_min_params);
    f.grad_bucket_params_per_replica = b->NonNegativeDouble("per_replica", f.grad_bucket_params_per_replica);
    b->Finish();
  }
  f.grouped_gemm_streams = m.NonNegativeInt("grouped_gemm_streams", f.grouped_gemm_streams);
  if (m.Has("host_us_per_kernel")) f.host_s_per_kernel = m.NonNegativeDouble("host_us_per_kernel") * 1e-6;
  if (YAML::Node scope = m.Raw("cuda_graph_scope"); scope.IsDefined()) {
    f.cuda_graph_modules = ParseCudaGraphScope(scope, path, m.Path("cuda_graph_scope"));
  }
  if (auto k = m.OptMap("moe_kernels")) {
    f.moe_router_kernels = k->PositiveInt("router", f.moe_router_kernels);
    f.moe_preprocess_kernels = k->PositiveInt("preprocess", f.moe_preprocess_kernels);
    f.moe_flex_preprocess_kernels = k->PositiveInt("flex_preprocess", f.moe_flex_preprocess_kernels);
    f.moe_dispatch_kernels = k->PositiveInt("dispatch", f.moe_dispatch_kernels);
    f.moe_combine_kernels = k->PositiveInt("combine", f.moe_combine_kernels);
    f.moe_sort_kernels = k->PositiveInt("sort", f.moe_sort_kernels);
    f.moe_unsort_kernels = k->PositiveInt("unsort", f.moe_unsort_kernels);
    f.moe_expert_bias_kernels = k->PositiveInt("expert_bias", f.moe_expert_bias_kernels);
    f.moe_allgather_local_map_kernels = k->PositiveInt("allgather_local_map", f.moe_allgather_local_map_kernels);
    f.moe_allgather_combine_cast_kernels = k->PositiveInt("allgather_combine_casts", f.moe_allgather_combine_cast_kernels);
    k->Finish();
  }
  f.expert_tensor_follows_tensor = m.Choice("expert_tensor", {"1", "tensor"}, f.expert_tensor_follows_tensor ? "tensor" : "1") == "tensor";
}

// Each precision that f's overrides name, as f trains it: f's values with the
// by_precision entries for it applied in order. `root` is the document of
// `path`, the profile being parsed; a base's entries are re-read from its file
// (once each), which the base's own parse has read already. Throws for a bad
// entry with its file, line and key.
void BuildPrecisionVariants(FrameworkProfile& f, const std::string& path, const YAML::Node& root) {
  f.variants.of.clear();
  std::map<std::string, YAML::Node> documents{{path, root}};
  std::map<std::string, FrameworkProfile> built;
  for (const auto& o : f.precision_overrides) {
    const auto it = built.try_emplace(o.precision, f).first;  // the first entry for a precision starts from f
    auto doc = documents.find(o.file);
    if (doc == documents.end()) doc = documents.emplace(o.file, LoadProfileYaml(o.file)).first;
    YamlMap entries(doc->second["by_precision"], o.file, "by_precision");
    YamlMap entry = entries.Map(o.precision);
    ReadRecipeKeys(entry, it->second, /*derived=*/true, o.file);
    entry.Finish();
  }
  for (auto& [precision, variant] : built) {
    variant.variants = {};
    f.variants.of[precision] = std::make_shared<const FrameworkProfile>(std::move(variant));
  }
}

FrameworkProfile ParseFramework(const YAML::Node& root, const std::string& path) {
  YamlMap m(root, path);
  // A release profile can be written as changes to another (based_on): the
  // base's values are this one's defaults; a benchmark's recipe is written as
  // changes to its release, itself changes to a model's recipe, and so on. A
  // chain may be as long as it needs; one that comes back to a profile it is
  // still reading is a loop. The files being read are tracked here, not the
  // depth: a base already parsed comes from the profile cache without its
  // chain, so a depth would depend on what was loaded before.
  static thread_local std::vector<std::string> reading;
  if (const auto loop = std::find(reading.begin(), reading.end(), path); loop != reading.end()) {
    std::string chain;
    for (auto it = loop; it != reading.end(); ++it) chain += std::filesystem::path(*it).stem().string() + " -> ";
    m.Fail("based_on", "leads back to this profile, a loop of based_on profiles (" + chain + std::filesystem::path(path).stem().string() + ")");
  }
  struct Reading {  // while this profile and its bases are parsed (a throw included)
    explicit Reading(const std::string& p) { reading.push_back(p); }
    ~Reading() { reading.pop_back(); }
  } const guard(path);
  const bool derived = m.Has("based_on");
  FrameworkProfile f;
  if (derived) {
    f = LoadFrameworkProfile(m.Raw("based_on"), path, "based_on");
    f.based_on = f.name;
    f.containers.clear();
    f.result_repositories.clear();
    f.result_benchmarks.clear();
  }
  f.name = m.String("name");
  ReadRecipeKeys(m, f, derived, path);
  const auto names = [&m](const char* key, const std::string& what, std::vector<std::string>& out) {
    YAML::Node c = m.Raw(key);
    if (!c.IsDefined()) return;
    if (!c.IsSequence()) m.Fail(key, "expected a list of " + what);
    for (const auto& name : c) {
      if (!name.IsScalar() || name.Scalar().empty()) m.Fail(key, "expected a list of " + what);
      out.push_back(name.Scalar());
    }
  };
  names("containers", "container names", f.containers);
  names("result_repositories", "repository names (owner/name)", f.result_repositories);
  names("result_benchmarks", "benchmark names", f.result_benchmarks);
  // The precisions the stack has recipes for: a derived profile keeps its base's unless it lists its own.
  if (m.Raw("precisions").IsDefined()) {
    f.precisions.clear();
    names("precisions", "training precisions (bf16, fp8, mxfp8, ...)", f.precisions);
    for (const std::string& name : f.precisions) {
      Precision p;
      if (!ParsePrecision(name, p)) m.Fail("precisions", "'" + name + "' is not a training precision");
    }
  }
  if (!f.result_benchmarks.empty() && f.result_repositories.empty()) {
    m.Fail("result_benchmarks", "names benchmarks of result_repositories, and the profile has none");
  }
  if (auto by = m.OptMap("by_precision")) {
    // Recipe settings for one training precision: a map from its name to keys of this profile.
    int count = 0;
    const char* const* known = PrecisionNames(count);
    for (const auto& entry : by->node()) {
      const std::string name = entry.first.Scalar();
      Precision p;
      if (!ParsePrecision(name, p)) {
        std::string list;
        for (int i = 0; i < count; ++i) list += (i ? ", " : "") + std::string(known[i]);
        YamlMap::FailAt(entry.first, path, by->Path(name), "not a training precision (" + list + ")");
      }
      if (!entry.second.IsMap()) by->Fail(name, "expected a map of this profile's keys for " + name);
      by->Allow(name);
      f.precision_overrides.push_back({name, path});
    }
    by->Finish();
  }
  BuildPrecisionVariants(f, path, m.node());
  m.Finish();
  return f;
}

StorageProfile ParseStorage(const YAML::Node& root, const std::string& path) {
  YamlMap m(root, path);
  StorageProfile s;
  s.name = m.String("name");
  s.default_nodes = m.PositiveInt("default_nodes", 1);
  s.write_bytes_per_s_per_node = m.PositiveDouble("write_gb_per_s_per_node") * kGB;
  s.read_bytes_per_s_per_node = m.PositiveDouble("read_gb_per_s_per_node") * kGB;
  s.front_end_links_per_node = m.PositiveInt("front_end_links_per_node");
  s.front_end_link_bytes_per_s = m.PositiveDouble("front_end_gbit_per_s") * kGB / 8;
  s.latency_s = m.NonNegativeDouble("latency_ms", 0) * 1e-3;
  // Required, as a node's: a missing figure would count the storage as free and drawing nothing.
  s.power_w = m.NonNegativeDouble("power_w");
  s.node_hour_usd = m.NonNegativeDouble("node_hour_usd");
  if (auto o = m.OptMap("ownership")) {
    s.capital_usd = o->NonNegativeDouble("capital_usd", 0);
    o->Finish();
  }
  m.Finish();
  return s;
}

SiteProfile ParseSite(const YAML::Node& root, const std::string& path) {
  YamlMap m(root, path);
  SiteProfile s;
  s.name = m.String("name");
  // Bounds a real site stays well inside, so that a slip of the finger (a
  // price in cents, a write-off in months) is an error rather than a cost:
  // surveyed PUEs run 1.1-2.5 (Uptime Institute 2023), retail electricity
  // under $1/kWh, hardware is written off over years, not hours or centuries.
  s.pue = m.BoundedDouble("pue", std::nullopt, [](double x) { return x >= 1 && x <= 3; },
                          "must be between 1 and 3 (facility energy over IT energy; surveyed sites run 1.1-2.5)");
  s.electricity_usd_per_kwh =
      m.BoundedDouble("electricity_usd_per_kwh", std::nullopt, [](double x) { return x >= 0 && x <= 10; },
                      "must be between 0 and 10 (US dollars per kWh; a price in cents would be 100 times too large)");
  s.amortization_years = m.BoundedDouble("amortization_years", std::nullopt, [](double x) { return x >= 0.25 && x <= 30; },
                                         "must be between 0.25 and 30 (years over which the purchase is written off)");
  m.Finish();
  return s;
}

// One cache per profile kind: a scenario's profiles are parsed once while their files stay unchanged.
template <class T>
T LoadProfile(const YAML::Node& ref, const std::string& from, const std::string& key, const char* kind,
              T (*parse)(const YAML::Node&, const std::string&)) {
  static ParsedFileCache<T> cache;
  return cache.Get(ResolveProfile(ref, from, key, kind), [parse](const std::string& path) {
    const YAML::Node root = LoadYamlFile(path);
    T profile = parse(root, path);  // its own checks first: they name the unit a number is off by (memory_gib in bytes)
    CheckPlausibleNumbers(root, path, "", kUnitless);
    return profile;
  });
}

}  // namespace

LoraTargets ParseLoraTargets(const YAML::Node& list, const std::string& file, const std::string& path) {
  // Megatron-Core fuses q, k and v into linear_qkv and gate and up into
  // linear_fc1, each with one adapter: Hugging Face PEFT's per-matrix names
  // (q_proj, ..., down_proj; Mixtral's experts' w1 (gate), w3 (up) and w2
  // (down) in transformers' MixtralBlockSparseTop2MLP; "all-linear") map onto
  // those four, a fused projection's parts only all together.
  struct Name {
    const char* name;
    int projection;  // 0 qkv, 1 proj, 2 fc1, 3 fc2; -1 all
    unsigned part;   // its bit among the fused projection's parts; 0: the whole projection
  };
  static const Name names[] = {{"qkv", 0, 0},       {"linear_qkv", 0, 0}, {"q_proj", 0, 1},       {"k_proj", 0, 2},
                               {"v_proj", 0, 4},    {"proj", 1, 0},       {"linear_proj", 1, 0},  {"o_proj", 1, 0},
                               {"fc1", 2, 0},       {"linear_fc1", 2, 0}, {"gate_proj", 2, 1},    {"up_proj", 2, 2},
                               {"fc2", 3, 0},       {"linear_fc2", 3, 0}, {"down_proj", 3, 0},    {"w1", 2, 1},
                               {"w3", 2, 2},        {"w2", 3, 0},         {"all-linear", -1, 0}};
  static const unsigned kAllParts[4] = {7, 0, 3, 0};
  static const char* kParts[4] = {"q_proj, k_proj and v_proj", "", "a gated MLP's gate and up projections (gate_proj and up_proj, Mixtral's w1 and w3)", ""};
  static const char* kKnown = "qkv, proj, fc1, fc2 (or Megatron's linear_qkv, linear_proj, linear_fc1, linear_fc2; PEFT's q_proj, "
                              "k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, all-linear; Mixtral's w1, w3, w2)";
  std::vector<std::string> known;
  for (const Name& x : names) known.push_back(x.name);
  const auto unknown = [&](const YAML::Node& at, const std::string& name) {
    const std::string hint = ClosestMatch(name, known);
    YamlMap::FailAt(at, file, path, "'" + name + "' is not one of " + kKnown + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
  };
  const bool all_linear_scalar = list.IsScalar() && list.Scalar() == "all-linear";
  if (list.IsScalar() && !all_linear_scalar && !list.Scalar().empty()) {
    // One known name written bare: a list is what it takes (PEFT's target_modules is a list too, but for all-linear).
    if (std::find(known.begin(), known.end(), list.Scalar()) == known.end()) unknown(list, list.Scalar());
    YamlMap::FailAt(list, file, path, "expected a list of projections: [" + list.Scalar() + "] (only all-linear stands alone)");
  }
  if (!all_linear_scalar && (!list.IsSequence() || list.size() == 0)) YamlMap::FailAt(list, file, path, std::string("expected a non-empty list of ") + kKnown);
  if (all_linear_scalar) return LoraTargets{};
  bool whole[4] = {false, false, false, false};
  unsigned parts[4] = {0, 0, 0, 0};
  std::string named_by[4];
  std::set<std::string> seen;
  for (const auto& m : list) {
    if (!m.IsScalar()) YamlMap::FailAt(m, file, path, std::string("expected a projection's name, one of ") + kKnown);
    const std::string name = m.Scalar();
    const Name* n = std::find_if(std::begin(names), std::end(names), [&](const Name& x) { return name == x.name; });
    if (n == std::end(names)) unknown(m, name);
    if (!seen.insert(name).second) YamlMap::FailAt(m, file, path, "'" + name + "' is listed twice (a projection takes one adapter)");
    for (int p = 0; p < 4; ++p) {
      if (n->projection != -1 && n->projection != p) continue;
      const bool taken = whole[p] || (n->part == 0 && parts[p] != 0) || (parts[p] & n->part) != 0;  // gate_proj and w1 are one part
      if (taken) YamlMap::FailAt(m, file, path, "'" + name + "' and '" + named_by[p] + "' name the same adapter");
      if (n->part == 0) whole[p] = true; else parts[p] |= n->part;
      named_by[p] = name;
    }
  }
  for (int p = 0; p < 4; ++p) {
    if (parts[p] != 0 && parts[p] != kAllParts[p]) {
      YamlMap::FailAt(list, file, path, std::string(kParts[p]) + " are one fused projection in Megatron-Core with one adapter: list "
                                        "all of them (or " + (p == 0 ? "qkv" : "fc1") + ")");
    }
  }
  auto on = [&](int p) { return whole[p] || (parts[p] != 0 && parts[p] == kAllParts[p]); };
  return LoraTargets{on(0), on(1), on(2), on(3)};
}

namespace {

// A list of names from `names` as bits in their order (name i sets bit i);
// names the file, line and path for a non-list, an empty one unless
// `may_be_empty`, or an unknown name (with `hint(name)` after the known ones).
unsigned ParseNamedBits(const YAML::Node& list, const std::vector<std::string>& names, bool may_be_empty, const std::string& file,
                        const std::string& path, std::string (*hint)(const std::string&) = nullptr) {
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  if (!list.IsSequence() || (!may_be_empty && list.size() == 0)) {
    YamlMap::FailAt(list, file, path, may_be_empty ? "expected a list of " + known + " (empty: none)" : "expected a non-empty list of " + known);
  }
  unsigned bits = 0;
  for (const auto& m : list) {
    const std::string name = m.IsScalar() ? m.Scalar() : "";
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) YamlMap::FailAt(m, file, path, "'" + name + "' is not one of " + known + (hint ? hint(name) : ""));
    bits |= 1u << unsigned(it - names.begin());
  }
  return bits;
}

}  // namespace

unsigned ParseRecomputeModules(const YAML::Node& list, const std::string& file, const std::string& path) {
  return ParseNamedBits(list, RecomputeModuleNames(), false, file, path);
}

unsigned ParseCudaGraphScope(const YAML::Node& list, const std::string& file, const std::string& path) {
  const unsigned bits = ParseNamedBits(list, CudaGraphModuleNames(), true, file, path, [](const std::string& name) {
    return name == "full" ? std::string(" (the whole layer: attn, mlp, moe)") : std::string();
  });
  // Megatron-Core's own rules (core_v0.16 transformer_config.py __post_init__).
  if ((bits & kGraphFullIteration) && bits != kGraphFullIteration) YamlMap::FailAt(list, file, path, "full_iteration takes the whole step: it stands alone");
  if ((bits & kGraphMoe) && (bits & kGraphMoeRouter)) YamlMap::FailAt(list, file, path, "moe and moe_router cannot both be captured (moe holds the router)");
  if ((bits & kGraphMoePreprocess) && !(bits & kGraphMoeRouter)) YamlMap::FailAt(list, file, path, "moe_preprocess is captured with moe_router only");
  return bits;
}

std::string ResolveGpuProfilePath(const YAML::Node& ref_node, const std::string& from_file, const std::string& key) {
  return ResolveProfile(ref_node, from_file, key, "gpus");
}

GpuProfile LoadGpuProfile(const YAML::Node& ref, const std::string& from, const std::string& key) {
  return LoadProfile(ref, from, key, "gpus", ParseGpu);
}
NodeProfile LoadNodeProfile(const YAML::Node& ref, const std::string& from, const std::string& key) {
  return LoadProfile(ref, from, key, "nodes", ParseNode);
}
FabricProfile LoadFabricProfile(const YAML::Node& ref, const std::string& from, const std::string& key) {
  return LoadProfile(ref, from, key, "fabrics", ParseFabric);
}
FrameworkProfile LoadFrameworkProfile(const YAML::Node& ref, const std::string& from, const std::string& key) {
  return LoadProfile(ref, from, key, "frameworks", ParseFramework);
}
StorageProfile LoadStorageProfile(const YAML::Node& ref, const std::string& from, const std::string& key) {
  return LoadProfile(ref, from, key, "storage", ParseStorage);
}
SiteProfile LoadSiteProfile(const YAML::Node& ref, const std::string& from, const std::string& key) {
  return LoadProfile(ref, from, key, "sites", ParseSite);
}

}  // namespace trainsim
