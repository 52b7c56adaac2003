// trainsim run SCENARIO.yaml [--set KEY=VALUE]... [--json] [--trace FILE.json] [--fidelity des|analytical]
#include <fstream>
#include <iostream>

#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/core/scenario.h"
#include "sim/run/simulate.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/result_writer.h"

namespace trainsim::cli {

namespace {
const char* kRunHelp =
    "usage: trainsim run SCENARIO.yaml [options]\n"
    "Simulate a training run and print its step time, breakdown, memory and run figures.\n"
    "  --set KEY=VALUE        override a scenario key by dotted path (repeatable),\n"
    "                         e.g. --set parallelism.tensor=8 --set cluster.nics_per_node=4\n"
    "  --json                 print the result object (design.md section 3) instead of the summary\n"
    "  --trace FILE.json      write the simulated timeline as Chrome trace JSON (open in Perfetto)\n"
    "  --fidelity F           des (default) or analytical\n"
    "  -h, --help             this help\n"
    "exit status: 0 ok, 1 the run cannot happen (e.g. does not fit in memory), 2 bad input\n";
}  // namespace

int RunCommand(const Args& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a;
  const std::string perr = Parse(args, {{"--set", true}, {"--json"}, {"--trace", true}, {"--fidelity", true}, {"--help", false, "-h"}}, a);
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
  Expected<Scenario> s = LoadScenario(a.positional[0], a.All("--set"));
  if (!s) {
    err << s.error().ToString() << "\n";
    return kExitBadInput;
  }
  const SimulationResult r = Simulate(*s, opt);
  if (auto trace = a.Value("--trace")) {
    std::ofstream f(*trace);
    f << ToChromeTrace(r);
    if (!f) {
      err << *trace << ": cannot write trace file\n";
      return kExitBadInput;
    }
  }
  out << (a.Has("--json") ? ToJson(r) : ToSummary(r));
  if (!r.error.empty()) {
    if (!a.Has("--json")) err << "trainsim run: " << r.error << "\n";
    return kExitSimulationFailed;
  }
  return kExitOk;
}

}  // namespace trainsim::cli
