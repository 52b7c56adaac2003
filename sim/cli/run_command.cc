// trainsim run SCENARIO.yaml [--set KEY=VALUE]... [--json] [--trace FILE.json] [--fidelity des|analytical]
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "models/memory_model.h"
#include "models/workload.h"
#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/cli/operator_table.h"
#include "sim/cli/progress.h"
#include "sim/cli/unsimulated_facts.h"
#include "sim/core/scenario.h"
#include "sim/run/host_issue_share.h"
#include "sim/run/simulate.h"
#include "sim/io/data_paths.h"
#include "sim/io/file_cache.h"
#include "sim/io/model_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/result_writer.h"
#include "sim/validate/track_record.h"

namespace trainsim::cli {

namespace {

// Where --trace FILE writes the first checkpoint's timeline: FILE without .json, then .checkpoint.json.
std::string TraceCheckpointPath(std::string trace) {
  if (const auto dot = trace.rfind(".json"); dot != std::string::npos && dot + 5 == trace.size()) trace.resize(dot);
  return trace + ".checkpoint.json";
}

// Below this share of a layer's activations, selective recompute frees
// nothing worth its re-run.
constexpr double kRecomputeFreesNothing = 0.01;

// What a fine-tuning run trains, the framework's defaults resolved (a LoRA
// run's rank, targets and dropout show nowhere else), and, where the adapters'
// own tensor-parallel collectives sit on the critical path, that a smaller TP
// may pay (said of a run that can happen: one that does not fit needs no
// smaller TP): they can make LoRA slower than full fine-tuning at TP 8. "" for
// pre-training.
std::string FinetuneLines(const Scenario& s, const SimulationResult& r) {
  const Finetune& f = s.training.finetune;
  if (f.method == FinetuneMethod::kNone) return "";
  if (f.method == FinetuneMethod::kFull) return "  fine-tuning          full: every weight trained\n";
  std::string targets;
  const std::pair<bool, const char*> projections[] = {{f.targets.qkv, "qkv"}, {f.targets.proj, "proj"}, {f.targets.fc1, "fc1"}, {f.targets.fc2, "fc2"}};
  for (const auto& [on, name] : projections) {
    if (on) targets += (targets.empty() ? "" : ", ") + std::string(name);
  }
  std::ostringstream o;
  // What trains: the adapters (the result's trainable count), against the model's parameters.
  const double adapters = r.model.trainable_parameters, total = r.model.parameters;
  char share[32], count[32];
  const double percent = 100 * adapters / total;
  std::snprintf(share, sizeof share, percent < 10 ? "%.2g%%" : "%.0f%%", percent);  // two figures, never "1.3e+02%"
  std::snprintf(count, sizeof count, "%.1fM", adapters / 1e6);  // adapters are millions, not a fraction of a billion
  o << "  fine-tuning          LoRA rank " << f.rank << ", alpha " << f.alpha << ", on " << targets
    << (f.targets_from_framework ? " (as " + s.framework.name + "'s default)" : std::string()) << ", adapter dropout " << f.dropout
    << "; " << (adapters < 1e9 ? std::string(count) : ParameterCountText(adapters)) << " trainable (" << share << " of the model's " << ParameterCountText(total) << ")\n";
  if (r.feasible() && s.parallelism.tensor > 1) {
    o << "                       at TP" << s.parallelism.tensor << " each adapter's own tensor-parallel collectives wait on the critical path\n"
      << "                       (NeMo's ParallelLinearAdapter; --operators lists them): a smaller TP may be faster (trainsim plan)\n";
  }
  return o.str();
}

const char* kRunHelp =
    "usage: trainsim run SCENARIO.yaml [options]\n"
    "Simulate a training run and print its step time, breakdown, memory and run figures.\n"
    "  --set KEY=VALUE        override a scenario key by dotted path (repeatable),\n"
    "                         e.g. --set parallelism.tensor=8 --set cluster.nics_per_node=4\n"
    "  --json                 print the result object (design.md section 3) instead of the summary\n"
    "  --trace FILE.json      write one simulated step as Chrome trace JSON (open in Perfetto), time 0\n"
    "                         at the step's start; with checkpoints, the first one goes to\n"
    "                         FILE.checkpoint.json. Needs the DES (--fidelity des)\n"
    "  --fidelity F           des (default) or analytical\n"
    "  --operators            after the summary, each pass of one micro batch operator by operator:\n"
    "                         shapes, FLOPs, bytes, time, kernels launched (* in a CUDA graph),\n"
    "                         achieved rate, and its collectives\n"
    "  --progress             progress and time left on stderr (default: only when stderr is a terminal)\n"
    "The summary ends with the track record of such predictions: the published runs of the reference\n"
    "files on the same GPU and of the same kind (dense or MoE; pre-training, LoRA or full fine-tuning)\n"
    "and, where at least 5 had them, the MoE's band of routed experts per GPU and the precision,\n"
    "predicted now against their measured step times; before\n"
    "it, where the GPU waits 2% of the step or more for the host to issue kernels, that share and the\n"
    "host cost per kernel it rests on (an estimate until measured: trainsim calibrate --host-trace).\n"
    "  -h, --help             this help\n"
    "exit status: 0 ok, 1 the run cannot happen (e.g. does not fit in memory), 2 bad input\n";
}  // namespace

int RunCommand(const Args& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a;
  const std::string perr = Parse(args, {{"--set", true}, {"--json"}, {"--trace", true}, {"--fidelity", true}, {"--progress"}, {"--operators"},
                                         {"--help", false, "-h"}},
                                 a);
  if (a.Has("--help")) {
    out << kRunHelp;
    return kExitOk;
  }
  if (!perr.empty() || a.positional.size() != 1) {
    err << "trainsim run: " << (perr.empty() ? "expected one scenario file" : perr) << "\n";
    return kExitBadInput;
  }
  SimulateOptions opt;
  opt.fidelity = Fidelity::kDes;
  if (const std::string ferr = FidelityFlag(a, &opt.fidelity); !ferr.empty()) {
    err << "trainsim run: " << ferr << "\n";
    return kExitBadInput;
  }
  opt.record_timeline = a.Has("--trace");
  if (a.Has("--operators") && a.Has("--json")) {
    err << "trainsim run: --operators prints a table for people; it does not go with --json\n";
    return kExitBadInput;
  }
  if (opt.record_timeline && opt.fidelity != Fidelity::kDes) {
    // The closed form has step and stall times, not events: an empty or
    // invented timeline would look like a result.
    err << "trainsim run: --trace needs --fidelity des: the analytical path computes the step in closed form "
           "and has no timeline to trace\n";
    return kExitBadInput;
  }
  // The trace and its checkpoint part: regular files, none of them a file the scenario reads.
  std::vector<std::string> trace_paths;
  if (auto trace = a.Value("--trace")) {
    trace_paths = {*trace, TraceCheckpointPath(*trace)};
    for (const std::string& path : trace_paths) {
      if (std::string e = NotAFileToWrite(path, OutputWrite::kInPlace); !e.empty()) {
        err << "trainsim run: --trace: " << e << "\n";
        return kExitBadInput;
      }
    }
  }
  FileReadLog read;  // the files the scenario reads: its profiles and model files
  Expected<Scenario> s = LoadScenario(a.positional[0], a.All("--set"));
  std::vector<std::string> inputs = read.Files();
  inputs.push_back(a.positional[0]);
  for (const std::string& path : trace_paths) {
    for (const std::string& input : inputs) {
      std::error_code ec;
      if (!std::filesystem::equivalent(path, input, ec)) continue;
      err << "trainsim run: --trace: '" << path << "' is " << (input == a.positional[0] ? "the scenario file" : "a file the scenario reads")
          << "; write the trace to another file\n";
      return kExitBadInput;
    }
  }
  if (!s) {
    err << s.error().ToString() << "\n";
    // A run that cannot be simulated is a result too (design.md 3): its object
    // with the error and its kind, so that a script reading --json always
    // gets one (the exit status still tells bad input, 2, from a run the
    // hardware cannot do, 1).
    if (a.Has("--json")) {
      const UnsimulatedFacts known = KnownFactsOf(a.positional[0], OverridesFrom("--set", a.All("--set")), s.error(), ToString(opt.fidelity));
      out << ToJsonOfUnsimulated(ScenarioName(a.positional[0], a.All("--set")), s.error().kind, s.error().ToString(), known);
    }
    return ExitStatus(s.error().kind);  // 2 for bad input; 1 for a run the hardware cannot do
  }
  const std::vector<std::string> warnings = ScenarioWarnings(*s);
  for (const std::string& w : warnings) err << "trainsim run: " << w << "\n";
  ProgressLine progress(err, "run", a.Has("--progress"));
  if (progress.enabled() && opt.fidelity == Fidelity::kDes) {
    opt.progress = [&progress](int done, int total) {
      progress.Update(double(done) / total, "step " + std::to_string(done) + " of " + std::to_string(total));
    };
  }
  SimulationResult r = Simulate(*s, opt);
  r.warnings = WarningTexts(warnings);
  progress.Finish();
  if (auto trace = a.Value("--trace")) {
    if (r.timeline.empty()) {
      err << "trainsim run: no trace written to " << *trace << ": the run did not simulate (" << r.error << ")\n";
    } else {
      const std::string checkpoint_path = TraceCheckpointPath(*trace);
      const bool has_checkpoint = !TimelinePart(r.timeline, TracePart::kCheckpoint).empty();
      for (int part = 0; part < (has_checkpoint ? 2 : 1); ++part) {
        const std::string& path = part == 0 ? *trace : checkpoint_path;
        std::ofstream f(path);
        f << ToChromeTrace(r, part == 0 ? TracePart::kStep : TracePart::kCheckpoint);
        if (!f) {
          err << path << ": cannot write trace file\n";
          return kExitBadInput;
        }
      }
      if (has_checkpoint) err << "trainsim run: the first checkpoint's timeline is in " << checkpoint_path << "\n";
    }
  }
  out << (a.Has("--json") ? ToJson(r) : ToSummary(r));
  if (!a.Has("--json")) out << FinetuneLines(*s, r);  // what it trains, whether or not it can run
  if (!a.Has("--json") && r.error.empty()) {
    // Where the step leans on the framework's host cost, an estimate until measured, say so.
    if (const std::string host = HostIssueShareLine(*s); !host.empty()) out << "  waits for the host   " << host << "\n";
    // A recompute that costs time and frees nothing is a setting to change.
    if (s->training.recompute == Recompute::kSelective && SelectiveRecomputeFreedShare(*s) < kRecomputeFreesNothing) {
      out << "  recompute            selective recompute frees no activation memory here (the fused attention kernel keeps no\n"
             "                       s x s scores) yet re-runs the attention: training.recompute none, or more recompute_modules\n";
    }
    // How far to trust the figures above: the published runs most like this one, predicted now.
    out << "  track record         " << TrackRecordLine(*s) << "\n";
  }
  if (a.Has("--operators")) out << "\n" << OperatorTable(*s, BuildWorkload(*s));
  if (!r.error.empty()) {
    if (!a.Has("--json")) err << "trainsim run: " << r.error << "\n";
    return kExitSimulationFailed;
  }
  return kExitOk;
}

}  // namespace trainsim::cli
