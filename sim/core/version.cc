#include "sim/core/version.h"

// Set for this file only (sim/CMakeLists.txt), so a new revision recompiles one file.
#ifndef TRAINSIM_PROJECT_VERSION
#define TRAINSIM_PROJECT_VERSION "0.0.0"
#endif
#ifndef TRAINSIM_GIT_REVISION
#define TRAINSIM_GIT_REVISION "unknown"
#endif

namespace trainsim {

std::string ProjectVersion() { return TRAINSIM_PROJECT_VERSION; }
std::string GitRevision() { return TRAINSIM_GIT_REVISION; }
std::string VersionString() { return ProjectVersion() + " (git " + GitRevision() + ")"; }

}  // namespace trainsim
