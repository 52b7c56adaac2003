// trainsim: the command-line front end. Each verb lives in its own
// *_command.cc; this file only dispatches.
#include <new>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/core/version.h"
#include "sim/io/yaml_reader.h"

namespace {

const char* kHelp =
    "usage: trainsim VERB [options]   (trainsim VERB --help for each)\n"
    "Cluster simulator and capacity planner for LLM training.\n"
    "verbs:\n"
    "  run SCENARIO.yaml       simulate a training run (step time, breakdown, memory, run time, cost)\n"
    "  validate                predict published runs and print the error table\n"
    "  sweep SWEEP.yaml -o F   run a grid of scenarios to CSV/JSON lines (resumable; MPI-aware)\n"
    "  plan SCENARIO.yaml      search parallelism settings; rank by time or cost\n"
    "  size SCENARIO.yaml      the cheapest (or fastest) cluster that trains T tokens within D days\n"
    "  compare A.yaml B.yaml   two scenarios side by side with time and cost deltas\n"
    "  compare A.yaml --set-b KEY=VALUE   one scenario against itself with B's overrides\n"
    "  calibrate               measure the hardware (cpu or cuda backend) and write a profile\n"
    "  bench                   speed benchmarks of the analytical path and the DES\n"
    "options:\n"
    "  --version               print the version and the git revision it was built from\n"
    "  -h, --help              this help\n";

struct Verb {
  const char* name;
  int (*fn)(const trainsim::cli::Args&, std::ostream&, std::ostream&);
};

const Verb kVerbs[] = {
    {"run", trainsim::cli::RunCommand},
    {"validate", trainsim::cli::ValidateCommand},
    {"sweep", trainsim::cli::SweepCommand},
    {"plan", trainsim::cli::PlanCommand},
    {"size", trainsim::cli::SizeCommand},
    {"compare", trainsim::cli::CompareCommand},
    {"calibrate", trainsim::cli::CalibrateCommand},
    {"bench", trainsim::cli::BenchCommand},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kHelp;
    return 2;
  }
  const std::string verb = argv[1];
  if (verb == "--help" || verb == "-h" || verb == "help") {
    std::cout << kHelp;
    return 0;
  }
  if (verb == "--version") {
    std::cout << "trainsim " << trainsim::VersionString() << "\n";
    return 0;
  }
  trainsim::cli::Args args(argv + 2, argv + argc);
  for (const auto& v : kVerbs) {
    if (verb == v.name) {
      try {
        return v.fn(args, std::cout, std::cerr);
      } catch (const std::bad_alloc&) {
        // This machine's memory, not a fault of trainsim's: the run cannot happen here.
        std::cerr << "trainsim " << verb << ": out of memory: the machine cannot hold what this asks for\n";
        return 1;
      } catch (const std::exception& e) {
        std::cerr << "trainsim " << verb << ": internal error: " << e.what() << "\n";
        return 1;
      }
    }
  }
  std::vector<std::string> names;
  for (const auto& v : kVerbs) names.push_back(v.name);
  const std::string hint = trainsim::ClosestMatch(verb, names);
  std::cerr << "trainsim: unknown verb '" << verb << "'" << (hint.empty() ? "" : " (did you mean '" + hint + "'?)") << " (see trainsim --help)\n";
  return 2;
}
