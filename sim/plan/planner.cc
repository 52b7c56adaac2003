#include "sim/plan/planner.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <functional>
#include <tuple>

#include "models/memory_model.h"
#include "models/workload.h"
#include "sim/core/text_format.h"
#include "sim/cost/step_costs.h"
#include "sim/io/json_writer.h"
#include "sim/io/result_writer.h"
#include "sim/plan/plan_space.h"

namespace trainsim {

namespace {

std::string Str(long v) { return std::to_string(v); }

double Objective(const SimulationResult& r, PlanObjective o) {
  return o == PlanObjective::kCost ? r.run.cost_usd : r.step_time_s;
}

}  // namespace

std::string Describe(const PlanConfig& c) {
  Scenario s;
  ApplyConfig(s, c);
  return s.parallelism_text();
}

PlanConfig ConfigOf(const Scenario& s) {
  PlanConfig c;
  for (const PlanDimension& d : PlanDimensions()) d.set(c, d.read(s));
  return c;
}

void ApplyConfig(Scenario& s, const PlanConfig& c) {
  Parallelism& p = s.parallelism;
  // The parser's default: TP communication overlap as the framework does it, where it can overlap.
  const bool wanted = p.tp_comm_overlappable() ? p.tp_comm_overlap : s.framework.tp_comm_overlap;
  for (const PlanDimension& d : PlanDimensions()) d.write(s, d.get(c));
  p.tp_comm_overlap = wanted && p.tp_comm_overlappable();
}

namespace {

bool PlannedTpOverlap(const Scenario& base) {
  // A base without TP or SP had no overlap to set: the framework's then.
  return base.parallelism.tp_comm_overlappable() ? base.parallelism.tp_comm_overlap : base.framework.tp_comm_overlap;
}

}  // namespace

namespace {

// Whether two configurations have the same pipeline shape (ranks and chunks),
// for which a scenario's own split of the layers was written.
bool SamePipelineShape(const PlanConfig& a, const PlanConfig& b) {
  return a.pipeline == b.pipeline && a.virtual_stages == b.virtual_stages;
}

// Whether the scenario splits its layers its own way.
bool HasOwnSplit(const Parallelism& own) {
  return own.first_stage_layers > 0 || own.last_stage_layers > 0 || !own.pipeline_layout.empty();
}

// The scenario's own split of the layers (first_stage_layers,
// last_stage_layers, pipeline_layout) was chosen for its pipeline and
// virtual stages: a candidate of another shape splits as its recipe does, or
// evenly, rather than being refused for a split that does not divide it
// (405B's 7/7 first and last stages fit PP16 only).
void KeepOwnSplitForItsShape(Scenario& s, const Scenario& base, const PlanConfig& c) {
  const Parallelism& own = base.parallelism;
  const bool same_shape = c.pipeline == own.pipeline && c.virtual_stages == own.virtual_stages;  // SamePipelineShape, on the hot path
  s.parallelism.first_stage_layers = same_shape ? own.first_stage_layers : 0;
  s.parallelism.last_stage_layers = same_shape ? own.last_stage_layers : 0;
  s.parallelism.pipeline_layout = same_shape ? own.pipeline_layout : std::string();
}

// Likewise the scenario's HSDP group (sharding_group) was chosen for its data
// x context ranks: a candidate it does not divide shards over all of them.
void KeepOwnShardingGroupWhereItDivides(Scenario& s, const Scenario& base) {
  const int g = base.parallelism.sharding_group;
  const bool divides = g > 0 && s.parallelism.data_sharding != DataSharding::kNone && s.parallelism.gradient_replicas() % g == 0;
  s.parallelism.sharding_group = divides ? g : 0;
}

}  // namespace

void ApplyPlannedConfig(Scenario& s, const Scenario& base, const PlanConfig& c) {
  ApplyConfig(s, c);
  s.parallelism.tp_comm_overlap = PlannedTpOverlap(base) && s.parallelism.tp_comm_overlappable();
  KeepOwnSplitForItsShape(s, base, c);
  KeepOwnShardingGroupWhereItDivides(s, base);
}

namespace {

// Divisibility, then memory, then the analytical timing. Returns the result,
// or fills `rej` and returns nullopt. `full`: the whole result; else what the
// search ranks by (SimulateRunFigures: the same objective, step time and error).
// `explain`: give the reason of a rejection (else only its category: the
// search keeps the reason of one member per family).
std::optional<SimulationResult> Evaluate(Scenario& s, const Scenario& base, const PlanConfig& c, PlanRejection& rej, bool full = true,
                                         bool explain = true) {
  ApplyPlannedConfig(s, base, c);
  rej.config = c;
  if (auto e = CheckParallelism(s)) {
    // A settings rule; one the software cannot run (DeepEP's reach) is counted apart.
    rej.category = e->kind == ErrorKind::kUnsupported ? "unsupported" : "divisibility";
    if (explain) rej.reason = e->key + ": " + e->message;
    return std::nullopt;
  }
  // Memory from what the ranks hold (BuildWorkload's kHoldings): about half
  // the configurations do not fit, and their passes are never built.
  {
    const MemoryReport mem = EstimateMemory(s, BuildWorkload(s, WorkloadParts::kHoldings), explain);
    if (!mem.fits) {
      rej.category = "memory";
      if (explain) rej.reason = mem.Problem();
      return std::nullopt;
    }
  }
  Workload w = BuildWorkload(s);
  SimulationResult r = full ? Simulate(s, SimulateOptions::At(Fidelity::kAnalytical, false), ComputeStepCosts(s, std::move(w)))
                            : SimulateRunFigures(s, ComputeStepCosts(s, std::move(w)));
  if (!r.error.empty()) {
    rej.category = !full || r.memory.fits ? "simulation" : "memory";
    rej.reason = r.error;
    return std::nullopt;
  }
  return r;
}

// A family: the configurations sharing tensor, pipeline and context.
using FamilyKey = std::tuple<int, int, int>;
FamilyKey FamilyOf(const PlanConfig& c) { return {c.tensor, c.pipeline, c.context}; }
struct Family {
  long feasible = 0, rejected = 0;
  std::optional<PlanRejection> representative;
  int rep_score = -1;  // how close the representative is to the least demanding member
};

// Least demanding in memory: the experts over the most ranks (a mixture of
// experts' weights, gradients and state shrink with EP most of all), then full
// recompute, micro batch 1, no interleaving, fully sharded (FSDP).
int LeastDemandingScore(const PlanConfig& c) {
  return std::bit_width(unsigned(std::max(1, c.expert))) * 16 + (c.recompute == Recompute::kFull) * 8 + (c.micro_batch == 1) * 4 +
         (c.virtual_stages == 1) * 2 + (c.data_sharding == DataSharding::kFull ? 1 : 0);
}

}  // namespace

PlanReport Plan(const Scenario& base, const PlanOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  PlanReport rep;
  rep.objective = options.objective;
  // The scenario's own settings as run would take them: micro_batch: auto's choice, not its placeholder 1.
  // (A layout that does not fit the cluster keeps the placeholder: it is rejected as it stands.)
  const bool choose = base.training.micro_batch_auto && !CheckParallelism(base);
  rep.baseline_config = ConfigOf(choose ? ChooseMicroBatch(base).scenario : base);
  rep.mixture_of_experts = base.model.moe.enabled();
  rep.own_split = HasOwnSplit(base.parallelism);
  Scenario s = base;
  const int gpus = base.gpus();
  // Feasible configurations keep only what ranks them (full results are large
  // to copy around); the top K are evaluated again for their full results.
  struct Scored {
    PlanConfig config;
    double objective;
    double step_time_s;
  };
  std::vector<Scored> feasible;
  std::map<FamilyKey, Family> families;
  auto apply = [&](Scenario& x, const PlanConfig& c) { ApplyPlannedConfig(x, base, c); };

  auto consider = [&](const PlanConfig& c) {
    ++rep.searched;
    PlanRejection rej;
    Family& fam = families[FamilyOf(c)];
    // A rejection's reason is kept only when it becomes its family's representative.
    const int score = LeastDemandingScore(c);
    if (auto r = Evaluate(s, base, c, rej, /*full=*/false, /*explain=*/score > fam.rep_score)) {
      ++fam.feasible;
      feasible.push_back({c, Objective(*r, options.objective), r->step_time_s});
      return;
    }
    if (rej.category == "divisibility") {
      ++rep.rejected_divisibility;
    } else if (rej.category == "memory") {
      ++rep.rejected_memory;
    } else {
      ++rep.rejected_other;
      if (!rep.other_example) {
        PlanRejection why;
        Evaluate(s, base, c, why, /*full=*/false, /*explain=*/true);
        rep.other_example = std::move(why);
      }
    }
    ++fam.rejected;
    if (score > fam.rep_score) {
      fam.rep_score = score;
      fam.representative = std::move(rej);
    }
  };

  // Every combination of the dimensions' values, each dimension's values
  // chosen given the ones before it (sim/plan/plan_space.h).
  const std::vector<PlanDimension>& dims = PlanDimensions();
  const SearchContext context{&base, &options, gpus};
  // The configurations are listed first, so progress knows the total.
  PlanConfig c;
  std::vector<PlanConfig> configs;
  std::function<void(size_t)> enumerate = [&](size_t i) {
    if (i == dims.size()) {
      configs.push_back(c);
      return;
    }
    const PlanDimension& d = dims[i];
    if (!d.values) {  // derived: data parallelism takes the GPUs left
      d.set(c, int(gpus / (long(c.tensor) * c.pipeline * c.context)));
      enumerate(i + 1);
      return;
    }
    for (int v : d.values(c, context)) {
      d.set(c, v);
      enumerate(i + 1);
    }
  };
  enumerate(0);
  const long total = long(configs.size());
  const long every = std::max(1L, total / 1000);  // about a thousand reports, whatever the size
  for (long i = 0; i < total; ++i) {
    if (options.progress && i % every == 0) options.progress(i, total, "searching");
    consider(configs[size_t(i)]);
  }
  if (options.progress) options.progress(total, total, "searching");
  rep.feasible = long(feasible.size());
  auto better = [](const Scored& a, const Scored& b) {
    if (a.objective != b.objective) return a.objective < b.objective;
    return a.step_time_s < b.step_time_s;
  };
  std::stable_sort(feasible.begin(), feasible.end(), better);

  // The scenario's own settings, wherever they fall.
  {
    PlanRejection rej;
    Scenario b = base;
    PlanConfig bc = rep.baseline_config;
    if (auto r = Evaluate(b, base, bc, rej)) {
      PlanCandidate cand;
      cand.config = bc;
      cand.objective = Objective(*r, options.objective);
      cand.analytical = *r;
      cand.result = *r;
      const Scored mine{bc, cand.objective, r->step_time_s};
      rep.baseline_rank = 1 + int(std::count_if(feasible.begin(), feasible.end(),
                                                [&](const Scored& f) { return better(f, mine); }));
      rep.baseline = std::move(cand);
    } else {
      rep.baseline_rejection = rej;
    }
  }
  for (auto& [key, fam] : families) {
    if (!fam.representative) continue;
    fam.representative->family_feasible = fam.feasible;
    fam.representative->family_rejected = fam.rejected;
    (fam.feasible == 0 ? rep.rejected : rep.rejected_members).push_back(*fam.representative);
  }
  rep.search_s = std::chrono::duration<double>(Clock::now() - t0).count();

  // Re-check the top K (and the baseline) at the re-check fidelity, and re-rank.
  const auto t1 = Clock::now();
  const size_t k = std::min(feasible.size(), size_t(std::max(1, options.top_k)));
  std::vector<PlanCandidate> top;
  for (size_t i = 0; i < k; ++i) {
    PlanCandidate c;
    c.config = feasible[i].config;
    c.objective = feasible[i].objective;
    PlanRejection unused;
    c.analytical = *Evaluate(s, base, c.config, unused);  // feasible: evaluated before
    top.push_back(std::move(c));
  }
  const SimulateOptions recheck = SimulateOptions::At(options.recheck_fidelity);
  const bool rechecks = options.recheck_fidelity != Fidelity::kAnalytical;
  const long recheck_total = long(top.size()) + (rep.baseline && rechecks ? 1 : 0);
  const std::string recheck_phase = "re-checking with the DES";
  long rechecked = 0;
  if (rechecks && !top.empty()) rep.recheck_fidelity = "des";
  // A configuration the DES declines to simulate (more passes than it bounds
  // itself to) runs all the same: it keeps its analytical result and rank.
  const auto recheck_one = [&](PlanCandidate& c) {
    apply(s, c.config);
    c.result = Simulate(s, recheck);
    if (!c.result.error.empty() && c.result.error_kind == ErrorKind::kRefused) {
      c.recheck_refused = c.result.error;
      c.result = c.analytical;
    }
    c.objective = c.result.error.empty() ? Objective(c.result, options.objective) : INFINITY;
  };
  for (auto& c : top) {
    if (!rechecks) {
      c.result = c.analytical;
      continue;
    }
    if (options.progress) options.progress(rechecked++, recheck_total, recheck_phase);
    recheck_one(c);
  }
  std::stable_sort(top.begin(), top.end(),
                   [](const PlanCandidate& a, const PlanCandidate& b) { return a.objective < b.objective; });
  // The baseline's row in the re-ranked table, where it is among the top K.
  const auto row = !rep.baseline ? top.end() : std::find_if(top.begin(), top.end(), [&](const PlanCandidate& c) {
    return c.config == rep.baseline->config;
  });
  if (rep.baseline && rechecks) {
    if (options.progress) options.progress(rechecked++, recheck_total, recheck_phase);
    // The baseline among the top K was re-checked already (the same scenario: the DES is deterministic).
    if (row != top.end()) {
      rep.baseline->result = row->result;
      rep.baseline->recheck_refused = row->recheck_refused;
      rep.baseline->objective = row->objective;
    } else {
      recheck_one(*rep.baseline);
    }
  }
  if (options.progress && rechecks && recheck_total > 0) options.progress(recheck_total, recheck_total, recheck_phase);
  // Among the re-checked, the baseline's rank is its row; below them its analytical rank (past the top K either way).
  if (row != top.end()) rep.baseline_rank = 1 + int(row - top.begin());
  rep.candidates = std::move(top);
  rep.recheck_s = std::chrono::duration<double>(Clock::now() - t1).count();
  return rep;
}

std::string ExplainDifference(const SimulationResult& best, const SimulationResult& other) {
  const StepBreakdown& a = best.breakdown;
  const StepBreakdown& b = other.breakdown;
  std::vector<std::pair<double, std::string>> parts = {
      {b.compute_s - a.compute_s, "compute"},
      {b.exposed_communication_s - a.exposed_communication_s, "exposed communication"},
      {b.pipeline_bubble_s - a.pipeline_bubble_s, "pipeline bubble"},
      {b.optimizer_s - a.optimizer_s, "optimizer"},
      {b.data_stall_s - a.data_stall_s, "data stall"}};
  std::stable_sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return std::fabs(x.first) > std::fabs(y.first); });
  const double floor = 0.001 * std::max(best.step_time_s, 1e-12);  // below 0.1% of a step: noise
  std::string out;
  for (const auto& [d, name] : parts) {
    if (std::fabs(d) < floor) continue;
    out += (out.empty() ? "" : ", ") + Fmt(d >= 0 ? "+%.3f s " : "%.3f s ", d) + name;
  }
  return out.empty() ? "no component differs by more than 0.1% of a step" : out;
}

