// The sizer behind `trainsim size` (design.md 3d): which cluster trains T
// tokens of the scenario's model within D days at least cost (or soonest).
// Every combination of node profile, NICs per node, node count and storage
// node count is a cluster; for each, the global batch (fixed, or the best of the candidates
// a range allows) and the parallelism are re-planned with the planner
// (sim/plan/planner.h, analytical), the steps follow from the tokens, and the
// run model gives the time, energy and cost to train them under the
// scenario's cost model. Clusters that meet the deadline are ranked by the
// objective; the top few are re-simulated with the DES and re-ranked (the DES
// runs a window of max(500, 2 checkpoint intervals) steps, whose step time and
// checkpoint write and stall times the run model carries to the whole run:
// the DES of a 240,000-step run with async checkpoints takes seconds). Those
// that miss say by how much; those that cannot run at all say why. For the
// answer, each hardware option (the other NIC counts, the other node
// profiles, the other storage node counts, the next node counts) is priced against it: what it saves
// in capital and what it costs in days.
#pragma once

#include <optional>
#include <functional>
#include <string>
#include <vector>

#include "sim/core/hardware_profile.h"
#include "sim/core/result.h"
#include "sim/core/scenario.h"
#include "sim/plan/planner.h"
#include "sim/run/simulate.h"

namespace trainsim {

enum class SizeObjective { kCost, kTime };

struct SizeOptions {
  double tokens = 0;  // to train
  double days = 0;    // deadline
  std::vector<int> node_counts;            // tried; empty: the scenario's
  // Tried too on rack-scale profiles (an NVLink domain of several nodes, sold
  // in whole racks), those that are whole racks of it; never on other nodes.
  std::vector<int> whole_rack_counts;
  std::vector<int> nics;                   // NICs per node tried; empty: the scenario's, or a profile's own where it cannot take that many
  std::vector<NodeProfile> node_profiles;  // empty: the scenario's
  std::vector<int> storage_nodes;          // storage node counts tried (scenario with storage); empty: the scenario's
  // Global batch (sequences): fixed at the scenario's when both are 0;
  // otherwise chosen per cluster among CandidateBatches(gpus, batch_min,
  // batch_max) and the scenario's own when the range holds it.
  int batch_min = 0;
  int batch_max = 0;
  SizeObjective objective = SizeObjective::kCost;
  int recheck_top = 3;  // re-simulated at recheck_fidelity
  // Of each re-checked cluster, its best layouts by the closed form that are
  // re-checked too, the best re-checked kept (as `plan` re-checks its top
  // few): the DES may reorder layouts a few percent apart.
  int layouts_rechecked = 3;
  Fidelity recheck_fidelity = Fidelity::kDes;
  // Told how far the sizer is, for progress and ETAs; may be empty. Phases:
  // "sizing" (clusters planned of those tried; `what` names the cluster), then
  // "re-checking with the DES" (the top few, each over the whole run).
  std::function<void(int done, int total, const std::string& phase, const std::string& what)> progress;
};

struct SizedCluster {
  std::string node;  // profile name
  int nodes = 0;
  int nics_per_node = 0;
  int storage_nodes = 0;
  int gpus = 0;
};

struct SizeCandidate {
  SizedCluster cluster;
  PlanConfig config;
  int global_batch = 0;
  int steps = 0;
  SimulationResult analytical;  // what ranked it
  SimulationResult result;      // re-checked (the analytical result outside the top few)
  // Its cluster's next best layouts at its batch by the closed form
  // (SizeOptions::layouts_rechecked - 1), re-checked beside `config`.
  std::vector<PlanCandidate> other_layouts;
  bool rechecked = false;
  std::string recheck_refused;  // why the DES declined to re-check it (then `result` is analytical)
  bool meets_deadline = false;
  double objective = 0;  // USD or seconds
};

struct SizeRejection {
  SizedCluster cluster;
  std::string reason;
  double misses_by_days = 0;  // > 0: it runs but past the deadline; 0: it cannot run (null in the JSON)
};

// "4 NICs instead of 8": what one hardware option changes against the answer.
struct SizeOptionDelta {
  std::string option;            // e.g. "4 NICs instead of 8"
  double capital_delta_usd = 0;  // option minus answer (0 unless capital_known)
  bool capital_known = false;    // both sides have purchase prices
  double days_delta = 0;
  double cost_delta_usd = 0;
  // The two sides the deltas compare, at the deltas' fidelity: the answer's
  // own analytical figures are nowhere else in a report whose answer was re-checked.
  double days = 0, cost_usd = 0;                // the option's
  double answer_days = 0, answer_cost_usd = 0;  // the answer's
  bool meets_deadline = false;  // as the report judges the option's cluster: re-checked, where it was
  double misses_by_days = 0;
  bool rechecked = false;  // the deltas compare both sides' re-checked figures (else both analytical)
};

struct SizeReport {
  double tokens = 0;
  double days = 0;
  SizeObjective objective = SizeObjective::kCost;
  std::string cost_model;
  std::vector<SizeCandidate> candidates;  // meeting the deadline, best first
  std::vector<SizeRejection> rejected;    // missing it (least first), then those that cannot run
  std::vector<SizeOptionDelta> options;   // against candidates[0]
  bool mixture_of_experts = false;        // the candidates' settings include EP, ETP and the dispatcher
  int clusters = 0;                       // searched
  int rechecked = 0;                      // re-simulated at the re-check fidelity
  std::string recheck_fidelity;           // "des" or "analytical"
  long configurations = 0;                // parallelism configurations timed, all clusters
  double search_s = 0;
  double recheck_s = 0;
};

// The scenario a candidate is: `base` on the candidate's cluster (its node
// profile from o.node_profiles, else the base's), global batch, steps, the
// tokens to train and its parallelism as the search evaluated it. What the
// re-check simulates, and what a caller asks about the answer.
Scenario CandidateScenario(const Scenario& base, const SizeOptions& o, const SizeCandidate& c);

// steps = ceil(tokens / (global_batch x seq_len)).
long StepsForTokens(double tokens, int global_batch, int seq_len);

// Global batches tried for a cluster of `gpus` GPUs: the largest multiple of
// each plausible data-parallel size (gpus / m, m a power of two) in
// [lo, hi], at most `max_count`, largest first; {lo} when none fits.
std::vector<int> CandidateBatches(int gpus, int lo, int hi, int max_count = 3);

// Never throws. `base` is a parsed scenario (its model, training settings,
// fabric, storage, checkpoints, failures and cost model are kept).
SizeReport SizeCluster(const Scenario& base, const SizeOptions& options);

std::string SizeToText(const SizeReport& r);
// {"candidates": [{"cluster", "parallelism", "training", "result"}...], "rejected": [{"cluster", "reason"}...], ...}
std::string SizeToJson(const SizeReport& r);

}  // namespace trainsim
