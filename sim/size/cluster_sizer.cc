#include "sim/size/cluster_sizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>

#include "sim/core/text_format.h"
#include "sim/io/json_writer.h"
#include "sim/io/result_writer.h"
#include "sim/run/cost_model.h"
#include "sim/run/run_model.h"

namespace trainsim {

namespace {

constexpr double kDay_s = 86400;

std::string Usd(double v) {
  const double a = std::fabs(v);
  const std::string sign = v < 0 ? "-" : "";
  if (a >= 1e6) return sign + Fmt("$%.2fM", a / 1e6);
  if (a >= 1e4) return sign + Fmt("$%.0fk", a / 1e3);
  return sign + Fmt("$%.0f", a);
}

std::string SignedUsd(double v) { return (v >= 0 ? "+" : "") + Usd(v); }

std::string Nodes(int n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

// A span of time in days, or, under a day, in hours or minutes (a short
// run's "0.0 days to spare" said nothing).
std::string Days(double s, int decimals = 1) {
  const double a = std::fabs(s);
  if (a < 3600) return Fmt("%.3g min", s / 60);
  if (a < kDay_s) return Fmt("%.3g h", s / 3600);
  return Fmt(decimals == 2 ? "%.2f days" : "%.1f days", s / kDay_s);
}

// "4 x xe9680-h100, 8 NICs, 4 storage nodes"; `node_counts` in place of the
// cluster's own count names several clusters alike but for it ("16, 18, 24").
std::string ClusterName(const SizedCluster& c, const std::string& node_counts = "") {
  std::string o = (node_counts.empty() ? std::to_string(c.nodes) : node_counts) + " x " + c.node + ", " + std::to_string(c.nics_per_node) + " NICs";
  if (c.storage_nodes > 0) o += ", " + std::to_string(c.storage_nodes) + (c.storage_nodes == 1 ? " storage node" : " storage nodes");
  return o;
}

// Why a cluster may run slower than a smaller one: its GPUs and the fixed
// global batch share little, so data parallelism divides the batch and model
// parallelism must take the rest, past a node (216 trays of 4 GPUs under a
// batch of 1024: DP at most 32, model parallel 27 or more). "" otherwise.
std::string BatchBoundHint(int gpus, int global_batch, int gpus_per_node) {
  const int shared = std::gcd(gpus, global_batch);
  const int model_parallel = gpus / shared;
  if (model_parallel <= gpus_per_node) return "";
  return "; the global batch " + std::to_string(global_batch) + " and its " + std::to_string(gpus) + " GPUs share a factor of " +
         std::to_string(shared) + " only, so model parallelism takes " + std::to_string(model_parallel) +
         " or more (--batch LO..HI lets the batch fit the cluster)";
}

// Why a run that trains fast enough still takes too long: the time that
// failures (and checkpoint stalls) take, and, where no checkpoint is written,
// that every failure restarts the run. "" where they take under a tenth.
std::string LostTimeHint(const RunReport& run) {
  if (!(run.goodput < 0.9)) return "";
  std::string o = "; goodput " + Fmt(run.goodput < 0.1 ? "%.2g%%" : "%.0f%%", 100 * run.goodput) + ": ";
  if (run.failures_modelled && run.checkpoints == 0) {
    // With storage (a checkpoint has a size) the interval is what is too long.
    return o + "with no checkpoint written, each failure restarts the run from step 0 (" +
           (run.checkpoint_bytes > 0 ? std::string("checkpoint.every_steps is beyond the run's steps: checkpoint more often)")
                                     : std::string("checkpoints to a storage system: cluster.storage, checkpoint.every_steps)"));
  }
  return o + "failures and checkpoints take the rest";
}

double ObjectiveOf(const SimulationResult& r, SizeObjective o) {
  return o == SizeObjective::kCost ? r.run.cost_usd : r.run.time_to_train_s;
}

// Why a cluster has no feasible configuration: divisibility alone, or the
// planner's most telling family rejection.
std::string NoConfigurationReason(const PlanReport& pr, const Scenario& s) {
  if (pr.rejected_memory == 0 && pr.rejected_other == 0) {
    return "no TP x PP x CP x DP of the " + std::to_string(s.gpus()) + " GPUs divides both the global batch " +
           std::to_string(s.training.global_batch) + " and the " + std::to_string(s.model.layers) +
           " layers (--batch LO..HI lets the batch follow the cluster)";
  }
  // The most telling family: one that fits but cannot run (e.g. failures
  // outpace the checkpoints), else the most sharded one that does not fit.
  const PlanRejection* pick = nullptr;
  auto rank = [](const PlanRejection& r) {
    return (r.category == "simulation" ? 1000000 : r.category == "memory" ? 1000 : 0) + r.config.tensor * r.config.pipeline;
  };
  for (const auto& r : pr.rejected) {
    if (r.config.context != 1) continue;
    if (!pick || rank(r) > rank(*pick)) pick = &r;
  }
  if (!pick && !pr.rejected.empty()) pick = &pr.rejected.front();
  if (!pick) return "no parallelism configuration is feasible";
  return "no parallelism configuration is feasible (e.g. TP" + std::to_string(pick->config.tensor) + " PP" +
         std::to_string(pick->config.pipeline) + ": " + pick->reason + ")";
}

// Steps the re-check simulates before the closed form carries its figures to
// the whole run: enough for the step time and several checkpoints to settle.
constexpr int kRecheckMinSteps = 500;
constexpr int kRecheckCheckpoints = 2;

// The DES over a window of the run (its step time, breakdown and checkpoint
// write and stall times under contention), carried to the whole run by the
// run model: a run of hundreds of thousands of steps costs the DES seconds
// per cluster, the window milliseconds, and the per-step figures are the same.
SimulationResult RecheckWholeRun(const Scenario& s, Fidelity fidelity) {
  const int window = std::max(kRecheckMinSteps, kRecheckCheckpoints * s.checkpoint.every_steps);
  if (s.training.steps <= window) return Simulate(s, SimulateOptions::At(fidelity, false));
  Scenario w = s;
  w.training.steps = window;
  w.training.tokens = 0;
  SimulationResult r = Simulate(w, SimulateOptions::At(fidelity, false));
  if (!r.error.empty()) return r;
  StepTiming t;
  t.step_time_s = r.step_time_s;
  t.breakdown = r.breakdown;
  if (r.run.checkpoints > 0) {
    t.checkpoint_write_s = r.run.checkpoint_write_s;
    t.checkpoint_stall_s = r.run.checkpoint_stall_s;
  }
  r.run = RunReport{};
  ApplyRunModel(s, t, r);
  return r;
}

using ClusterKey = std::tuple<std::string, int, int, int>;  // profile, NICs, nodes, storage nodes

struct Outcome {
  SizedCluster cluster;
  std::optional<SizeCandidate> best;
  std::string reason;  // when !best
};

Scenario ClusterScenario(const Scenario& base, const NodeProfile& profile, int nics, int nodes, int storage_nodes) {
  Scenario s = base;
  s.node = profile;
  s.node.nics_per_node = nics;
  s.nodes = nodes;
  if (s.storage) s.storage_nodes = storage_nodes;
  return s;
}

}  // namespace

Scenario CandidateScenario(const Scenario& base, const SizeOptions& o, const SizeCandidate& c) {
  const NodeProfile* profile = &base.node;
  for (const auto& p : o.node_profiles) {
    if (p.name == c.cluster.node) profile = &p;
  }
  Scenario s = ClusterScenario(base, *profile, c.cluster.nics_per_node, c.cluster.nodes, c.cluster.storage_nodes);
  s.training.global_batch = c.global_batch;
  s.training.steps = c.steps;
  s.training.tokens = o.tokens;
  ApplyPlannedConfig(s, base, c.config);
  return s;
}

long StepsForTokens(double tokens, int global_batch, int seq_len) {
  const double per_step = double(global_batch) * seq_len;
  if (per_step <= 0 || tokens <= 0) return 0;
  const double steps = std::ceil(tokens / per_step);
  return steps > double(std::numeric_limits<long>::max() / 2) ? std::numeric_limits<long>::max() / 2 : long(steps);
}

std::vector<int> CandidateBatches(int gpus, int lo, int hi, int max_count) {
  std::vector<int> out;
  if (gpus <= 0 || hi < lo || hi <= 0) return {std::max(1, lo)};
  for (int m = 1; m <= 64 && m <= gpus; m *= 2) {
    if (gpus % m != 0) continue;
    const int d = gpus / m;  // a data-parallel size the batch must be a multiple of
    const int b = (hi / d) * d;
    if (b >= lo && b > 0) out.push_back(b);
  }
  std::sort(out.begin(), out.end(), std::greater<int>());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > size_t(max_count)) out.resize(max_count);
  if (out.empty()) out.push_back(std::max(1, lo));
  return out;
}

SizeReport SizeCluster(const Scenario& base, const SizeOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  SizeReport rep;
  rep.tokens = o.tokens;
  rep.mixture_of_experts = base.model.moe.enabled();
  rep.days = o.days;
  rep.objective = o.objective;
  rep.cost_model = base.cost.model == CostBasis::kOwnership ? "ownership" : "rental";
  // Each node, count and NIC count once, however often the options name it.
  std::vector<NodeProfile> profiles;
  for (const NodeProfile& p : o.node_profiles.empty() ? std::vector<NodeProfile>{base.node} : o.node_profiles) {
    if (std::none_of(profiles.begin(), profiles.end(), [&](const NodeProfile& q) { return q.name == p.name; })) profiles.push_back(p);
  }
  const auto unique = [](std::vector<int> v) {
    std::vector<int> out;
    for (int x : v) {
      if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
    }
    return out;
  };
  // NICs per node: those asked for, else the scenario's where the profile
  // can take that many and the profile's own where it cannot (an 8-NIC
  // XE9680 scenario sized on GB200 trays gets their 4: one per GPU).
  // Of the asked-for counts, those a profile takes (GB200 trays, one NIC per
  // GPU, among --nics 4,8: 4); one that takes none is rejected with the reason.
  const std::vector<int> asked_nics = unique(o.nics);
  auto nics_of = [&](const NodeProfile& p) {
    if (!asked_nics.empty()) {
      std::vector<int> its = asked_nics;
      std::erase_if(its, [&](int k) { return !p.TakesNics(k); });
      return its.empty() ? asked_nics : its;
    }
    const int k = base.node.nics_per_node;
    return std::vector<int>{p.TakesNics(k) ? k : p.nics_per_node};
  };
  const std::vector<int> asked_counts = o.node_counts.empty() ? std::vector<int>{base.nodes} : o.node_counts;
  auto counts_of = [&](const NodeProfile& p) {
    std::vector<int> its = asked_counts;
    const int domain = p.nvlink_domain_nodes();
    for (int n : o.whole_rack_counts) {
      if (domain > 1 && n % domain == 0) its.push_back(n);
    }
    return unique(its);
  };
  const std::vector<int> storages =
      o.storage_nodes.empty() || !base.storage ? std::vector<int>{base.storage ? base.storage_nodes : 0} : unique(o.storage_nodes);
  const double deadline_s = o.days * kDay_s;
  const bool batch_range = o.batch_min > 0 || o.batch_max > 0;

  std::map<ClusterKey, Outcome> outcomes;
  auto key_of = [&](const SizedCluster& c) {
    return ClusterKey{c.node, c.nics_per_node, c.nodes, storages.size() > 1 ? c.storage_nodes : storages[0]};
  };
  std::map<ClusterKey, SimulationResult> rechecked_results;  // the clusters re-checked, as re-checked
  std::vector<SizeCandidate> meeting;
  std::vector<SizeRejection> missing, cannot;
  int clusters_total = 0;
  for (const NodeProfile& profile : profiles) clusters_total += int(nics_of(profile).size() * counts_of(profile).size() * storages.size());
  for (const NodeProfile& profile : profiles) {
    const std::vector<int> counts = counts_of(profile);
    for (int k : nics_of(profile)) {
      for (int n : counts) {
       for (int st : storages) {
        if (o.progress) {
          o.progress(rep.clusters, clusters_total, "sizing",
                     std::to_string(n) + " x " + profile.name + ", " + std::to_string(k) + " NICs");
        }
        Scenario s = ClusterScenario(base, profile, k, n, st);
        Outcome out;
        out.cluster = {profile.name, n, k, s.storage ? s.storage_nodes : 0, s.gpus()};
        ++rep.clusters;
        if (!profile.TakesNics(k)) {
          out.reason = profile.TakesNicsText() + ", not " + std::to_string(k);
        } else if (!profile.gpu.Supports(base.training.precision)) {
          // The precision is the scenario's: a node whose GPU lacks it cannot run it at all.
          out.reason = profile.gpu.UnsupportedReason(base.training.precision);
        } else {
          std::vector<int> batches{base.training.global_batch};
          if (batch_range) {
            // The scenario's own batch when the range holds it, and the range's best fits for this cluster.
            batches = CandidateBatches(s.gpus(), o.batch_min, o.batch_max);
            const int own = base.training.global_batch;
            if (own >= o.batch_min && own <= o.batch_max && std::find(batches.begin(), batches.end(), own) == batches.end()) {
              batches.push_back(own);
            }
          }
          for (int b : batches) {
            const long steps = StepsForTokens(o.tokens, b, s.training.seq_len);
            if (steps > std::numeric_limits<int>::max()) {
              out.reason = "global batch " + std::to_string(b) + " needs more steps than can be counted";
              continue;
            }
            s.training.global_batch = b;
            s.training.steps = int(steps);
            s.training.tokens = o.tokens;
            PlanOptions po;
            po.objective = o.objective == SizeObjective::kCost ? PlanObjective::kCost : PlanObjective::kTime;
            po.top_k = std::max(1, o.recheck_fidelity == Fidelity::kAnalytical ? 1 : o.layouts_rechecked);
            po.recheck_fidelity = Fidelity::kAnalytical;
            // Micro batches past 4 seldom win where a step's batch spreads over a cluster's worth of
            // replicas, and each doubling adds a search per cluster; context parallelism is searched
            // as `plan` does (a long sequence may need CP 8 to fit at all).
            po.max_micro_batch = 4;
            const PlanReport pr = Plan(s, po);
            rep.configurations += pr.searched;
            if (pr.candidates.empty()) {
              out.reason = (batch_range ? "global batch " + std::to_string(b) + ": " : std::string()) + NoConfigurationReason(pr, s);
              continue;
            }
            SizeCandidate c;
            c.cluster = out.cluster;
            c.config = pr.candidates[0].config;
            c.global_batch = b;
            c.steps = int(steps);
            c.analytical = pr.candidates[0].result;
            c.result = c.analytical;
            c.other_layouts.assign(pr.candidates.begin() + 1, pr.candidates.end());
            c.meets_deadline = c.result.run.time_to_train_s <= deadline_s;
            c.objective = ObjectiveOf(c.result, o.objective);
            const bool better = !out.best || (c.meets_deadline && !out.best->meets_deadline) ||
                                (c.meets_deadline == out.best->meets_deadline &&
                                 (c.meets_deadline ? c.objective < out.best->objective
                                                   : c.result.run.time_to_train_s < out.best->result.run.time_to_train_s));
            if (better) out.best = std::move(c);
          }
        }
        if (!out.best) {
          cannot.push_back({out.cluster, out.reason, 0});
        } else if (out.best->meets_deadline) {
          meeting.push_back(*out.best);
        } else {
          const double t = out.best->result.run.time_to_train_s;
          missing.push_back({out.cluster,
                             "takes " + Days(t) + ": misses the deadline by " + Days(t - deadline_s) +
                                 // A tenth of a percent under 10%: a 3.5 h miss of 30 days is 0.5%, not "0%"; past 100x, a factor.
                                 (t < 100 * deadline_s ? " (" + Fmt(t < 1.1 * deadline_s ? "%.1f%%" : "%.0f%%", 100 * (t / deadline_s - 1)) + ")"
                                                       : " (" + Fmt("%.3gx", t / deadline_s) + " the deadline)") +
                                 (batch_range ? "" : BatchBoundHint(out.cluster.gpus, out.best->global_batch, profile.gpus_per_node)) +
                                 LostTimeHint(out.best->result.run),
                             (t - deadline_s) / kDay_s});
        }
        outcomes[{profile.name, k, n, st}] = std::move(out);
       }
      }
    }
  }
  auto by_objective = [](const SizeCandidate& a, const SizeCandidate& b) {
    if (a.objective != b.objective) return a.objective < b.objective;
    return a.cluster.gpus < b.cluster.gpus;
  };
  std::stable_sort(meeting.begin(), meeting.end(), by_objective);
  if (o.progress) o.progress(clusters_total, clusters_total, "sizing", "");
  rep.search_s = std::chrono::duration<double>(Clock::now() - t0).count();

  // Re-check the top few at the re-check fidelity; one that misses there moves
  // to the rejected. The DES sees contention the closed form does not, so a
  // candidate past the first few whose closed-form figure still beats the
  // best re-checked one is re-checked too (up to twice the few): the answer
  // is never a DES figure beaten by an unchecked closed-form one.
  const auto t1 = Clock::now();
  size_t k = std::min(meeting.size(), size_t(std::max(0, o.recheck_top)));
  const size_t most = std::min(meeting.size(), 2 * k);
  rep.recheck_fidelity = ToString(o.recheck_fidelity);
  if (o.recheck_fidelity != Fidelity::kAnalytical) {
    const std::string phase = "re-checking with the DES";
    double best_rechecked = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < k || (i < most && meeting[i].objective < best_rechecked); ++i) {
      k = std::max(k, i + 1);
      SizeCandidate& c = meeting[i];
      if (o.progress) {
        o.progress(int(i), int(k), phase,
                   std::to_string(c.cluster.nodes) + " x " + c.cluster.node + ", " + std::to_string(c.cluster.nics_per_node) + " NICs");
      }
      SimulationResult r = RecheckWholeRun(CandidateScenario(base, o, c), o.recheck_fidelity);
      if (!r.error.empty() && r.error_kind == ErrorKind::kRefused) {
        // Beyond what the DES simulates (more passes than it bounds itself
        // to): the cluster runs all the same, judged by its analytical figures.
        c.recheck_refused = r.error;
        if (c.meets_deadline) best_rechecked = std::min(best_rechecked, c.objective);
        continue;
      }
      // Its next best layouts too: the best re-checked one is the cluster's.
      for (const PlanCandidate& other : c.other_layouts) {
        SizeCandidate alt = c;
        alt.config = other.config;
        SimulationResult ra = RecheckWholeRun(CandidateScenario(base, o, alt), o.recheck_fidelity);
        if (!ra.error.empty() || (r.error.empty() && ObjectiveOf(ra, o.objective) >= ObjectiveOf(r, o.objective))) continue;
        c.config = other.config;
        c.analytical = other.result;
        r = std::move(ra);
      }
      c.other_layouts.clear();
      c.rechecked = true;
      rechecked_results[key_of(c.cluster)] = r;
      if (!r.error.empty()) {
        c.result = r;
        c.meets_deadline = false;
        continue;
      }
      c.result = r;
      c.meets_deadline = r.run.time_to_train_s <= deadline_s;
      c.objective = ObjectiveOf(r, o.objective);
      if (c.meets_deadline) best_rechecked = std::min(best_rechecked, c.objective);
    }
    rep.rechecked = int(k);
    std::vector<SizeCandidate> kept;
    for (size_t i = 0; i < meeting.size(); ++i) {
      SizeCandidate& c = meeting[i];
      if (c.meets_deadline) {
        kept.push_back(std::move(c));
      } else if (!c.result.error.empty()) {
        cannot.push_back({c.cluster, "re-check: " + c.result.error, 0});
      } else {
        const double t = c.result.run.time_to_train_s;
        missing.push_back({c.cluster,
                           "takes " + Days(t) + " when re-checked: misses the deadline by " + Days(t - deadline_s) + LostTimeHint(c.result.run),
                           (t - deadline_s) / kDay_s});
      }
    }
    if (o.progress && k > 0) o.progress(int(k), int(k), phase, "");
    meeting = std::move(kept);
    std::stable_sort(meeting.begin(), meeting.begin() + std::min(meeting.size(), k), by_objective);
  }
  rep.recheck_s = std::chrono::duration<double>(Clock::now() - t1).count();
  std::stable_sort(missing.begin(), missing.end(),
                   [](const SizeRejection& a, const SizeRejection& b) { return a.misses_by_days < b.misses_by_days; });
  rep.rejected = std::move(missing);
  rep.rejected.insert(rep.rejected.end(), cannot.begin(), cannot.end());
  rep.candidates = std::move(meeting);

