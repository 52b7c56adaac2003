#include "sim/validate/release_spread.h"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

TEST(ReleaseSpreadTest, ReadsTheReleasesANoteLists) {
  const auto r = OtherReleasesInNote(
      "older containers, same config (tokens/s/GPU): 26.04: 5810, 26.02.01: 5984, 26.02: 5993; clamped quick-GELU GLU");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].release, "26.04");
  EXPECT_DOUBLE_EQ(r[0].tokens_per_s_per_gpu, 5810);
  EXPECT_EQ(r[1].release, "26.02.01");
  EXPECT_DOUBLE_EQ(r[1].tokens_per_s_per_gpu, 5984);
  EXPECT_EQ(r[2].release, "26.02");
  EXPECT_DOUBLE_EQ(r[2].tokens_per_s_per_gpu, 5993);
}

TEST(ReleaseSpreadTest, ANoteWithoutReleasesListsNone) {
  EXPECT_TRUE(OtherReleasesInNote("").empty());
  EXPECT_TRUE(OtherReleasesInNote("routing: dropless, force-balanced (page footnote)").empty());
  // The list stops at the first entry that is not NAME: NUMBER.
  const auto r = OtherReleasesInNote("same config (tokens/s/GPU): 25.11: 9299, see the table");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].release, "25.11");
  EXPECT_TRUE(OtherReleasesInNote("same config (tokens/s/GPU): 26.02: n/a").empty());
  EXPECT_TRUE(OtherReleasesInNote("same config (tokens/s/GPU): 26.02: 0").empty());
  EXPECT_TRUE(OtherReleasesInNote("same config (tokens/s/GPU): 26.02: inf").empty());
  EXPECT_TRUE(OtherReleasesInNote("same config (tokens/s/GPU):").empty());
}

// At one configuration the step time goes as 1 / throughput.
TEST(ReleaseSpreadTest, OtherReleasesStepsScaleAsTheirThroughput) {
  const MeasuredRange r = RangeOverReleases(10.0, 1000, {{"a", 500}, {"b", 2000}});
  EXPECT_EQ(r.releases, 3);
  EXPECT_DOUBLE_EQ(r.min_step_time_s, 5.0);
  EXPECT_DOUBLE_EQ(r.max_step_time_s, 20.0);
  EXPECT_DOUBLE_EQ(r.Spread(), 3.0);
  EXPECT_EQ(r.Place(4.0), -1);
  EXPECT_EQ(r.Place(10.0), 0);
  EXPECT_EQ(r.Place(21.0), 1);
  // Without the case's own throughput the others cannot be placed.
  const MeasuredRange alone = RangeOverReleases(10.0, 0, {{"a", 500}});
  EXPECT_EQ(alone.releases, 1);
  EXPECT_DOUBLE_EQ(alone.Spread(), 0.0);
}

}  // namespace
}  // namespace trainsim
