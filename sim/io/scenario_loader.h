// Reading a scenario: YAML (a file, --set overrides by dotted key) into a
// checked Scenario, with every error as FILE:LINE: KEY: what is wrong.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/scenario.h"

namespace YAML { class Node; }

namespace trainsim {

// Sets `dotted` (e.g. "parallelism.tensor") in `root` to the YAML value parsed
// from `value`, creating maps on the way. Throws InputException("--set").
void SetDottedKey(YAML::Node& root, const std::string& dotted, const std::string& value);
// The same with the value already parsed (a sweep parses each axis value
// once); `root` gets a mark-less copy of it, never `value` itself.
void SetDottedKey(YAML::Node& root, const std::string& dotted, const YAML::Node& value);

// One "KEY=VALUE" override and the command-line flag that gave it (--set, or
// compare's --set-a and --set-b): an error about it, or about a check across
// keys it took part in, names that flag.
struct Override {
  std::string flag = "--set";
  std::string assignment;  // KEY=VALUE
};
// Each of `assignments` as given with `flag`.
std::vector<Override> OverridesFrom(const std::string& flag, const std::vector<std::string>& assignments);

// Parses "KEY=VALUE" overrides (as given to --set) into root, in order, in
// place (a YAML::Clone would lose the line marks the error messages need).
void ApplyOverrides(YAML::Node& root, const std::vector<std::string>& overrides);

// Profiles and models shared by a series of parses (a sweep's points): a
// profile or model referenced by name or path from the same file is loaded
// once and copied out while the memo lives, so neither the file cache's stat
// calls nor the catalogue listing are repeated per point, and every point of a
// sweep sees the same profiles even if a file is edited meanwhile. Only
// successful loads are kept (an error is re-raised with its own line each
// time). Thread-safe.
class ProfileMemo {
 public:
  ProfileMemo();
  ~ProfileMemo();
  struct Tables;  // scenario_loader.cc

 private:
  friend struct ProfileMemoAccess;
  std::mutex mu_;
  std::unique_ptr<Tables> tables_;
};

struct YamlOverlay;  // sim/io/yaml_reader.h

// Parses and checks a scenario document. `file` names the source in errors and
// anchors relative paths. `memo`, when given, serves the profile and model
// references. Never throws.
// With `overlay` (yaml_reader.h), its values replace those of `root` as if
// written into it: a sweep point read over the base document it shares.
Expected<Scenario> ParseScenario(const YAML::Node& root, const std::string& file, ProfileMemo* memo = nullptr,
                                 const YamlOverlay* overlay = nullptr);

// The name a scenario that could not be loaded reports, as a loaded one would
// (its name key after the overrides, else "scenario"), read from its YAML
// alone: the error came from the rest. Never throws.
std::string ScenarioName(const std::string& file, const std::vector<std::string>& overrides);

// Reads FILE, applies the --set overrides, parses. Never throws. An error at
// an overridden key is placed at --set; a check across keys that fails at a
// key of the file (a divisibility the overrides broke) lists the overrides it
// ran with.
Expected<Scenario> LoadScenario(const std::string& file, const std::vector<std::string>& overrides = {});
// The same with each override's own flag, which its errors name. (Not an
// overload: a braced list of two strings would fit both.)
Expected<Scenario> LoadScenarioWithFlags(const std::string& file, const std::vector<Override>& overrides);

// The one-line warning a scenario deserves whose training.precision its
// framework profile has no recipe for (the node's 2024 stack under nvfp4):
// the run takes that stack's kernels, casts and overlaps. "" otherwise.
std::string FrameworkPrecisionWarning(const Scenario& s);

// Every warning a scenario deserves before it runs, one line each, in the
// order the front ends print them: config.json keys accepted unread
// (ModelFileWarning), a precision its framework has no recipe for
// (FrameworkPrecisionWarning), a capacity factor under 1 (tokens dropped on
// purpose). Empty when there are none.
std::vector<std::string> ScenarioWarnings(const Scenario& s);
// The warnings as the result's `warnings` field (SimulationResult::warnings):
// each without its "warning: " prefix.
std::vector<std::string> WarningTexts(const std::vector<std::string>& warnings);

}  // namespace trainsim
