// Loading a scenario for `plan` and `size`, which choose its parallelism
// themselves: a layout of its own that does not fit its cluster, model or
// batch (InputError::layout, e.g. --set cluster.nodes=3 on an 8-node
// scenario) is no reason to refuse it, so it loads with a stand-in layout
// instead. Malformed values (a tensor size of "four" or -4, a negative
// batch) stay exit 2.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/plan/planner.h"

namespace trainsim::cli {

struct LayoutSearchInput {
  Expected<Scenario> scenario;  // the scenario, or the error that stands (bad input, a model or cluster error)
  // Set when a stand-in layout replaced the scenario's own: that layout, as
  // the file and --set give it, and why it cannot run (the loader's error).
  std::optional<PlanRejection> own_layout_rejection;
  // Non-empty: no layout of these GPUs can run the batch at all (131,072
  // GPUs for a batch of 128): exit 1 with this reason.
  std::string no_layout_reason;
};

LayoutSearchInput LoadForLayoutSearch(const std::string& file, const std::vector<std::string>& sets);

// What plan and size --json print when the scenario cannot be searched (bad
// input, its precision on a GPU without it): an object with no candidates,
// the reason and its kind (ToString(ErrorKind)), so a script reading exit 1
// or 2 still finds an object.
std::string SearchRefusalJson(const std::string& error, ErrorKind kind);

}  // namespace trainsim::cli