  // What each hardware option buys against the answer: both sides at the
  // re-check fidelity where both were re-checked, else both analytical (the
  // same fidelity for the two sides of a comparison). Whether the option
  // meets the deadline is the report's verdict on that cluster: a re-checked
  // one's re-checked time, never the closed form it was rejected against.
  if (!rep.candidates.empty()) {
    const SizeCandidate& a = rep.candidates[0];
    const int ast = storages.size() > 1 ? a.cluster.storage_nodes : storages[0];
    const auto& ao = outcomes.at({a.cluster.node, a.cluster.nics_per_node, a.cluster.nodes, ast});
    const auto a_rechecked = rechecked_results.find(key_of(a.cluster));
    auto add = [&](const ClusterKey& key, const std::string& label) {
      auto it = outcomes.find(key);
      if (it == outcomes.end()) return;
      SizeOptionDelta d;
      d.option = label;
      const auto re = rechecked_results.find(key);
      const bool rechecked = re != rechecked_results.end();
      if (!it->second.best || (rechecked && !re->second.error.empty())) {
        d.meets_deadline = false;
        d.misses_by_days = -1;  // cannot run
        d.option += ": cannot run (" + (it->second.best ? "re-check: " + re->second.error : it->second.reason) + ")";
        rep.options.push_back(d);
        return;
      }
      d.rechecked = rechecked && a_rechecked != rechecked_results.end();
      const SimulationResult& r = d.rechecked ? re->second : it->second.best->analytical;
      const SimulationResult& ar = d.rechecked ? a_rechecked->second : ao.best->analytical;
      // A side without purchase prices (capital 0: no figures) has no capital to compare.
      d.capital_known = r.run.capital_usd > 0 && ar.run.capital_usd > 0;
      d.capital_delta_usd = d.capital_known ? r.run.capital_usd - ar.run.capital_usd : 0;
      d.days = r.run.time_to_train_s / kDay_s;
      d.answer_days = ar.run.time_to_train_s / kDay_s;
      d.cost_usd = r.run.cost_usd;
      d.answer_cost_usd = ar.run.cost_usd;
      d.days_delta = (r.run.time_to_train_s - ar.run.time_to_train_s) / kDay_s;
      d.cost_delta_usd = r.run.cost_usd - ar.run.cost_usd;
      const double t = rechecked ? re->second.run.time_to_train_s : r.run.time_to_train_s;
      d.meets_deadline = t <= deadline_s;
      d.misses_by_days = d.meets_deadline ? 0 : (t - deadline_s) / kDay_s;
      rep.options.push_back(d);
    };
    const int an = a.cluster.nics_per_node;
    // "node (N nodes, G GPUs, K NICs)", naming the counts that differ between the two sides.
    auto side = [](const std::string& node, int nodes, int gpus, int nics, bool say_nodes, bool say_gpus, bool say_nics) {
      std::string extra;
      if (say_nodes) extra = Nodes(nodes);
      if (say_gpus) extra += (extra.empty() ? "" : ", ") + std::to_string(gpus) + " GPUs";
      if (say_nics) extra += (extra.empty() ? "" : ", ") + std::to_string(nics) + " NICs";
      return extra.empty() ? node : node + " (" + extra + ")";
    };
    const auto own = std::find_if(profiles.begin(), profiles.end(), [&](const NodeProfile& p) { return p.name == a.cluster.node; });
    for (int kk : nics_of(*own)) {
      if (kk != an) add({a.cluster.node, kk, a.cluster.nodes, ast}, std::to_string(kk) + " NICs instead of " + std::to_string(an));
    }
    for (const auto& p : profiles) {
      if (p.name == a.cluster.node) continue;
      // The NIC counts this node was sized with that it can take (asked-for
      // counts it cannot take were rejected, not run).
      std::vector<int> its = nics_of(p);
      std::erase_if(its, [&](int k) { return !p.TakesNics(k); });
      if (its.empty()) continue;
      // The other node with the answer's NICs where it was sized with them,
      // else with its own; with as many GPUs where a node count tried gives
      // them (8 GB200 trays against 4 DGX B200), else as many nodes.
      const int kk = std::find(its.begin(), its.end(), an) != its.end() ? an : its.front();
      const int same_gpus = a.cluster.gpus % p.gpus_per_node == 0 ? a.cluster.gpus / p.gpus_per_node : 0;
      // Else the count tried on it whose GPUs come nearest (216 GB200 trays, a rack count, are not tried on 8-GPU nodes).
      const std::vector<int> its_counts = counts_of(p);
      const auto tried = [&](int n) { return std::find(its_counts.begin(), its_counts.end(), n) != its_counts.end(); };
      int nn = tried(same_gpus) ? same_gpus : a.cluster.nodes;
      if (!tried(nn)) {
        nn = *std::min_element(its_counts.begin(), its_counts.end(), [&](int x, int y) {
          return std::abs(x * p.gpus_per_node - a.cluster.gpus) < std::abs(y * p.gpus_per_node - a.cluster.gpus);
        });
      }
      // Unequal GPU counts are said on both sides: the option is then more (or fewer) GPUs, not a swap.
      const int gpus = nn * p.gpus_per_node;
      const bool say_nodes = nn != a.cluster.nodes, say_gpus = gpus != a.cluster.gpus;
      add({p.name, kk, nn, ast}, side(p.name, nn, gpus, kk, say_nodes || say_gpus, say_gpus, kk != an) + " instead of " +
                                     side(a.cluster.node, a.cluster.nodes, a.cluster.gpus, an, say_nodes || say_gpus, say_gpus, kk != an));
    }
    for (int st : storages) {
      if (st != ast) {
        add({a.cluster.node, a.cluster.nics_per_node, a.cluster.nodes, st},
            std::to_string(st) + " storage nodes instead of " + std::to_string(ast));
      }
    }
    std::vector<int> sorted = counts_of(*own);
    std::sort(sorted.begin(), sorted.end());
    auto pos = std::find(sorted.begin(), sorted.end(), a.cluster.nodes);
    if (pos != sorted.begin() && pos != sorted.end()) {
      add({a.cluster.node, a.cluster.nics_per_node, *(pos - 1), ast}, Nodes(*(pos - 1)) + " instead of " + std::to_string(a.cluster.nodes));
    }
    if (pos != sorted.end() && pos + 1 != sorted.end()) {
      add({a.cluster.node, a.cluster.nics_per_node, *(pos + 1), ast}, Nodes(*(pos + 1)) + " instead of " + std::to_string(a.cluster.nodes));
    }
  }
  return rep;
}

