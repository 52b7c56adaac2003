// trainsim compare A.yaml B.yaml [--set KEY=VALUE]... [--json] [--fidelity des|analytical]
#include <iostream>

#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/report/comparison.h"
#include "sim/core/scenario.h"
#include "sim/run/simulate.h"
#include "sim/io/scenario_loader.h"

namespace trainsim::cli {

int CompareCommand(const Args& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a;
  const std::string perr = Parse(args, {{"--set", true}, {"--json"}, {"--fidelity", true}, {"--help", false, "-h"}}, a);
  if (a.Has("--help")) {
    out << "usage: trainsim compare A.yaml B.yaml [--set KEY=VALUE]... [--json] [--fidelity des|analytical]\n"
           "Simulate two scenarios and print their figures side by side with B's delta against A:\n"
           "what one hardware option (NICs per node, storage nodes, fabric, node count) changes in time and cost.\n"
           "  --set KEY=VALUE   override applied to both scenarios (repeatable)\n"
           "  --json            machine-readable output\n"
           "  --fidelity F      des (default) or analytical\n";
    return kExitOk;
  }
  if (!perr.empty() || a.positional.size() != 2) {
    err << "trainsim compare: " << (perr.empty() ? "expected two scenario files" : perr) << "\n";
    return kExitBadInput;
  }
  SimulateOptions opt;
  opt.fidelity = Fidelity::kDes;
  if (const std::string ferr = FidelityFlag(a, &opt.fidelity); !ferr.empty()) {
    err << "trainsim compare: " << ferr << "\n";
    return kExitBadInput;
  }
  SimulationResult r[2];
  for (int i = 0; i < 2; ++i) {
    Expected<Scenario> s = LoadScenario(a.positional[i], a.All("--set"));
    if (!s) {
      err << s.error().ToString() << "\n";
      return kExitBadInput;
    }
    r[i] = Simulate(*s, opt);
  }
  out << (a.Has("--json") ? ComparisonJson(r[0], r[1]) : ComparisonTable(r[0], r[1]));
  return (r[0].error.empty() && r[1].error.empty()) ? kExitOk : kExitSimulationFailed;
}

}  // namespace trainsim::cli
