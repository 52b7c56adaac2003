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

TEST(HotSparesTest, BinomialCdfClosedForms) {
  EXPECT_NEAR(BinomialCdf(4, 0.5, 0), 1 / 16.0, 1e-12);
  EXPECT_NEAR(BinomialCdf(4, 0.5, 1), 5 / 16.0, 1e-12);
  EXPECT_DOUBLE_EQ(BinomialCdf(4, 0.5, 4), 1);
  EXPECT_DOUBLE_EQ(BinomialCdf(4, 0.5, -1), 0);
  EXPECT_NEAR(BinomialCdf(100000, 0.001, 1000), 1, 1e-9);  // no underflow at large counts
}

TEST(HotSparesTest, SmallestSpareCountReachingTheProbability) {
  EXPECT_EQ(HotSpares(0, 0.1, 0.99), 0);
  EXPECT_EQ(HotSpares(1024, 0, 0.99), 0);
  // Short repairs: the Poisson limit (mean 0.1: P(0) = 0.905, P(<=1) = 0.995; mean 1: P(<=3) = 0.981, P(<=4) = 0.996).
  EXPECT_EQ(HotSpares(100000, 1e-6, 0.99), 1);
  EXPECT_EQ(HotSpares(100000, 1e-5, 0.99), 4);
  EXPECT_EQ(HotSpares(100000, 1e-5, 0.95), 3);
  // 1024 nodes, 5000 h MTBF, 24 h repair: about 4.9 in repair.
  const double q = 24 / 5024.0;
  const int s = HotSpares(1024, q, 0.99);
  EXPECT_GE(BinomialCdf(1024, q, s), 0.99);
  EXPECT_LT(BinomialCdf(1024, q, s - 1), 0.99);
  EXPECT_LE(std::abs(s - 11), 1);  // Poisson(4.9)'s 99% quantile
}

// Repairs far longer than the MTBF: the spares never exceed the job's own nodes
// (a 4-node job at a 1.5 h MTBF once asked for 83), and nothing overflows.
TEST(HotSparesTest, NeverMoreThanTheJobsNodes) {
  EXPECT_LE(HotSpares(4, 24 / 25.5, 0.99), 4);
  EXPECT_EQ(HotSpares(4, 1.0, 0.99), 4);
  EXPECT_EQ(HotSpares(16, 1e15 / (1e15 + 5000), 0.99), 16);
}

}  // namespace
}  // namespace trainsim
