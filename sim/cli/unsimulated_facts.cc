#include "sim/cli/unsimulated_facts.h"

#include <utility>

namespace trainsim::cli {

UnsimulatedFacts KnownFactsOf(const std::string& file, std::vector<Override> overrides, const InputError& error,
                              const std::string& fidelity) {
  UnsimulatedFacts known;
  known.fidelity = fidelity;
  if (error.key != "training.precision") return known;
  overrides.push_back(Override{"--set", "training.precision=bf16"});
  if (Expected<Scenario> any = LoadScenarioWithFlags(file, overrides); any.ok()) {
    known.gpus = any->gpus();
    known.parameters = double(any->model.TotalParameters(any->training.seq_len));
    known.active_parameters = double(any->model.ActiveParameters(any->training.seq_len));
  }
  return known;
}

}  // namespace trainsim::cli
