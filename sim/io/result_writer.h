// Writing a SimulationResult: the result object (JSON), CSV columns, a Chrome
// trace of its timeline and the human-readable summary.
#pragma once

#include <string>
#include <vector>

#include "sim/core/result.h"

namespace trainsim {

// The result object of design.md §3 (plus extra fields after the contract's).
std::string ToJson(const SimulationResult& r, bool pretty = true);

// Result fields flattened with dots, in a fixed order, for CSV columns.
std::vector<std::string> FlatResultKeys();
std::vector<std::string> FlatResultValues(const SimulationResult& r);

// Chrome trace JSON (Perfetto) of r.timeline.
std::string ToChromeTrace(const SimulationResult& r);

// Human-readable summary printed by `trainsim run`.
std::string ToSummary(const SimulationResult& r);

}  // namespace trainsim
