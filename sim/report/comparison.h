// Two simulated scenarios side by side: the figures that decide a hardware
// choice (step time, time to train, cost, energy, goodput) with B's delta
// against A, absolute and relative. `trainsim compare` and the GUI print it.
#pragma once

#include <string>
#include <vector>

#include "sim/core/result.h"

namespace trainsim {

struct ComparisonRow {
  std::string field;  // result key, e.g. "run.cost_usd"
  std::string unit;
  double a = 0, b = 0;
  double delta() const { return b - a; }
  double relative() const { return a != 0 ? (b - a) / a : 0; }
};

std::vector<ComparisonRow> CompareResults(const SimulationResult& a, const SimulationResult& b);

std::string ComparisonTable(const SimulationResult& a, const SimulationResult& b);
std::string ComparisonJson(const SimulationResult& a, const SimulationResult& b);

}  // namespace trainsim
