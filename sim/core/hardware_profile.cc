#include "sim/core/hardware_profile.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace trainsim {

const std::vector<std::string>& CudaGraphModuleNames() {
  static const std::vector<std::string> names = {"attn", "mlp", "moe", "moe_router", "moe_preprocess", "full_iteration"};
  return names;
}

namespace {

// The value of the precision's key, else of the keys it falls back to: a
// block-scaled fp8 GEMM to the fp8 one, everything to the 16-bit one.
template <typename Fallback>
double Lookup(const std::map<std::string, double>& m, Precision p, Fallback last) {
  for (const char* k : {GemmRateKey(p), p == Precision::kMxfp8 ? "fp8" : "", "bf16", "fp16"}) {
    if (*k == 0) continue;
    if (auto it = m.find(k); it != m.end()) return it->second;
  }
  return last();
}

// The enumerator at `name`'s index in `names` (its enumerators' order), else `otherwise`.
template <class E>
E Named(const std::vector<std::string>& names, const std::string& name, E otherwise) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? otherwise : E(it - names.begin());
}

}  // namespace

double GpuProfile::PeakFlops(Precision p) const {
  return Lookup(peak_flops, p, [&] { return peak_flops.at("fp16"); });
}

double GpuProfile::MatmulMaxEfficiency(Precision p) const {
  return Lookup(matmul_max_eff, p, [] { return 0.8; });
}

double GpuProfile::MatmulKHalf(Precision p) const {
  return Lookup(matmul_k_half, p, [] { return 0.0; });
}

bool GpuProfile::Supports(Precision p) const {
  const std::string k = RequiredPeakKey(p);
  return k.empty() || peak_flops.count(k) > 0;
}

std::string GpuProfile::UnsupportedReason(Precision p) const {
  if (Supports(p)) return "";
  return std::string(GemmRateKey(p)) == "fp8"
             ? "GPU '" + name + "' has no fp8 tensor cores (fp8 needs Hopper, sm_90, or later)"
             : "GPU '" + name + "' has no block-scaled tensor cores for " + ToString(p) + " (microscaled formats need Blackwell, sm_100, or later)";
}

double Interpolate(const std::map<int, double>& points, double x, double none) {
  if (points.empty()) return none;
  auto hi = points.lower_bound(int(std::ceil(x)));
  if (hi == points.end()) return std::prev(hi)->second;
  if (hi == points.begin() || hi->first == x) return hi->second;
  const auto lo = std::prev(hi);
  return lo->second + (hi->second - lo->second) * (x - lo->first) / (hi->first - lo->first);
}

double GpuProfile::AttentionHeadDimEfficiency(double head_dim, bool backward) const {
  return Interpolate(backward ? attention_head_dim_backward_efficiency : attention_head_dim_efficiency, head_dim, 1.0);
}

double DispatcherNvlinkRates::AlgorithmBytesPerS(bool combine, double ranks, double nvlink_bytes_per_s, int sms) const {
  const double measured = Interpolate(combine ? combine_fraction : dispatch_fraction, ranks, 1.0) * nvlink_bytes_per_s;
  const double per_sm = combine ? combine_bytes_per_s_per_sm : dispatch_bytes_per_s_per_sm;
  return per_sm > 0 && sms > 0 ? std::min(measured, per_sm * sms) : measured;
}

double GpuProfile::MatmulClockFraction(Precision p) const {
  if (auto it = matmul_clock_fraction.find(ToString(p)); it != matmul_clock_fraction.end()) return it->second;
  return sustained_clock_fraction;
}

double GpuProfile::MatmulSplitAccumulatorEfficiency(Precision p) const {
  if (auto it = matmul_split_accumulator_eff.find(ToString(p)); it != matmul_split_accumulator_eff.end()) return it->second;
  return 1.0;
}

const FrameworkProfile& FrameworkProfile::ForPrecision(Precision p) const {
  const auto it = variants.of.find(ToString(p));
  return it == variants.of.end() ? *this : *it->second;
}

const std::vector<std::string>& DataShardingNames() {
  static const std::vector<std::string> names = {"none", "optimizer", "gradients", "full"};
  return names;
}

std::string ToString(DataSharding d) { return DataShardingNames()[size_t(d)]; }

DataSharding DataShardingNamed(const std::string& name) { return Named(DataShardingNames(), name, DataSharding::kNone); }

const std::vector<std::string>& MoeDispatcherNames() {
  static const std::vector<std::string> names = {"alltoall", "deepep", "hybridep", "allgather"};
  return names;
}

std::string ToString(MoeDispatcher d) { return MoeDispatcherNames()[size_t(d)]; }

MoeDispatcher MoeDispatcherNamed(const std::string& name) { return Named(MoeDispatcherNames(), name, MoeDispatcher::kAllToAll); }

const std::vector<std::string>& Fp8AmaxReductionNames() {
  static const std::vector<std::string> names = {"none", "tensor", "stage"};
  return names;
}

std::string ToString(Fp8AmaxReduction r) { return Fp8AmaxReductionNames()[size_t(r)]; }

Fp8AmaxReduction Fp8AmaxReductionNamed(const std::string& name) { return Named(Fp8AmaxReductionNames(), name, Fp8AmaxReduction::kNone); }

const std::vector<std::string>& RecomputeNames() {
  static const std::vector<std::string> names = {"none", "selective", "full"};
  return names;
}
std::string ToString(Recompute r) { return RecomputeNames()[size_t(r)]; }
Recompute RecomputeNamed(const std::string& name) { return Named(RecomputeNames(), name, Recompute::kNone); }

const std::vector<std::string>& AttentionKernelNames() {
  static const std::vector<std::string> names = {"flash", "unfused", "flash2"};
  return names;
}
std::string ToString(AttentionKernel k) { return AttentionKernelNames()[size_t(k)]; }
AttentionKernel AttentionKernelNamed(const std::string& name) { return Named(AttentionKernelNames(), name, AttentionKernel::kFlash); }

const std::vector<std::string>& RecipeSettingNames() {
  static const std::vector<std::string> names = {"false", "true", "without_context_parallel"};
  return names;
}
std::string ToString(RecipeSetting s) { return RecipeSettingNames()[size_t(s)]; }
RecipeSetting RecipeSettingNamed(const std::string& name) { return Named(RecipeSettingNames(), name, RecipeSetting::kOff); }
bool Holds(RecipeSetting s, int context) {
  return s == RecipeSetting::kOn || (s == RecipeSetting::kWithoutContextParallel && context <= 1);
}

bool NodeProfile::TakesNics(int nics) const {
  return std::find(nics_allowed.begin(), nics_allowed.end(), nics) != nics_allowed.end();
}

std::string NodeProfile::TakesNicsText() const {
  std::string allowed;
  for (int a : nics_allowed) allowed += (allowed.empty() ? "" : ", ") + std::to_string(a);
  return "node '" + name + "' takes " + allowed + " NICs";
}

int ScalableUnitNodes(const FabricProfile& f, int nodes, int nics_per_node) {
  const int radix = std::max(2, f.switch_radix);
  if (long(std::max(1, nodes)) * std::max(1, nics_per_node) <= radix) return std::max(1, nodes);
  if (f.topology == FabricTopology::kRailOptimized) return std::max(1, std::min(f.nodes_per_su, radix / 2));
  return std::max(1, f.nodes_per_su);
}

}  // namespace trainsim
