// Where bundled data lives (hardware-profiles/, models/catalogue/) and how a
// reference in a scenario ("h100-sxm-80g", "./my-gpu.yaml") becomes a path.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainsim {

// $TRAINSIM_DATA_DIR if set, else the source tree the binary was built from.
std::string DataDir();

// True when `ref` names a file rather than a catalogue entry.
bool LooksLikePath(const std::string& ref);

// Resolves a path reference relative to the directory of `relative_to_file`
// (then the working directory). Returns nullopt if no such file exists.
std::optional<std::string> ResolvePath(const std::string& ref, const std::string& relative_to_file);

// Names (file stems) of the .yaml files in DataDir()/subdir, sorted.
std::vector<std::string> CatalogueNames(const std::string& subdir);

std::string DirName(const std::string& path);

}  // namespace trainsim
