#include "calib/calibration.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "calib/layer_prediction.h"
#include "models/workload.h"
#include "sim/cost/gpu_cost_model.h"
#include "sim/core/fingerprint.h"
#include "sim/core/hardware_profile.h"
#include "sim/io/profile_loader.h"

namespace trainsim::calib {

std::vector<LayerShape> DefaultCpuShapes() {
  // hidden, ffn (SwiGLU, ~8/3 h), heads, kv_heads, seq, micro batch.
  return {
      {256, 704, 4, 2, 128, 2},
      {384, 1024, 6, 2, 256, 1},
      {512, 1376, 8, 4, 128, 1},
      {256, 688, 4, 4, 512, 1},
  };
}

std::vector<LayerShape> DefaultGpuShapes() {
  return {
      {4096, 11008, 32, 32, 2048, 1},
      {4096, 11008, 32, 8, 4096, 1},
      {2048, 5632, 16, 4, 2048, 2},
      {8192, 28672, 64, 8, 1024, 1},
  };
}

double GroupedGemmPredictedSeconds(const GpuProfile& gpu, const GroupedGemmSample& g) {
  const GemmSample& x = g.gemm;
  Operator op = GemmOperator("grouped GEMM", double(x.m), double(x.n), double(x.k), false, double(x.batch));
  op.kernels = int(x.batch);
  op.batch_streams = g.streams;  // as the workload prices the experts' GEMMs (FrameworkProfile::grouped_gemm_streams)
  // The 16-bit keys: fitted from the bf16 sweep, or from the CPU's fp32 one standing in for them.
  return OperatorTime(op, gpu, Precision::kBf16, /*backward=*/false);
}

std::string ProfileFingerprintLine(const std::string& profile_text) {
  return "profile_fingerprint: \"" + TextFingerprint(profile_text) + "\"  # of the profile written with this file\n";
}

std::string WriteCalibratedProfile(const Measurements& m, const std::string& profile_path, const std::string& name,
                                   double tdp_w, std::string& report, FittedProfile* fitted) {
  FittedProfile f;
  std::string err = FitProfile(m, name, f);
  if (!err.empty()) return err;
  f.tdp_w = tdp_w;
  if (fitted) *fitted = f;
  // Two files, two renames: the sidecar carries the fingerprint of the
  // profile it was written with, so a kill between the renames (a new profile
  // beside an old sidecar, or the reverse) is refused by validate --profile.
  const std::string profile_text = ProfileYaml(f, m);
  const std::string sidecar = MeasurementsPathFor(profile_path);
  err = WriteFileAtomically(sidecar, SidecarYaml(f, m) + ProfileFingerprintLine(profile_text));
  if (!err.empty()) return err;
  err = WriteFileAtomically(profile_path, profile_text);
  if (!err.empty()) return err;
  GpuProfile written;
  try {  // what we wrote must be what the simulator reads
    const std::string abs = std::filesystem::absolute(profile_path).string();
    written = LoadGpuProfile(YAML::Node(abs), abs, "profile");
  } catch (const InputException& e) {
    return "the written profile does not load: " + e.error().ToString();
  }
  std::ostringstream o;
  char buf[256];
  auto curve = [&](const char* what, const std::string& precision, const FittedProfile::GemmCurve& c) {
    std::snprintf(buf, sizeof buf, "GEMM %s (%s): peak %.4g TFLOP/s, max efficiency %.3f, k_half %.1f (fit rms %.1f%%, %d shapes)\n",
                  precision.c_str(), what, c.peak_tflops, c.max_efficiency, c.k_half, 100 * c.rms_error, c.samples);
    o << buf;
    if (c.sustained_fraction > 0) {
      std::snprintf(buf, sizeof buf, "GEMM %s sustained (back to back, at the power cap): %.3f of the curve's rate\n",
                    precision.c_str(), c.sustained_fraction);
      o << buf;
    }
  };
  // The 16-bit keys' curve first: what training scenarios use.
  if (f.gemm_bf16.samples > 0) {
    curve("profile bf16/fp16 keys", "bf16", f.gemm_bf16);
    curve("the layer step's GEMMs; sidecar fitted.gemm", m.dtype, f.gemm);
  } else {
    curve(f.profile_16bit == "bf16" ? "profile bf16/fp16 keys" : "stands in for the profile's bf16/fp16 keys", m.dtype, f.gemm);
  }
  for (const auto& l : f.low_precision) {
    if (l.curve.samples > 0) {
      curve(("profile " + l.precision + " keys").c_str(), l.precision, l.curve);
    } else {
      o << "GEMM " << l.precision << ": " << l.measured << " samples, too few above the launch floor to fit: no " << l.precision
        << " keys\n";
    }
    if (l.split_accumulator_efficiency > 0) {
      std::snprintf(buf, sizeof buf, "GEMM %s split accumulator (the backward's): %.3f of the fast-accumulating rate\n",
                    l.precision.c_str(), std::min(1.0, l.split_accumulator_efficiency));
      o << buf;
    }
  }
  std::snprintf(buf, sizeof buf, "GEMM floor %.2f us (tiny GEMM)\n", f.min_kernel_us);
  o << buf;
  for (const auto& g : m.grouped_gemm) {
    const double predicted_s = GroupedGemmPredictedSeconds(written, g);
    std::snprintf(buf, sizeof buf,
                  "grouped GEMM %s %ldx%ldx%ld x %ld experts (a call per expert on %d stream%s): measured %.1f us, the cost model %.1f us "
                  "(%+.1f%%)\n",
                  g.gemm.precision.c_str(), g.gemm.m, g.gemm.n, g.gemm.k, g.experts(), g.streams, g.streams == 1 ? "" : "s",
                  g.gemm.seconds * 1e6, predicted_s * 1e6, 100 * (predicted_s - g.gemm.seconds) / g.gemm.seconds);
    o << buf;
  }
  std::snprintf(buf, sizeof buf, "memory: %.4g TB/s (2-byte equivalents), memory-bound efficiency %.3f, %.2f us per kernel\n",
                f.hbm_tb_per_s, f.memory_bound_efficiency, f.memory_kernel_us);
  o << buf;
  std::snprintf(buf, sizeof buf, "attention: %.4g TFLOP/s forward, half_seq %.0f, bwd/fwd %.3f\n", f.attention_fwd_tflops,
                f.attention_half_seq, f.attention_bwd_fwd_ratio);
  o << buf;
  for (const auto& c : f.collectives) {
    std::snprintf(buf, sizeof buf, "%s (%s, %d ranks): alpha %.2f us, %.3g GB/s\n", c.op.c_str(), c.scope.c_str(), c.ranks,
                  c.fit.alpha_s * 1e6, c.fit.bytes_per_s / 1e9);
    o << buf;
  }
  for (const auto& s : f.storage) {
    std::snprintf(buf, sizeof buf, "storage (%d %s): write %.3g GB/s, read %.3g GB/s aggregate; per client %.3g / %.3g GB/s\n",
                  s.clients, s.clients == 1 ? "client" : "clients", s.write_bytes_per_s / 1e9, s.read_bytes_per_s / 1e9, s.write_bytes_per_s_per_client / 1e9,
                  s.read_bytes_per_s_per_client / 1e9);
    o << buf;
  }
  if (m.node_host_copy_gpus > 0) {
    // A node property, not a GPU one: said here for the node profile.
    const double slower = std::min(m.node_host_to_device_bytes_per_s, m.node_device_to_host_bytes_per_s);
    std::snprintf(buf, sizeof buf,
                  "host path (%d GPUs copying at once): %.3g GB/s to the GPUs, %.3g GB/s from them; a node profile's pcie_gb_per_s: %.0f "
                  "(one GPU alone: %.3g / %.3g GB/s)\n",
                  m.node_host_copy_gpus, m.node_host_to_device_bytes_per_s / 1e9, m.node_device_to_host_bytes_per_s / 1e9, slower / 1e9,
                  m.host_to_device_bytes_per_s / 1e9, m.device_to_host_bytes_per_s / 1e9);
    o << buf;
  }
  o << "wrote " << profile_path << " and " << sidecar << "\n";
  report = o.str();
  return "";
}

}  // namespace trainsim::calib
