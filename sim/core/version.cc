#include "sim/core/version.h"

// The project version is set for this file only (sim/CMakeLists.txt); the
// revision comes from a header the build regenerates (cmake/GitRevision.cmake),
// which only this file includes, so a new revision recompiles one file.
#ifndef TRAINSIM_PROJECT_VERSION
#define TRAINSIM_PROJECT_VERSION "0.0.0"
#endif
#if __has_include("trainsim_git_revision.h")
#include "trainsim_git_revision.h"
#endif
#ifndef TRAINSIM_GIT_REVISION
#define TRAINSIM_GIT_REVISION "unknown"
#endif

namespace trainsim {

std::string ProjectVersion() { return TRAINSIM_PROJECT_VERSION; }
std::string GitRevision() { return TRAINSIM_GIT_REVISION; }
std::string VersionString() { return ProjectVersion() + " (git " + GitRevision() + ")"; }

}  // namespace trainsim
