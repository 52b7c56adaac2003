#include "sim/run/run_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "sim/cost/checkpoint_cost.h"
#include "sim/run/cost_model.h"
#include "sim/run/hot_spares.h"

namespace trainsim {

namespace {

std::string Hours(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g h", s / 3600.0);
  return buf;
}

std::string Gib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

double YoungDalyInterval(double checkpoint_cost_s, double system_mtbf_s) {
  if (checkpoint_cost_s <= 0 || system_mtbf_s <= 0) return 0;
  return std::sqrt(2.0 * checkpoint_cost_s * system_mtbf_s);
}

void ApplyRunModel(const Scenario& s, const StepTiming& timing, SimulationResult& r) {
  RunReport& run = r.run;
  run.steps = s.training.steps;
  run.tokens = double(s.training.global_batch) * s.training.seq_len * s.training.steps;
  const double compute_s = r.step_time_s * s.training.steps;

  // Checkpoints.
  const bool storage = s.storage.has_value();
  if (storage) {
    run.checkpoint_bytes = CheckpointBytes(s);
    if (s.checkpoint.mode == CheckpointMode::kAsync) {
      // An async save first copies each writer's shard to host memory (the
      // staging buffer the write then drains): a node that cannot hold its
      // writers' shards cannot checkpoint this way.
      const double staged_bytes = run.checkpoint_bytes / CheckpointWritingNodes(s);
      if (s.node.host_memory_bytes > 0 && staged_bytes > s.node.host_memory_bytes) {
        r.error = "async checkpoint does not fit in host memory: each node stages " + Gib(staged_bytes) + " of its GPUs' shards but " +
                  s.node.name + " has " + Gib(s.node.host_memory_bytes) + " (checkpoint.mode: sync, checkpoint.contents: weights, or more nodes)";
        return;
      }
    }
    run.checkpoint_write_s = timing.checkpoint_write_s ? *timing.checkpoint_write_s
                                                       : s.storage->latency_s + run.checkpoint_bytes / CheckpointWriteBytesPerS(s);
    run.restore_s = s.storage->latency_s + run.checkpoint_bytes / CheckpointReadBytesPerS(s);
    if (timing.checkpoint_stall_s) {
      run.checkpoint_stall_s = *timing.checkpoint_stall_s;
    } else {
      if (s.checkpoint.mode == CheckpointMode::kSync) {
        run.checkpoint_stall_s = run.checkpoint_write_s;
      } else {
        // Async: training waits for the device-to-host copy of its shard; the
        // write then overlaps the following steps, unless it is still running
        // when the next checkpoint is due.
        const double shard = run.checkpoint_bytes / s.gpus();
        const double copy = shard / s.node.host_copy_bytes_per_s_per_gpu();
        const double interval = s.checkpoint.every_steps * r.step_time_s;
        run.checkpoint_stall_s = copy + std::max(0.0, run.checkpoint_write_s - copy - interval);
      }
    }
  }
  const int every = s.checkpoint.every_steps;
  run.checkpoints = (storage && every > 0) ? s.training.steps / every : 0;
  run.checkpoint_overhead_s = run.checkpoints * run.checkpoint_stall_s;
  run.chosen_checkpoint_interval_s = every > 0 ? every * r.step_time_s : 0;

  // Failures: work since the last checkpoint is lost, plus restart and restore.
  double wall = compute_s + run.checkpoint_overhead_s;
  if (s.failures.node_mtbf_hours > 0) {
    const double mtbf = s.failures.node_mtbf_hours * 3600.0 / s.nodes;
    // With no checkpoint written in the run (none asked for, or an interval
    // longer than the run), a failure goes back to its start.
    const double interval = run.checkpoints > 0 ? run.chosen_checkpoint_interval_s + run.checkpoint_stall_s : wall;
    const double per_failure = interval / 2 + s.failures.restart_s + run.restore_s;
    // Failures also strike during re-done work: wall = productive / (1 - per_failure / mtbf).
    const double waste = per_failure / mtbf;
    if (waste >= 1) {
      // Another failure is due before the work since the last checkpoint and
      // the restart are redone: the run never finishes.
      r.error = "cannot make progress: the " + std::to_string(s.nodes) + " nodes fail every " + Hours(mtbf) +
                " on average, but half a checkpoint interval plus restart and restore take " + Hours(per_failure);
      run.time_to_train_s = 0;
      run.goodput = 0;
      return;
    }
    wall = (compute_s + run.checkpoint_overhead_s) / (1 - waste);
    run.expected_failures = wall / mtbf;
    run.lost_work_s = run.expected_failures * per_failure;
    run.best_checkpoint_interval_s = YoungDalyInterval(storage ? run.checkpoint_stall_s : 0, mtbf);
    run.hot_spares = HotSpares(s.nodes * s.failures.repair_hours / s.failures.node_mtbf_hours, s.failures.spare_probability);
  }
  run.time_to_train_s = wall;
  run.goodput = wall > 0 ? compute_s / wall : 1;

  // Energy and cost: the allocation is held (and paid) for the whole wall
  // time; GPU nodes draw load power except while restarting after a failure,
  // when they idle. Storage nodes draw their power throughout.
  const double hours = wall / 3600.0;
  const double restart_hours = run.expected_failures * s.failures.restart_s / 3600.0;
  const double gpu_node_kwh = s.nodes * (s.node.power_load_w * (hours - restart_hours) + s.node.power_idle_w * restart_hours) / 1000.0;
  const double storage_kw = storage ? s.storage_nodes * s.storage->power_w / 1000.0 : 0;
  run.energy_kwh = gpu_node_kwh + storage_kw * hours;
  ApplyCostModel(s, run);
}

}  // namespace trainsim
