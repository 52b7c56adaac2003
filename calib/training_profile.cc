#include "calib/training_profile.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "calib/fit.h"
#include "calib/text_format.h"
#include "sim/core/error.h"
#include "sim/io/profile_loader.h"
#include "sim/io/yaml_reader.h"

namespace trainsim::calib {
namespace {

// Sets `node[key]` (a map entry, created where the base has none) to `v`,
// written as the rest of trainsim writes numbers; records the key's path.
void Set(YAML::Node node, const std::string& key, double v, const std::string& path, std::vector<std::string>& changed) {
  node[key] = Num(v);
  changed.push_back(path + key);
}

// The dotted path of each block-style "key:" line of a YAML text, from the
// keys above it by indentation, fed the lines in order; empty for the other
// lines (comments, list items, flow-style maps: their keys are not lines).
class KeyPaths {
 public:
  std::string PathOf(const std::string& line, size_t* colon) {
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos || line[indent] == '#' || line[indent] == '-' || line[indent] == '{') return "";
    *colon = line.find(':', indent);
    if (*colon == std::string::npos) return "";
    while (!open_.empty() && open_.back().first >= indent) open_.pop_back();
    std::string path;
    for (const auto& [depth, key] : open_) path += key + ".";
    open_.push_back({indent, line.substr(indent, *colon - indent)});
    return path + open_.back().second;
  }

 private:
  std::vector<std::pair<size_t, std::string>> open_;  // indentation and key of the enclosing maps
};

// The comment after each key of a YAML text, by the key's dotted path.
std::map<std::string, std::string> CommentsByPath(const std::string& text) {
  std::map<std::string, std::string> out;
  KeyPaths paths;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = 0;
    const std::string path = paths.PathOf(line, &colon);
    const size_t hash = path.empty() ? std::string::npos : line.find(" #", colon);
    if (hash != std::string::npos) out[path] = line.substr(line.find_first_not_of(' ', hash + 2));
  }
  return out;
}

// The emitted profile with a comment on each line that holds a number: what
// calibrate measured says so, what the fit fixes says so, and every other
// key keeps its base's source comment, which re-emitting the YAML drops.
std::string WithSources(const std::string& emitted, const std::string& base_text, const std::vector<std::string>& measured,
                        const std::string& measured_note, const std::vector<std::string>& fixed, const std::string& fixed_note) {
  const std::map<std::string, std::string> base = CommentsByPath(base_text);
  const auto among = [](const std::vector<std::string>& keys, const std::string& path) {
    return std::find(keys.begin(), keys.end(), path) != keys.end();
  };
  KeyPaths paths;
  std::ostringstream out;
  std::istringstream in(emitted);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = 0;
    const std::string path = paths.PathOf(line, &colon);
    std::string comment;
    if (path.empty() || colon + 1 >= line.size()) {
      // not a key with a value on its line
    } else if (among(fixed, path)) {
      comment = fixed_note;
    } else if (among(measured, path)) {
      comment = measured_note;
    } else if (const auto at = base.find(path); at != base.end()) {
      comment = at->second;
    }
    out << line << (comment.empty() ? "" : "  # " + comment) << "\n";
  }
  return out.str();
}

