#include "sim/core/pipeline_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace trainsim {
namespace {

PipelineLayout Parsed(const std::string& text) {
  std::string why;
  auto layout = PipelineLayout::Parse(text, &why);
  EXPECT_TRUE(layout.has_value()) << text << ": " << why;
  return layout.value_or(*PipelineLayout::Parse("EtL"));
}

std::string Why(const std::string& text) {
  std::string why;
  EXPECT_FALSE(PipelineLayout::Parse(text, &why).has_value()) << text;
  return why;
}

// Megatron-Bridge's DeepSeek-V3 layout on 8 ranks x 2 chunks (v0.4.2 B200 MXFP8
// preset): the embedding and 4 layers first, 14 stages of 4, then 1 layer, the
// MTP module and the loss.
TEST(PipelineLayoutTest, DeepSeekV3RecipeOnSixteenStages) {
  const PipelineLayout p = Parsed("Et*4|(t*4|)*14tmL");
  EXPECT_EQ(p.stages(), 16);
  EXPECT_EQ(p.StageLayers(0), 4);
  EXPECT_EQ(p.StageLayers(7), 4);
  EXPECT_EQ(p.StageLayers(15), 1);
  EXPECT_EQ(p.layers(), 61);
  EXPECT_EQ(p.mtp_modules(), 1);
  EXPECT_TRUE(p.Check(61, 1, 8, 2));
}

// As Megatron's parse_str_to_list docstring writes them, commas included; a
// last stage of the MTP module and the loss holds no layer.
TEST(PipelineLayoutTest, CommasAreCosmeticAndAStageMayHoldNoLayer) {
  const PipelineLayout p = Parsed("Ett|(tt|)*29,t|mL");
  EXPECT_EQ(p.stages(), 32);
  EXPECT_EQ(p.StageLayers(0), 2);
  EXPECT_EQ(p.StageLayers(30), 1);
  EXPECT_EQ(p.StageLayers(31), 0);
  EXPECT_EQ(p.layers(), 61);
}

TEST(PipelineLayoutTest, NestedGroupsUnroll) {
  EXPECT_EQ(Parsed("E((t|)*2t)*2tL").Unrolled(), "Et|t|tt|t|ttL");
}

TEST(PipelineLayoutTest, CheckNamesTheCountThatDisagrees) {
  const PipelineLayout p = Parsed("Et*4|(t*4|)*14tmL");
  std::string why;
  EXPECT_FALSE(p.Check(61, 1, 16, 2, &why));
  EXPECT_EQ(why, "its 16 stages over pipeline 16 need virtual_stages 1, not 2");
  EXPECT_FALSE(p.Check(61, 1, 6, 2, &why));
  EXPECT_EQ(why, "its 16 stages are not pipeline x virtual_stages = 12");
  EXPECT_FALSE(p.Check(61, 1, 8, 1, &why));
  EXPECT_EQ(why, "its 16 stages over pipeline 8 need virtual_stages 2, not 1");
  EXPECT_FALSE(p.Check(60, 1, 8, 2, &why));
  EXPECT_EQ(why, "it places 61 transformer layers (t); the model has 60");
  EXPECT_FALSE(p.Check(61, 0, 8, 2, &why));
  EXPECT_EQ(why, "it places 1 MTP modules (m); the model has 0 (model.mtp_layers; unset, the framework's mtp_layers)");
}

// The recipe builds its layout for the model's MTP depth: the same stages, the
// modules before the loss.
TEST(PipelineLayoutTest, WithMtpModulesReplacesTheLastStagesModules) {
  const PipelineLayout p = Parsed("Et|(tt|)*30mL");
  EXPECT_EQ(p.WithMtpModules(0).Unrolled().substr(p.Unrolled().size() - 5), "tt|L");
  EXPECT_EQ(p.WithMtpModules(2).mtp_modules(), 2);
  EXPECT_TRUE(p.WithMtpModules(0).Check(61, 0, 8, 4));
  EXPECT_EQ(Parsed("EttL").WithMtpModules(1).Unrolled(), "EttmL");
}

TEST(PipelineLayoutTest, RejectsWhatMegatronRejects) {
  EXPECT_EQ(Why("tE|tL"), "the embedding (E) must open the first stage, once");
  EXPECT_EQ(Why("Et|EtL"), "the embedding (E) must open the first stage, once");
  EXPECT_EQ(Why("Et|Lt"), "the loss (L) must close the last stage, once");
  EXPECT_EQ(Why("Etm|tL"), "the MTP modules (m) must follow every transformer layer (t)");
  EXPECT_EQ(Why("Ett|m|L"), "the MTP modules (m) must be in the last stage, with the loss");
  EXPECT_EQ(Why("Et x|tL").substr(0, 39), "invalid character ' ' at character 3 (k");
  EXPECT_EQ(Why("E(t|tL"), "unclosed '('");
  EXPECT_EQ(Why("Et)|tL"), "unmatched ')' at character 3");
  EXPECT_EQ(Why("Et*|tL"), "'*' without a count at character 3");
}

// A repeat count cannot make the parser allocate without bound.
TEST(PipelineLayoutTest, RefusesHugeUnrolls) {
  EXPECT_EQ(Why("Et*99999999999999999999L"), "a repeat count above 1048576");
  EXPECT_EQ(Why("E((t*1000)*1000)*1000L"), "unrolls to more than 1048576 characters");
  EXPECT_EQ(Why("E" + std::string(100000, '(') + "tL"), "parentheses nested more than 64 deep");  // no stack to exhaust
}

// Any string of the notation's characters parses or is refused with a reason;
// what parses holds at most 2^20 characters and at least one stage.
TEST(PipelineLayoutTest, RandomTextParsesOrSaysWhy) {
  const std::string alphabet = "EtmL|()*0123456789,x ";
  std::mt19937 rng(20261204);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1), length(0, 40);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (size_t n = length(rng); n > 0; --n) text += alphabet[pick(rng)];
    if (i % 4 == 0) text = "E" + text + "L";  // more of them well-formed at the ends
    std::string why;
    const auto layout = PipelineLayout::Parse(text, &why);
    if (layout) {
      ++parsed;
      EXPECT_GE(layout->stages(), 1) << text;
      const std::string unrolled = layout->Unrolled();
      EXPECT_LE(unrolled.size(), size_t(1) << 20) << text;
      EXPECT_EQ(layout->layers(), int(std::count(unrolled.begin(), unrolled.end(), 't'))) << text;
    } else {
      EXPECT_FALSE(why.empty()) << text;
    }
  }
  EXPECT_GT(parsed, 0);
}

}  // namespace
}  // namespace trainsim