namespace {

std::string Pad(const std::string& v, int width, bool right) {
  const std::string fill(v.size() < size_t(width) ? width - v.size() : 0, ' ');
  return right ? fill + v : v + fill;
}

std::string Header(bool moe) {
  std::string h = "rank";
  for (const PlanDimension& d : PlanDimensions()) {
    if (!d.moe_only || moe) h += " " + Pad(d.label, d.width, d.kind == PlanValueKind::kCount);
  }
  return h;
}

std::string Row(int rank, const PlanCandidate& c, bool show_recheck, bool moe) {
  std::string s = Pad(rank > 0 ? "#" + Str(rank) : "you", 4, true);
  for (const PlanDimension& d : PlanDimensions()) {
    if (!d.moe_only || moe) s += " " + Pad(ShowValue(d, d.get(c.config)), d.width, d.kind == PlanValueKind::kCount);
  }
  s += Fmt(" %9.4f", c.analytical.step_time_s);
  if (show_recheck) s += !c.recheck_refused.empty() ? "  refused*" : c.result.error.empty() ? Fmt(" %9.4f", c.result.step_time_s) : "    failed";
  const SimulationResult& r = show_recheck && c.result.error.empty() ? c.result : c.analytical;
  s += Fmt(" %8.0f", r.tokens_per_s_per_gpu) + Fmt(" %5.1f%%", 100 * r.mfu) + Fmt(" %7.1f", r.memory.peak_gib_per_gpu) +
       Fmt(r.run.cost_usd < 100 ? " %10.2f" : " %10.0f", r.run.cost_usd);  // a short run's cents, not "0"
  return s + "\n";
}

}  // namespace

