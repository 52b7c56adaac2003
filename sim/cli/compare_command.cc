// trainsim compare A.yaml [B.yaml [C.yaml ...]] [--set KEY=VALUE]... [--set-a KEY=VALUE]... [--set-b KEY=VALUE]... [--json] [--fidelity des|analytical]
#include <algorithm>
#include <iostream>

#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/cli/unsimulated_facts.h"
#include "sim/report/comparison.h"
#include "sim/core/scenario.h"
#include "sim/run/host_issue_share.h"
#include "sim/run/simulate.h"
#include "sim/io/model_loader.h"
#include "sim/io/result_writer.h"
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
    out << "usage: trainsim compare A.yaml [B.yaml [C.yaml ...]] [options]\n"
           "Simulate two scenarios and print their figures side by side with B's delta against A:\n"
           "what one hardware option (NICs per node, storage nodes, fabric, node count) changes in time and cost.\n"
           "With one file, B is A with the --set-b overrides (a what-if on one scenario). With three or more,\n"
           "a column each and each one's relative delta against A (e.g. one model on H100, H200, B200 and GB200).\n"
           "The table ends with each side's share of the step waiting for the host where it is 2% or more, and the\n"
           "track record of each side's kind of prediction (as `trainsim run` prints them).\n"
           "  --set KEY=VALUE     override applied to both scenarios (repeatable)\n"
           "  --set-a KEY=VALUE   override applied to A only (repeatable; one or two files)\n"
           "  --set-b KEY=VALUE   override applied to B only (repeatable; one or two files), e.g. --set-b cluster.nics_per_node=4\n"
           "  --json              machine-readable output\n"
           "  --fidelity F        des (default) or analytical\n"
           "  -h, --help          this help\n"
           "exit status: 0 every side can run, 1 a side cannot (the table still shows what it would take;\n"
           "--json says which: a_feasible and a_error, or feasible and errors with three or more), 2 bad input\n";
    return kExitOk;
  }
  const size_t files = a.positional.size();
  // A malformed override names its own flag (a lone `--set-a x` was told to give --set-b).
  for (const char* flag : {"--set", "--set-a", "--set-b"}) {
    for (const std::string& o : a.All(flag)) {
      if (perr.empty() && o.find('=') == std::string::npos) {
        err << "trainsim compare: " << flag << ": expected KEY=VALUE, got '" << o << "'\n";
        return kExitBadInput;
      }
    }
  }
  if (perr.empty() && files == 1 && a.All("--set-b").empty()) {
    err << "trainsim compare: with one scenario file, give B's changes with --set-b KEY=VALUE"
        << (a.All("--set-a").empty() ? "" : " (--set-a changes only A: alone it compares A changed with A as written)") << "\n";
    return kExitBadInput;
  }
  if (!perr.empty() || files < 1) {
    err << "trainsim compare: " << (perr.empty() ? "expected one or more scenario files" : perr) << "\n";
    return kExitBadInput;
  }
  if (files > 2 && (!a.All("--set-a").empty() || !a.All("--set-b").empty())) {
    err << "trainsim compare: --set-a and --set-b change a side of two scenarios; with " << files
        << " files write each side as its own file (--set changes them all)\n";
    return kExitBadInput;
  }
  SimulateOptions opt;
  opt.fidelity = Fidelity::kDes;
  if (const std::string ferr = FidelityFlag(a, &opt.fidelity); !ferr.empty()) {
    err << "trainsim compare: " << ferr << "\n";
    return kExitBadInput;
  }
  // One file is a what-if: the same file twice, B with --set-b.
  const size_t sides = std::max<size_t>(files, 2);
  std::vector<SimulationResult> r(sides);
  std::vector<std::string> records(sides);  // each side's track record (sim/validate/track_record.h), for the table
  std::vector<std::string> hosts(sides);    // each side's host-bound share where it matters (sim/run/host_issue_share.h)
  const std::vector<std::string> none;
  for (size_t i = 0; i < sides; ++i) {
    const std::string flag = i == 0 ? "--set-a" : "--set-b";
    const auto& own = i == 0 ? a.All("--set-a") : i == 1 ? a.All("--set-b") : none;
    // A side's own overrides come after the shared ones, so they win; each error names its flag.
    std::vector<Override> overrides = OverridesFrom("--set", a.All("--set"));
    for (Override& o : OverridesFrom(flag, own)) overrides.push_back(std::move(o));
    Expected<Scenario> s = LoadScenarioWithFlags(a.positional[files == 1 ? 0 : i], overrides);
    // Name the what-if by what it changes, so A and B read apart.
    std::string changes;
    for (const auto& o : own) changes += (changes.empty() ? "" : ", ") + o;
    const std::string what_if = changes.empty() ? "" : " [" + changes + "]";
    if (!s) {
      const InputError& e = s.error();
      if (e.kind == ErrorKind::kBadInput) {
        err << e.ToString() << "\n";
        // As run --json: a scenario that cannot be read still gets its object on stdout.
        if (a.Has("--json")) {
          std::vector<std::string> assignments = a.All("--set");
          assignments.insert(assignments.end(), own.begin(), own.end());
          out << ToJsonOfUnsimulated(ScenarioName(a.positional[files == 1 ? 0 : i], assignments) + what_if, e.kind, e.ToString(), {});
        }
        return kExitBadInput;
      }
      // A run the hardware cannot do (nvfp4 on H100) is a side that cannot
      // run: the others still get their columns, and the exit status is 1.
      std::vector<std::string> assignments = a.All("--set");
      assignments.insert(assignments.end(), own.begin(), own.end());
      r[i].name = ScenarioName(a.positional[files == 1 ? 0 : i], assignments) + what_if;
      // Its GPUs and model as run --json gives them: the column says what it is.
      const UnsimulatedFacts known = KnownFactsOf(a.positional[files == 1 ? 0 : i], overrides, e, ToString(opt.fidelity));
      r[i].gpus = known.gpus;
      r[i].model.parameters = known.parameters;
      r[i].model.active_parameters = known.active_parameters;
      r[i].fidelity = known.fidelity;
      r[i].error = e.ToString();
      r[i].error_kind = e.kind;
      r[i].simulated = false;
      continue;
    }
    const std::vector<std::string> warnings = ScenarioWarnings(*s);
    for (const std::string& w : warnings) err << "trainsim compare: " << w << "\n";
    r[i] = Simulate(*s, opt);
    r[i].warnings = WarningTexts(warnings);
    if (r[i].error.empty() && !a.Has("--json")) {
      records[i] = TrackRecordLine(*s);
      hosts[i] = HostIssueShareLine(*s);
    }
    r[i].name += what_if;
  }
  // A rental price beside an owned cluster's write-off reads as a saving that
  // is an accounting basis: said where the sides were priced apart.
  std::string bases, first;
  bool mixed = false;
  for (size_t i = 0; i < sides; ++i) {
    if (!r[i].simulated) continue;
    if (first.empty()) first = r[i].run.cost_model;
    mixed = mixed || r[i].run.cost_model != first;
    bases += (bases.empty() ? "" : ", ") + r[i].name + ": " + r[i].run.cost_model;
  }
  std::vector<std::string> comparison_warnings;
  if (mixed) {
    comparison_warnings.push_back("the sides are priced on different cost models (" + bases +
                                  "): their cost rows set a node-hour rental price against a purchase's write-off and energy; "
                                  "cost.model the same on every side compares like with like");
  }
  for (const std::string& w : comparison_warnings) err << "trainsim compare: warning: " << w << "\n";
  out << (a.Has("--json") ? ComparisonJson(r, comparison_warnings) : ComparisonTable(r));
  for (size_t i = 0; i < sides; ++i) if (!hosts[i].empty()) out << r[i].name << " waits for the host: " << hosts[i] << "\n";
  // How far to trust them: one line when every side has the same record,
  // else a line per record naming the sides that share it.
  const bool one_record = !records[0].empty() && std::all_of(records.begin(), records.end(), [&](const std::string& x) { return x == records[0]; });
  if (one_record) {
    out << "track record: " << records[0] << "\n";
  } else {
    for (size_t i = 0; i < sides; ++i) {
      if (records[i].empty() || std::find(records.begin(), records.begin() + i, records[i]) != records.begin() + i) continue;
      std::string names;
      for (size_t j = i; j < sides; ++j) if (records[j] == records[i]) names += (names.empty() ? "" : ", ") + r[j].name;
      out << "track record of " << names << ": " << records[i] << "\n";
    }
  }
  const bool all_ran = std::all_of(r.begin(), r.end(), [](const SimulationResult& x) { return x.error.empty(); });
  return all_ran ? kExitOk : kExitSimulationFailed;
}

}  // namespace trainsim::cli
