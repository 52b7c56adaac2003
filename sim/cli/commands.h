// The verbs of the `trainsim` CLI. Each takes its arguments (after the verb)
// and the output streams, and returns the exit status of the contract:
// 0 success, 1 a simulation that could not run, 2 bad input.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace trainsim::cli {

using Args = std::vector<std::string>;

int RunCommand(const Args& args, std::ostream& out, std::ostream& err);
int ValidateCommand(const Args& args, std::ostream& out, std::ostream& err);
int SweepCommand(const Args& args, std::ostream& out, std::ostream& err);
int PlanCommand(const Args& args, std::ostream& out, std::ostream& err);
int SizeCommand(const Args& args, std::ostream& out, std::ostream& err);
int CalibrateCommand(const Args& args, std::ostream& out, std::ostream& err);
int CompareCommand(const Args& args, std::ostream& out, std::ostream& err);
int BenchCommand(const Args& args, std::ostream& out, std::ostream& err);

}  // namespace trainsim::cli
