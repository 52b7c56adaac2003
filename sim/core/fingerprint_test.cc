#include "sim/core/fingerprint.h"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

TEST(FingerprintTest, KnownValuesAndSensitivity) {
  EXPECT_EQ(TextFingerprint(""), "cbf29ce484222325");   // FNV-1a 64 offset basis
  EXPECT_EQ(TextFingerprint("a"), "af63dc4c8601ec8c");  // published FNV-1a 64 test vector
  EXPECT_NE(TextFingerprint("steps: 500\n"), TextFingerprint("steps: 250\n"));
}

}  // namespace
}  // namespace trainsim
