#include "sim/validate/validation.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include "sim/io/data_paths.h"
#include "sim/io/json_writer.h"
#include "sim/io/profile_loader.h"
#include "sim/io/yaml_reader.h"
#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

// The ways the summaries group cases, in the order they are printed.
struct Grouping {
  const char* by;
  std::string (*key)(const ValidationCase&);  // the group a case belongs to
};
constexpr Grouping kGroupings[] = {
    {"gpu", [](const ValidationCase& c) { return c.gpu; }},
    {"precision", [](const ValidationCase& c) { return c.precision; }},
    {"source", [](const ValidationCase& c) { return c.family; }},
    {"workload", [](const ValidationCase& c) { return c.workload; }},
    // The GPU and the kind together: the unit of run's track record (h100-sxm-80g MoE pre-training).
    {"kind", [](const ValidationCase& c) { return c.gpu + " " + c.workload; }},
    {"model", [](const ValidationCase& c) { return c.model; }},
    // Routed experts per GPU: where the MoE errors part (empty, no group, for a dense case).
    {"experts/GPU", [](const ValidationCase& c) { return c.experts_per_gpu; }}};

// Keys whose absence means the simulator's default stood in for them.
std::vector<std::string> DefaultedKeys(const YAML::Node& sc) {
  static const std::vector<std::pair<std::string, std::string>> keys = {
      {"parallelism", "context"},           {"parallelism", "virtual_stages"},
      {"parallelism", "sequence_parallel"}, {"parallelism", "distributed_optimizer"},
      {"training", "micro_batch"},          {"training", "recompute"},
      {"training", "framework"},           {"cluster", "fabric"}};
  std::vector<std::string> out;
  for (const auto& [sec, key] : keys) {
    if (!sc[sec].IsDefined() || !sc[sec][key].IsDefined()) out.push_back(sec + "." + key);
  }
  // An inline mixture of experts that does not say whether its experts have biases takes the framework's.
  const YAML::Node model = sc["model"];
  if (model.IsDefined() && model.IsMap()) {
    const YAML::Node moe = model["moe"];
    if (moe.IsDefined() && moe.IsMap() && !moe["expert_bias"].IsDefined()) out.push_back("model.moe.expert_bias");
  }
  return out;
}

// What a case's source can name to say which software ran it: one benchmark
// of a repository of published results (that benchmark's own recipe, on the
// release it names), a container (the release itself), or a repository whose
// published results all ran one stack. Most specific first: a benchmark's
// recipe, then a container, then a repository.
struct ReleaseMarker {
  std::string name;       // "nvcr.io/nvidia/nemo:24.12", "NVIDIA-NeMo/Megatron-Bridge"
  std::string benchmark;  // "llama2_70b_lora": the source names it too ("" : any)
  std::string framework;  // the profile that describes it
  std::string what;       // "container", "repository" or "benchmark"
};

// The framework profiles' markers, most specific first.
std::vector<ReleaseMarker> ReleaseMarkers() {
  std::vector<ReleaseMarker> containers, benchmarks, repositories;
  for (const auto& name : CatalogueNames("hardware-profiles/frameworks")) {
    const FrameworkProfile f = LoadFrameworkProfile(YAML::Node(name), "", "framework");
    for (const auto& c : f.containers) containers.push_back({c, "", f.name, "container"});
    for (const auto& r : f.result_repositories) {
      if (f.result_benchmarks.empty()) repositories.push_back({r, "", f.name, "repository"});
      for (const auto& b : f.result_benchmarks) benchmarks.push_back({r, b, f.name, "benchmark"});
    }
  }
  // A longer benchmark name says more ("'25.09 NeMo Container', system DGX-H100, model row 'DeepSeekV3"
  // before "system DGX-H100, model row 'DeepSeekV3"): the recipe of one release before the model's.
  std::stable_sort(benchmarks.begin(), benchmarks.end(),
                   [](const ReleaseMarker& a, const ReleaseMarker& b) { return a.benchmark.size() > b.benchmark.size(); });
  benchmarks.insert(benchmarks.end(), containers.begin(), containers.end());
  benchmarks.insert(benchmarks.end(), repositories.begin(), repositories.end());
  return benchmarks;
}

