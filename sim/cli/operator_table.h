// The text of `trainsim run --operators`: BreakDownPasses (sim/cost/operator_breakdown.h)
// as one table per pass, each operator's shape, work, time and achieved rate.
#pragma once

#include <string>
#include <vector>

#include "sim/cost/operator_breakdown.h"

namespace trainsim::cli {

std::string OperatorTable(const Scenario& s, const std::vector<PassBreakdown>& passes);

}  // namespace trainsim::cli
