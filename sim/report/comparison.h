// Two simulated scenarios side by side: the figures that decide a hardware
// choice (step time, time to train, cost, energy, goodput) with B's delta
// against A, absolute and relative, and a one-line headline of what B
// changes. `trainsim compare` and the GUI print it; labels and units come
// from the result-field table (sim/core/result_fields.h, result_format.h).
#pragma once

#include <string>
#include <vector>

#include "sim/core/result.h"
#include "sim/report/result_format.h"

namespace trainsim {

struct ComparisonRow {
  std::string field;  // result key, e.g. "run.cost_usd"
  std::string label;  // "Cost per run"
  Quantity quantity = Quantity::kCount;
  double a = 0, b = 0;
  double delta() const { return CleanDelta(a, b); }
  double relative() const { return CleanRelative(a, b); }
};

// The compared fields of the result-field table, in reading order (DisplayFields).
std::vector<ComparisonRow> CompareResults(const SimulationResult& a, const SimulationResult& b);

// What `other` changes against `baseline`, in the architect's terms:
// "4 NICs: +7.2% time to train (+0.49 h), +$54 per run (+7.2%), -$140,000
// capital (-7.2%), +12 kWh; step 71% compute, 18% exposed communication"
// (the name is other's; capital only where both clusters are priced).
// A run that cannot happen says so instead; against a baseline that cannot
// run, other's own figures. The tables show "cannot run" for a run figure of
// a scenario that cannot run (ResultField::kept_when_infeasible: what the
// configuration is still shows).
std::string Headline(const SimulationResult& baseline, const SimulationResult& other);

std::string ComparisonTable(const SimulationResult& a, const SimulationResult& b);
// With each side's warnings (a_warnings, b_warnings: its result's, "" for
// none) and those about the comparison itself (comparison_warnings: sides
// priced on different cost models).
std::string ComparisonJson(const SimulationResult& a, const SimulationResult& b,
                           const std::vector<std::string>& comparison_warnings = {});

// Three or more scenarios side by side, each against the first (the
// baseline): a column of figures per scenario, then each later one's relative
// delta against it, and a headline per later scenario. Two results give the
// two-scenario table and JSON above.
// Precondition: results.size() >= 2.
std::string ComparisonTable(const std::vector<SimulationResult>& results);
// {"scenarios": [names], "feasible", "errors" and "warnings": [one per
// scenario], "fields": [{"field", "label", "values": [...], "relative": [each
// later value against the first]}], "headlines": [...], "comparison_warnings"}.
std::string ComparisonJson(const std::vector<SimulationResult>& results, const std::vector<std::string>& comparison_warnings = {});

}  // namespace trainsim
