#include "sim/simulate.h"

#include "sim/analytical_step.h"
#include "sim/run_model.h"
#include "sim/step_costs.h"

namespace trainsim {

SimulationResult Simulate(const Scenario& s, const SimulateOptions& options) {
  (void)options;  // the DES lands in sim/des/
  const StepCosts costs = ComputeStepCosts(s);
  SimulationResult r = AnalyticalStep(s, costs);
  ApplyRunModel(s, r);
  if (!r.memory.fits) r.error = "does not fit in GPU memory: " + r.memory.reason;
  return r;
}

}  // namespace trainsim
