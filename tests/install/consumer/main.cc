// consumer SCENARIO.yaml: prints the scenario's analytical step time, or the
// one-line input error (exit 2), using only the installed headers and library.
#include <cstdlib>
#include <iostream>

#include "sim/io/scenario_loader.h"
#include "sim/run/simulate.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  ::setenv("TRAINSIM_DATA_DIR", CONSUMER_DATA_DIR, 0);  // the package's data, unless told otherwise
  const trainsim::Expected<trainsim::Scenario> s = trainsim::LoadScenario(argv[1]);
  if (!s) {
    std::cerr << s.error().ToString() << "\n";
    return 2;
  }
  const trainsim::SimulationResult r = trainsim::Simulate(*s);
  std::cout << "step_time_s " << r.step_time_s << "\n";
  return r.step_time_s > 0 && r.error.empty() ? 0 : 1;
}
