// Reading a scenario: YAML (a file, --set overrides by dotted key) into a
// checked Scenario, with every error as FILE:LINE: KEY: what is wrong.
#pragma once

#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/scenario.h"

namespace YAML { class Node; }

namespace trainsim {

// Sets `dotted` (e.g. "parallelism.tensor") in `root` to the YAML value parsed
// from `value`, creating maps on the way. Throws InputException("--set").
void SetDottedKey(YAML::Node& root, const std::string& dotted, const std::string& value);

// Parses "KEY=VALUE" overrides (as given to --set) into root, in place (a
// YAML::Clone would lose the line marks the error messages need).
void ApplyOverrides(YAML::Node& root, const std::vector<std::string>& overrides);

// Parses and checks a scenario document. `file` names the source in errors and
// anchors relative paths. Never throws.
Expected<Scenario> ParseScenario(const YAML::Node& root, const std::string& file);

// Reads FILE, applies the --set overrides, parses. Never throws.
Expected<Scenario> LoadScenario(const std::string& file, const std::vector<std::string>& overrides = {});

}  // namespace trainsim