void PlanSettingsJson(std::string& o, const PlanConfig& c, bool moe, const std::string& training_first, bool clear_split) {
  bool first_section = true;
  for (const char* section : {"parallelism", "training"}) {
    o += std::string(first_section ? "" : ",") + "\"" + section + "\":{";
    bool first = true;
    if (std::string_view(section) == "parallelism" && clear_split) {
      o += "\"first_stage_layers\":null,\"last_stage_layers\":null,\"pipeline_layout\":null";
      first = false;
    }
    if (std::string_view(section) == "training" && !training_first.empty()) {
      o += training_first;
      first = false;
    }
    for (const PlanDimension& d : PlanDimensions()) {
      if (d.section != section || (d.moe_only && !moe)) continue;
      o += std::string(first ? "" : ",") + "\"" + d.key + "\":" + JsonValue(d, d.get(c));
      first = false;
    }
    o += "}";
    first_section = false;
  }
}

namespace {

// Whether a candidate runs with the scenario's own layer split cleared.
bool SplitToClear(const PlanReport& r, const PlanConfig& c) {
  return r.own_split && !SamePipelineShape(c, r.baseline_config);
}

std::string ResultJson(const SimulationResult& r) {
  std::string j = ToJson(r, false);
  while (!j.empty() && j.back() == '\n') j.pop_back();
  return j;
}

}  // namespace

