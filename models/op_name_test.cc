#include "models/op_name.h"

#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

namespace trainsim {
namespace {

TEST(OpName, JoinsItsPiecesWhenRead) {
  const OpName fc1 = OpName("shared ") + "fc1";
  const OpName dgrad = fc1 + " dgrad";
  EXPECT_EQ(dgrad.str(), "shared fc1 dgrad");
  std::ostringstream o;
  o << dgrad;
  EXPECT_EQ(o.str(), "shared fc1 dgrad");
  EXPECT_EQ(fc1.str(), "shared fc1");  // operator+ leaves its operands alone
}

TEST(OpName, ComparesByTheJoinedText) {
  EXPECT_TRUE(OpName("shared fc1") == OpName("shared ") + "fc1");
  EXPECT_TRUE(OpName("qkv") + " dgrad" == "qkv dgrad");
  EXPECT_TRUE(OpName("qkv") + " dgrad" == std::string("qkv dgrad"));
  EXPECT_FALSE(OpName("qkv") + " dgrad" == "qkv dgrad2");
  EXPECT_FALSE(OpName("qkv") + " dgrad2" == "qkv dgrad");
  EXPECT_FALSE(OpName("qkv") == OpName("qkv") + " wgrad");
  EXPECT_TRUE(OpName("") == OpName());
  EXPECT_TRUE(OpName("").empty());
  EXPECT_TRUE(OpName() + "" == "");
  EXPECT_FALSE(OpName("a").empty());
}

TEST(OpName, ComparesAcrossPieceBoundaries) {
  const OpName proj = OpName("attention ") + "proj";
  EXPECT_TRUE(proj + " dgrad" == OpName("attention proj") + " dgrad");
  EXPECT_TRUE(proj + " dgrad" == OpName("attention ") + "proj dgrad");
  EXPECT_FALSE(proj + " dgrad" == proj + " wgrad");  // the same leading pieces, then a difference
  EXPECT_FALSE(proj + " dgrad" == proj + " dgrad2");
  EXPECT_FALSE(proj + " dgrad2" == proj + " dgrad");
  EXPECT_FALSE(proj == proj + " dgrad");
  EXPECT_TRUE(proj + " dgrad" == proj + " dgrad");
}

TEST(OpName, StartsWith) {
  const OpName n = OpName("attention ") + "scores QK^T";
  EXPECT_TRUE(n.starts_with("attention scores"));
  EXPECT_TRUE(n.starts_with(""));
  EXPECT_FALSE(n.starts_with("attention scores QK^T dgrad"));
  EXPECT_FALSE(n.starts_with("attention proj"));
}

TEST(OpName, RefusesMoreThanFourPieces) {
  const OpName four = OpName("a") + "b" + "c" + "d";
  EXPECT_EQ(four.str(), "abcd");
  EXPECT_THROW(four + "e", std::length_error);
}

}  // namespace
}  // namespace trainsim
