// trainsim calibrate: not implemented yet.
#include <iostream>

#include "sim/cli/args.h"
#include "sim/cli/commands.h"

namespace trainsim::cli {

int CalibrateCommand(const Args& args, std::ostream& out, std::ostream& err) {
  (void)args;
  (void)out;
  err << "trainsim calibrate: not implemented yet\n";
  return kExitBadInput;
}

}  // namespace trainsim::cli
