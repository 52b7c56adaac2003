// The parallelism planner behind `trainsim plan`: for a scenario's model,
// cluster and global batch, search tensor, pipeline, virtual stages, context
// parallelism, micro batch, recompute, sequence parallelism and the
// distributed optimizer. Each configuration is pruned by divisibility
// (CheckParallelism in sim/scenario.h, the scenario parser's rules and messages) and by memory
// (models/memory_model.h) before it is timed with the analytical path; the
// feasible ones are ranked by the objective and the top K re-simulated at the
// re-check fidelity (the DES by default) and re-ranked. The planner mutates
// one parsed Scenario in place, so the search never touches the disk.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/result.h"
#include "sim/core/scenario.h"
#include "sim/run/micro_batch_choice.h"
#include "sim/run/simulate.h"

namespace trainsim {

// The searched settings of one configuration.
struct PlanConfig {
  int tensor = 1;
  int pipeline = 1;
  int virtual_stages = 1;
  int context = 1;
  int data = 1;  // derived: GPUs / (tensor x pipeline x context)
  bool sequence_parallel = false;
  DataSharding data_sharding = DataSharding::kOptimizer;
  int micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  int expert = 1;         // EP (mixtures of experts)
  int expert_tensor = 1;  // ETP
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;  // how tokens reach their experts (EP > 1)
  bool moe_a2a_overlap = false;                             // the EP all-to-alls behind another micro batch's compute

  bool operator==(const PlanConfig&) const = default;
};

// "TP4 PP4 VP5 CP1 DP4 mb1 recompute=none SP DO" (SP/DO only when on).
std::string Describe(const PlanConfig& c);
PlanConfig ConfigOf(const Scenario& s);
// Sets the scenario's parallelism and training fields to `c` (overlap flags
// follow the parser's defaults for the new tensor size and sequence parallelism).
void ApplyConfig(Scenario& s, const PlanConfig& c);
// ApplyConfig as the planner evaluates `c` for `base`: TP communication
// overlap is the base scenario's (the framework's when the base has no TP or
// no SP) for every TP > 1 with SP, which Megatron-Core's overlap needs. For
// re-simulating a configuration the planner chose.
void ApplyPlannedConfig(Scenario& s, const Scenario& base, const PlanConfig& c);

enum class PlanObjective { kTime, kCost };

struct PlanOptions {
  PlanObjective objective = PlanObjective::kTime;
  int top_k = 5;
  Fidelity recheck_fidelity = Fidelity::kDes;  // the top K are re-simulated at this fidelity
  int max_micro_batch = kAutoMicroBatchMax;  // the powers of two training.micro_batch: auto tries
  int max_context = 8;
  int max_tensor = 0;  // 0: the GPUs per node (tensor parallelism stays on NVLink)
  // One TP x PP family alone (a heatmap's cell): the tensor and pipeline
  // sizes the search keeps; 0 searches them as usual.
  int only_tensor = 0;
  int only_pipeline = 0;
  // With EP > 1, the MoE dispatchers and all-to-all overlaps tried (software
  // choices the framework must support); empty: the scenario's own.
  std::vector<MoeDispatcher> moe_dispatchers;
  std::vector<bool> moe_a2a_overlaps;
  // Told how far the planner is, for progress and ETAs; may be empty. Phases:
  // "searching" (configurations evaluated of those the search space gives),
  // then "re-checking with the DES" (the top K and the baseline) when it re-checks.
  std::function<void(long done, long total, const std::string& phase)> progress;
};

struct PlanCandidate {
  PlanConfig config;
  SimulationResult analytical;  // what ranked it
  SimulationResult result;      // at the re-check fidelity (the analytical result outside the top K)
  double objective = 0;         // seconds per step, or run cost in USD
  // Why the re-check fidelity declined to run it (the DES's bounds on what it
  // simulates): then `result` is the analytical one, which ranks it.
  std::string recheck_refused;
};

struct PlanRejection {
  PlanConfig config;
  std::string category;  // "divisibility", "memory", "unsupported" (settings the software cannot run) or "simulation"
  std::string reason;
  // Its (TP, PP, CP) family's members: how many are feasible and how many were rejected.
  long family_feasible = 0, family_rejected = 0;
};

struct PlanReport {
  std::vector<PlanCandidate> candidates;  // the top K, best first, re-checked
  // Why whole (TP, PP, CP) families fail: for each family with no feasible
  // member, the rejection of its least demanding member (full recompute,
  // micro batch 1, no interleaving).
  std::vector<PlanRejection> rejected;
  // The same for each family that has feasible members too: its least
  // demanding rejected member (why the family's more demanding settings fail).
  // With `rejected`, every family with a rejection has one example.
  std::vector<PlanRejection> rejected_members;
  PlanConfig baseline_config;  // the scenario's own settings
  std::optional<PlanCandidate> baseline;     // its result (re-checked) when it is feasible
  std::optional<PlanRejection> baseline_rejection;
  // 1-based: the baseline's row in the re-checked table where it is among
  // the top K, else its analytical rank among the feasible (0: infeasible).
  int baseline_rank = 0;
  PlanObjective objective = PlanObjective::kTime;
  std::string recheck_fidelity;     // "des" when the top K were re-simulated with the DES; empty: not re-checked
  // The scenario splits its layers its own way (HasOwnSplit): a candidate of
  // another pipeline shape clears that split to run as ranked.
  bool own_split = false;
  bool mixture_of_experts = false;  // the EP and ETP columns are shown
  long searched = 0, feasible = 0, rejected_divisibility = 0, rejected_memory = 0, rejected_other = 0;
  // The first configuration rejected for another reason than divisibility or
  // memory (settings the software cannot run, failures outpacing the
  // checkpoints), with its reason: what "failed otherwise" stands for.
  std::optional<PlanRejection> other_example;
  double search_s = 0;   // enumeration, pruning and analytical timing
  double recheck_s = 0;  // re-simulating the top K
};

// Never throws. `s` is a parsed scenario; its parallelism is the baseline.
PlanReport Plan(const Scenario& s, const PlanOptions& options = {});

// Why `best` beats `other`: the step-time difference by breakdown component,
// largest first, e.g. "+0.210 s exposed communication, +0.050 s pipeline bubble".
std::string ExplainDifference(const SimulationResult& best, const SimulationResult& other);

// A configuration as plan --json and size --json write it: "parallelism":
// {...}, "training": {...}, the keys of the settings the search varies
// (PlanDimensions; the MoE ones with `moe`), each as the scenario key it
// sets. `training_first`: more training keys, written first
// ("\"global_batch\":512,\"steps\":100").
// `clear_split`: the parallelism object nulls the scenario's own layer split
// (first_stage_layers, last_stage_layers, pipeline_layout), which the
// configuration's pipeline shape runs without.
void PlanSettingsJson(std::string& o, const PlanConfig& c, bool moe, const std::string& training_first = "", bool clear_split = false);

// The human-readable report `trainsim plan` prints.
std::string PlanToText(const PlanReport& r);
// design.md §3 plan --json: {"candidates": [...], "rejected": [...]} plus baseline and counts.
std::string PlanToJson(const PlanReport& r);

}  // namespace trainsim
