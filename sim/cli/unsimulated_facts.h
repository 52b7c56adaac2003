// What a scenario that cannot be simulated still says about itself, for the
// result object of a run that cannot happen (run --json, compare's column).
#pragma once

#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/io/result_writer.h"
#include "sim/io/scenario_loader.h"

namespace trainsim::cli {

// The GPUs and the model's size of the scenario `file` with `overrides`,
// whose load failed with `error`, and `fidelity`: where the precision is the
// one thing the GPU cannot do (nvfp4 on an H100), the cluster and the model
// are what they are at any precision, so they are read at bf16; after any
// other error they are unknown (0).
UnsimulatedFacts KnownFactsOf(const std::string& file, std::vector<Override> overrides, const InputError& error,
                              const std::string& fidelity);

}  // namespace trainsim::cli
