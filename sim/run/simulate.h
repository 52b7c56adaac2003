// The library's entry point: a scenario in, a SimulationResult out. A pure,
// deterministic function of its input; the CLI, the GUI, sweeps, the planner
// and validation all call it.
#pragma once

#include <atomic>
#include <functional>

#include "sim/core/result.h"
#include "sim/core/scenario.h"
#include "sim/cost/step_costs.h"
#include "sim/des/des_simulator.h"

namespace trainsim {

enum class Fidelity { kAnalytical, kDes };
// "analytical" or "des": the result's `fidelity`, the CLI flag's value.
inline const char* ToString(Fidelity f) { return f == Fidelity::kDes ? "des" : "analytical"; }

struct SimulateOptions {
  // The usual choices, without spelling every field.
  static SimulateOptions At(Fidelity f, bool record_timeline = false, DesStats* stats = nullptr) {
    SimulateOptions o;
    o.fidelity = f;
    o.record_timeline = record_timeline;
    o.des_stats = stats;
    return o;
  }
  Fidelity fidelity = Fidelity::kAnalytical;
  bool record_timeline = false;  // DES: keep the events of one step (and the checkpoints) for --trace
  DesStats* des_stats = nullptr;  // DES: where to report what the run did (benchmarks, tests); may be null
  // DES: told the steps done of the run's steps as the simulation advances
  // (progress bars, ETAs); may be empty. Called on the simulating thread.
  std::function<void(int steps_done, int steps_total)> progress;
  // DES: set to true (from any thread) to stop at the next step; the result
  // then carries error "canceled". May be null.
  const std::atomic<bool>* cancel = nullptr;
};

// Never throws. A scenario that does not fit in memory still gets its step
// time and memory figures, with `error` set.
SimulationResult Simulate(const Scenario& s, const SimulateOptions& options = {});
// A scenario whose micro batch is auto runs the micro batch
// ChooseMicroBatch picks (sim/run/micro_batch_choice.h).
// The same with the scenario's step costs computed already (ComputeStepCosts(s)),
// at the micro batch the scenario holds (auto is not resolved here).
SimulationResult Simulate(const Scenario& s, const SimulateOptions& options, const StepCosts& costs);
// What a search ranks by, for a scenario that fits in memory: the analytical
// step time and breakdown, `run` and `error` exactly as Simulate at analytical
// fidelity gives them; the descriptive fields (memory report, model size,
// pipeline layout, rates) are left empty.
SimulationResult SimulateRunFigures(const Scenario& s, const StepCosts& costs);

}  // namespace trainsim
