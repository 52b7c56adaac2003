#include "sim/run/run_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "sim/core/text_format.h"
#include "sim/cost/checkpoint_cost.h"
#include "sim/run/cost_model.h"
#include "sim/run/hot_spares.h"

namespace trainsim {

namespace {

std::string Hours(double s) { return Fmt("%.3g h", s / 3600.0); }

std::string Gib(double bytes) { return Fmt("%.0f GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

// Below this fraction of the wall time spent training, a run with failures
// is taken not to happen (its expected time is dominated by redone work).
constexpr double kMinGoodput = 0.01;

// The compute time between checkpoints that loses least to checkpoints and
// failures. A sync checkpoint costs its write. An async one costs its
// device-to-host copy while the interval is longer than the write that
// drains it, and the rest of the write where it is not: the best interval
// is then the copy's Daly interval or, where that is shorter than the write,
// at least the write (capped at the write's own Daly interval).
// Not the stall at the chosen interval: the best interval must not depend on it.
double CheckpointIntervalFor(const Scenario& s, const RunReport& run, double mtbf_s) {
  const double write_s = run.checkpoint_write_s, checkpoint_bytes = run.checkpoint_bytes;
  if (s.checkpoint.mode != CheckpointMode::kAsync) return YoungDalyInterval(run.checkpoint_stall_s, mtbf_s);
  const double copy_s = AsyncCopySeconds(s, checkpoint_bytes);  // sim/cost/checkpoint_cost.h
  // The write starts as the copy ends, as do the interval's steps: an interval as long as the write never waits for it.
  return std::max(YoungDalyInterval(copy_s, mtbf_s), std::min(write_s, YoungDalyInterval(write_s, mtbf_s)));
}

}  // namespace

double YoungDalyInterval(double checkpoint_cost_s, double system_mtbf_s) {
  if (checkpoint_cost_s <= 0 || system_mtbf_s <= 0) return 0;
  const double d = checkpoint_cost_s, m = system_mtbf_s;
  if (d >= 2 * m) return m;
  const double x = d / (2 * m);
  return std::sqrt(2 * d * m) * (1 + std::sqrt(x) / 3 + x / 9) - d;
}

double ExpectedSegmentTime(double work_s, double restart_s, double system_mtbf_s) {
  if (work_s <= 0) return 0;
  if (system_mtbf_s <= 0) return work_s;
  return system_mtbf_s * std::exp(restart_s / system_mtbf_s) * std::expm1(work_s / system_mtbf_s);
}

void ApplyRunModel(const Scenario& s, const StepTiming& timing, SimulationResult& r) {
  RunReport& run = r.run;
  run.steps = s.training.steps;
  run.tokens = double(s.training.global_batch) * s.training.seq_len * s.training.steps;
  const double compute_s = r.step_time_s * s.training.steps;

  // Checkpoints. A restart reads the last checkpoint back, or before the
  // first one the run's starting point (RestoreBytes).
  const bool storage = s.storage.has_value();
  double restore_from_start_s = 0, restore_from_checkpoint_s = 0;
  double first_stall_s = -1;  // the first checkpoint's stall where it differs from the rest
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
    const auto read_s = [&](double bytes) { return bytes > 0 ? s.storage->latency_s + bytes / CheckpointReadBytesPerS(s) : 0.0; };
    restore_from_start_s = read_s(RestoreBytes(s, false));
    restore_from_checkpoint_s = read_s(RestoreBytes(s, true));
    if (timing.checkpoint_stall_s) {
      run.checkpoint_stall_s = *timing.checkpoint_stall_s;
    } else {
      if (s.checkpoint.mode == CheckpointMode::kSync) {
        run.checkpoint_stall_s = run.checkpoint_write_s;
      } else {
        // Async: training waits for the device-to-host copy of its shard; the
        // write then overlaps the following steps, unless it is still running
        // when the next checkpoint is due (the interval's steps run from the
        // copy's end, the write's start), which then waits for it before its
        // copy. The first finds no write before it: its copy is all it costs.
        const double copy = AsyncCopySeconds(s, run.checkpoint_bytes);
        const double interval = s.checkpoint.every_steps * r.step_time_s;
        run.checkpoint_stall_s = copy + std::max(0.0, run.checkpoint_write_s - interval);
        first_stall_s = copy;
      }
    }
  }
  const int every = s.checkpoint.every_steps;
  run.checkpoints = (storage && every > 0) ? s.training.steps / every : 0;
  // Per checkpoint, the mean over the run's (as the DES measures it).
  if (first_stall_s >= 0 && run.checkpoints > 0) run.checkpoint_stall_s += (first_stall_s - run.checkpoint_stall_s) / run.checkpoints;
  // The restore a failure costs once a checkpoint precedes it (one written only at the last step never does).
  run.restore_s = run.checkpoints > 0 && s.training.steps > every ? restore_from_checkpoint_s : restore_from_start_s;
  run.checkpoint_overhead_s = run.checkpoints * run.checkpoint_stall_s;
  // "Not applicable" is NaN (null in JSON, empty in CSV): 0 would read as
  // "checkpoint continuously". No checkpoints: no chosen interval; no
  // failure model or no storage: no best one.
  const double not_applicable = std::numeric_limits<double>::quiet_NaN();
  const double interval_s = every > 0 ? every * r.step_time_s : 0;
  // An interval longer than the run writes none: no chosen interval either, as the summary says.
  run.chosen_checkpoint_interval_s = run.checkpoints > 0 ? interval_s : not_applicable;
  run.best_checkpoint_interval_s = not_applicable;

  // Failures: the work since the last checkpoint is lost, and redone after a
  // restart and restore. The run is a string of segments, each a checkpoint
  // interval and its stall (the last one the steps left over, or the whole
  // run where no checkpoint is written), with the expected time of each.
  const double failure_free_s = compute_s + run.checkpoint_overhead_s;
  double wall = failure_free_s;
  const double mtbf = s.failures.node_mtbf_hours * 3600.0 / s.nodes;  // the job's: any of its nodes failing
  run.failures_modelled = s.failures.node_mtbf_hours > 0;
  if (run.failures_modelled) {
    // The first segment restarts from the run's start, the others from their checkpoint.
    const double recovery_start_s = s.failures.restart_s + restore_from_start_s;
    const double recovery_s = s.failures.restart_s + restore_from_checkpoint_s;  // 0 without a storage to read from
    const double segment_s = interval_s + run.checkpoint_stall_s;
    const long full = run.checkpoints;
    const double rest_s = full > 0 ? double(s.training.steps - full * every) * r.step_time_s : failure_free_s;
    // Without a full interval in the run its length is not a segment: an
    // interval far beyond the run would make 0 x infinity of it.
    wall = full > 0 ? ExpectedSegmentTime(segment_s, recovery_start_s, mtbf) + double(full - 1) * ExpectedSegmentTime(segment_s, recovery_s, mtbf) +
                          ExpectedSegmentTime(rest_s, recovery_s, mtbf)
                    : ExpectedSegmentTime(rest_s, recovery_start_s, mtbf);
    if (storage) run.best_checkpoint_interval_s = CheckpointIntervalFor(s, run, mtbf);
    run.hot_spares = HotSpares(s.nodes, s.failures.repair_hours / (s.failures.node_mtbf_hours + s.failures.repair_hours),
                               s.failures.spare_probability);
    if (!std::isfinite(wall) || failure_free_s < kMinGoodput * wall) {
      // The run would spend nearly all its time redoing lost work: it does
      // not happen, and its time, energy and cost have no useful value.
      const double longest_s = full > 0 ? segment_s : rest_s;
      // Checkpointing at every step is the most checkpoints can do: where even
      // that trains under 1% of the time, the restart and restore are the blocker.
      const double shortest_s = r.step_time_s + run.checkpoint_stall_s;
      const bool checkpoints_help = r.step_time_s >= kMinGoodput * ExpectedSegmentTime(shortest_s, recovery_s, mtbf);
      const std::string advice = !storage         ? "checkpoints to a storage system (cluster.storage, checkpoint.every_steps), or fewer nodes"
                                 : checkpoints_help ? "checkpoint more often, or fewer nodes"
                                                    : "no checkpoint interval helps: fewer nodes, or a shorter restart "
                                                      "(failures.restart_minutes) and restore";
      r.error = "cannot make progress: the " + std::to_string(s.nodes) + " nodes fail every " + Hours(mtbf) +
                " on average, but " + (full > 0 ? "a checkpoint interval" : "the run, with no checkpoint written,") +
                " takes " + Hours(longest_s) + " and a restart and restore " + Hours(full > 0 ? recovery_s : recovery_start_s) +
                ": under 1% of the time would train (" + advice + ")";
      const double unknown = std::numeric_limits<double>::quiet_NaN();
      run.time_to_train_s = run.expected_failures = run.lost_work_s = run.goodput = run.energy_kwh = unknown;
      ApplyCostModel(s, run);
      return;
    }
    // Each failure, on average, comes one MTBF after the last (restarts included).
    run.expected_failures = wall / mtbf;
    run.lost_work_s = wall - failure_free_s;
  }
  run.time_to_train_s = wall;
  run.goodput = wall > 0 ? compute_s / wall : 1;

  // Energy and cost: the allocation is held (and paid) for the whole wall
  // time; GPU nodes draw load power except while they wait: restarting after
  // a failure or stalled for a checkpoint (a synchronous write, an async
  // one's copy and drain), when they idle. Storage nodes draw their power
  // throughout.
  const double hours = wall / 3600.0;
  // Each failure idles the nodes for its restart, or until the next failure
  // cuts the restart short: E[min(restart, Exp(MTBF))] = M (1 - e^(-R/M)),
  // so the restarts never outlast the run when failures outpace them.
  const double restart_hours = run.expected_failures > 0 ? run.expected_failures * -mtbf * std::expm1(-s.failures.restart_s / mtbf) / 3600.0 : 0;
  // Each checkpoint's stall once (a stretch redone after a failure counts its stall at load).
  const double stall_hours = std::min(std::max(0.0, hours - restart_hours), run.checkpoint_overhead_s / 3600.0);
  const double idle_hours = restart_hours + stall_hours;
  const double gpu_node_kwh = s.nodes * (s.node.power_load_w * (hours - idle_hours) + s.node.power_idle_w * idle_hours) / 1000.0;
  const double storage_kw = storage ? s.storage_nodes * s.storage->power_w / 1000.0 : 0;
  run.energy_kwh = gpu_node_kwh + storage_kw * hours;
  ApplyCostModel(s, run);
}

}  // namespace trainsim
