// trainsim calibrate --backend cpu|cuda -o PROFILE.yaml [options]
// Measures (CPU in-process; CUDA through the standalone trainsim-calib-cuda
// program or a measurements file it wrote), fits and writes the profile.
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "calib/calibration.h"
#include "calib/cpu_backend.h"
#include "calib/fit.h"
#include "calib/host_launch_trace.h"
#include "calib/layer_prediction.h"
#include "calib/plan.h"
#include "calib/storage_bench.h"
#include "calib/training_profile.h"
#include "sim/io/data_paths.h"
#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/cli/progress.h"
#include "sim/io/profile_loader.h"

namespace trainsim::cli {
namespace {

// The profile's name: --name, else the -o file's stem.
std::string ProfileName(const std::optional<std::string>& given, const std::string& output) {
  return given.value_or(std::filesystem::path(output).stem().string());
}

// Why the profile's name cannot be one: a profile is referred to by it and it
// is written into YAML, so it is letters, digits and . _ - + only. "" when it can.
std::string ProfileNameProblem(const std::optional<std::string>& given, const std::string& output) {
  const std::string name = ProfileName(given, output);
  const char* what = given ? "--name" : "-o";
  if (name.find_first_not_of(" \t") == std::string::npos) return std::string(what) + ": a profile needs a name";
  const bool plain = std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+'; });
  if (!plain) {
    return std::string(what) + ": the profile name '" + name + "' has characters other than letters, digits and . _ - +" +
           (given ? "" : " (its file's stem; give --name)");
  }
  return "";
}

// A file calibrate writes, or one it reads, as the messages name it.
struct NamedPath {
  std::string what;  // "-o", "the --measurements input"
  std::string path;  // "" where not given
};

// Why the files written cannot be: one of them is a file the calibration
// reads (a trace or measurements taken on the cluster, which only profiling
// again would give back) or another of them. "" when each is its own.
std::string WritesClash(const std::vector<NamedPath>& writes, const std::vector<NamedPath>& reads) {
  // The outputs need not exist yet: compared as the paths they resolve to.
  const auto same = [](const std::string& a, const std::string& b) {
    std::error_code ea, eb;
    const auto ca = std::filesystem::weakly_canonical(a, ea), cb = std::filesystem::weakly_canonical(b, eb);
    return !ea && !eb && ca == cb;
  };
  for (size_t i = 0; i < writes.size(); ++i) {
    const NamedPath& w = writes[i];
    if (w.path.empty()) continue;
    for (const NamedPath& r : reads) {
      if (!r.path.empty() && same(w.path, r.path)) return w.what + ": '" + w.path + "' is " + r.what + ", which it would replace; write to another file";
    }
    for (size_t j = 0; j < i; ++j) {
      if (!writes[j].path.empty() && same(w.path, writes[j].path)) {
        return writes[j].what + " and " + w.what + " are the same file '" + w.path + "': one would replace the other";
      }
    }
  }
  return "";
}

const char* kUsage =
    "usage: trainsim calibrate --backend cpu|cuda -o PROFILE.yaml [options]\n"
    "       trainsim calibrate --host-trace TRACE.csv --framework BASE [--node NODE] -o FRAMEWORK.yaml\n"
    "Measure this machine and write a calibrated GPU profile (hardware-profiles/gpus format) plus\n"
    "PROFILE-measurements.yaml (raw samples, collective alpha-beta, storage throughput).\n"
    "Then `trainsim validate --profile PROFILE.yaml` compares predicted and measured layer steps.\n"
    "  --backend B          cpu (Eigen, this process) or cuda (runs trainsim-calib-cuda)\n"
    "  -o, --output FILE    the profile to write (atomically)\n"
    "  --shape H:F:A:KV:S:B layer shape hidden:ffn:heads:kv_heads:seq:micro_batch (repeatable;\n"
    "                       default: a built-in set per backend)\n"
    "  --storage PATH       also measure sequential write (fsync'd) and read of files under PATH\n"
    "  --storage-clients N  parallel clients of the storage test (1-64, default 2; 1 is always measured)\n"
    "  --storage-mib N      file size per client (default 64)\n"
    "  --ranks N            CPU: threads for the collectives (1-64, default 2; 1 skips them)\n"
    "  --min-ms N           CPU: least time spent per benchmark (default 50)\n"
    "  --nccl               CUDA: also measure NCCL collectives over the visible GPUs\n"
    "  --sustain-s S        CUDA: seconds the plan's largest GEMM runs back to back per precision for\n"
    "                       the sustained (power-capped) rate (default 15; 0 skips it)\n"
    "  --measurements FILE  CUDA: fit a measurements file written by trainsim-calib-cuda instead\n"
    "  --write-plan FILE    write the measuring plan for trainsim-calib-cuda and stop\n"
    "  --training-profile FILE  CUDA: also write a profile for training scenarios: --base's keys\n"
    "                       with the measured GEMM curves, memory and kernel floors (calib/README.md)\n"
    "  --base GPU           the GPU profile (name or path) a training profile starts from\n"
    "  --scenario FILE      CUDA: also sweep the GEMMs this training scenario runs per GPU (its\n"
    "                       projections, MoE experts, LM head; with --set KEY=VALUE overrides)\n"
    "  --name NAME          profile name (default: the output file's stem)\n"
    "  --tdp-w W            power to record in the profile (not measured)\n"
    "  --progress           CPU: progress and time left on stderr (default: only when stderr is a terminal)\n"
    "The host's cost per kernel, from a trace of a real training step (calib/host_launch_trace.h):\n"
    "  --host-trace FILE    the step's CUDA API trace as Nsight Systems exports it: nsys stats --report\n"
    "                       cuda_api_trace --format csv --output TRACE report.nsys-rep\n"
    "  --framework BASE     the framework profile (name or path) the written one is based on\n"
    "  --node NODE          the node the trace was taken on (name or path): its host_op_time_factor\n"
    "                       scales the figure to the profile's reference host (default: a DGX H100's)\n"
    "  --idle-gap-us N      a gap between launches longer than this is the thread idle (default 1000)\n"
    "  -o FRAMEWORK.yaml    the framework profile to write: BASE with host_us_per_kernel measured\n";

std::string SelfDir() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

bool ParsePositive(const std::optional<std::string>& v, double& out) {
  if (!v) return true;
  char* end = nullptr;
  out = std::strtod(v->c_str(), &end);
  return end && *end == 0 && out > 0;
}

// A whole number from 1 to `most` (absent: `out` unchanged): a count of
// threads or clients, each of which holds buffers, so a bound keeps the
// calibration's memory bounded.
bool ParseCountUpTo(const std::optional<std::string>& v, double& out, double most) {
  if (!v) return true;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (!end || *end != 0 || !(x >= 1 && x <= most) || x != std::floor(x)) return false;
  out = x;
  return true;
}

// --host-trace: the framework profile with the host cost per kernel a trace
// of a real step measured.
int HostTraceCalibration(const ParsedArgs& a, std::ostream& out, std::ostream& err) {
  auto bad = [&](const std::string& msg) {
    err << "trainsim calibrate: " << msg << "\n";
    return kExitBadInput;
  };
  for (const char* o : {"--backend", "--shape", "--storage", "--storage-clients", "--storage-mib", "--ranks", "--min-ms",
                        "--measurements", "--write-plan", "--scenario", "--set", "--training-profile", "--base", "--nccl",
                        "--sustain-s", "--tdp-w", "--progress"}) {
    if (a.Has(o)) return bad(std::string(o) + " does not go with --host-trace");
  }
  const auto output = a.Value("--output");
  const auto base = a.Value("--framework");
  if (!output || !base) return bad("--host-trace needs --framework BASE and -o FRAMEWORK.yaml");
  if (std::string e = NotAFileToWrite(*output); !e.empty()) return bad(e);
  if (std::string e = WritesClash({{"-o", *output}}, {{"the --host-trace input", *a.Value("--host-trace")}, {"the --framework base", *base}});
      !e.empty()) {
    return bad(e);
  }
  if (std::string e = ProfileNameProblem(a.Value("--name"), *output); !e.empty()) return bad(e);
  calib::HostLaunchCostOptions options;
  double idle_us = 1000;
  if (!ParsePositive(a.Value("--idle-gap-us"), idle_us)) return bad("--idle-gap-us: expected a positive number");
  options.idle_gap_s = idle_us * 1e-6;
  std::string node_name = "dgx-h100";
  double factor = 1;
  // The references first: a wrong name fails before the trace is read. A
  // reference that does not resolve is the command line's error; a profile
  // that does not load names its file, line and key.
  auto load = [&](const char* option, const std::string& ref, auto loader) -> std::optional<std::string> {
    try {
      loader(YAML::Node(ref), option, option);
      return std::nullopt;
    } catch (const InputException& e) {
      return e.error().line == 0 ? std::string(option) + ": " + e.error().message : e.error().ToString();
    }
  };
  if (auto e = load("--framework", *base, [](const YAML::Node& r, const char* f, const char* k) { (void)LoadFrameworkProfile(r, f, k); })) {
    return bad(*e);
  }
  if (auto node = a.Value("--node")) {
    auto e = load("--node", *node, [&](const YAML::Node& r, const char* f, const char* k) {
      const NodeProfile n = LoadNodeProfile(r, f, k);
      node_name = n.name;
      factor = n.host_op_time_factor;
    });
    if (e) return bad(*e);
  }
  const std::string trace = *a.Value("--host-trace");
  std::ifstream in(trace);
  if (!in) return bad("--host-trace: cannot read '" + trace + "'");
  const Expected<calib::HostLaunchCost> cost = calib::ReadHostLaunchCost(in, trace, options);
  if (!cost) {
    err << cost.error().ToString() << "\n";
    return kExitBadInput;
  }
  // A path for the base is written absolute: the profile may be read from anywhere.
  const bool base_is_path = base->find('/') != std::string::npos || base->find(".yaml") != std::string::npos;
  const std::string based_on = base_is_path ? std::filesystem::absolute(*base).string() : *base;
  const std::string name = ProfileName(a.Value("--name"), *output);
  const std::string text = calib::HostCostFrameworkProfileText(name, based_on, *cost, trace, node_name, factor);
  if (std::string e = calib::WriteFileAtomically(*output, text); !e.empty()) return bad(e);
  try {  // what we wrote must be what the simulator reads
    const std::string abs = std::filesystem::absolute(*output).string();
    (void)LoadFrameworkProfile(YAML::Node(abs), abs, "profile");
  } catch (const InputException& e) {
    err << "trainsim calibrate: the written framework profile does not load: " << e.error().ToString() << "\n";
    return kExitSimulationFailed;
  }
  std::ostringstream line;  // three digits, without changing the caller's stream
  line.precision(3);
  line << "wrote " << *output << ": host_us_per_kernel " << cost->host_s_per_kernel * 1e6 / factor << " (" << cost->host_s_per_kernel * 1e6
      << " us measured on " << node_name << " over " << cost->counted_gaps << " launch gaps of " << cost->launches << " launches, "
      << cost->threads << (cost->threads == 1 ? " thread; " : " threads; ") << cost->idle_gaps << " idle gaps left out)\n";
  out << line.str();
  return kExitOk;
}

}  // namespace

int CalibrateCommand(const Args& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a;
  const std::string perr = Parse(args,
                                 {{"--backend", true},        {"--output", true, "-o"}, {"--shape", true},
                                  {"--storage", true},        {"--storage-clients", true}, {"--storage-mib", true},
                                  {"--ranks", true},          {"--min-ms", true},       {"--nccl"},
                                  {"--measurements", true},   {"--write-plan", true},   {"--name", true},
                                  {"--tdp-w", true},          {"--progress"},           {"--help", false, "-h"},
                                  {"--scenario", true},       {"--set", true},          {"--training-profile", true},
                                  {"--base", true},           {"--sustain-s", true},    {"--host-trace", true},
                                  {"--framework", true},      {"--node", true},         {"--idle-gap-us", true}},
                                 a);
  if (a.Has("--help")) {
    out << kUsage;
    return kExitOk;
  }
  auto bad = [&](const std::string& msg) {
    err << "trainsim calibrate: " << msg << "\n";
    return kExitBadInput;
  };
  if (!perr.empty()) return bad(perr);
  if (!a.positional.empty()) return bad("unexpected argument '" + a.positional[0] + "'");
  if (a.Has("--host-trace")) return HostTraceCalibration(a, out, err);
  for (const char* o : {"--framework", "--node", "--idle-gap-us"}) {
    if (a.Has(o)) return bad(std::string(o) + " belongs to --host-trace");
  }
  const std::string backend = a.Value("--backend").value_or("");
  if (backend != "cpu" && backend != "cuda") return bad("--backend: expected cpu or cuda");

  std::vector<calib::LayerShape> shapes;
  for (const auto& spec : a.All("--shape")) {
    calib::LayerShape s;
    const std::string e = calib::ParseShapeSpec(spec, s);
    if (!e.empty()) return bad("--shape: " + e);
    shapes.push_back(s);
  }
  if (shapes.empty()) shapes = backend == "cpu" ? calib::DefaultCpuShapes() : calib::DefaultGpuShapes();
  calib::CalibrationPlan plan = calib::MakePlan(shapes);
  int scenario_gemms = 0;
  if (auto file = a.Value("--scenario")) {
    // A CPU's sweep of a training step's GEMMs would take hours.
    if (backend != "cuda") return bad("--scenario belongs to --backend cuda");
    Expected<int> added = calib::AddScenarioGemms(*file, a.All("--set"), plan);
    if (!added) return bad(added.error().ToString());
    scenario_gemms = *added;
  } else if (a.Has("--set")) {
    return bad("--set belongs to --scenario");
  }
  if (auto p = a.Value("--write-plan")) {
    const std::string e = calib::WriteFileAtomically(*p, calib::PlanText(plan));
    if (!e.empty()) return bad(e);
    out << "wrote the plan " << *p << " (" << plan.gemms.size() << " GEMM shapes, ";
    if (!plan.grouped.empty()) out << plan.grouped.size() << " expert GEMM groups as Transformer Engine issues them, ";
    out << plan.layers.size() << " layer shapes";
    if (a.Has("--scenario")) out << "; " << scenario_gemms << " of those shapes from " << *a.Value("--scenario");
    out << ")\n";
    return kExitOk;
  }
  const auto output = a.Value("--output");
  if (!output) return bad("-o PROFILE.yaml is required");
  const auto training_profile = a.Value("--training-profile");
  if (output->empty()) return bad("-o: an empty path; name the profile file");
  if (training_profile && training_profile->empty()) return bad("--training-profile: an empty path; name the profile file");
  if (training_profile.has_value() != a.Has("--base")) return bad("--training-profile and --base go together");
  // Fail before measuring, not after: an output's directory, the training profile's base.
  auto missing_dir = [](const std::string& file) {
    const auto dir = std::filesystem::absolute(file).parent_path();
    return std::filesystem::is_directory(dir) ? std::string() : "directory '" + dir.string() + "' does not exist";
  };
  std::string base_path;
  if (training_profile) {
    if (backend != "cuda") return bad("--training-profile belongs to --backend cuda");
    if (std::string e = calib::CheckTrainingBase(*a.Value("--base"), base_path); !e.empty()) return bad(e);
    if (std::string e = missing_dir(*training_profile); !e.empty()) return bad("--training-profile: " + e);
  }
  if (std::string e = missing_dir(*output); !e.empty()) return bad("-o: " + e);
  for (const std::string& file : {*output, calib::MeasurementsPathFor(*output), training_profile.value_or("")}) {
    if (std::string e = NotAFileToWrite(file); !e.empty()) return bad(e);
  }
  if (std::string e = WritesClash({{"-o", *output},
                                   {"the measurements file written beside -o", calib::MeasurementsPathFor(*output)},
                                   {"--training-profile", training_profile.value_or("")}},
                                  {{"the --measurements input", a.Value("--measurements").value_or("")},
                                   {"the --scenario file", a.Value("--scenario").value_or("")},
                                   {"the --base profile", base_path}});
      !e.empty()) {
    return bad(e);
  }
  if (std::string e = ProfileNameProblem(a.Value("--name"), *output); !e.empty()) return bad(e);
  if (a.Has("--storage") && a.Value("--storage")->empty()) return bad("--storage: an empty path; name the directory to write to");
  double storage_mib = 64, storage_clients = 2, ranks = 2, min_ms = 50, tdp_w = 0;
  // A checkpoint shard's size is the point; more than 64 GiB per client only fills the disk.
  if (!ParsePositive(a.Value("--storage-mib"), storage_mib) || storage_mib > 65536) {
    return bad("--storage-mib: expected a size from above 0 to 65536 MiB");
  }
  constexpr double kMostRanks = 64, kMostStorageClients = 64;  // threads of this machine's collectives and storage writers
  if (!ParseCountUpTo(a.Value("--storage-clients"), storage_clients, kMostStorageClients)) {
    return bad("--storage-clients: expected a whole number from 1 to 64");
  }
  if (!ParseCountUpTo(a.Value("--ranks"), ranks, kMostRanks)) return bad("--ranks: expected a whole number from 1 to 64");
  if (!ParsePositive(a.Value("--min-ms"), min_ms)) return bad("--min-ms: expected a positive number");
  if (!ParsePositive(a.Value("--tdp-w"), tdp_w)) return bad("--tdp-w: expected a positive number");
  double sustain_s = 15;
  if (auto v = a.Value("--sustain-s")) {
    char* end = nullptr;
    sustain_s = std::strtod(v->c_str(), &end);
    if (!end || *end != 0 || !(sustain_s >= 0 && sustain_s <= 600)) return bad("--sustain-s: expected seconds from 0 to 600");
    if (backend != "cuda" || a.Has("--measurements")) return bad("--sustain-s belongs to --backend cuda measuring here (not --measurements)");
  }
  const std::string storage = a.Value("--storage").value_or("");
  if (!storage.empty() && !std::filesystem::is_directory(storage)) return bad("--storage: '" + storage + "' is not a directory");
  const std::string name = ProfileName(a.Value("--name"), *output);

  calib::Measurements m;
  if (backend == "cpu") {
    if (a.Has("--measurements") || a.Has("--nccl")) return bad("--measurements and --nccl belong to --backend cuda");
    calib::CpuCalibrationOptions o;
    o.min_seconds = min_ms / 1000;
    o.collective_ranks = int(ranks);
    o.storage_dir = storage;
    o.storage_clients = int(storage_clients);
    o.storage_bytes_per_client = storage_mib * 1024 * 1024;
    // The benchmarks done of those planned (by their least times), with the phase.
    ProgressLine progress(err, "calibrate", a.Has("--progress"));
    if (progress.enabled()) o.progress = [&progress](double fraction, const std::string& phase) { progress.Update(fraction, phase); };
    const std::string e = calib::RunCpuCalibration(plan, o, m);
    progress.Finish();
    if (!e.empty()) {
      err << "trainsim calibrate: " << e << "\n";
      return kExitSimulationFailed;
    }
    for (const std::string& w : m.warnings) err << "trainsim calibrate: warning: " << w << "\n";
  } else {
    std::string mfile = a.Value("--measurements").value_or("");
    if (mfile.empty()) {
      // Run the standalone measuring program built beside this binary.
      const std::string prog = SelfDir() + "/trainsim-calib-cuda";
      if (!std::filesystem::exists(prog)) {
        err << "trainsim calibrate: the CUDA measuring program '" << prog
            << "' was not built (CUDA toolkit not found at configure time); build calib/cuda on a GPU node\n";
        return kExitSimulationFailed;
      }
      const std::string base = std::filesystem::path(*output).replace_extension("").string();
      const std::string plan_file = base + "-plan.txt";
      mfile = base + "-raw-measurements.yaml";
      const std::string e = calib::WriteFileAtomically(plan_file, calib::PlanText(plan));
      if (!e.empty()) return bad(e);
      std::string cmd = "'" + prog + "' --plan '" + plan_file + "' --out '" + mfile + "'" + (a.Has("--nccl") ? " --nccl" : "");
      if (a.Has("--sustain-s")) cmd += " --sustain-s " + std::to_string(sustain_s);
      err << "calibrate: running " << cmd << "\n";
      const int status = std::system(cmd.c_str());
      const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      if (rc == 3) {
        // Nothing was measured: the plan written for the program is not left behind.
        std::error_code ignored;
        std::filesystem::remove(plan_file, ignored);
        err << "trainsim calibrate: no CUDA device on this machine (see the message above); use --backend cpu here\n";
        return kExitSimulationFailed;
      }
      if (rc != 0) {
        err << "trainsim calibrate: the CUDA measuring program failed (exit " << rc << "); see its message above\n";
        return kExitSimulationFailed;
      }
    }
    auto loaded = calib::LoadMeasurements(mfile);
    if (!loaded) {
      err << loaded.error().ToString() << "\n";
      return kExitBadInput;
    }
    m = *loaded;
    // A file given to fit that holds too little to fit a profile is the
    // file's fault (a section missing, one shape of a curve): its error.
    if (a.Has("--measurements")) {
      calib::FittedProfile probe;
      if (const std::string e = calib::FitProfile(m, name, probe); !e.empty()) {
        err << mfile << ": " << e << "\n";
        return kExitBadInput;
      }
    }
    if (!storage.empty()) {  // the storage test runs on the host, here
      calib::StorageSample s;
      for (int clients : {1, int(storage_clients)}) {
        calib::StorageOptions so;
        so.dir = storage;
        so.clients = clients;
        so.bytes_per_client = storage_mib * 1024 * 1024;
        const std::string e = calib::RunStorageBenchmark(so, s);
        if (!e.empty()) {
          err << "trainsim calibrate: " << e << "\n";
          return kExitSimulationFailed;
        }
        m.storage.push_back(s);
        if (clients == int(storage_clients)) break;
      }
    }
  }
  std::string report;
  calib::FittedProfile fitted;
  std::string e = calib::WriteCalibratedProfile(m, *output, name, tdp_w, report, &fitted);
  if (e.empty() && training_profile) {
    e = calib::WriteTrainingProfile(m, *a.Value("--base"), *training_profile, *output, report, &fitted);
  }
  if (!e.empty()) {
    err << "trainsim calibrate: " << e << "\n";
    return kExitSimulationFailed;
  }
  out << report;
  return kExitOk;
}

}  // namespace trainsim::cli
