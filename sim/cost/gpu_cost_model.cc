#include "sim/cost/gpu_cost_model.h"

#include <algorithm>
#include <cmath>

namespace trainsim {

double GemmEfficiency(const GpuProfile& gpu, Precision precision, double m, double n, double k, double batch,
                      double out_bytes) {
  const double max_eff = gpu.MatmulMaxEfficiency(precision);
  // Fewer output tiles than SMs leave SMs idle. (Partial last waves are not
  // charged: cuBLAS heuristics pick tile shapes and stream-K to avoid them.)
  const double tiles = std::ceil(m / gpu.matmul_tile_m) * std::ceil(n / gpu.matmul_tile_n) * batch;
  const double fill = std::min(1.0, tiles / std::max(1, gpu.sms));
  // Each tile pays an epilogue (storing its output, at HBM speed) against a K
  // loop proportional to K; k_half, fitted for a 2-byte output, is about
  // out_bytes x peak / (2 x HBM bandwidth), so it scales with the output bytes.
  const double k_eff = k / (k + gpu.MatmulKHalf(precision) * out_bytes / 2.0);
  return max_eff * fill * k_eff;
}

double OperatorTime(const Operator& op, const GpuProfile& gpu, Precision precision, bool backward) {
  const double mem_bw = gpu.hbm_bytes_per_s * gpu.memory_bound_efficiency;
  const double mem_time = op.bytes / mem_bw;
  switch (op.cls) {
    case OpClass::kGemm: {
      // Only the projections run in the scenario's low-precision format
      // (sim/core/precision.h); the rest keep the 16-bit format of the step.
      const Precision p = (op.low_precision && IsLowPrecision(precision)) ? precision
                          : precision == Precision::kFp16 ? Precision::kFp16 : Precision::kBf16;
      const double eff = GemmEfficiency(gpu, p, op.m, op.n, op.k, op.batch, op.out_bytes);
      const double compute = op.flops / (gpu.PeakFlops(p) * gpu.MatmulClockFraction(p) * eff);
      return std::max({compute, mem_time, gpu.matmul_min_kernel_s});
    }
    case OpClass::kAttention: {
      const double curve = op.seq / (op.seq + gpu.attention_half_seq);
      double rate = gpu.attention_fwd_flops * gpu.sustained_clock_fraction * curve;
      if (backward) rate *= gpu.attention_bwd_fwd_ratio;
      return std::max(op.flops / rate, mem_time);
    }
    case OpClass::kMemoryBound:
      return std::max(mem_time, 2e-6);  // a kernel launch at least
  }
  return 0;
}

double PassComputeTime(const PassWork& pass, const GpuProfile& gpu, Precision precision, bool backward) {
  double t = 0;
  for (const auto& op : pass.ops) t += OperatorTime(op, gpu, precision, backward);
  return t;
}

}  // namespace trainsim