// Whether `source` names `marker` itself, not a later build of it
// ("nemo:24.12" is not named by "nemo:24.12.01") nor a longer name
// ("NVIDIA/Megatron-LM" is not named by "NVIDIA/Megatron-LM-fork").
bool NamesMarker(const std::string& source, const std::string& marker) {
  for (size_t at = source.find(marker); at != std::string::npos; at = source.find(marker, at + 1)) {
    const size_t end = at + marker.size();
    const auto at_char = [&](size_t i) -> unsigned char { return i < source.size() ? source[i] : 0; };
    const unsigned char next = at_char(end);
    const bool longer_name = std::isalnum(next) || next == '-' || next == '_';
    const bool later_build = next == '.' && std::isdigit(at_char(end + 1));
    if (!longer_name && !later_build) return true;
  }
  return false;
}

// A case that does not name its framework runs with the release its source
// names (a repository's benchmark, else a container, else a repository), when
// a profile describes it: that marker, its profile set in the case's
// scenario, or nullopt.
std::optional<ReleaseMarker> FrameworkFromSource(YAML::Node& sc, const std::string& source, const std::vector<ReleaseMarker>& markers) {
  if (sc["training"].IsDefined() && sc["training"]["framework"].IsDefined()) return std::nullopt;
  for (const auto& m : markers) {
    if (!NamesMarker(source, m.name)) continue;
    if (!m.benchmark.empty() && !NamesMarker(source, m.benchmark)) continue;
    sc["training"]["framework"] = m.framework;
    return m;
  }
  return std::nullopt;
}

}  // namespace

ErrorSummary SummarizeErrors(const std::vector<ValidationCase>& cases, const std::function<bool(const ValidationCase&)>& keep) {
  ErrorSummary e;
  double sum = 0, signed_sum = 0;
  for (const ValidationCase& c : cases) {
    if (!c.failure.empty() || (keep && !keep(c))) continue;
    sum += std::fabs(c.error);
    signed_sum += c.error;
    e.max_abs_error = std::max(e.max_abs_error, std::fabs(c.error));
    ++e.cases;
  }
  e.mean_abs_error = e.cases ? sum / e.cases : 0;
  e.mean_signed_error = e.cases ? signed_sum / e.cases : 0;
  return e;
}

std::string WorkloadKind(const Scenario& s) {
  const std::string arch = s.model.moe.enabled() ? "MoE" : "dense";
  switch (s.training.finetune.method) {
    case FinetuneMethod::kNone: return arch + " pre-training";
    case FinetuneMethod::kFull: return arch + " full fine-tuning";
    case FinetuneMethod::kLora: return arch + " LoRA";
  }
  return arch;
}

std::string ExpertsPerGpuBand(const Scenario& s) {
  if (!s.model.moe.enabled()) return "";
  const double local = s.routed_experts_per_gpu();
  return local <= 1 ? "1" : local <= 4 ? "2-4" : local < 16 ? "5-15" : "16+";
}

std::string ReferenceDirectory() {
  // Installed: DATA_DIR/reference/; in a checkout: tests/reference (copies of ../shared/reference).
  const std::filesystem::path installed = std::filesystem::path(DataDir()) / "reference";
  std::error_code ec;
  if (std::filesystem::is_regular_file(installed / "measured.yaml", ec)) return installed.string();
  return (std::filesystem::path(DataDir()) / "tests" / "reference").lexically_normal().string();
}

std::string DefaultReferenceFile() { return (std::filesystem::path(ReferenceDirectory()) / "measured.yaml").string(); }

