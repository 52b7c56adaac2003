// The progress line: shown only when asked for (or on a terminal), each
// phase with its own ETA, never before there is a rate to go by.
#include "sim/cli/progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace trainsim::cli {
namespace {

TEST(ProgressLineTest, EtaComesFromThePhasesRate) {
  EXPECT_EQ(ProgressLine::Describe(0.5, 10), "50%, 10 s elapsed, about 10 s left");
  // 10 s in all, but the phase began 4 s ago and is half done: 4 s left.
  EXPECT_EQ(ProgressLine::Describe(0.5, 10, 4), "50%, 10 s elapsed, about 4 s left");
  EXPECT_EQ(ProgressLine::Describe(0.01, 10), "1%, 10 s elapsed");  // no rate yet
  EXPECT_EQ(ProgressLine::Describe(1, 10), "100%, 10 s elapsed");
  EXPECT_EQ(ProgressLine::Describe(0.25, 600), "25%, 10.0 min elapsed, about 30.0 min left");
}

TEST(ProgressLineTest, WritesOnlyWhenAskedFor) {
  std::ostringstream quiet;
  {
    ProgressLine p(quiet, "plan", false);  // not --progress, and not a terminal
    EXPECT_FALSE(p.enabled());
    p.Phase("searching");
    p.Update(0.5, "configuration 1 of 2");
    p.Update(1, "configuration 2 of 2");
  }
  EXPECT_EQ(quiet.str(), "");

  std::ostringstream err;
  {
    ProgressLine p(err, "plan", true);
    EXPECT_TRUE(p.enabled());
    p.Phase("searching");
    p.Update(0, "configuration 0 of 2");
    p.Update(1, "configuration 2 of 2");
    p.Phase("re-checking with the DES");
    p.Update(0, "re-check 0 of 1");  // a new phase shows its first update at once
    p.Update(1, "re-check 1 of 1");
  }
  // Not a terminal: one line per update, the phase named.
  EXPECT_EQ(err.str(),
            "plan: searching: 0%, 0 s elapsed (configuration 0 of 2)\n"
            "plan: searching: 100%, 0 s elapsed (configuration 2 of 2)\n"
            "plan: re-checking with the DES: 0%, 0 s elapsed (re-check 0 of 1)\n"
            "plan: re-checking with the DES: 100%, 0 s elapsed (re-check 1 of 1)\n");
}

}  // namespace
}  // namespace trainsim::cli