namespace {

std::string Why(const SizeCandidate& best, const SizeCandidate& c, SizeObjective obj) {
  const RunReport& a = best.result.run;
  const RunReport& b = c.result.run;
  const double extra_usd = b.cost_usd - a.cost_usd;
  std::string o = obj == SizeObjective::kCost ? Usd(std::fabs(extra_usd)) + (extra_usd < 0 ? " less" : " more")
                                              : Fmt("%+.1f days", (b.time_to_train_s - a.time_to_train_s) / kDay_s);
  o += " (" + Fmt("%+.1f%%", 100 * (c.objective / best.objective - 1)) + "): ";
  const bool both_priced = a.capital_usd > 0 && b.capital_usd > 0;  // a node without purchase prices has no capital to compare
  if (c.cluster.gpus == best.cluster.gpus && c.cluster.node == best.cluster.node) {
    // Same GPUs: the difference is in the step.
    o += Fmt("step %+.1f%%", 100 * (c.result.step_time_s / best.result.step_time_s - 1)) + " (" +
         ExplainDifference(best.result, c.result) + ")";
    if (both_priced && b.capital_usd != a.capital_usd) o += ", capital " + SignedUsd(b.capital_usd - a.capital_usd);
  } else {
    o += Fmt("%.2fx the GPU-hours", (c.cluster.gpus * b.time_to_train_s) / std::max(1e-9, best.cluster.gpus * a.time_to_train_s));
    if (obj == SizeObjective::kCost && both_priced) o += ", capital " + SignedUsd(b.capital_usd - a.capital_usd);
    if (obj == SizeObjective::kTime) o += ", cost " + SignedUsd(b.cost_usd - a.cost_usd);
  }
  return o;
}

void ClusterJson(std::string& o, const SizedCluster& c) {
  o += "\"cluster\":{\"node\":" + JsonWriter::Quote(c.node) + ",\"nodes\":" + std::to_string(c.nodes) +
       ",\"nics_per_node\":" + std::to_string(c.nics_per_node) + ",\"storage_nodes\":" + std::to_string(c.storage_nodes) +
       ",\"gpus\":" + std::to_string(c.gpus) + "}";
}

std::string ResultJson(const SimulationResult& r) {
  SimulationResult copy = r;
  copy.timeline.clear();
  std::string j = ToJson(copy, false);
  while (!j.empty() && (j.back() == '\n' || j.back() == ' ')) j.pop_back();
  return j;
}

}  // namespace

