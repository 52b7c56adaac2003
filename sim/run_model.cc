#include "sim/run_model.h"

#include <algorithm>
#include <cmath>

namespace trainsim {

double CheckpointBytes(const Scenario& s) {
  const double params = s.model.TotalParameters(s.training.seq_len);
  return params * (s.checkpoint.contents == CheckpointContents::kWeights ? 2.0 : 14.0);
}

namespace {

// Nodes that hold a shard of the checkpoint and write it at the same time.
int WritingNodes(const Scenario& s) {
  const Parallelism& p = s.parallelism;
  // With the distributed optimizer every DP rank owns a slice of the state;
  // otherwise only rank 0 of the gradient replicas (DP x CP: CP ranks hold the
  // same weights) of each model shard writes.
  const bool all_write = p.distributed_optimizer && s.checkpoint.contents == CheckpointContents::kFull;
  const int writers = all_write ? s.gpus() : p.tensor * p.pipeline;
  return std::min(s.nodes, std::max(1, (writers + s.node.gpus_per_node - 1) / s.node.gpus_per_node));
}

// A NIC runs at the slower of its own and the fabric's link rate.
double NicLineRate(const Scenario& s) { return std::min(s.node.nic_bytes_per_s, s.fabric.link_bytes_per_s); }

double StorageBound(const Scenario& s, double per_node_disk) {
  const StorageProfile& st = *s.storage;
  const double front = s.storage_nodes * st.front_end_links_per_node * st.front_end_link_bytes_per_s;
  return std::min(front, s.storage_nodes * per_node_disk);
}

}  // namespace

double CheckpointWriteBytesPerS(const Scenario& s) {
  if (!s.storage) return 0;
  const double nics = double(WritingNodes(s)) * s.node.nics_per_node * NicLineRate(s);
  return std::min(nics, StorageBound(s, s.storage->write_bytes_per_s_per_node));
}

double CheckpointReadBytesPerS(const Scenario& s) {
  if (!s.storage) return 0;
  const double nics = double(s.nodes) * s.node.nics_per_node * NicLineRate(s);
  return std::min(nics, StorageBound(s, s.storage->read_bytes_per_s_per_node));
}

double YoungDalyInterval(double checkpoint_cost_s, double system_mtbf_s) {
  if (checkpoint_cost_s <= 0 || system_mtbf_s <= 0) return 0;
  return std::sqrt(2.0 * checkpoint_cost_s * system_mtbf_s);
}

void ApplyRunModel(const Scenario& s, SimulationResult& r) {
  RunReport& run = r.run;
  run.steps = s.training.steps;
  run.tokens = double(s.training.global_batch) * s.training.seq_len * s.training.steps;
  const double compute_s = r.step_time_s * s.training.steps;

  // Checkpoints.
  const bool storage = s.storage.has_value();
  if (storage) {
    run.checkpoint_bytes = CheckpointBytes(s);
    if (run.checkpoint_write_s <= 0) {
      run.checkpoint_write_s = s.storage->latency_s + run.checkpoint_bytes / CheckpointWriteBytesPerS(s);
    }
    run.restore_s = s.storage->latency_s + run.checkpoint_bytes / CheckpointReadBytesPerS(s);
    if (run.checkpoint_stall_s <= 0) {
      if (s.checkpoint.mode == CheckpointMode::kSync) {
        run.checkpoint_stall_s = run.checkpoint_write_s;
      } else {
        // Async: training waits for the device-to-host copy of its shard; the
        // write then overlaps the following steps, unless it is still running
        // when the next checkpoint is due.
        const double shard = run.checkpoint_bytes / s.gpus();
        const double copy = shard * s.node.gpus_per_node / s.node.pcie_bytes_per_s;
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
    const double interval = every > 0 ? run.chosen_checkpoint_interval_s + run.checkpoint_stall_s : wall;
    const double per_failure = interval / 2 + s.failures.restart_s + run.restore_s;
    // Failures also strike during re-done work: wall = productive / (1 - per_failure / mtbf).
    const double waste = per_failure / mtbf;
    wall = waste < 1 ? (compute_s + run.checkpoint_overhead_s) / (1 - waste) : compute_s * 1e6;
    run.expected_failures = wall / mtbf;
    run.lost_work_s = run.expected_failures * per_failure;
    run.best_checkpoint_interval_s = YoungDalyInterval(storage ? run.checkpoint_stall_s : 0, mtbf);
  }
  run.time_to_train_s = wall;
  run.goodput = wall > 0 ? compute_s / wall : 1;

  // Energy and cost: the allocation is held (and paid) for the whole wall
  // time; GPU nodes draw load power except while restarting after a failure,
  // when they idle. Storage nodes draw their power throughout.
  const double hours = wall / 3600.0;
  const double restart_hours = run.expected_failures * s.failures.restart_s / 3600.0;
  const double gpu_node_kwh = s.nodes * (s.node.power_load_w * (hours - restart_hours) + s.node.power_idle_w * restart_hours) / 1000.0;
  double kw = 0;
  // The profile's price is for its default NIC count; other counts add or
  // save the NICs and their fabric ports (a scenario price is taken as given).
  const double node_price = s.cost.node_hour_usd > 0
                                ? s.cost.node_hour_usd
                                : s.node.node_hour_usd + (s.node.nics_per_node - s.node.default_nics_per_node) * s.node.nic_port_hour_usd;
  double usd_per_hour = s.nodes * node_price;
  if (storage) {
    kw += s.storage_nodes * s.storage->power_w / 1000.0;
    const double st_price = s.cost.storage_node_hour_usd >= 0 ? s.cost.storage_node_hour_usd : s.storage->node_hour_usd;
    usd_per_hour += s.storage_nodes * st_price;
  }
  run.energy_kwh = gpu_node_kwh + kw * hours;
  run.cost_usd = usd_per_hour * hours;
  run.cost_per_billion_tokens_usd = run.tokens > 0 ? run.cost_usd / (run.tokens / 1e9) : 0;
}

}  // namespace trainsim
