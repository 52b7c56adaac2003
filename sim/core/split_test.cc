#include "sim/core/split.h"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

TEST(SplitTest, KeepsEveryPieceEmptyOnesIncluded) {
  EXPECT_EQ(Split("parallelism.tensor", '.'), (std::vector<std::string>{"parallelism", "tensor"}));
  EXPECT_EQ(Split("4,8", ','), (std::vector<std::string>{"4", "8"}));
  EXPECT_EQ(Split("a..b", '.'), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(Split("", ','), (std::vector<std::string>{""}));
  EXPECT_EQ(Split("deepep,", ','), (std::vector<std::string>{"deepep", ""}));
}

}  // namespace
}  // namespace trainsim