std::string SizeToText(const SizeReport& r) {
  std::ostringstream o;
  const bool cost = r.objective == SizeObjective::kCost;
  o << "size: " << Fmt("%.4g", r.tokens) << " tokens within " << Fmt("%.4g", r.days) << (r.days == 1 ? " day, " : " days, ")
    << (cost ? "cheapest" : "fastest") << " cluster (" << r.cost_model << " pricing)\n";
  o << "searched " << r.clusters << (r.clusters == 1 ? " cluster (" : " clusters (") << r.configurations << " parallelism configurations, analytical), "
    << r.candidates.size() << " meet the deadline";
  if (r.rechecked > 0) o << "; the best " << r.rechecked << " re-checked with the DES (a window of the run, carried to all of it)";
  o << "\n";
  if (r.candidates.empty()) {
    o << "no cluster meets the deadline\n";
  } else {
    const SizeCandidate& a = r.candidates[0];
    const RunReport& run = a.result.run;
    o << "answer: " << ClusterName(a.cluster) << "\n";
    o << "  parallelism        " << Describe(a.config) << "\n";
    o << "  training           global batch " << a.global_batch << " x " << a.result.run.tokens / std::max(1.0, double(a.steps) * a.global_batch)
      << " tokens, " << a.steps << " steps, step " << Fmt("%.3f s", a.result.step_time_s) << " (" << a.result.fidelity << ")\n";
    if (!a.recheck_refused.empty()) o << "  not re-checked     the DES declines it: " << a.recheck_refused << "\n";
    o << "  time to train      " << Days(run.time_to_train_s) << " (" << Days(r.days * kDay_s - run.time_to_train_s)
      << " to spare), goodput " << Fmt("%.1f%%", 100 * run.goodput);
    if (run.failures_modelled) {
      o << ", " << Fmt("%.3g", run.expected_failures) << " failures expected, " << run.hot_spares << " hot spare"
        << (run.hot_spares == 1 ? "" : "s") << HotSparesCapitalText(run) << "\n";
    } else {
      o << " (failures not modelled: failures.node_mtbf_hours)\n";
    }
    o << "  cost               " << Usd(run.cost_usd) << " (" << run.cost_model << ")";
    if (run.capital_usd > 0) o << ", capital " << Usd(run.capital_usd);
    o << ", IT energy " << (run.energy_kwh < 1e4 ? Fmt("%.0f kWh", run.energy_kwh) : Fmt("%.0f MWh", run.energy_kwh / 1000)) << " at rated load\n";
    if (r.candidates.size() > 1) {
      o << (r.rechecked > 0 ? "runners-up (the re-checked first, then the analytical):\n" : "runners-up:\n");
      for (size_t i = 1; i < r.candidates.size() && i < 6; ++i) {
        const SizeCandidate& c = r.candidates[i];
        o << "  #" << i + 1 << " " << ClusterName(c.cluster) << ", " << Describe(c.config) << ", batch " << c.global_batch << ": "
          << Days(c.result.run.time_to_train_s) << ", " << Usd(c.result.run.cost_usd) << (c.rechecked ? "" : " (analytical)") << "\n";
        o << "      " << Why(a, c, r.objective) << "\n";
      }
      if (r.candidates.size() > 6) o << "  ... and " << r.candidates.size() - 6 << " more (--json lists all)\n";
    }
    // Each node profile's best that meets the deadline, where neither the answer nor a runner-up above shows it.
    std::vector<std::string> shown_nodes;
    for (size_t i = 0; i < r.candidates.size(); ++i) {
      const SizeCandidate& c = r.candidates[i];
      if (std::find(shown_nodes.begin(), shown_nodes.end(), c.cluster.node) != shown_nodes.end()) continue;
      shown_nodes.push_back(c.cluster.node);
      if (i < 6) continue;
      o << "best " << c.cluster.node << " that meets the deadline: #" << i + 1 << " " << ClusterName(c.cluster) << ", "
        << Describe(c.config) << ", batch " << c.global_batch << ": " << Days(c.result.run.time_to_train_s) << ", "
        << Usd(c.result.run.cost_usd) << (c.rechecked ? "" : " (analytical)") << "\n";
    }
    if (!r.options.empty()) {
      o << "what each option buys (against the answer):\n";
      for (const auto& d : r.options) {
        if (d.misses_by_days < 0) {
          o << "  " << d.option << "\n";
          continue;
        }
        o << "  " << d.option << ": ";
        if (d.capital_known) o << (d.capital_delta_usd <= 0 ? "saves " : "costs ") << Usd(std::fabs(d.capital_delta_usd)) << " capital, ";
        o << (d.days_delta >= 0 ? "costs " : "saves ") << Days(std::fabs(d.days_delta) * kDay_s, 2) << ", run cost "
          << SignedUsd(d.cost_delta_usd);
        if (!d.meets_deadline) o << "; misses the deadline by " << Days(d.misses_by_days * kDay_s);
        o << (d.rechecked ? "" : " (analytical)") << "\n";
      }
    }
  }
  if (!r.rejected.empty()) {
    o << "cannot make the deadline:\n";
    // Those that run but late, least late first, then those that cannot run at all.
    // Node counts of one profile refused for one reason (a GB200 tray asked
    // for 8 NICs) are one line, not a line a count.
    size_t shown = 0, hidden = 0;
    for (size_t i = 0; i < r.rejected.size();) {
      const SizeRejection& rej = r.rejected[i];
      std::vector<int> counts{rej.cluster.nodes};
      size_t j = i + 1;
      for (; j < r.rejected.size(); ++j) {
        const SizeRejection& next = r.rejected[j];
        if (next.reason != rej.reason || next.cluster.node != rej.cluster.node || next.cluster.nics_per_node != rej.cluster.nics_per_node ||
            next.cluster.storage_nodes != rej.cluster.storage_nodes) {
          break;
        }
        counts.push_back(next.cluster.nodes);
      }
      i = j;
      if (shown == 16) {
        ++hidden;
        continue;
      }
      ++shown;
      std::sort(counts.begin(), counts.end());
      std::string list;
      for (const int n : counts) list += (list.empty() ? "" : ", ") + std::to_string(n);
      o << "  " << ClusterName(rej.cluster, list) << ": " << rej.reason << "\n";
    }
    if (hidden) o << "  ... and " << hidden << " more (--json lists all)\n";
  }
  return o.str();
}