Expected<ValidationReport> ValidateReference(const std::string& file, Fidelity fidelity,
                                             const std::function<void(int, int, const std::string&)>& progress,
                                             const ValidationWhatIf& what_if) {
  ValidationReport rep;
  rep.overrides = what_if.overrides;
  rep.fidelity = ToString(fidelity);
  rep.cases_containing = what_if.cases_containing;
  std::optional<InputError> override_error;  // the first case's complaint about an override
  bool override_accepted = false;
  int seen = 0;
  try {
    const auto releases = ReleaseMarkers();
    YAML::Node root = LoadYamlFile(file);
    YamlMap top(root, file);
    YAML::Node cases = top.Raw("cases");
    top.Finish();  // "cases" is its one key: a stray one is named before the cases run
    if (!cases.IsSequence()) top.Fail("cases", "expected a list of cases");
    if (cases.size() == 0) top.Fail("cases", "the list is empty: no measured run to compare with");
    std::map<std::string, int> line_of_id;  // a case counted twice would weigh twice in every mean
    for (const auto& c : cases) {
      YamlMap cm(c, file, "cases");
      ValidationCase vc;
      vc.id = cm.String("id");
      if (vc.id.empty()) cm.Fail("id", "is empty: a case needs a name to be reported by");
      if (const auto [it, fresh] = line_of_id.emplace(vc.id, c["id"].Mark().line + 1); !fresh) {
        cm.Fail("id", "'" + vc.id + "' is the id of the case at line " + std::to_string(it->second) + " too");
      }
      vc.family = vc.id.substr(0, vc.id.find('-'));
      vc.source = cm.OptString("source").value_or("");
      const std::string note = cm.OptString("note").value_or("");
      YamlMap meas = cm.Map("measured");
      // A published training step takes from milliseconds to hours; a figure outside that is a unit or typing slip.
      vc.measured_step_time_s = meas.BoundedDouble("step_time_s", std::nullopt, [](double x) { return x >= 1e-3 && x <= 1e5; },
                                                   "a measured step time from 1 ms to 1e5 s (a unit or typing slip?)");
      // The throughputs published beside it: a GPU trains under ten million tokens a second and
      // computes under 1e5 TFLOP/s; past that (or not a number) the case is mistyped.
      const double tokens_per_s_per_gpu =
          meas.Has("tokens_per_s_per_gpu")
              ? meas.BoundedDouble("tokens_per_s_per_gpu", std::nullopt, [](double x) { return x > 0 && x <= 1e7; },
                                   "a measured throughput above 0 and at most 1e7 tokens/s per GPU")
              : 0.0;
      if (meas.Has("model_tflops_per_gpu")) {  // read by people
        meas.BoundedDouble("model_tflops_per_gpu", std::nullopt, [](double x) { return x > 0 && x <= 1e5; },
                           "a measured rate above 0 and at most 1e5 TFLOP/s per GPU");
      }
      vc.measured_range = RangeOverReleases(vc.measured_step_time_s, tokens_per_s_per_gpu, OtherReleasesInNote(note));
      // How the step time was derived, and what was inferred: read by people.
      for (const char* key : {"step_time_derivation", "inferred"}) meas.Allow(key);
      meas.Finish();
      YAML::Node sc = cm.Raw("scenario");
      if (!sc.IsMap()) cm.Fail("scenario", "expected a scenario mapping");
      cm.Finish();
      ++seen;
      if (!what_if.cases_containing.empty() && vc.id.find(what_if.cases_containing) == std::string::npos) continue;
      ApplyOverrides(sc, what_if.overrides);
      const std::optional<ReleaseMarker> release = FrameworkFromSource(sc, vc.source, releases);
      vc.defaulted = DefaultedKeys(sc);  // a key the what-if sets did not take a default
      if (release) vc.defaulted.push_back("training.framework=" + release->framework + " (the source's " + release->what + ")");
      Expected<Scenario> s = ParseScenario(sc, file);
      const bool blames_override = !s && s.error().ToString().rfind("--set", 0) == 0;
      if (!what_if.overrides.empty()) {
        if (blames_override && !override_error) override_error = s.error();
        override_accepted |= !blames_override;
      }
      if (s && what_if.select && !what_if.select(*s)) continue;
      if (!s) {
        vc.failure = s.error().ToString();
        vc.failure_kind = s.error().kind;
      } else {
        SimulateOptions opt;
        opt.fidelity = fidelity;
        vc.result = Simulate(*s, opt);
        for (auto& key : vc.defaulted) {
          if (key == "training.micro_batch") key += "=" + std::to_string(vc.result.micro_batch) + " (" + vc.result.micro_batch_rule + ")";
        }
        vc.gpu = s->node.gpu.name;
        vc.precision = ToString(s->training.precision);
        vc.workload = WorkloadKind(*s);
        vc.experts_per_gpu = ExpertsPerGpuBand(*s);
        // A model given inline and unnamed takes the scenario's name: its size names it here.
        const YAML::Node& given = sc;  // const look-ups: they add no key
        const bool unnamed = given["model"].IsMap() && !given["model"]["name"].IsDefined();
        vc.model = unnamed ? ModelSizeText(vc.result.model) : s->model.name;
        vc.predicted_step_time_s = vc.result.step_time_s;
        vc.error = (vc.predicted_step_time_s - vc.measured_step_time_s) / vc.measured_step_time_s;
        // What the case's own sections leave out and its recipe supplies: the activation offload, and
        // an inline model's activation clamp and MTP modules (DeepSeek-V3's rows that do not say).
        auto from_framework = [&](const char* section, const char* key, double value) {
          if (value <= 0 || !given[section].IsMap() || given[section][key].IsDefined()) return;
          std::ostringstream d;
          d << section << "." << key << "=" << value << " (the framework's)";
          vc.defaulted.push_back(d.str());
        };
        from_framework("training", "activation_offload_layers", s->training.activation_offload_layers);
        from_framework("model", "activation_clamp", s->model.activation_clamp.value_or(0));
        from_framework("model", "mtp_layers", s->model.mtp_layers.value_or(0));
        if (!vc.result.memory.fits) vc.defaulted.push_back("(prediction does not fit in memory)");
      }
      rep.cases.push_back(std::move(vc));
      if (progress) progress(seen, static_cast<int>(cases.size()), rep.cases.back().id);
    }
  } catch (const InputException& e) {
    return e.error();
  }
  if (override_error && !override_accepted) return *override_error;
  const ErrorSummary all = SummarizeErrors(rep.cases);
  rep.mean_abs_error = all.mean_abs_error;
  rep.max_abs_error = all.max_abs_error;
  rep.predicted = all.cases;
  rep.unpredicted = int(rep.cases.size()) - all.cases;
  for (const auto& [by, key] : kGroupings) {
    for (const auto& c : rep.cases) {
      if (!c.failure.empty()) continue;
      const std::string name = key(c);
      if (name.empty()) continue;  // a grouping that does not apply to the case
      if (std::none_of(rep.groups.begin(), rep.groups.end(), [&](const ErrorGroup& g) { return g.by == by && g.name == name; })) {
        rep.groups.push_back({by, name, SummarizeErrors(rep.cases, [&](const ValidationCase& m) { return key(m) == name; })});
        if (std::string(by) == "gpu") rep.by_gpu.emplace_back(name, rep.groups.back().summary);
      }
    }
  }
  rep.release_spread = SummarizeReleaseSpread(rep.cases);
  return rep;
}

