// The library's entry point: a scenario in, a SimulationResult out. A pure,
// deterministic function of its input; the CLI, the GUI, sweeps, the planner
// and validation all call it.
#pragma once

#include "sim/core/result.h"
#include "sim/core/scenario.h"
#include "sim/des/des_simulator.h"

namespace trainsim {

enum class Fidelity { kAnalytical, kDes };

struct SimulateOptions {
  Fidelity fidelity = Fidelity::kAnalytical;
  bool record_timeline = false;  // DES: keep the events of one step (and the checkpoints) for --trace
  DesStats* des_stats = nullptr;  // DES: where to report what the run did (benchmarks, tests); may be null
};

// Never throws. A scenario that does not fit in memory still gets its step
// time and memory figures, with `error` set.
SimulationResult Simulate(const Scenario& s, const SimulateOptions& options = {});

}  // namespace trainsim