std::string SizeToJson(const SizeReport& r) {
  std::string o = "{\"candidates\":[";
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const SizeCandidate& c = r.candidates[i];
    o += std::string(i ? "," : "") + "\n {";
    ClusterJson(o, c.cluster);
    o += ",";
    PlanSettingsJson(o, c.config, r.mixture_of_experts,
                     "\"global_batch\":" + std::to_string(c.global_batch) + ",\"steps\":" + std::to_string(c.steps));
    o += ",\"rechecked\":" + std::string(c.rechecked ? "true" : "false");
    if (!c.recheck_refused.empty()) o += ",\"recheck_refused\":" + JsonWriter::Quote(c.recheck_refused);
    o += ",\"result\":" + ResultJson(c.result) + "}";
  }
  o += "],\n\"rejected\":[";
  for (size_t i = 0; i < r.rejected.size(); ++i) {
    o += std::string(i ? "," : "") + "\n {";
    ClusterJson(o, r.rejected[i].cluster);
    o += ",\"reason\":" + JsonWriter::Quote(r.rejected[i].reason) +
         ",\"misses_by_days\":" + (r.rejected[i].misses_by_days > 0 ? JsonWriter::Number(r.rejected[i].misses_by_days) : std::string("null")) +
         "}";
  }
  o += "],\n\"options\":[";
  for (size_t i = 0; i < r.options.size(); ++i) {
    const auto& d = r.options[i];
    o += std::string(i ? "," : "") + "\n {\"option\":" + JsonWriter::Quote(d.option) +
         ",\"capital_delta_usd\":" + (d.capital_known ? JsonWriter::Number(d.capital_delta_usd) : std::string("null")) +
         ",\"days_delta\":" + JsonWriter::Number(d.days_delta) +
         ",\"cost_delta_usd\":" + JsonWriter::Number(d.cost_delta_usd) + ",\"meets_deadline\":" + (d.meets_deadline ? "true" : "false") +
         ",\"rechecked\":" + (d.rechecked ? "true" : "false");
    // The figures the deltas compare (none for an option that cannot run).
    if (d.misses_by_days >= 0) {
      o += ",\"compared_fidelity\":" + JsonWriter::Quote(d.rechecked ? r.recheck_fidelity : std::string("analytical")) +
           ",\"days\":" + JsonWriter::Number(d.days) + ",\"cost_usd\":" + JsonWriter::Number(d.cost_usd) +
           ",\"answer_days\":" + JsonWriter::Number(d.answer_days) + ",\"answer_cost_usd\":" + JsonWriter::Number(d.answer_cost_usd);
    }
    o += "}";
  }
  o += "],\n\"tokens\":" + JsonWriter::Number(r.tokens) + ",\"days\":" + JsonWriter::Number(r.days) +
       ",\"objective\":" + JsonWriter::Quote(r.objective == SizeObjective::kCost ? "cost" : "time") +
       ",\"cost_model\":" + JsonWriter::Quote(r.cost_model) + ",\"clusters\":" + std::to_string(r.clusters) +
       ",\"rechecked_count\":" + std::to_string(r.rechecked) + ",\"recheck_fidelity\":" + JsonWriter::Quote(r.recheck_fidelity) +
       ",\"configurations\":" + std::to_string(r.configurations) + "}\n";
  return o;
}

}  // namespace trainsim