ValidationReport::ReleaseSpread SummarizeReleaseSpread(const std::vector<ValidationCase>& cases) {
  ValidationReport::ReleaseSpread rs;
  std::vector<double> spreads;
  for (const auto& c : cases) {
    if (!c.failure.empty() || c.measured_range.releases < 2) continue;
    spreads.push_back(c.measured_range.Spread());
    const int place = c.measured_range.Place(c.predicted_step_time_s);
    (place < 0 ? rs.faster : place > 0 ? rs.slower : rs.within) += 1;
  }
  if (spreads.empty()) return rs;
  std::sort(spreads.begin(), spreads.end());
  const size_t n = spreads.size();
  rs.cases = int(n);
  rs.median_spread = n % 2 ? spreads[n / 2] : (spreads[n / 2 - 1] + spreads[n / 2]) / 2;
  rs.max_spread = spreads.back();
  return rs;
}

std::string ValidationTable(const ValidationReport& r) {
  std::ostringstream o;
  char buf[512];
  // Columns as wide as the longest id and group name; the defaults list, of
  // any length, after the fixed columns.
  int id_width = 30, name_width = 20, by_width = 0;
  for (const auto& c : r.cases) id_width = std::max(id_width, int(c.id.size()));
  for (const auto& g : r.groups) {
    name_width = std::max(name_width, int(g.name.size()));
    by_width = std::max(by_width, int(g.by.size()));
  }
  // A what-if says so first: its table is not the reference's baseline.
  if (!r.overrides.empty() || !r.cases_containing.empty()) {
    o << "what-if:";
    for (const std::string& s : r.overrides) o << " --set " << s;
    if (!r.cases_containing.empty()) o << " --cases " << r.cases_containing;
    o << "\n";
  }
  std::snprintf(buf, sizeof buf, "%-*s %12s %12s %8s  ", id_width, "case", "predicted_s", "measured_s", "error");
  o << buf << "defaults used\n";
  for (const auto& c : r.cases) {
    if (!c.failure.empty()) {
      o << c.id << ": cannot predict: " << c.failure << "\n";
      continue;
    }
    std::snprintf(buf, sizeof buf, "%-*s %12.3f %12.3f %+7.1f%%  ", id_width, c.id.c_str(), c.predicted_step_time_s,
                  c.measured_step_time_s, 100 * c.error);
    o << buf;
    for (size_t i = 0; i < c.defaulted.size(); ++i) o << (i ? ", " : "") << c.defaulted[i];
    o << "\n";
  }
  for (const auto& [by, key] : kGroupings) {
    const long n = std::count_if(r.groups.begin(), r.groups.end(), [&](const ErrorGroup& g) { return g.by == by; });
    if (n < 2) continue;  // one group is the total below
    for (const auto& g : r.groups) {
      if (g.by != by) continue;
      const ErrorSummary& e = g.summary;
      std::snprintf(buf, sizeof buf, "  %-*s %-*s mean |error| %.1f%%, mean error %+.1f%%, max |error| %.1f%% over %d case%s\n", by_width,
                    by, name_width, g.name.c_str(), 100 * e.mean_abs_error, 100 * e.mean_signed_error, 100 * e.max_abs_error, e.cases,
                    e.cases == 1 ? "" : "s");
      o << buf;
    }
  }
  if (r.predicted == 0) {
    std::snprintf(buf, sizeof buf, "no case predicted (%d of %zu cannot be predicted yet: see above)\n", r.unpredicted, r.cases.size());
  } else if (r.unpredicted > 0) {
    std::snprintf(buf, sizeof buf, "mean |error| %.1f%%, max |error| %.1f%% over %d case%s (%d of %zu cannot be predicted yet: see above)\n",
                  100 * r.mean_abs_error, 100 * r.max_abs_error, r.predicted, r.predicted == 1 ? "" : "s", r.unpredicted, r.cases.size());
  } else {
    std::snprintf(buf, sizeof buf, "mean |error| %.1f%%, max |error| %.1f%% over %d case%s\n", 100 * r.mean_abs_error,
                  100 * r.max_abs_error, r.predicted, r.predicted == 1 ? "" : "s");
  }
  o << buf;
  const ValidationReport::ReleaseSpread& rs = r.release_spread;
  if (rs.cases > 0) {
    std::snprintf(buf, sizeof buf,
                  "%d case%s record%s other releases' runs of the same configuration: their step times spread %.1f%% (median), "
                  "up to %.1f%%; the prediction is faster than every release's for %d, within their span for %d, slower for %d\n",
                  rs.cases, rs.cases == 1 ? "" : "s", rs.cases == 1 ? "s" : "", 100 * rs.median_spread, 100 * rs.max_spread, rs.faster,
                  rs.within, rs.slower);
    o << buf;
  }
  return o.str();
}

