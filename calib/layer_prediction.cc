#include "calib/layer_prediction.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "models/workload.h"
#include "sim/core/fingerprint.h"
#include "sim/cost/gpu_cost_model.h"
#include "sim/io/yaml_reader.h"
#include "sim/io/profile_loader.h"

namespace trainsim::calib {

Scenario LayerScenario(const LayerShape& shape, const GpuProfile& gpu) {
  Scenario s;
  s.name = "layer";
  s.model.name = "calibration-layer";
  s.model.layers = 1;
  s.model.hidden = shape.hidden;
  s.model.ffn_hidden = shape.ffn_hidden;
  s.model.heads = shape.heads;
  s.model.kv_heads = shape.kv_heads;
  s.model.vocab = 1;  // the embedding and head are not part of a layer step
  s.model.activation = Activation::kSwiGlu;
  s.model.norm = NormKind::kRmsNorm;
  s.model.position = PositionKind::kRope;
  s.node.gpu = gpu;
  s.node.gpus_per_node = 1;
  s.parallelism = Parallelism{};
  s.parallelism.sequence_parallel = false;
  s.parallelism.distributed_optimizer = false;
  s.parallelism.data_sharding = DataSharding::kNone;
  s.training.seq_len = shape.seq_len;
  s.training.micro_batch = shape.micro_batch;
  s.training.global_batch = shape.micro_batch;
  s.training.precision = Precision::kBf16;  // the profile's 16-bit keys hold what the backend measured
  s.training.recompute = Recompute::kNone;
  s.training.attention = AttentionKernel::kUnfused;  // what calib/layer_step.h runs
  s.training.dropout = 0;
  s.framework = FrameworkProfile{};
  s.framework.wgrad_out_bytes = 2;  // calib/layer_step.h writes weight gradients plainly (beta 0)
  return s;
}

LayerPrediction PredictLayerStep(const LayerShape& shape, const GpuProfile& gpu) {
  const Scenario sc = LayerScenario(shape, gpu);
  const Workload w = BuildWorkload(sc);
  LayerPrediction p;
  p.forward_s = PassComputeTime(w.layer(0).forward, gpu, sc.training.precision, false);
  p.backward_s = PassComputeTime(w.layer(0).backward, gpu, sc.training.precision, true);
  return p;
}

std::string MeasurementsPathFor(const std::string& profile_path) {
  std::filesystem::path p(profile_path);
  const std::string stem = p.extension() == ".yaml" || p.extension() == ".yml" ? p.stem().string() : p.filename().string();
  return (p.parent_path() / (stem + "-measurements.yaml")).string();
}

Expected<bool> UseLayerGemmCurve(const std::string& sidecar_path, const std::string& layer_dtype, GpuProfile& gpu) {
  try {
    YamlMap top(LoadYamlFile(sidecar_path), sidecar_path);
    YAML::Node fitted = top.Raw("fitted");
    if (!fitted.IsDefined() || fitted.IsNull()) return false;  // raw measurements: nothing says otherwise
    if (!fitted.IsMap()) top.Fail("fitted", "expected a map");
    YamlMap fm(fitted, sidecar_path, "fitted");
    const std::optional<std::string> keys = fm.OptString("profile_16bit");
    if (!keys || *keys == layer_dtype) return false;
    YAML::Node g = fm.Raw("gemm");
    if (!g.IsDefined() || !g.IsMap()) {
      fm.Fail("profile_16bit", "the profile's bf16/fp16 keys hold " + *keys + " but the layer steps ran in " + layer_dtype +
                                   ": their GEMM curve (fitted.gemm) is missing; rerun trainsim calibrate");
    }
    YamlMap gm(g, sidecar_path, "fitted.gemm");
    const std::string precision = gm.String("precision");
    if (precision != layer_dtype) {
      gm.Fail("precision", "is " + precision + " but the layer steps ran in " + layer_dtype);
    }
    const double peak_flops = gm.PositiveDouble("peak_tflops") * 1e12;
    const double max_eff = gm.Fraction("max_efficiency");
    const double k_half = std::max(gm.NonNegativeDouble("k_half"), 1e-3);  // the profile writes the same floor
    // The one-layer scenario runs at Precision::kBf16 (LayerScenario); both
    // 16-bit keys get the curve so that neither falls back to the other.
    for (const char* k : {"bf16", "fp16"}) {
      gpu.peak_flops[k] = peak_flops;
      gpu.matmul_max_eff[k] = max_eff;
      gpu.matmul_k_half[k] = k_half;
    }
    return true;
  } catch (const InputException& e) {
    return e.error();
  }
}

Expected<ValidationReport> ValidateProfile(const std::string& profile_path) {
  GpuProfile gpu;
  try {
    if (!std::filesystem::exists(profile_path)) {
      return InputError{"--profile", 0, "", "profile file '" + profile_path + "' not found"};
    }
    const std::string abs = std::filesystem::absolute(profile_path).string();
    gpu = LoadGpuProfile(YAML::Node(abs), abs, "--profile");
  } catch (const InputException& e) {
    return e.error();
  }
  const std::string mpath = MeasurementsPathFor(profile_path);
  if (!std::filesystem::exists(mpath)) {
    return InputError{profile_path, 0, "",
                      "its measurements file '" + mpath +
                          "' (the measured layer steps and the GEMM curve they ran with) is missing: --profile takes the "
                          "profile calibrate -o wrote, beside which it writes that file (a --training-profile output is "
                          "checked through that -o profile)"};
  }
  auto meas = LoadMeasurements(mpath);
  if (!meas) return meas.error();
  // The pair must have been written together (calibration.cc writes the
  // sidecar, then the profile; a kill between them leaves a mismatch).
  try {
    const YAML::Node side = LoadYamlFile(mpath);
    const YAML::Node fp = side["profile_fingerprint"];
    const std::string have = TextFingerprint(ReadInputFile(profile_path));
    if (!fp.IsDefined() || !fp.IsScalar()) {
      return InputError{mpath, 0, "profile_fingerprint",
                        "missing: cannot tell that this sidecar belongs to '" + profile_path + "' (calibrate again)"};
    }
    if (fp.Scalar() != have) {
      return InputError{mpath, fp.Mark().line + 1, "profile_fingerprint",
                        "was written with another profile than '" + profile_path +
                            "' (interrupted between the two writes, or one file edited or copied): calibrate again"};
    }
  } catch (const InputException& e) {
    return e.error();
  }
  if (meas->layers.empty()) return InputError{mpath, 0, "layers", "no measured layer steps to validate against"};
  // Predict the step that was measured: a GPU profile's 16-bit keys hold the
  // bf16 sweep, but its layer step ran in tf32.
  auto substituted = UseLayerGemmCurve(mpath, meas->dtype, gpu);
  if (!substituted) return substituted.error();
  ValidationReport rep;
  double sum = 0;
  for (const auto& l : meas->layers) {
    ValidationCase c;
    const auto& s = l.shape;
    char id[160];
    std::snprintf(id, sizeof id, "%s h%d f%d a%d/%d s%d b%d", meas->backend.c_str(), s.hidden, s.ffn_hidden, s.heads,
                  s.kv_heads, s.seq_len, s.micro_batch);
    c.id = id;
    c.source = meas->host + " " + meas->date + " " + meas->device;
    if (*substituted) c.source += "; GEMMs predicted with the sidecar's " + meas->dtype + " curve";
    c.measured_step_time_s = l.forward_s + l.backward_s;
    c.predicted_step_time_s = PredictLayerStep(s, gpu).step_s();
    c.error = (c.predicted_step_time_s - c.measured_step_time_s) / c.measured_step_time_s;
    sum += std::abs(c.error);
    rep.max_abs_error = std::max(rep.max_abs_error, std::abs(c.error));
    rep.cases.push_back(c);
  }
  rep.mean_abs_error = sum / double(rep.cases.size());
  rep.predicted = int(rep.cases.size());
  return rep;
}

std::string LayerValidationTable(const ValidationReport& r) {
  std::string o;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-34s %14s %14s %8s\n", "layer step (fwd+bwd)", "predicted_ms", "measured_ms", "error");
  o += buf;
  for (const auto& c : r.cases) {
    std::snprintf(buf, sizeof buf, "%-34s %14.3f %14.3f %+7.1f%%\n", c.id.c_str(), 1e3 * c.predicted_step_time_s,
                  1e3 * c.measured_step_time_s, 100 * c.error);
    o += buf;
  }
  std::snprintf(buf, sizeof buf, "mean |error| %.1f%%, max |error| %.1f%% over %zu layer shapes\n", 100 * r.mean_abs_error,
                100 * r.max_abs_error, r.cases.size());
  return o + buf;
}

}  // namespace trainsim::calib
