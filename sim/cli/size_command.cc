// trainsim size SCENARIO.yaml --tokens T --days D [--nodes A..B|N,M] [--nics 4,8] [--node P1,P2]
//                [--batch B|LO..HI] [--objective cost|time] [--cost rental|ownership] [--recheck des|analytical]
//                [--set KEY=VALUE]... [--json]
// Front end of sim/size/cluster_sizer.h: flags and printing.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "sim/cli/args.h"
#include "sim/cli/layout_stand_in.h"
#include "sim/core/split.h"
#include "sim/cli/commands.h"
#include "sim/cli/progress.h"
#include "sim/core/error.h"
#include "sim/io/profile_loader.h"
#include "sim/io/model_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/size/cluster_sizer.h"
#include "sim/validate/track_record.h"

namespace trainsim::cli {

namespace {

const char* kSizeHelp =
    "usage: trainsim size SCENARIO.yaml [--tokens T] --days D [options]\n"
    "The cheapest (or fastest) cluster that trains T tokens of the scenario's model within D days:\n"
    "over node counts, NICs per node and node profiles, with the parallelism and global batch\n"
    "re-planned for each cluster; ranked analytically, the top few re-checked with the DES. Prints the\n"
    "answer, its runners-up and why, what each hardware option buys, by how much the others miss, and the\n"
    "track record of the answer's kind of prediction (as `trainsim run` prints it).\n"
    "  --tokens T             tokens to train (e.g. 2e12; default: the scenario's training.tokens)\n"
    "  --days D               deadline in days\n"
    "  --nodes A..B | N,M,... node counts: a range tries A, B and every 2^k and 3x2^k between, and on a\n"
    "                         rack-scale node (GB200 NVL72: 18 trays a rack) the whole racks between\n"
    "                         (default: the scenario's)\n"
    "  --nics K,L             NICs per node (default: the scenario's; a node profile that cannot take\n"
    "                         that many, e.g. a GB200 tray beside an 8-NIC XE9680, takes its own);\n"
    "                         each node profile is sized with those of K,L it can take\n"
    "  --node P1,P2           node profiles (default: the scenario's)\n"
    "  --storage-nodes S,T    storage node counts (scenario with cluster.storage; default: the scenario's)\n"
    "  --batch B | LO..HI     global batch in sequences: fixed, or chosen per cluster from the range\n"
    "                         (default: the scenario's, fixed)\n"
    "  --objective O          cost (default) or time\n"
    "  --cost M               rental or ownership (= --set cost.model=M; default: the scenario's)\n"
    "  --recheck F            des (default) or analytical\n"
    "  --top K                re-check the best K with the DES (default 3)\n"
    "  --set KEY=VALUE        override a scenario key by dotted path (repeatable)\n"
    "  --json                 print {\"candidates\": [...], \"rejected\": [...], \"options\": [...]}\n"
    "  --progress             progress and time left on stderr (default: only when stderr is a terminal)\n"
    "  -h, --help             this help\n"
    "exit status: 0 a cluster meets the deadline, 1 none does, 2 bad input\n";

// A positive number, whole when `whole`.
bool ParseNumber(const std::string& text, bool whole, double* out) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size() || !(v > 0) || !std::isfinite(v)) return false;
    if (whole && (v != std::floor(v) || v > 1e9)) return false;
    *out = v;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// "A..B" -> {lo, hi}; false when not a range of positive whole numbers with lo <= hi.
bool ParseRange(const std::string& s, int* lo, int* hi, bool* is_range) {
  const size_t dots = s.find("..");
  *is_range = dots != std::string::npos;
  if (!*is_range) return false;
  double a = 0, b = 0;
  if (!ParseNumber(s.substr(0, dots), true, &a) || !ParseNumber(s.substr(dots + 2), true, &b) || a > b) return false;
  *lo = int(a);
  *hi = int(b);
  return true;
}

// A, B and every 2^k and 3 x 2^k between them; with `rack` > 1 (the nodes
// of a rack-scale NVLink domain, bought whole) the same multiples of a rack.
std::vector<int> NodeCountsInRange(int lo, int hi, int rack = 1) {
  std::vector<int> out{lo};
  for (long p = 1; p <= hi; p *= 2) {
    for (long v : {p, 3 * p, rack > 1 ? p * rack : 0L, rack > 1 ? 3 * p * rack : 0L}) {
      if (v > lo && v < hi) out.push_back(int(v));
    }
  }
  if (hi != lo) out.push_back(hi);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

int SizeCommand(const Args& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a;
  const std::string perr = Parse(args,
                                 {{"--tokens", true}, {"--days", true}, {"--nodes", true}, {"--nics", true}, {"--node", true},
                                  {"--batch", true}, {"--storage-nodes", true}, {"--objective", true}, {"--cost", true}, {"--recheck", true},
                                  {"--top", true}, {"--set", true}, {"--json"}, {"--progress"}, {"--help", false, "-h"}},
                                 a);
  if (a.Has("--help")) {
    out << kSizeHelp;
    return kExitOk;
  }
  auto bad = [&](const std::string& msg) {
    err << "trainsim size: " << msg << "\n";
    return kExitBadInput;
  };
  if (!perr.empty()) return bad(perr);
  if (a.positional.size() != 1) return bad("expected one scenario file");
  SizeOptions opt;
  if (!a.Value("--days")) return bad("--days: required (the deadline in days)");
  if (auto v = a.Value("--tokens")) {
    if (!ParseNumber(*v, false, &opt.tokens)) return bad("--tokens: '" + *v + "' is not a positive number");
  }
  if (!ParseNumber(*a.Value("--days"), false, &opt.days)) return bad("--days: '" + *a.Value("--days") + "' is not a positive number");
  int lo = 0, hi = 0;
  bool is_range = false;
  if (auto v = a.Value("--nodes")) {
    if (ParseRange(*v, &lo, &hi, &is_range)) {
      opt.node_counts = NodeCountsInRange(lo, hi);
    } else if (is_range) {
      return bad("--nodes: '" + *v + "' is not a range A..B of positive whole node counts with A <= B");
    } else {
      for (const auto& p : Split(*v, ',')) {
        double n = 0;
        if (!ParseNumber(p, true, &n)) return bad("--nodes: '" + p + "' is not a positive whole number");
        opt.node_counts.push_back(int(n));
      }
    }
    if (opt.node_counts.size() > 64) return bad("--nodes: " + std::to_string(opt.node_counts.size()) + " node counts; at most 64");
  }
  if (auto v = a.Value("--nics")) {
    for (const auto& p : Split(*v, ',')) {
      double n = 0;
      if (!ParseNumber(p, true, &n) || n > 64) return bad("--nics: '" + p + "' is not a NIC count (1-64)");
      opt.nics.push_back(int(n));
    }
  }
  if (auto v = a.Value("--storage-nodes")) {
    for (const auto& p : Split(*v, ',')) {
      double n = 0;
      if (!ParseNumber(p, true, &n) || n > 4096) return bad("--storage-nodes: '" + p + "' is not a storage node count (1-4096)");
      opt.storage_nodes.push_back(int(n));
    }
  }
  if (auto v = a.Value("--batch")) {
    int lo = 0, hi = 0;
    bool is_range = false;
    double b = 0;
    if (ParseRange(*v, &lo, &hi, &is_range)) {
      opt.batch_min = lo;
      opt.batch_max = hi;
    } else if (is_range) {
      return bad("--batch: '" + *v + "' is not a range LO..HI of positive whole sequence counts with LO <= HI");
    } else if (ParseNumber(*v, true, &b)) {
      opt.batch_min = opt.batch_max = int(b);
    } else {
      return bad("--batch: '" + *v + "' is not a global batch (sequences) or a range LO..HI");
    }
  }
  if (auto v = a.Value("--objective")) {
    if (*v == "time") opt.objective = SizeObjective::kTime;
    else if (*v != "cost") return bad("--objective: '" + *v + "' is not one of: cost, time");
  }
  if (auto v = a.Value("--recheck")) {
    if (*v == "analytical") opt.recheck_fidelity = Fidelity::kAnalytical;
    else if (*v != "des") return bad("--recheck: '" + *v + "' is not one of: des, analytical");
  }
  if (auto v = a.Value("--top")) {
    double k = 0;
    if (!ParseNumber(*v, true, &k) || k > 100) return bad("--top: '" + *v + "' is not a count (1-100)");
    opt.recheck_top = int(k);
  }
  std::vector<std::string> sets = a.All("--set");
  if (auto v = a.Value("--cost")) {
    if (*v != "rental" && *v != "ownership") return bad("--cost: '" + *v + "' is not one of: rental, ownership");
    for (const std::string& set : sets) {
      if (set.rfind("cost.model=", 0) == 0 && set != "cost.model=" + *v) return bad("--cost " + *v + " and --set " + set + " disagree; give one");
    }
    sets.push_back("cost.model=" + *v);
  }
  // The scenario's own parallelism need not fit its own nodes: size plans
  // every cluster's anyway (sim/cli/layout_stand_in.h).
  LayoutSearchInput in = LoadForLayoutSearch(a.positional[0], sets);
  if (!in.scenario && in.scenario.error().kind == ErrorKind::kUnsupported && a.Value("--node")) {
    // Its own node's GPU lacks the precision, but --node sizes other nodes:
    // the scenario is read on the first of them (each searched node whose
    // GPU lacks it is rejected with the reason).
    std::vector<std::string> on_first = sets;
    on_first.push_back("cluster.node=" + Split(*a.Value("--node"), ',').front());
    if (LayoutSearchInput again = LoadForLayoutSearch(a.positional[0], on_first); again.scenario) in = std::move(again);
  }
  if (!in.no_layout_reason.empty()) {
    err << a.positional[0] << ": cannot run: " << in.no_layout_reason << "\n";
    return kExitSimulationFailed;
  }
  Expected<Scenario>& s = in.scenario;
  if (!s) {
    err << s.error().ToString() << "\n";
    if (a.Has("--json")) out << SearchRefusalJson(s.error().ToString(), s.error().kind);
    return ExitStatus(s.error().kind);  // 2 for bad input; 1 for a run the hardware cannot do
  }
  for (const std::string& w : ScenarioWarnings(*s)) err << "trainsim size: " << w << "\n";
  if (!opt.storage_nodes.empty() && !s->storage) return bad("--storage-nodes: the scenario has no cluster.storage");
  if (opt.tokens <= 0) {
    if (s->training.tokens <= 0) return bad("--tokens: required (tokens to train, e.g. 2e12) unless the scenario sets training.tokens");
    opt.tokens = s->training.tokens;
  }
  {
    // More steps than a run can count is bad input, not a run that fails.
    const int batch = opt.batch_max > 0 ? opt.batch_max : s->training.global_batch;
    if (StepsForTokens(opt.tokens, batch, s->training.seq_len) > std::numeric_limits<int>::max()) {
      char t[32];
      std::snprintf(t, sizeof t, "%g", opt.tokens);
      return bad("--tokens: " + std::string(t) + " tokens at " + std::to_string(batch) + " x " +
                 std::to_string(s->training.seq_len) + " per step are more steps than can be counted");
    }
  }
  if (s->cost.model == CostBasis::kOwnership && (s->fabric.switch_capital_usd <= 0 || s->fabric.link_capital_usd <= 0)) {
    return bad("--cost: fabric '" + s->fabric.name + "' has no ownership.switch_usd and link_usd; cost.model ownership needs them");
  }
  if (auto v = a.Value("--node")) {
    for (const auto& name : Split(*v, ',')) {
      try {
        NodeProfile p = LoadNodeProfile(YAML::Node(name), "--node", "--node");
        if (s->cost.model == CostBasis::kOwnership && p.capital_usd <= 0) {
          return bad("--node: node '" + p.name + "' has no ownership.capital_usd; cost.model ownership needs it");
        }
        opt.node_profiles.push_back(std::move(p));
      } catch (const InputException& e) {
        err << "trainsim size: --node: " << e.error().message << "\n";
        return kExitBadInput;
      }
    }
  }
  // A NIC count that no node searched can take is a mistyped question, not
  // a cluster that misses the deadline.
  const std::vector<NodeProfile> searched = opt.node_profiles.empty() ? std::vector<NodeProfile>{s->node} : opt.node_profiles;
  // A range over rack-scale nodes tries whole racks too: the capital buys them whole.
  if (ParseRange(a.Value("--nodes").value_or(""), &lo, &hi, &is_range)) {
    for (const NodeProfile& p : searched) {
      if (p.nvlink_domain_nodes() <= 1) continue;
      const std::vector<int> racks = NodeCountsInRange(lo, hi, p.nvlink_domain_nodes());
      opt.whole_rack_counts.insert(opt.whole_rack_counts.end(), racks.begin(), racks.end());
    }
    std::vector<int> all = opt.node_counts;
    all.insert(all.end(), opt.whole_rack_counts.begin(), opt.whole_rack_counts.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    if (all.size() > 64) return bad("--nodes: " + std::to_string(all.size()) + " node counts; at most 64");
  }
  for (int k : opt.nics) {
    std::string takes;
    bool any = false;
    for (const NodeProfile& p : searched) {
      any |= p.TakesNics(k);
      takes += (takes.empty() ? "" : "; ") + p.TakesNicsText();
    }
    if (!any) return bad("--nics: no node searched takes " + std::to_string(k) + " NICs (" + takes + ")");
  }
  // The clusters planned of those tried, then the DES re-checks of the best,
  // each phase with its own ETA.
  ProgressLine progress(err, "size", a.Has("--progress"));
  if (progress.enabled()) {
    opt.progress = [&progress](int done, int total, const std::string& phase, const std::string& what) {
      progress.Phase(phase);
      // While one is under way: its number and what it is; at the end, the count.
      const int n = what.empty() ? done : done + 1;
      std::string text = (phase == "sizing" ? "cluster " : "re-check ") + std::to_string(n) + " of " + std::to_string(total);
      if (!what.empty()) text += ": " + what;
      progress.Update(total > 0 ? double(done) / total : 1, text);
    };
  }
  SizeReport r = SizeCluster(*s, opt);
  progress.Finish();
  // Each answer's result carries its scenario's warnings, as run's does (a node's framework may lack the precision).
  for (SizeCandidate& c : r.candidates) c.result.warnings = WarningTexts(ScenarioWarnings(CandidateScenario(*s, opt, c)));
  out << (a.Has("--json") ? SizeToJson(r) : SizeToText(r));
  if (!a.Has("--json") && !r.candidates.empty()) {
    // How far to trust the answer: the record of its GPU, kind and, for a
    // mixture of experts, the experts per GPU its EP gives (as `plan` prints).
    out << "track record of the answer: " << TrackRecordLine(CandidateScenario(*s, opt, r.candidates.front())) << "\n";
  }
  return r.candidates.empty() ? kExitSimulationFailed : kExitOk;
}

}  // namespace trainsim::cli
