// trainsim compare A.yaml [B.yaml] [--set KEY=VALUE]... [--set-a KEY=VALUE]... [--set-b KEY=VALUE]... [--json] [--fidelity des|analytical]
#include <algorithm>
#include <iostream>

#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/report/comparison.h"
#include "sim/core/scenario.h"
#include "sim/run/host_issue_share.h"
#include "sim/run/simulate.h"
#include "sim/io/model_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/validate/track_record.h"

namespace trainsim::cli {

int CompareCommand(const Args& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a;
  const std::string perr = Parse(args,
                                 {{"--set", true}, {"--set-a", true}, {"--set-b", true}, {"--json"}, {"--fidelity", true},
                                  {"--help", false, "-h"}},
                                 a);
  if (a.Has("--help")) {
    out << "usage: trainsim compare A.yaml [B.yaml] [options]\n"
           "Simulate two scenarios and print their figures side by side with B's delta against A:\n"
           "what one hardware option (NICs per node, storage nodes, fabric, node count) changes in time and cost.\n"
           "With one file, B is A with the --set-b overrides (a what-if on one scenario).\n"
           "The table ends with each side's share of the step waiting for the host where it is 2% or more, and the\n"
           "track record of each side's kind of prediction (as `trainsim run` prints them).\n"
           "  --set KEY=VALUE     override applied to both scenarios (repeatable)\n"
           "  --set-a KEY=VALUE   override applied to A only (repeatable)\n"
           "  --set-b KEY=VALUE   override applied to B only (repeatable), e.g. --set-b cluster.nics_per_node=4\n"
           "  --json              machine-readable output\n"
           "  --fidelity F        des (default) or analytical\n";
    return kExitOk;
  }
  const size_t files = a.positional.size();
  if (perr.empty() && files == 1 && a.All("--set-b").empty()) {
    err << "trainsim compare: with one scenario file, give B's changes with --set-b KEY=VALUE\n";
    return kExitBadInput;
  }
  if (!perr.empty() || files < 1 || files > 2) {
    err << "trainsim compare: " << (perr.empty() ? "expected one or two scenario files" : perr) << "\n";
    return kExitBadInput;
  }
  SimulateOptions opt;
  opt.fidelity = Fidelity::kDes;
  if (const std::string ferr = FidelityFlag(a, &opt.fidelity); !ferr.empty()) {
    err << "trainsim compare: " << ferr << "\n";
    return kExitBadInput;
  }
  SimulationResult r[2];
  std::string records[2];  // each side's track record (sim/validate/track_record.h), for the table
  std::string hosts[2];    // each side's host-bound share where it matters (sim/run/host_issue_share.h)
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> overrides = a.All("--set");
    const auto& own = a.All(i == 0 ? "--set-a" : "--set-b");
    overrides.insert(overrides.end(), own.begin(), own.end());
    Expected<Scenario> s = LoadScenario(a.positional[files == 2 ? i : 0], overrides);
    if (!s) {
      // An override's error names the flag it came from: a side's own one
      // (--set-a, --set-b) wins over the shared --set, as it does when applied.
      InputError e = s.error();
      const std::string flag = i == 0 ? "--set-a" : "--set-b";
      const bool own_key = std::any_of(own.begin(), own.end(), [&](const std::string& o) { return o.rfind(e.key + "=", 0) == 0; });
      if (e.file == "--set" && !e.key.empty() && own_key) e.file = flag;
      err << e.ToString() << "\n";
      return ExitStatus(e.kind);  // 2 for bad input; 1 for a run the hardware cannot do
    }
    if (const std::string w = AcceptedKeysWarning(s->model); !w.empty()) err << "trainsim compare: " << w << "\n";
    r[i] = Simulate(*s, opt);
    if (r[i].error.empty() && !a.Has("--json")) {
      records[i] = TrackRecordLine(*s);
      hosts[i] = HostIssueShareLine(*s);
    }
    // Name the what-if by what it changes, so A and B read apart.
    std::string changes;
    for (const auto& o : own) changes += (changes.empty() ? "" : ", ") + o;
    if (!changes.empty()) r[i].name += " [" + changes + "]";
  }
  out << (a.Has("--json") ? ComparisonJson(r[0], r[1]) : ComparisonTable(r[0], r[1]));
  for (int i = 0; i < 2; ++i) if (!hosts[i].empty()) out << r[i].name << " waits for the host: " << hosts[i] << "\n";
  // How far to trust both: one line when A and B share a GPU and kind of workload.
  if (records[0] == records[1] && !records[0].empty()) out << "track record: " << records[0] << "\n";
  else for (int i = 0; i < 2; ++i) if (!records[i].empty()) out << "track record of " << r[i].name << ": " << records[i] << "\n";
  return (r[0].error.empty() && r[1].error.empty()) ? kExitOk : kExitSimulationFailed;
}

}  // namespace trainsim::cli