std::string TrainingProfileYaml(const FittedProfile& f, const Measurements& m, YAML::Node p, const std::string& base_path,
                                const std::string& name, const std::string& calibration_path) {
  std::vector<std::string> changed;
  p["name"] = name;
  Set(p, "memory_gib", f.memory_gib, "", changed);
  Set(p, "sms", f.sms, "", changed);
  Set(p, "hbm_tb_per_s", DeviceBytes(f.hbm_tb_per_s, m.dtype), "", changed);  // the device's bytes, not 2-byte equivalents
  Set(p, "memory_bound_efficiency", f.memory_bound_efficiency, "", changed);
  Set(p, "memory_kernel_us", f.memory_kernel_us, "", changed);
  YAML::Node peak = p["peak_tflops"], mm = p["matmul"];
  YAML::Node max_eff = mm["max_efficiency"], k_half = mm["k_half"];
  std::vector<std::string> measured;  // precisions whose curve the sweep gave, without a sustained run
  std::vector<std::pair<std::string, double>> sustained;  // with one: the clock fraction it measured
  // The base's peak is the datasheet's, which MFU is reckoned against: the
  // measured asymptote becomes its share of that peak. A precision the base
  // has no peak for takes the sweep's.
  auto curve = [&](const std::string& precision, double peak_tflops, double eff, double kh, double sustained_fraction) {
    const double asymptote = peak_tflops * eff;
    if (peak[precision].IsDefined()) {
      Set(max_eff, precision, std::min(1.0, asymptote / peak[precision].as<double>()), "matmul.max_efficiency.", changed);
    } else {
      Set(peak, precision, peak_tflops, "peak_tflops.", changed);
      Set(max_eff, precision, eff, "matmul.max_efficiency.", changed);
    }
    Set(k_half, precision, std::max(kh, 1e-3), "matmul.k_half.", changed);
    if (sustained_fraction > 0) sustained.push_back({precision, sustained_fraction});
    else measured.push_back(precision);
  };
  const double bf16_sustained = f.gemm_bf16.sustained_fraction;
  for (const char* k : {"bf16", "fp16"}) curve(k, f.peak_tflops, f.max_efficiency, f.k_half, bf16_sustained);
  for (const auto& l : f.low_precision) {
    if (l.curve.samples == 0) continue;
    curve(l.precision, l.curve.peak_tflops, l.curve.max_efficiency, l.curve.k_half, l.curve.sustained_fraction);
    if (l.split_accumulator_efficiency > 0) {
      Set(mm["split_accumulator_efficiency"], l.precision, std::min(1.0, l.split_accumulator_efficiency),
          "matmul.split_accumulator_efficiency.", changed);
    }
  }
  std::vector<std::string> fixed;  // set to what the fit assumes, not measured
  Set(mm, "tile_m", kFitTile, "matmul.", fixed);
  Set(mm, "tile_n", kFitTile, "matmul.", fixed);
  Set(mm, "min_kernel_us", f.min_kernel_us, "matmul.", changed);
  std::vector<std::string> dropped;
  if (YAML::Node clocks = mm["sustained_clock_fraction"]; clocks.IsMap()) {
    for (const auto& precision : measured) {
      if (clocks[precision].IsDefined()) {
        clocks.remove(precision);
        dropped.push_back("matmul.sustained_clock_fraction." + precision);
      }
    }
    if (clocks.size() == 0) mm.remove("sustained_clock_fraction");
  }
  for (const auto& [precision, fraction] : sustained) {
    Set(mm["sustained_clock_fraction"], precision, fraction, "matmul.sustained_clock_fraction.", changed);
  }
  std::ostringstream o;
  o << "# GPU profile for training predictions written by `trainsim calibrate --backend " << m.backend
    << " --training-profile`:\n";
  o << "# " << base_path << " with the keys measured on " << m.host << " at " << m.date << " (" << m.device
    << ") replaced; every other key, and its source, is that file's.\n";
  o << "# Measured:";
  for (const auto& c : changed) o << " " << c;
  o << ".\n# Set to the fit's tile, not measured:";
  for (const auto& c : fixed) o << " " << c;
  o << ".\n# The GEMM curves were swept at the clocks of short bursts";
  if (!sustained.empty()) o << "; a GEMM run back to back gave the sustained fractions of the curves it measured";
  if (!measured.empty()) {
    o << ";\n# the base's sustained_clock_fraction derates the others";
    if (!dropped.empty()) o << ", its per-precision overrides for them dropped:";
    for (const auto& d : dropped) o << " " << d;
  }
  o << ".\n# The measurements and their fits: " << calibration_path << " and its sidecar.\n";
  YAML::Emitter e;
  e << p;
  std::string base_text;
  {
    std::ifstream base(base_path);
    std::ostringstream all;
    all << base.rdbuf();
    base_text = all.str();
  }
  o << WithSources(e.c_str(), base_text, changed, "calibrated: " + m.host + " " + m.date, fixed,
                   "the calibration fit's tile (" + Num(kFitTile) + "): its curves assume it; not measured")
    << "\n";
  return o.str();
}

}  // namespace

std::string CheckTrainingBase(const std::string& base, std::string& path) {
  try {
    path = ResolveGpuProfilePath(YAML::Node(base), "--base", "--base");
  } catch (const InputException& e) {  // the reference itself: a name or a path given on the command line
    return "--base: " + e.error().message;
  }
  try {  // a base that does not load: its file, line and key
    (void)LoadGpuProfile(YAML::Node(path), path, "--base");
  } catch (const InputException& e) {
    return e.error().ToString();
  }
  return "";
}

std::string WriteTrainingProfile(const Measurements& m, const std::string& base, const std::string& path,
                                 const std::string& calibration_path, std::string& report, const FittedProfile* fitted) {
  if (m.backend != "cuda") return "a training profile needs a GPU sweep (--backend cuda)";
  FittedProfile own;
  if (!fitted) {
    if (std::string e = FitProfile(m, "training", own); !e.empty()) return e;
    fitted = &own;
  }
  const FittedProfile& f = *fitted;
  if (f.profile_16bit != "bf16") return "a training profile needs the sweep's bf16 GEMMs (the measurements have none)";
  std::string base_path;
  if (std::string e = CheckTrainingBase(base, base_path); !e.empty()) return e;
  YAML::Node base_yaml;
  try {
    base_yaml = LoadYamlFile(base_path);
  } catch (const InputException& e) {
    return e.error().ToString();
  }
  const std::string name = std::filesystem::path(path).stem().string();
  const std::string text = TrainingProfileYaml(f, m, base_yaml, base_path, name, calibration_path);
  if (std::string e = WriteFileAtomically(path, text); !e.empty()) return e;
  try {  // what we wrote must be what the simulator reads
    const std::string abs = std::filesystem::absolute(path).string();
    (void)LoadGpuProfile(YAML::Node(abs), abs, "profile");
  } catch (const InputException& e) {
    return "the written training profile does not load: " + e.error().ToString();
  }
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "wrote %s: %s with the measured GEMM curves, memory and kernel floors (HBM %.3g TB/s as the device moved it)\n",
                path.c_str(), base_path.c_str(), DeviceBytes(f.hbm_tb_per_s, m.dtype));
  report += buf;
  return "";
}

}  // namespace trainsim::calib
