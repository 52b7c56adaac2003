#include "sim/run/micro_batch_choice.h"

#include <limits>

#include "models/memory_model.h"
#include "sim/analytical/analytical_step.h"

namespace trainsim {

MicroBatchChoice ChooseMicroBatch(const Scenario& s) {
  if (!s.training.micro_batch_auto) return {s, ComputeStepCosts(s), "given"};
  const long per_replica = s.training.global_batch / std::max(1, s.parallelism.data);
  MicroBatchChoice best{s, {}, ""};
  best.scenario.training.micro_batch = 1;
  best.scenario.training.micro_batch_auto = false;
  double best_step_s = std::numeric_limits<double>::infinity();
  std::string tried;
  for (int mb = 1; mb <= kAutoMicroBatchMax && mb <= per_replica; mb *= 2) {
    if (per_replica % mb != 0) continue;
    Scenario c = best.scenario;
    c.training.micro_batch = mb;
    if (CheckParallelism(c)) continue;
    tried += (tried.empty() ? "" : ", ") + std::to_string(mb);
    StepCosts costs = ComputeStepCosts(c);
    if (!EstimateMemory(c, costs.workload, /*explain=*/false).fits) continue;
    const double step_s = AnalyticalStep(c, costs).step_time_s;
    if (step_s < best_step_s) {
      best_step_s = step_s;
      best.scenario = std::move(c);
      best.costs = std::move(costs);
    }
  }
  if (best_step_s == std::numeric_limits<double>::infinity()) {
    best.costs = ComputeStepCosts(best.scenario);
    best.rule = "auto: none of " + (tried.empty() ? std::string("1") : tried) + " fits; 1";
  } else {
    best.rule = "auto: the fastest (closed-form step) that fits of " + tried;
  }
  return best;
}

}  // namespace trainsim
