// Loading hardware profiles from hardware-profiles/<kind>/NAME.yaml or a path,
// strictly: every key known, every number in range, errors as FILE:LINE: KEY.
#pragma once

#include <string>

#include "sim/core/hardware_profile.h"

namespace YAML { class Node; }

namespace trainsim {

// Each loader resolves `ref` (a catalogue name under hardware-profiles/<kind>/
// or a path relative to `from_file`) and parses it strictly. Errors name the
// profile file, or `from_file`/`ref_node` when the reference itself is wrong.
GpuProfile LoadGpuProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
NodeProfile LoadNodeProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
FabricProfile LoadFabricProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
FrameworkProfile LoadFrameworkProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
StorageProfile LoadStorageProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
// hardware-profiles/sites/: PUE, energy price and write-off years of an owned cluster.
SiteProfile LoadSiteProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);

}  // namespace trainsim
