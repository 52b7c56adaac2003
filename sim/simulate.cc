#include "sim/simulate.h"

#include "sim/analytical_step.h"
#include "sim/des/des_simulator.h"
#include "sim/run_model.h"
#include "sim/step_costs.h"

namespace trainsim {

SimulationResult Simulate(const Scenario& s, const SimulateOptions& options) {
  SimulationResult r;
  if (options.fidelity == Fidelity::kDes) {
    r = SimulateDes(s, options.record_timeline);
  } else {
    const StepCosts costs = ComputeStepCosts(s);
    r = AnalyticalStep(s, costs);
    ApplyRunModel(s, r);
  }
  if (!r.memory.fits) r.error = "does not fit in GPU memory: " + r.memory.reason;
  return r;
}

}  // namespace trainsim
