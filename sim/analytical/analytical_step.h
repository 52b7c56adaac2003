// The analytical (closed-form) step time: the 1F1B or interleaved schedule
// of the slowest stage, the pipeline bubble, exposed data-parallel
// communication and the optimizer. Microseconds per configuration, for search
// and sweeps; the DES (des/) checks it where contention does not separate them.
#pragma once

#include "sim/core/scenario.h"
#include "sim/cost/step_costs.h"

namespace trainsim {

// The step time and its breakdown in closed form.
StepTiming AnalyticalStep(const Scenario& s, const StepCosts& c);

}  // namespace trainsim
