// Command-line parsing shared by the verbs: positional arguments, flags with
// and without values, repeated flags (--set). Unknown flags are an error.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/run/simulate.h"

namespace trainsim::cli {

struct FlagSpec {
  FlagSpec(std::string n, bool value = false, std::string s = "")
      : name(std::move(n)), takes_value(value), short_name(std::move(s)) {}
  std::string name;        // "--json"
  bool takes_value;
  std::string short_name;  // "-o", optional
};

struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;  // flag -> values in order
  std::set<std::string> present;
  bool Has(const std::string& flag) const { return present.count(flag) > 0; }
  std::optional<std::string> Value(const std::string& flag) const;
  const std::vector<std::string>& All(const std::string& flag) const;
};

// Returns an error message ("" on success).
std::string Parse(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs, ParsedArgs& out);

// Reads --fidelity (des | analytical) into *fidelity, which holds the verb's
// default. Returns an error message ("" on success).
std::string FidelityFlag(const ParsedArgs& a, Fidelity* fidelity);

// Exit statuses of the contract.
constexpr int kExitOk = 0;
constexpr int kExitSimulationFailed = 1;
constexpr int kExitBadInput = 2;

}  // namespace trainsim::cli