std::string PlanToText(const PlanReport& r) {
  std::ostringstream o;
  const bool recheck = !r.recheck_fidelity.empty();
  o << "searched " << r.searched << " configurations in " << Fmt("%.3f s", r.search_s) << " ("
    << Fmt("%.0f per second", r.search_s > 0 ? r.searched / r.search_s : 0.0) << "): " << r.feasible << " feasible, "
    << r.rejected_divisibility << " fail divisibility, " << r.rejected_memory << " do not fit in memory";
  if (r.rejected_other) o << ", " << r.rejected_other << " failed otherwise";
  o << "\n";
  if (r.other_example) o << "  failed otherwise, as " << Describe(r.other_example->config) << ": " << r.other_example->reason << "\n";
  if (r.candidates.empty()) {
    // Say what stopped them: memory, or (failures outpacing checkpoints, settings the software cannot run) something else.
    const bool memory = std::all_of(r.rejected.begin(), r.rejected.end(), [](const PlanRejection& x) { return x.category == "memory"; });
    o << (memory ? "no configuration fits this model, cluster and global batch\n"
                 : "no configuration runs on this model, cluster and global batch (the reasons below)\n");
  } else {
    const char* by = r.objective == PlanObjective::kCost ? "run cost" : "step time";
    if (recheck) {
      o << "the analytical ranking's top " << r.candidates.size() << " re-checked with the " << r.recheck_fidelity
        << Fmt(" (%.2f s)", r.recheck_s) << ", listed by their " << r.recheck_fidelity << " " << by;
    } else {
      o << "ranked by " << by << " (analytical)";
    }
    o << "\n";
    o << Header(r.mixture_of_experts) << " step(an.)";
    if (recheck) o << " step(" << r.recheck_fidelity << ")";
    o << "  tok/s/GPU   MFU  GiB/GPU   cost USD\n";
    for (size_t i = 0; i < r.candidates.size(); ++i) o << Row(int(i + 1), r.candidates[i], recheck, r.mixture_of_experts);
    if (r.baseline) {
      o << Row(0, *r.baseline, recheck, r.mixture_of_experts);
    }
    std::string refused;  // the first reason: the DES's bound is the same for all
    for (const PlanCandidate& c : r.candidates) {
      if (refused.empty()) refused = c.recheck_refused;
    }
    if (refused.empty() && r.baseline) refused = r.baseline->recheck_refused;
    if (!refused.empty()) o << "* the DES declines these, ranked by their analytical figures: " << refused << "\n";
    const PlanCandidate& best = r.candidates[0];
    const SimulationResult& bres = recheck && best.result.error.empty() ? best.result : best.analytical;
    o << "\nbest: " << Describe(best.config) << Fmt(": %.4f s per step", bres.step_time_s)
      << Fmt(", %.1f%% MFU", 100 * bres.mfu) << Fmt(", %.1f GiB per GPU", bres.memory.peak_gib_per_gpu)
      << (best.recheck_refused.empty() ? "" : " (analytical)") << "\n";
    if (SplitToClear(r, best.config)) {
      o << "  split evenly: your first_stage_layers, last_stage_layers and pipeline_layout are for PP"
        << r.baseline_config.pipeline << " VP" << r.baseline_config.virtual_stages << " (clear them to run this one)\n";
    }
    o << "  compute " << Fmt("%.3f s", bres.breakdown.compute_s) << ", exposed communication "
      << Fmt("%.3f s", bres.breakdown.exposed_communication_s) << ", pipeline bubble " << Fmt("%.3f s", bres.breakdown.pipeline_bubble_s)
      << ", optimizer " << Fmt("%.3f s", bres.breakdown.optimizer_s) << "\n";
    o << "why it beats the runners-up (their extra time per step):\n";
    for (size_t i = 1; i < r.candidates.size(); ++i) {
      const PlanCandidate& c = r.candidates[i];
      const SimulationResult& cres = recheck && c.result.error.empty() ? c.result : c.analytical;
      o << "  #" << i + 1 << " " << Describe(c.config) << ": "
        << Fmt("%+.1f%%", 100 * (cres.step_time_s / bres.step_time_s - 1)) << " (" << ExplainDifference(bres, cres) << ")\n";
    }
    if (r.baseline && r.baseline->config == best.config) {
      o << "  your settings are the best found\n";
    } else if (r.baseline) {
      const SimulationResult& cres = recheck && r.baseline->result.error.empty() ? r.baseline->result : r.baseline->analytical;
      o << "  your settings " << Describe(r.baseline->config) << " rank #" << r.baseline_rank << ": "
        << Fmt("%+.1f%%", 100 * (cres.step_time_s / bres.step_time_s - 1)) << " (" << ExplainDifference(bres, cres) << ")\n";
    }
  }
  if (r.baseline_rejection) {
    o << "your settings " << Describe(r.baseline_rejection->config) << " are infeasible: " << r.baseline_rejection->reason << "\n";
  }
  if (!r.rejected.empty()) {
    // Context parallelism only adds optimizer state per GPU here, so the CP 1
    // families say it all; --json has every family.
    o << "infeasible whatever the other settings (least demanding member: full recompute, mb 1, no interleaving):\n";
    size_t shown = 0, hidden = 0;
    for (const auto& rej : r.rejected) {
      if (rej.config.context != 1 || shown == 24) {
        ++hidden;
        continue;
      }
      ++shown;
      o << "  TP" << rej.config.tensor << " PP" << rej.config.pipeline << ": " << rej.reason << "\n";
    }
    if (hidden) o << "  ... and " << hidden << " families with context parallelism > 1 or beyond these (--json lists all)\n";
  }
  if (!r.rejected_members.empty()) {
    // Families that run but not with every setting: the best candidates'
    // families first, each by its least demanding failing member.
    const auto best_candidate = [&](const PlanRejection* rej) {
      return std::find_if(r.candidates.begin(), r.candidates.end(),
                          [&](const PlanCandidate& c) { return FamilyOf(c.config) == FamilyOf(rej->config); }) -
             r.candidates.begin();
    };
    std::vector<const PlanRejection*> order;
    for (const auto& rej : r.rejected_members) order.push_back(&rej);
    std::stable_sort(order.begin(), order.end(),
                     [&](const PlanRejection* a, const PlanRejection* b) { return best_candidate(a) < best_candidate(b); });
    constexpr size_t kShown = 6;
    o << "settings that fail in families that run (least demanding failing member):\n";
    for (size_t i = 0; i < std::min(kShown, order.size()); ++i) o << "  " << Describe(order[i]->config) << ": " << order[i]->reason << "\n";
    if (order.size() > kShown) o << "  ... and " << order.size() - kShown << " more families (--json lists all)\n";
  }
  return o.str();
}

