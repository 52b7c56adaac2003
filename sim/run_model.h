// The run beyond one step: checkpoint size and write/restore time against the
// storage and the NICs, sync or async; failures (per-node MTBF), lost work and
// goodput; the Young/Daly checkpoint interval; energy and cost.
#pragma once

#include "sim/result.h"
#include "sim/scenario.h"

namespace trainsim {

// Bytes of one checkpoint: 16-bit weights only, or the full training state
// (16-bit weights, fp32 master weights, two fp32 Adam moments).
double CheckpointBytes(const Scenario& s);

// Aggregate write (or read) bandwidth to the storage: the slowest of the
// writers' NICs, the storage front-end links and the storage nodes' disks.
double CheckpointWriteBytesPerS(const Scenario& s);
double CheckpointReadBytesPerS(const Scenario& s);

// Young/Daly first-order optimum sqrt(2 * checkpoint_cost * MTBF).
double YoungDalyInterval(double checkpoint_cost_s, double system_mtbf_s);

// Fills r.run from r.step_time_s (and, when the DES measured them,
// keeps r.run.checkpoint_write_s / checkpoint_stall_s if already set > 0).
void ApplyRunModel(const Scenario& s, SimulationResult& r);

}  // namespace trainsim
