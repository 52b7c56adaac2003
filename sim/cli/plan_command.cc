// trainsim plan: not implemented yet.
#include <iostream>

#include "sim/cli/args.h"
#include "sim/cli/commands.h"

namespace trainsim::cli {

int PlanCommand(const Args& args, std::ostream& out, std::ostream& err) {
  (void)args;
  (void)out;
  err << "trainsim plan: not implemented yet\n";
  return kExitBadInput;
}

}  // namespace trainsim::cli
