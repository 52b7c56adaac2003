// The analytical (closed-form) step time: the 1F1B or interleaved schedule
// of the slowest stage, the pipeline bubble, exposed data-parallel
// communication and the optimizer. Microseconds per configuration, for search
// and sweeps; the DES (des/) checks it where contention does not separate them.
#pragma once

#include "sim/result.h"
#include "sim/scenario.h"
#include "sim/step_costs.h"

namespace trainsim {

// Fills step_time_s, breakdown, throughput and memory; run-level fields are
// left to ApplyRunModel.
SimulationResult AnalyticalStep(const Scenario& s, const StepCosts& c);

}  // namespace trainsim
