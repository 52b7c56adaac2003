// The version of this build: the project version and the git revision the
// source tree was at when it was configured (`git describe --always --dirty`,
// "unknown" outside a git checkout). Printed by `trainsim --version` and kept
// in a sweep's fingerprint, so rows from another build are not mixed in.
#pragma once

#include <string>

namespace trainsim {

std::string ProjectVersion();  // e.g. "0.1.0"
std::string GitRevision();     // e.g. "e31f786-dirty", or "unknown"
std::string VersionString();   // "0.1.0 (git e31f786-dirty)"

}  // namespace trainsim
