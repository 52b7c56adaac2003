#include "sim/core/result_fields.h"

#include <stdexcept>

namespace trainsim {

std::string ResultField::Group() const {
  const auto dot = key.find('.');
  return dot == std::string::npos ? std::string() : key.substr(0, dot);
}

std::string ResultField::Name() const {
  const auto dot = key.find('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

const std::vector<ResultField>& ResultFields() {
  using R = const SimulationResult&;
  using Q = Quantity;
  static const auto has_error = [](R r) { return !r.error.empty(); };
  static const auto has_pipeline = [](R r) { return !r.pipeline_layers.empty(); };
  // A checkpoint's size where there is storage to write one; its write and
  // stall where the run writes one (a write time of none read as a stall).
  static const auto has_checkpoint_storage = [](R r) { return r.run.checkpoint_bytes > 0; };
  static const auto takes_checkpoints = [](R r) { return r.run.checkpoints > 0; };
  static const auto failures_modelled = [](R r) { return r.run.failures_modelled; };
  static const std::vector<ResultField> fields = {
      {.key = "name", .label = "Scenario", .quantity = Q::kText, .kept_when_infeasible = true, .before_simulating = true,
       .text = [](R r) { return r.name; }},
      {.key = "gpus", .label = "GPUs", .quantity = Q::kCount, .compared = true, .kept_when_infeasible = true,
       .before_simulating = true, .present = [](R r) { return r.gpus > 0; }, .get = [](R r) { return double(r.gpus); }},
      {.key = "parallelism", .label = "Parallelism", .quantity = Q::kText, .kept_when_infeasible = true,
       .present = [](R r) { return !r.parallelism.empty(); }, .text = [](R r) { return r.parallelism; }},
      {.key = "fidelity", .label = "Fidelity", .quantity = Q::kText, .kept_when_infeasible = true, .before_simulating = true,
       .present = [](R r) { return !r.fidelity.empty(); }, .text = [](R r) { return r.fidelity; }},
      {.key = "feasible", .label = "Can run", .quantity = Q::kBool, .lower_is_better = false, .kept_when_infeasible = true,
       .status = true, .get = [](R r) { return r.feasible() ? 1.0 : 0.0; }},
      {.key = "error", .label = "Why it cannot run", .quantity = Q::kText, .status = true, .present = has_error,
       .text = [](R r) { return r.error; }},
      {.key = "error_kind", .label = "Kind of failure", .quantity = Q::kText, .status = true, .present = has_error,
       .text = [](R r) { return ToString(r.error_kind); }},
      {.key = "warnings", .label = "Warnings", .quantity = Q::kText, .kept_when_infeasible = true,
       .text =
           [](R r) {
             std::string joined;
             for (const std::string& w : r.warnings) joined.append(joined.empty() ? "" : " | ").append(w);
             return joined;
           },
       .list = [](R r) { return r.warnings; }},
      {.key = "step_time_s", .label = "Step time", .quantity = Q::kSeconds, .compared = true,
       .get = [](R r) { return r.step_time_s; }},
      {.key = "tokens_per_s_per_gpu", .label = "Throughput per GPU", .quantity = Q::kTokensPerSecond,
       .lower_is_better = false, .compared = true, .get = [](R r) { return r.tokens_per_s_per_gpu; }},
      {.key = "model_tflops_per_gpu", .label = "Model TFLOP/s per GPU", .quantity = Q::kTflops,
       .lower_is_better = false, .get = [](R r) { return r.model_tflops_per_gpu; }},
      {.key = "mfu", .label = "MFU", .quantity = Q::kFraction, .lower_is_better = false, .compared = true,
       .get = [](R r) { return r.mfu; }},
      {.key = "precision", .label = "Precision (MFU's peak)", .quantity = Q::kText, .kept_when_infeasible = true,
       .present = [](R r) { return !r.precision.empty(); }, .text = [](R r) { return r.precision; }},
      {.key = "breakdown_s.compute", .label = "compute", .quantity = Q::kSeconds, .compared = true,
       .part_of = "step_time_s", .get = [](R r) { return r.breakdown.compute_s; }},
      {.key = "breakdown_s.exposed_communication", .label = "exposed communication", .quantity = Q::kSeconds,
       .compared = true, .part_of = "step_time_s", .get = [](R r) { return r.breakdown.exposed_communication_s; }},
      {.key = "breakdown_s.pipeline_bubble", .label = "pipeline bubble", .quantity = Q::kSeconds, .compared = true,
       .part_of = "step_time_s", .get = [](R r) { return r.breakdown.pipeline_bubble_s; }},
      {.key = "breakdown_s.optimizer", .label = "optimizer", .quantity = Q::kSeconds, .compared = true,
       .part_of = "step_time_s", .get = [](R r) { return r.breakdown.optimizer_s; }},
      {.key = "breakdown_s.data_stall", .label = "data stall", .quantity = Q::kSeconds, .compared = true,
       .part_of = "step_time_s", .get = [](R r) { return r.breakdown.data_stall_s; }},
      {.key = "memory.fits", .label = "Fits in GPU memory", .quantity = Q::kBool, .lower_is_better = false,
       .kept_when_infeasible = true, .get = [](R r) { return r.memory.fits ? 1.0 : 0.0; }},
      {.key = "memory.peak_gib_per_gpu", .label = "Memory per GPU (peak)", .quantity = Q::kGib, .compared = true,
       .kept_when_infeasible = true, .get = [](R r) { return r.memory.peak_gib_per_gpu; }},
      {.key = "memory.weights_gib", .label = "weights", .quantity = Q::kGib, .kept_when_infeasible = true,
       .part_of = "memory.peak_gib_per_gpu", .get = [](R r) { return r.memory.weights_gib; }},
      {.key = "memory.gradients_gib", .label = "gradients", .quantity = Q::kGib, .kept_when_infeasible = true,
       .part_of = "memory.peak_gib_per_gpu", .get = [](R r) { return r.memory.gradients_gib; }},
      {.key = "memory.optimizer_gib", .label = "optimizer state", .quantity = Q::kGib, .kept_when_infeasible = true,
       .part_of = "memory.peak_gib_per_gpu", .get = [](R r) { return r.memory.optimizer_gib; }},
      {.key = "memory.activations_gib", .label = "activations", .quantity = Q::kGib, .kept_when_infeasible = true,
       .part_of = "memory.peak_gib_per_gpu", .get = [](R r) { return r.memory.activations_gib; }},
      // Off the HBM before the capacity below, so not a part of the peak.
      {.key = "memory.workspace_gib", .label = "reserved (CUDA context, NCCL, workspaces)", .quantity = Q::kGib,
       .kept_when_infeasible = true, .get = [](R r) { return r.memory.workspace_gib; }},
      {.key = "memory.offloaded_activations_gib", .label = "activations in host memory", .quantity = Q::kGib,
       .kept_when_infeasible = true, .present = [](R r) { return r.memory.offloaded_activations_gib > 0; },
       .get = [](R r) { return r.memory.offloaded_activations_gib; }},
      {.key = "memory.capacity_gib", .label = "GPU memory usable", .quantity = Q::kGib, .lower_is_better = false,
       .kept_when_infeasible = true, .get = [](R r) { return r.memory.capacity_gib; }},
      {.key = "memory.reason", .label = "Why it does not fit", .quantity = Q::kText, .kept_when_infeasible = true,
       .present = [](R r) { return !r.memory.reason.empty(); }, .text = [](R r) { return r.memory.reason; }},
      {.key = "run.steps", .label = "Steps", .quantity = Q::kCount, .kept_when_infeasible = true,
       .get = [](R r) { return double(r.run.steps); }},
      {.key = "run.time_to_train_s", .label = "Time to train", .quantity = Q::kDuration, .compared = true,
       .get = [](R r) { return r.run.time_to_train_s; }},
      // No figure (null) where the run writes no checkpoint: "0 GiB" read as measured.
      {.key = "run.checkpoint_bytes", .label = "Checkpoint size", .quantity = Q::kBytes, .kept_when_infeasible = true,
       .absent = "no checkpoint storage", .present = has_checkpoint_storage, .get = [](R r) { return r.run.checkpoint_bytes; }},
      {.key = "run.checkpoint_write_s", .label = "Checkpoint write", .quantity = Q::kDuration, .compared = true,
       .absent = "no checkpoints", .present = takes_checkpoints, .get = [](R r) { return r.run.checkpoint_write_s; }},
      {.key = "run.checkpoint_overhead_s", .label = "Checkpoint overhead (run)", .quantity = Q::kDuration,
       .compared = true, .get = [](R r) { return r.run.checkpoint_overhead_s; }},
      // No figure without a failure model: "0 failures" over 120 days read as a finding.
      {.key = "run.expected_failures", .label = "Expected failures", .quantity = Q::kCount, .compared = true,
       .absent = "not modelled", .present = failures_modelled, .get = [](R r) { return r.run.expected_failures; }},
      {.key = "run.goodput", .label = "Goodput", .quantity = Q::kFraction, .lower_is_better = false, .compared = true,
       .get = [](R r) { return r.run.goodput; }},
      {.key = "run.best_checkpoint_interval_s", .label = "Best checkpoint interval", .quantity = Q::kDuration,
       .lower_is_better = false, .get = [](R r) { return r.run.best_checkpoint_interval_s; }},
      {.key = "run.energy_kwh", .label = "Energy (IT, rated load)", .quantity = Q::kKwh, .compared = true,
       .get = [](R r) { return r.run.energy_kwh; }},
      {.key = "run.cost_usd", .label = "Cost per run", .quantity = Q::kUsd, .compared = true,
       .get = [](R r) { return r.run.cost_usd; }},
      // After the contract's run fields, in the order they were added.
      {.key = "run.tokens", .label = "Tokens", .quantity = Q::kCount, .kept_when_infeasible = true,
       .get = [](R r) { return r.run.tokens; }},
      {.key = "run.checkpoints", .label = "Checkpoints in the run", .quantity = Q::kCount,
       .get = [](R r) { return double(r.run.checkpoints); }},
      {.key = "run.checkpoint_stall_s", .label = "Checkpoint stall (mean)", .quantity = Q::kDuration,
       .absent = "no checkpoints", .present = takes_checkpoints, .get = [](R r) { return r.run.checkpoint_stall_s; }},
      {.key = "run.chosen_checkpoint_interval_s", .label = "Checkpoint interval (chosen)", .quantity = Q::kDuration,
       .lower_is_better = false, .get = [](R r) { return r.run.chosen_checkpoint_interval_s; }},
      {.key = "run.restore_s", .label = "Restore after a failure", .quantity = Q::kDuration,
       .get = [](R r) { return r.run.restore_s; }},
      {.key = "run.lost_work_s", .label = "Work lost to failures", .quantity = Q::kDuration,
       .absent = "not modelled", .present = failures_modelled, .get = [](R r) { return r.run.lost_work_s; }},
      {.key = "run.cost_per_billion_tokens_usd", .label = "Cost per billion tokens", .quantity = Q::kUsd,
       .compared = true, .get = [](R r) { return r.run.cost_per_billion_tokens_usd; }},
      {.key = "run.cost_model", .label = "Cost model", .quantity = Q::kText, .kept_when_infeasible = true,
       .text = [](R r) { return r.run.cost_model; }},
      // Absent (blank in a CSV) where the hardware has no purchase prices: 0 would read as free.
      {.key = "run.capital_usd", .label = "Capital (purchase)", .quantity = Q::kUsd, .compared = true, .kept_when_infeasible = true,
       .absent = "no prices", .present = [](R r) { return r.run.capital_usd > 0; }, .get = [](R r) { return r.run.capital_usd; }},
      {.key = "run.hot_spares", .label = "Hot spares", .quantity = Q::kCount, .compared = true, .kept_when_infeasible = true,
       .get = [](R r) { return double(r.run.hot_spares); }},
      // Only on rack-scale systems whose racks the job leaves part idle.
      {.key = "run.idle_rack_nodes", .label = "Idle nodes of its racks", .quantity = Q::kCount, .compared = true,
       .kept_when_infeasible = true, .present = [](R r) { return r.run.idle_rack_nodes > 0; },
       .get = [](R r) { return double(r.run.idle_rack_nodes); }},
      {.key = "run.facility_energy_kwh", .label = "Facility energy (x PUE)", .quantity = Q::kKwh, .compared = true,
       .present = [](R r) { return r.run.facility_energy_kwh > 0; }, .get = [](R r) { return r.run.facility_energy_kwh; }},
      {.key = "model.parameters", .label = "Parameters", .quantity = Q::kCount, .kept_when_infeasible = true,
       .before_simulating = true, .present = [](R r) { return r.model.parameters > 0; }, .get = [](R r) { return r.model.parameters; }},
      {.key = "model.active_parameters", .label = "Active parameters per token", .quantity = Q::kCount,
       .kept_when_infeasible = true, .before_simulating = true, .present = [](R r) { return r.model.active_parameters > 0; },
       .get = [](R r) { return r.model.active_parameters; }},
      {.key = "model.trainable_parameters", .label = "Trainable parameters", .quantity = Q::kCount, .compared = true, .kept_when_infeasible = true,
       .present = [](R r) { return r.model.trainable_parameters > 0; }, .get = [](R r) { return r.model.trainable_parameters; }},
      {.key = "pipeline.layers", .label = "Layers per pipeline stage", .quantity = Q::kText,
       .kept_when_infeasible = true, .present = has_pipeline, .text = [](R r) { return r.pipeline_layers; }},
      {.key = "pipeline.split", .label = "Pipeline split", .quantity = Q::kText, .kept_when_infeasible = true,
       .present = has_pipeline, .text = [](R r) { return r.pipeline_split; }},
      {.key = "pipeline.micro_batch", .label = "Micro batch", .quantity = Q::kCount, .kept_when_infeasible = true,
       .present = has_pipeline, .get = [](R r) { return double(r.micro_batch); }},
      {.key = "pipeline.micro_batch_rule", .label = "Micro batch chosen", .quantity = Q::kText,
       .kept_when_infeasible = true, .present = has_pipeline, .text = [](R r) { return r.micro_batch_rule; }},
      {.key = "pipeline.slowest_stage", .label = "Breakdown of pipeline stage", .quantity = Q::kCount,
       .kept_when_infeasible = true, .present = [](R r) { return r.slowest_stage >= 0; },
       .get = [](R r) { return double(r.slowest_stage); }},
      {.key = "framework.name", .label = "Framework profile", .quantity = Q::kText, .kept_when_infeasible = true,
       .present = [](R r) { return !r.framework.empty(); }, .text = [](R r) { return r.framework; }},
      {.key = "framework.rule", .label = "Framework chosen", .quantity = Q::kText, .kept_when_infeasible = true,
       .present = [](R r) { return !r.framework.empty(); }, .text = [](R r) { return r.framework_rule; }},
      {.key = "placement.nvlink_domains", .label = "NVLink domains", .quantity = Q::kText, .kept_when_infeasible = true,
       .present = [](R r) { return !r.nvlink_domains.empty(); }, .text = [](R r) { return r.nvlink_domains; }},
  };
  return fields;
}

const ResultField* FindResultField(const std::string& key) {
  for (const auto& f : ResultFields()) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

const ResultField& ResultFieldOf(const std::string& key) {
  const ResultField* f = FindResultField(key);
  if (f == nullptr) throw std::logic_error("no result field " + key);
  return *f;
}

std::vector<const ResultField*> DisplayFields() {
  std::vector<const ResultField*> out;
  const auto& all = ResultFields();
  for (const auto& f : all) {
    if (!f.part_of.empty() && FindResultField(f.part_of) != nullptr) continue;  // shown under its whole
    out.push_back(&f);
    for (const auto& part : all) {
      if (part.part_of == f.key) out.push_back(&part);
    }
  }
  return out;
}

std::string DisplayLabel(const ResultField& f) { return f.part_of.empty() ? f.label : "  " + f.label; }

}  // namespace trainsim
