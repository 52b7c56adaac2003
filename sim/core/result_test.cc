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
  EXPECT_EQ(ModelSizeText({46.7e9, 12.9e9}, true), "46.7B parameters (12.9B active per token)");
  EXPECT_EQ(ModelSizeText({69.0e9, 69.0e9}, true), "69.0B parameters");
}

}  // namespace
}  // namespace trainsim