std::string ValidationJson(const ValidationReport& r) {
  JsonWriter w;
  w.BeginObject().BeginArray("cases");
  for (const auto& c : r.cases) {
    w.BeginObject().Field("id", c.id);
    if (!c.failure.empty()) {
      // The keys of a predicted case, null: one shape for a script.
      w.Field("failure", c.failure).Field("failure_kind", ToString(c.failure_kind)).Null("gpu").Null("predicted_step_time_s");
      w.Null("fidelity").Field("measured_step_time_s", c.measured_step_time_s).Null("error");
    } else {
      w.Field("gpu", c.gpu)
          .Field("predicted_step_time_s", c.predicted_step_time_s)
          .Field("fidelity", c.result.fidelity)  // validate's default is analytical, run's the DES
          .Field("measured_step_time_s", c.measured_step_time_s)
          .Field("precision", c.precision)
          .Field("source", c.family)
          .Field("workload", c.workload)
          .Field("model", c.model)
          .Field("error", c.error)
          .Field("fits_in_memory", c.result.memory.fits);  // a published run did: false is the model's error too
      if (!c.experts_per_gpu.empty()) w.Field("experts_per_gpu", c.experts_per_gpu);
      if (c.measured_range.releases > 1) {
        w.Field("releases", c.measured_range.releases)
            .Field("measured_min_step_time_s", c.measured_range.min_step_time_s)
            .Field("measured_max_step_time_s", c.measured_range.max_step_time_s);
      }
    }
    w.BeginArray("defaulted");
    for (const auto& d : c.defaulted) w.Value(d);
    w.EndArray().EndObject();
  }
  w.EndArray().Field("fidelity", r.fidelity);
  // A mean over no prediction is no number.
  if (r.predicted > 0) w.Field("mean_abs_error", r.mean_abs_error).Field("max_abs_error", r.max_abs_error);
  else w.Null("mean_abs_error").Null("max_abs_error");
  w.BeginArray("by_gpu");
  for (const auto& [gpu, e] : r.by_gpu) {
    w.BeginObject().Field("gpu", gpu).Field("cases", e.cases).Field("mean_abs_error", e.mean_abs_error)
        .Field("max_abs_error", e.max_abs_error).EndObject();
  }
  w.EndArray();
  w.BeginArray("groups");
  for (const auto& g : r.groups) {
    w.BeginObject().Field("by", g.by).Field("name", g.name).Field("cases", g.summary.cases)
        .Field("mean_abs_error", g.summary.mean_abs_error).Field("mean_signed_error", g.summary.mean_signed_error)
        .Field("max_abs_error", g.summary.max_abs_error).EndObject();
  }
  w.EndArray().Field("predicted", r.predicted).Field("unpredicted", r.unpredicted);
  if (!r.overrides.empty() || !r.cases_containing.empty()) {
    w.BeginObject("what_if").BeginArray("overrides");
    for (const std::string& o : r.overrides) w.Value(o);
    w.EndArray().Field("cases_containing", r.cases_containing).EndObject();
  }
  const ValidationReport::ReleaseSpread& rs = r.release_spread;
  w.BeginObject("release_spread").Field("cases", rs.cases).Field("median_spread", rs.median_spread).Field("max_spread", rs.max_spread)
      .Field("faster", rs.faster).Field("within", rs.within).Field("slower", rs.slower).EndObject();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace trainsim
