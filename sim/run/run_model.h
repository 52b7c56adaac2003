// The run beyond one step: checkpoint size and write/restore time against the
// storage and the NICs, sync or async; failures (per-node MTBF), lost work and
// goodput; the Young/Daly checkpoint interval; energy and cost.
#pragma once

#include "sim/core/result.h"
#include "sim/core/scenario.h"
#include "sim/cost/step_costs.h"

namespace trainsim {

// Young/Daly first-order optimum sqrt(2 * checkpoint_cost * MTBF).
double YoungDalyInterval(double checkpoint_cost_s, double system_mtbf_s);

// Fills r.run from r.step_time_s, taking the checkpoint write and stall times
// the DES measured where `timing` has them and the closed form elsewhere.
// A run that cannot make progress (failures faster than a checkpoint interval
// and a restart) sets r.error and leaves the run figures it cannot know at 0.
void ApplyRunModel(const Scenario& s, const StepTiming& timing, SimulationResult& r);

}  // namespace trainsim
