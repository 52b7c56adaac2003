// Where bundled data lives (hardware-profiles/, models/catalogue/) and how a
// reference in a scenario ("h100-sxm-80g", "./my-gpu.yaml") becomes a path.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainsim {

// Where hardware-profiles/, models/catalogue/, examples/ (and reference/ when
// installed) are: $TRAINSIM_DATA_DIR if set; else ../share/trainsim beside the
// running executable (an installed tree, wherever it was copied); else the
// source tree the binary was built from.
std::string DataDir();

// The installed layout's data directory for an executable at `exe_path`
// (EXE_DIR/../share/trainsim), if it holds hardware-profiles/.
std::optional<std::string> InstalledDataDir(const std::string& exe_path);

// True when `ref` names a file rather than a catalogue entry.
bool LooksLikePath(const std::string& ref);

// Resolves a path reference relative to the directory of `relative_to_file`
// (then the working directory). Returns nullopt if no such file exists.
std::optional<std::string> ResolvePath(const std::string& ref, const std::string& relative_to_file);
// Why ResolvePath found no file for `ref`, as the end of "model file 'X' ...":
// "not found" (saying where it looked), "is a directory, not a file" or "is not a regular file (a
// device, pipe or socket)".
std::string UnresolvedPathReason(const std::string& ref, const std::string& relative_to_file);

// A fingerprint (sim/core/fingerprint.h) of the bundled data a scenario
// reads by name: the path and text of every file under
// DataDir()/hardware-profiles and DataDir()/models/catalogue. Results
// computed under another fingerprint may differ (a profile's number was
// edited); profiles a scenario references by path are not in it.
std::string DataFingerprint();

// Names (file stems) of the .yaml files in DataDir()/subdir, sorted.
std::vector<std::string> CatalogueNames(const std::string& subdir);

std::string DirName(const std::string& path);

// How an output reaches its path: written in place (a device such as
// /dev/null takes the bytes), or renamed over it (which would replace a device
// with a file).
enum class OutputWrite { kInPlace, kRenamedOver };
// Why an output cannot be written at `path`: a directory, a pipe or socket
// (opening one waits for a reader), and renamed over, a device too. "" where
// it can, or `path` is empty or absent.
std::string NotAFileToWrite(const std::string& path, OutputWrite how = OutputWrite::kRenamedOver);

}  // namespace trainsim
