#include "sim/schedule/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

namespace trainsim {
namespace {

TEST(PipelineScheduleTest, OneFOneBWarmupAndOrder) {
  // 4 ranks, 6 micro batches: rank 0 warms up with 3 forwards, the last rank with none.
  auto r0 = StageSchedule(4, 0, 6, 1);
  ASSERT_EQ(r0.size(), 12u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(r0[i].forward);
  EXPECT_TRUE(r0[3].forward);
  EXPECT_FALSE(r0[4].forward);
  EXPECT_EQ(r0[4].microbatch, 0);
  auto r3 = StageSchedule(4, 3, 6, 1);
  EXPECT_TRUE(r3[0].forward);
  EXPECT_FALSE(r3[1].forward);
  EXPECT_EQ(r3[1].microbatch, 0);
}

TEST(PipelineScheduleTest, EveryPassExactlyOnceAndBackwardAfterForward) {
  for (int v : {1, 2, 3}) {
    for (int m : {1, 3, 4, 8, 10}) {
      for (int rank = 0; rank < 4; ++rank) {
        auto ops = StageSchedule(4, rank, m, v);
        EXPECT_EQ(ops.size(), size_t(2 * m * v)) << "v=" << v << " m=" << m;
        std::set<std::tuple<bool, int, int>> seen;
        for (const auto& op : ops) {
          EXPECT_TRUE(seen.insert({op.forward, op.microbatch, op.chunk}).second);
          if (!op.forward) {
            EXPECT_TRUE(seen.count({true, op.microbatch, op.chunk}));
          }
        }
      }
    }
  }
}

TEST(PipelineScheduleTest, InterleavedStartsWithChunkZeroAndWalksChunks) {
  auto ops = StageSchedule(2, 0, 4, 2);
  // Forwards in groups of `ranks` micro batches per chunk: (0,c0) (1,c0) (0,c1) (1,c1) ...
  EXPECT_EQ(ops[0].chunk, 0);
  EXPECT_EQ(ops[1].chunk, 0);
  EXPECT_EQ(ops[2].chunk, 1);
  EXPECT_EQ(ops[2].microbatch, 0);
}

}  // namespace
}  // namespace trainsim
