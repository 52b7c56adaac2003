// training.micro_batch: auto, the micro batch of a scenario that names none.
// Published runs and their scripts pick the micro batch by model size (SC21's
// Table 1 ran 16 at 1.7B and 7.5B, 8 at 18B, 4 at 39B, 2 at 76B and 145B, 1
// above: Megatron-LM examples/academic_paper_scripts/sc21/run_table_1.sh):
// the largest that fits until the pipeline bubble or memory says otherwise.
// A planning tool asked "how long" for a run without one answers for the
// micro batch a tuned run would use, the fastest, rather than for 1.
#pragma once

#include <string>

#include "sim/core/scenario.h"
#include "sim/cost/step_costs.h"

namespace trainsim {

// The largest power of two the choice tries; the planner's micro batch
// search (PlanOptions::max_micro_batch) goes as far.
inline constexpr int kAutoMicroBatchMax = 16;

struct MicroBatchChoice {
  Scenario scenario;  // the input with training.micro_batch set (and no longer auto)
  StepCosts costs;    // the chosen scenario's step costs
  std::string rule;   // how it was chosen: "given", or "auto: the fastest (closed-form step) that fits of 1, 2, 4"
};

// The scenario as given when its micro batch is not auto. Otherwise the power
// of two up to kAutoMicroBatchMax that divides the batch per data-parallel
// replica, passes the parallelism checks (CheckParallelism: interleaving
// needs the micro batches per step to be a multiple of the pipeline), fits
// in memory and has the shortest analytical step; 1 when none fits (the
// result then says what does not). Pure and deterministic; ties go to the
// smaller micro batch.
MicroBatchChoice ChooseMicroBatch(const Scenario& s);

}  // namespace trainsim
