#include "sim/core/result.h"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

TEST(ResultTest, ParameterCountsInBillionsOrTrillionsToThreeFigures) {
  EXPECT_EQ(ParameterCountText(1.0264e12), "1.03T");
  EXPECT_EQ(ParameterCountText(999.4e9), "999B");
  EXPECT_EQ(ParameterCountText(671.0e9), "671B");
  EXPECT_EQ(ParameterCountText(46.70e9), "46.7B");
  EXPECT_EQ(ParameterCountText(6.98e9), "7.0B");
  EXPECT_EQ(ParameterCountText(0.354e9), "0.35B");
}

TEST(ResultTest, ModelSizeNamesTheActiveShareOnlyWhereItIsSmaller) {
  EXPECT_EQ(ModelSizeText({46.7e9, 12.9e9}), "46.7B (12.9B active)");
  EXPECT_EQ(ModelSizeText({69.0e9, 69.0e9}), "69.0B");
  EXPECT_EQ(ModelSizeText({69.0e9, 0}), "69.0B");
  EXPECT_EQ(ModelSizeText({46.7e9, 12.9e9}, true), "46.7B parameters (12.9B active per token, both vocabulary matrices counted)");
  EXPECT_EQ(ModelSizeText({671e9, 37.6e9, 11.7e9}, true),
            "671B parameters (37.6B active per token, both vocabulary matrices counted), and 11.7B in its MTP modules (trained, left "
            "out of the count as published totals do)");
  EXPECT_EQ(ModelSizeText({671e9, 37.6e9, 11.7e9}), "671B (37.6B active)");
  EXPECT_EQ(ModelSizeText({69.0e9, 69.0e9}, true), "69.0B parameters");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A rack-scale run's spares come out of the racks it bought whole where they can.
TEST(ResultTest, HotSparesSayWhereTheyComeFrom) {
  RunReport run;
  EXPECT_EQ(HotSparesCapitalText(run), "");
  run.hot_spares = 3;
  EXPECT_EQ(HotSparesCapitalText(run), "");  // no capital to be in or out of
  run.capital_usd = 1e6;
  EXPECT_EQ(HotSparesCapitalText(run), " (not in the capital)");
  run.idle_rack_nodes = 2;
  EXPECT_EQ(HotSparesCapitalText(run), " (2 idle nodes of its racks, 1 not in the capital)");
  run.idle_rack_nodes = 3;
  EXPECT_EQ(HotSparesCapitalText(run), " (idle nodes of its racks)");
}

}  // namespace
}  // namespace trainsim
