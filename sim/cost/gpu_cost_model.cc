#include "sim/cost/gpu_cost_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "sim/cost/host_issue.h"

namespace trainsim {

double SmWaveFill(double tiles, int sms) {
  const double slots = std::max(1, sms);
  return tiles > 0 ? tiles / (std::ceil(tiles / slots) * slots) : 0.0;
}

double StreamedWaveFill(double tiles_each, double batch, int streams, int sms) {
  if (streams <= 0 || batch <= streams) return SmWaveFill(tiles_each * batch, sms);
  if (tiles_each <= 0) return 0.0;
  // Equal kernels dealt round-robin over the streams run in rounds of
  // `streams` at once, the last round with those left over.
  const double slots = std::max(1, sms);
  const double rounds = std::floor(batch / streams), rest = batch - rounds * streams;
  const double waves = rounds * std::ceil(tiles_each * streams / slots) + (rest > 0 ? std::ceil(tiles_each * rest / slots) : 0.0);
  return tiles_each * batch / (waves * slots);
}

namespace {

double GemmEfficiencyOf(const GpuProfile& gpu, double max_eff, double k_half, double m, double n, double k, double batch,
                        double out_bytes, int batch_streams) {
  // A partial last wave leaves SMs idle. cuBLAS's heuristics or stream-K
  // kernels could spread the work, but the published training steps say the
  // tiles pay for it (without it, dense H100 bf16 steps came out 5% fast);
  // the fitted GEMM curves (h100-sxm-80g.yaml, gb200.yaml) were fitted with it.
  const double fill = StreamedWaveFill(std::ceil(m / gpu.matmul_tile_m) * std::ceil(n / gpu.matmul_tile_n), batch, batch_streams, gpu.sms);
  // Each tile pays an epilogue (storing its output, at HBM speed) against a K
  // loop proportional to K; k_half, fitted for a 2-byte output, is about
  // out_bytes x peak / (2 x HBM bandwidth), so it scales with the output bytes.
  const double k_eff = k / (k + k_half * out_bytes / 2.0);
  return max_eff * fill * k_eff;
}

// Only the projections run in the scenario's low-precision format
// (sim/core/precision.h); the rest keep the 16-bit format of the step.
Precision GemmPrecision(bool low_precision, Precision precision) {
  return (low_precision && IsLowPrecision(precision)) ? precision : precision == Precision::kFp16 ? Precision::kFp16 : Precision::kBf16;
}

// A profile without the peak (one built in code for the workload alone) has
// no rates: the lookup's error is left to a GEMM that needs them.
GpuRates::Gemm RatesOf(const GpuProfile& gpu, Precision p) {
  try {
    return {gpu.PeakFlops(p) * gpu.MatmulClockFraction(p), gpu.MatmulMaxEfficiency(p), gpu.MatmulKHalf(p),
            gpu.MatmulSplitAccumulatorEfficiency(p)};
  } catch (const std::out_of_range&) {
    return {};
  }
}

}  // namespace

double GemmEfficiency(const GpuProfile& gpu, Precision precision, double m, double n, double k, double batch,
                      double out_bytes, int batch_streams) {
  return GemmEfficiencyOf(gpu, gpu.MatmulMaxEfficiency(precision), gpu.MatmulKHalf(precision), m, n, k, batch, out_bytes, batch_streams);
}

GpuRates::GpuRates(const GpuProfile& g, Precision p) : gpu(g), precision(p), sixteen(RatesOf(g, GemmPrecision(false, p))) {
  low = IsLowPrecision(p) ? RatesOf(g, GemmPrecision(true, p)) : sixteen;  // a 16-bit step runs every GEMM in one format
}

double OperatorTime(const Operator& op, const GpuProfile& gpu, Precision precision, bool backward) {
  return OperatorTime(op, GpuRates(gpu, precision), backward);
}

double OperatorTime(const Operator& op, const GpuRates& rates, bool backward) {
  const GpuProfile& gpu = rates.gpu;
  const double mem_bw = gpu.hbm_bytes_per_s * gpu.memory_bound_efficiency;
  const double mem_time = op.bytes / mem_bw;
  switch (op.cls) {
    case OpClass::kGemm: {
      const GpuRates::Gemm& r = op.low_precision ? rates.low : rates.sixteen;
      if (r.peak_clock_flops == 0) gpu.PeakFlops(GemmPrecision(op.low_precision, rates.precision));  // throws as the lookup does
      const double eff = GemmEfficiencyOf(gpu, r.max_eff, r.k_half, op.m, op.n, op.k, op.batch, op.out_bytes, op.batch_streams) *
                         (op.split_accumulator ? r.split_accumulator_eff : 1.0);
      // A GEMM with an empty side (an expert no token reaches when experts
      // outnumber the routed tokens) has no tiles: it costs its launch floor.
      const double compute = op.flops > 0 && eff > 0 ? op.flops / (r.peak_clock_flops * eff) : 0.0;
      // Each stream runs its share of the batch's kernels one after another.
      const double kernels_in_a_row = op.batch_streams > 0 ? std::ceil(double(op.batch) / op.batch_streams) : 1.0;
      return std::max({compute, mem_time, kernels_in_a_row * gpu.matmul_min_kernel_s});
    }
    case OpClass::kAttention: {
      const bool flash2 = op.attention_kernel == AttentionKernel::kFlash2;
      const double curve = op.seq / (op.seq + gpu.attention_half_seq);
      double rate = (flash2 ? gpu.attention_flash2_fwd_flops : gpu.attention_fwd_flops) * gpu.sustained_clock_fraction * curve;
      if (op.head_dim > 0) rate *= gpu.AttentionHeadDimEfficiency(op.head_dim, backward);
      if (backward) rate *= flash2 ? gpu.attention_flash2_bwd_fwd_ratio : gpu.attention_bwd_fwd_ratio;
      // Its matmuls run on the tensor cores: never past the step's fastest
      // GEMM peak, whatever a hand-edited or noisy calibrated profile says
      // (a bf16 peak of 10 TFLOP/s beside a 620 TFLOP/s attention gave an MFU of 260%).
      const double tensor_core_flops = std::max(rates.low.peak_clock_flops, rates.sixteen.peak_clock_flops);
      if (tensor_core_flops > 0) rate = std::min(rate, tensor_core_flops);
      return std::max(op.flops / rate, mem_time);
    }
    case OpClass::kMemoryBound:
      // Each kernel's fixed time adds to its bytes' time: the two do not
      // overlap within one kernel (nothing streams before the CTAs start, or
      // after the last one drains). An op with no bytes launches nothing.
      return op.bytes > 0 ? op.kernels * gpu.memory_kernel_fixed_s + mem_time : 0.0;
  }
  return 0;
}

double PassComputeTime(const PassWork& pass, const GpuProfile& gpu, Precision precision, bool backward) {
  return PassComputeTime(pass, GpuRates(gpu, precision), backward);
}

double PassComputeTime(const PassWork& pass, const GpuRates& rates, bool backward, double host_s_per_kernel) {
  if (host_s_per_kernel > 0) {
    std::vector<double> op_s;
    op_s.reserve(pass.ops.size());
    for (const auto& op : pass.ops) op_s.push_back(OperatorTime(op, rates, backward));
    return HostIssuedPassTime(pass.ops, op_s.data(), host_s_per_kernel);
  }
  double t = 0;
  for (const auto& op : pass.ops) t += OperatorTime(op, rates, backward);
  return t;
}

}  // namespace trainsim
