// The run beyond one step: checkpoint size and write/restore time against the
// storage and the NICs, sync or async; failures (per-node MTBF), lost work and
// goodput; the Young/Daly checkpoint interval; energy and cost.
#pragma once

#include "sim/core/result.h"
#include "sim/core/scenario.h"
#include "sim/cost/step_costs.h"

namespace trainsim {

// Daly's higher-order optimum compute time between checkpoints (J. T. Daly,
// "A higher order estimate of the optimum checkpoint interval for restart
// dumps", FGCS 22, 2006): sqrt(2 d M) (1 + sqrt(d / 2M) / 3 + d / 18M) - d for
// a checkpoint cost d under 2M, else M; Young's sqrt(2 d M) to first order.
// 0 when either is not positive.
double YoungDalyInterval(double checkpoint_cost_s, double system_mtbf_s);

// The expected wall time of work_s of work (a checkpoint interval and its
// checkpoint) under failures at exponential intervals of mean system_mtbf_s,
// each followed by restart_s of restart and restore during which failures
// may strike again: M e^(R/M) (e^(W/M) - 1) (Daly 2006); W + W (W/2 + R) / M
// to first order. work_s when system_mtbf_s <= 0.
double ExpectedSegmentTime(double work_s, double restart_s, double system_mtbf_s);

// Fills r.run from r.step_time_s, taking the checkpoint write and stall times
// the DES measured where `timing` has them and the closed form elsewhere.
// A run that cannot make progress (under 1% of its expected time training:
// failures about as frequent as a checkpoint interval and a restart) sets
// r.error and leaves the figures it cannot know (time, failures, lost work,
// goodput, energy, cost) not a number, which JSON writes as null.
void ApplyRunModel(const Scenario& s, const StepTiming& timing, SimulationResult& r);

}  // namespace trainsim
