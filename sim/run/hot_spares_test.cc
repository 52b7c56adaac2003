#include "sim/run/hot_spares.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trainsim {
namespace {

TEST(HotSparesTest, PoissonCdfClosedForms) {
  EXPECT_NEAR(PoissonCdf(1, 0), std::exp(-1.0), 1e-12);
  EXPECT_NEAR(PoissonCdf(2, 1), 3 * std::exp(-2.0), 1e-12);
  EXPECT_DOUBLE_EQ(PoissonCdf(0, 0), 1);
  EXPECT_DOUBLE_EQ(PoissonCdf(3, -1), 0);
  EXPECT_NEAR(PoissonCdf(500, 1000), 1, 1e-9);  // no underflow at large means
}

TEST(HotSparesTest, SmallestSpareCountReachingTheProbability) {
  EXPECT_EQ(HotSpares(0, 0.99), 0);
  EXPECT_EQ(HotSpares(0.1, 0.99), 1);  // P(0) = 0.905, P(<=1) = 0.995
  EXPECT_EQ(HotSpares(1, 0.99), 4);    // P(<=3) = 0.981, P(<=4) = 0.996
  EXPECT_EQ(HotSpares(1, 0.95), 3);
  // 1024 nodes, 5000 h MTBF, 24 h repair: mean 4.9 in repair.
  const int s = HotSpares(1024 * 24 / 5000.0, 0.99);
  EXPECT_GE(PoissonCdf(1024 * 24 / 5000.0, s), 0.99);
  EXPECT_LT(PoissonCdf(1024 * 24 / 5000.0, s - 1), 0.99);
}

}  // namespace
}  // namespace trainsim
