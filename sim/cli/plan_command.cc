// trainsim plan SCENARIO.yaml [--top K] [--objective time|cost] [--moe-dispatchers L] [--moe-a2a-overlap L] [--json]
// [--set KEY=VALUE]...
// Front end of sim/planner.h: flags and printing.

#include <algorithm>
#include <iostream>
#include <optional>
#include <utility>

#include "sim/cli/args.h"
#include "sim/core/split.h"
#include "sim/cli/commands.h"
#include "sim/cli/layout_stand_in.h"
#include "sim/cli/progress.h"
#include "sim/plan/planner.h"
#include "sim/core/scenario.h"
#include "sim/io/model_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/validate/track_record.h"

namespace trainsim::cli {

namespace {

const char* kPlanHelp =
    "usage: trainsim plan SCENARIO.yaml [options]\n"
    "Search parallelism settings (TP, PP, virtual stages, CP, EP and ETP for a mixture of experts,\n"
    "micro batch, recompute, sequence parallel, data sharding) for the scenario's model, cluster and\n"
    "global batch. Prunes by\n"
    "divisibility and memory, ranks with the analytical model, re-checks the top K with the DES,\n"
    "and explains why the best beats the runners-up and why whole families are infeasible; ends with\n"
    "the track record of such predictions (as `trainsim run` prints it).\n"
    "  --top K                re-check and show the best K (default 5, at most 100)\n"
    "  --objective O          time (default: step time) or cost (run cost)\n"
    "  --recheck F            des (default) or analytical (no re-check)\n"
    "  --moe-dispatchers L    with expert parallelism, try these MoE dispatchers: a comma list of\n"
    "                         alltoall, deepep, hybridep, allgather (default: the scenario's; the framework\n"
    "                         must have them)\n"
    "  --moe-a2a-overlap L    with expert parallelism, try the all-to-all overlap off, on or off,on\n"
    "                         (default: the scenario's)\n"
    "  --set KEY=VALUE        override a scenario key by dotted path (repeatable)\n"
    "  --json                 print {\"candidates\": [...], \"rejected\": [...], ...} (design.md section 3);\n"
    "                         \"rejected\" is one example per TP x PP x CP family with a rejection (its\n"
    "                         least demanding rejected member, with family_feasible and family_rejected\n"
    "                         counts; family_feasible 0: the family cannot work), the families that cannot\n"
    "                         work first; rejected_divisibility, rejected_memory and rejected_other count\n"
    "                         every rejected configuration\n"
    "  --progress             progress and time left on stderr (default: only when stderr is a terminal)\n"
    "  -h, --help             this help\n"
    "exit status: 0 ok, 1 no configuration fits (or no layout of the GPUs divides the global batch),\n"
    "2 bad input\n";
}  // namespace

int PlanCommand(const Args& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a;
  const std::string perr = Parse(args,
                                 {{"--top", true}, {"--objective", true}, {"--recheck", true}, {"--moe-dispatchers", true},
                                  {"--moe-a2a-overlap", true}, {"--set", true}, {"--json"}, {"--progress"}, {"--help", false, "-h"}},
                                 a);
  if (a.Has("--help")) {
    out << kPlanHelp;
    return kExitOk;
  }
  if (!perr.empty() || a.positional.size() != 1) {
    err << "trainsim plan: " << (perr.empty() ? "expected one scenario file" : perr) << "\n";
    return kExitBadInput;
  }
  PlanOptions opt;
  if (auto k = a.Value("--top")) {
    try {
      size_t used = 0;
      opt.top_k = std::stoi(*k, &used);
      if (used != k->size() || opt.top_k < 1 || opt.top_k > 100) throw std::invalid_argument(*k);
    } catch (const std::exception&) {
      err << "trainsim plan: --top: '" << *k << "' is not a count (1-100): each is re-checked with the DES\n";
      return kExitBadInput;
    }
  }
  if (auto o = a.Value("--objective")) {
    if (*o == "cost") opt.objective = PlanObjective::kCost;
    else if (*o != "time") {
      err << "trainsim plan: --objective: '" << *o << "' is not one of: time, cost\n";
      return kExitBadInput;
    }
  }
  if (auto f = a.Value("--recheck")) {
    if (*f == "analytical") opt.recheck_fidelity = Fidelity::kAnalytical;
    else if (*f != "des") {
      err << "trainsim plan: --recheck: '" << *f << "' is not one of: des, analytical\n";
      return kExitBadInput;
    }
  }
  // --moe-dispatchers and --moe-a2a-overlap: each item one of `names`, by its index, once.
  const auto choices = [&](const char* flag, const std::vector<std::string>& names, std::vector<int>& picked) {
    const auto v = a.Value(flag);
    if (!v) return true;
    for (const std::string& item : Split(*v, ',')) {
      const auto at = std::find(names.begin(), names.end(), item);
      if (at == names.end()) {
        std::string known;
        for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
        err << "trainsim plan: " << flag << ": '" << item << "' is not one of: " << known << "\n";
        return false;
      }
      const int index = int(at - names.begin());
      if (std::find(picked.begin(), picked.end(), index) == picked.end()) picked.push_back(index);
    }
    return true;
  };
  std::vector<int> dispatchers, overlaps;
  if (!choices("--moe-dispatchers", MoeDispatcherNames(), dispatchers) || !choices("--moe-a2a-overlap", {"off", "on"}, overlaps)) {
    return kExitBadInput;
  }
  for (int d : dispatchers) opt.moe_dispatchers.push_back(MoeDispatcher(d));
  for (int o : overlaps) opt.moe_a2a_overlaps.push_back(o == 1);
  // A layout that does not fit the cluster (--set cluster.nodes=3 on an
  // 8-node scenario) is searched from a stand-in; the report says why the
  // scenario's own settings cannot run there.
  LayoutSearchInput in = LoadForLayoutSearch(a.positional[0], a.All("--set"));
  if (!in.no_layout_reason.empty()) {
    err << a.positional[0] << ": cannot run: " << in.no_layout_reason << "\n";
    // The cluster cannot run the batch in any layout: as a GPU that lacks the precision, nothing to search.
    if (a.Has("--json")) out << SearchRefusalJson(a.positional[0] + ": cannot run: " + in.no_layout_reason, ErrorKind::kUnsupported);
    return kExitSimulationFailed;
  }
  Expected<Scenario>& s = in.scenario;
  const std::optional<PlanRejection>& own_layout_rejection = in.own_layout_rejection;
  if (!s) {
    err << s.error().ToString() << "\n";
    if (a.Has("--json")) out << SearchRefusalJson(s.error().ToString(), s.error().kind);
    return ExitStatus(s.error().kind);  // 2 for bad input; 1 for a run the hardware cannot do
  }
  for (const std::string& w : ScenarioWarnings(*s)) err << "trainsim plan: " << w << "\n";
  // The search (configurations evaluated of those listed), then the DES
  // re-checks, each phase with its own ETA.
  ProgressLine progress(err, "plan", a.Has("--progress"));
  if (progress.enabled()) {
    opt.progress = [&progress](long done, long total, const std::string& phase) {
      progress.Phase(phase);
      const bool search = phase == "searching";
      progress.Update(total > 0 ? double(done) / total : 1,
                      (search ? "configuration " : "re-check ") + std::to_string(done) + " of " + std::to_string(total));
    };
  }
  PlanReport r = Plan(*s, opt);
  progress.Finish();
  // Each candidate's result carries its scenario's warnings, as run's does.
  const auto warn = [&](const PlanConfig& config, SimulationResult& result) {
    Scenario x = *s;
    ApplyConfig(x, config);
    result.warnings = WarningTexts(ScenarioWarnings(x));
  };
  for (PlanCandidate& c : r.candidates) warn(c.config, c.result);
  if (r.baseline) warn(r.baseline->config, r.baseline->result);
  if (own_layout_rejection) {
    // The stand-in was a starting point, not the user's settings.
    r.baseline.reset();
    r.baseline_rank = 0;
    r.baseline_config = own_layout_rejection->config;
    r.baseline_rejection = own_layout_rejection;
  }
  out << (a.Has("--json") ? PlanToJson(r) : PlanToText(r));
  if (!a.Has("--json") && !r.candidates.empty()) {
    // Every candidate runs the scenario's GPU and kind of workload, but a
    // mixture of experts' record narrows to its experts per GPU, which EP
    // changes: the best candidate's record, and the scenario's own where it differs.
    Scenario best = *s;
    ApplyConfig(best, r.candidates.front().config);
    const std::string best_record = TrackRecordLine(best), own_record = TrackRecordLine(*s);
    if (best_record == own_record || own_layout_rejection) {
      out << "track record: " << best_record << "\n";
    } else {
      out << "track record of #1: " << best_record << "\n";
      out << "track record of your settings: " << own_record << "\n";
    }
  }
  return r.candidates.empty() ? kExitSimulationFailed : kExitOk;
}

}  // namespace trainsim::cli
