#include "sim/core/hardware_profile.h"

namespace trainsim {

std::string ToString(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp8: return "fp8";
  }
  return "bf16";
}

double GpuProfile::PeakFlops(Precision p) const {
  const std::string k = ToString(p);
  if (auto it = peak_flops.find(k); it != peak_flops.end()) return it->second;
  if (auto it = peak_flops.find("bf16"); it != peak_flops.end()) return it->second;
  return peak_flops.at("fp16");
}

double GpuProfile::MatmulMaxEfficiency(Precision p) const {
  const std::string k = ToString(p);
  if (auto it = matmul_max_eff.find(k); it != matmul_max_eff.end()) return it->second;
  if (auto it = matmul_max_eff.find("bf16"); it != matmul_max_eff.end()) return it->second;
  if (auto it = matmul_max_eff.find("fp16"); it != matmul_max_eff.end()) return it->second;
  return 0.8;
}

double GpuProfile::MatmulKHalf(Precision p) const {
  const std::string k = ToString(p);
  if (auto it = matmul_k_half.find(k); it != matmul_k_half.end()) return it->second;
  if (auto it = matmul_k_half.find("bf16"); it != matmul_k_half.end()) return it->second;
  return 0;
}

double GpuProfile::MatmulClockFraction(Precision p) const {
  if (auto it = matmul_clock_fraction.find(ToString(p)); it != matmul_clock_fraction.end()) return it->second;
  return sustained_clock_fraction;
}

std::string ToString(DataSharding d) {
  switch (d) {
    case DataSharding::kNone: return "none";
    case DataSharding::kOptimizer: return "optimizer";
    case DataSharding::kGradients: return "gradients";
    case DataSharding::kFull: return "full";
  }
  return "none";
}

}  // namespace trainsim
