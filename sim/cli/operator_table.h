// The text of `trainsim run --operators`: BreakDownPasses (sim/cost/operator_breakdown.h)
// as one table per pass, each operator's shape, work, time and achieved rate.
#pragma once

#include <string>
#include <vector>

#include "sim/cost/operator_breakdown.h"

namespace trainsim::cli {

// `w` is the scenario's workload (BuildWorkload(s)): the passes are broken down from it.
std::string OperatorTable(const Scenario& s, const Workload& w);

}  // namespace trainsim::cli
