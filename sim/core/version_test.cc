#include "sim/core/version.h"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

TEST(VersionTest, NamesTheProjectVersionAndARevision) {
  EXPECT_EQ(ProjectVersion().find('.') != std::string::npos, true) << ProjectVersion();
  EXPECT_NE(ProjectVersion(), "0.0.0");  // the build passes the project's version
  EXPECT_FALSE(GitRevision().empty());
  EXPECT_EQ(VersionString(), ProjectVersion() + " (git " + GitRevision() + ")");
}

}  // namespace
}  // namespace trainsim
