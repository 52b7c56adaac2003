// The result of simulating a scenario: step time and its breakdown, memory per
// GPU, and the run-level figures (time to train, checkpoints, failures, cost).
// Field names are the result keys of design.md §3; sim/core/result_fields.h
// lists each once, and every writer (JSON, CSV, summary, compare, GUI) walks that table.
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/error.h"

namespace trainsim {

struct StepBreakdown {
  double compute_s = 0;
  double exposed_communication_s = 0;
  double pipeline_bubble_s = 0;
  double optimizer_s = 0;
  double data_stall_s = 0;
  double total_s() const { return compute_s + exposed_communication_s + pipeline_bubble_s + optimizer_s + data_stall_s; }
};

struct MemoryReport {
  bool fits = true;
  double peak_gib_per_gpu = 0;
  double weights_gib = 0;
  double gradients_gib = 0;
  double optimizer_gib = 0;
  double activations_gib = 0;
  double workspace_gib = 0;
  double offloaded_activations_gib = 0;  // per GPU, in host memory (training.activation_offload_layers)
  double capacity_gib = 0;  // usable memory of the GPU
  int peak_stage = 0;       // the pipeline rank the figures are of
  std::string reason;       // why it does not fit; empty when it fits
  bool host_exceeded = false;  // what does not fit is the offloaded activations in host memory
  // The one-line error of a report that does not fit: which memory, and why.
  std::string Problem() const { return (host_exceeded ? "does not fit in host memory: " : "does not fit in GPU memory: ") + reason; }
};

struct RunReport {
  int steps = 0;
  double tokens = 0;
  double time_to_train_s = 0;
  double checkpoint_bytes = 0;
  double checkpoint_write_s = 0;
  double checkpoint_stall_s = 0;     // per checkpoint, what training waits for
  double checkpoint_overhead_s = 0;  // over the whole run
  int checkpoints = 0;
  double restore_s = 0;
  // Failures are modelled (failures.node_mtbf_hours given): without, the
  // expected failures and lost work are no figure (null), not 0.
  bool failures_modelled = false;
  double expected_failures = 0;
  double lost_work_s = 0;
  double goodput = 1;
  // NaN where they do not apply (null in JSON, empty in CSV; 0 would read as
  // "checkpoint continuously"): best without a failure model or storage,
  // chosen without checkpoints, both where the run model did not run.
  double best_checkpoint_interval_s = std::numeric_limits<double>::quiet_NaN();
  double chosen_checkpoint_interval_s = std::numeric_limits<double>::quiet_NaN();
  double energy_kwh = 0;  // IT energy: the GPU nodes at their load and the storage nodes
  // Ownership: the IT energy times the site's PUE (cooling, power
  // conversion), what the electricity bill counts; 0 where no site prices the run.
  double facility_energy_kwh = 0;
  double cost_usd = 0;
  double cost_per_billion_tokens_usd = 0;
  std::string cost_model = "rental";  // which model priced the run: rental | ownership
  double capital_usd = 0;  // purchase price of the cluster (nodes, NICs, switches, links, storage); 0: no figures
  int hot_spares = 0;      // spare nodes that cover the nodes in repair at failures.spare_probability
  // Nodes of the whole racks a rack-scale system is bought in (GB200 NVL72:
  // 18 trays) that the job leaves idle: spares already in the capital.
  int idle_rack_nodes = 0;
};

// Where a run's hot spares come from, for its summary: "" without spares or
// capital, else " (not in the capital)", " (idle nodes of its racks)" or " (2
// idle nodes of its racks, 2 not in the capital)".
std::string HotSparesCapitalText(const RunReport& run);

// One span of the simulated timeline, for --trace and the GUI Gantt chart.
// A track is "stage N WHAT" (a pipeline stage's compute, comm, dp or cp
// lane) or a run-wide one ("steps", "storage"); the trace writes "stage N"
// as a process and WHAT as its thread. Slices on one track may overlap (two
// sends in flight); writers that need disjoint slices split them into lanes.
struct TimelineEvent {
  std::string track;  // e.g. "stage 0 compute", "stage 0 comm", "storage"
  std::string name;   // e.g. "F3", "B3", "dp reduce-scatter", "checkpoint write"
  double start_s = 0;
  double duration_s = 0;
  // What kind of work: "step", "forward", "backward", "tp" (a pass's
  // exposed tensor/context-parallel waits), "optimizer", "pp", "dp", "cp",
  // "ep", "data", "checkpoint" (the trace's `cat`, the GUI's colour).
  std::string category;
  // Small key/value details: micro batch, chunk, bytes, link, step.
  std::vector<std::pair<std::string, std::string>> args;
};
// The model's size: the parameters it holds, and those a token passes
// through (all of them for a dense model; the routed experts' share for MoE).
struct ModelSummary {
  double parameters = 0;
  double active_parameters = 0;
  // The multi-token-prediction modules', trained beside the model but, as in
  // published totals (DeepSeek-V3's 671B), not in `parameters`; 0: none.
  double mtp_parameters = 0;
  // What the run trains: every parameter (the MTP modules' too), or under
  // LoRA its adapters alone.
  double trainable_parameters = 0;
};

// A parameter count to about three figures, in billions up to a trillion:
// "1.03T", "671B", "46.7B", "0.35B".
std::string ParameterCountText(double parameters);
// "46.7B (12.9B active)" where a token passes through fewer parameters than the
// model holds (MoE), else "69.0B"; spelled out, "46.7B parameters (12.9B
// active per token, both vocabulary matrices counted)" and "69.0B parameters",
// with the MTP modules' count after it where there are any.
std::string ModelSizeText(const ModelSummary& m, bool spelled_out = false);

struct SimulationResult {
  std::string name;
  int gpus = 0;
  std::string fidelity = "analytical";
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;
  StepBreakdown breakdown;
  // The pipeline split that ran (sim/core/stage_plan.h): layers per rank,
  // chunks joined by '+', and the rule that chose it.
  std::string pipeline_layers;
  std::string pipeline_split;
  // The micro batch that ran and how it was chosen ("given", or "auto: ..."
  // for training.micro_batch: auto; sim/run/micro_batch_choice.h).
  int micro_batch = 0;
  std::string micro_batch_rule;
  // The pipeline rank whose point of view the breakdown takes: the slowest
  // stage, whose slots pace the step (which one can change with the
  // hardware: a stage heavy in all-to-alls slows most on fewer NICs); -1
  // without a pipeline.
  int slowest_stage = -1;
  // The framework profile whose defaults and kernels ran (training.framework,
  // else the node's), and which of the two it was: "given" or
  // "<node>'s default".
  std::string framework;
  std::string framework_rule;
  // The training precision (bf16, fp8, mxfp8, ...): its dense peak is what
  // mfu is measured against.
  std::string precision;
  // Rack-scale systems: how the ranks fill the NVLink domains and which
  // groups cross them (Scenario::nvlink_domains_text); empty elsewhere.
  std::string nvlink_domains;
  // The parallelism and micro batch that ran (Scenario::parallelism_text):
  // data: auto and micro_batch: auto resolved.
  std::string parallelism;
  // What the scenario's loader warned of (io's ScenarioWarnings, each
  // without its "warning: " prefix: WarningTexts): set by the front end or
  // sweep that loaded it. A JSON list; joined by " | " in a CSV cell.
  std::vector<std::string> warnings;
  MemoryReport memory;
  RunReport run;
  ModelSummary model;
  std::string error;  // non-empty: the simulation could not run (exit status 1)
  ErrorKind error_kind = ErrorKind::kInternal;  // meaningful when error is set
  // False for a scenario refused before anything was simulated (a number
  // format its GPU lacks): beyond the name, no field holds a figure.
  bool simulated = true;
  // The run can happen: it fits and nothing refused or ruled it out. Time and
  // cost of an infeasible result are what it would take, not what it takes.
  bool feasible() const { return error.empty(); }
  std::vector<TimelineEvent> timeline;  // filled when asked for (DES)
};

}  // namespace trainsim