std::string PlanToJson(const PlanReport& r) {
  std::string o = "{\"candidates\":[";
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const PlanCandidate& c = r.candidates[i];
    o += std::string(i ? "," : "") + "\n {";
    PlanSettingsJson(o, c.config, r.mixture_of_experts, "", SplitToClear(r, c.config));
    o += ",\"result\":" + ResultJson(c.result) + ",\"analytical_step_time_s\":" + JsonWriter::Number(c.analytical.step_time_s);
    if (!c.recheck_refused.empty()) o += ",\"recheck_refused\":" + JsonWriter::Quote(c.recheck_refused);
    o += "}";
  }
  // One example per (TP, PP, CP) family with a rejection, its least demanding
  // rejected member: first the families with no feasible member
  // (family_feasible 0: they cannot work), then those where only some
  // settings fail. The counts of every rejected configuration are below.
  o += "],\n\"rejected\":[";
  size_t n = 0;
  for (const auto* list : {&r.rejected, &r.rejected_members}) {
    for (const PlanRejection& rej : *list) {
      o += std::string(n++ ? "," : "") + "\n {";
      PlanSettingsJson(o, rej.config, r.mixture_of_experts);
      o += ",\"category\":" + JsonWriter::Quote(rej.category) + ",\"reason\":" + JsonWriter::Quote(rej.reason) +
           ",\"family_feasible\":" + Str(rej.family_feasible) + ",\"family_rejected\":" + Str(rej.family_rejected) + "}";
    }
  }
  o += "],\n\"baseline\":{";
  PlanSettingsJson(o, r.baseline_config, r.mixture_of_experts);
  if (r.baseline) {
    o += ",\"rank\":" + Str(r.baseline_rank) + ",\"result\":" + ResultJson(r.baseline->result);
    if (!r.baseline->recheck_refused.empty()) o += ",\"recheck_refused\":" + JsonWriter::Quote(r.baseline->recheck_refused);
  } else if (r.baseline_rejection) {
    o += ",\"reason\":" + JsonWriter::Quote(r.baseline_rejection->reason);
  }
  o += "},\n\"objective\":" + JsonWriter::Quote(r.objective == PlanObjective::kCost ? "cost" : "time") +
       ",\"searched\":" + Str(r.searched) + ",\"feasible_count\":" + Str(r.feasible) +
       ",\"rejected_divisibility\":" + Str(r.rejected_divisibility) + ",\"rejected_memory\":" + Str(r.rejected_memory) +
       ",\"rejected_other\":" + Str(r.rejected_other);
  if (r.other_example) {
    // What "failed otherwise" stands for: the first such configuration and why.
    o += ",\n\"rejected_other_example\":{";
    PlanSettingsJson(o, r.other_example->config, r.mixture_of_experts);
    o += ",\"category\":" + JsonWriter::Quote(r.other_example->category) + ",\"reason\":" + JsonWriter::Quote(r.other_example->reason) + "}";
  }
  o += "}\n";  // no wall-clock times: the same question, the same bytes
  return o;
}

}  // namespace trainsim
