#include "sim/core/stage_plan.h"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

StagePlan Plan(StagePlanRequest q) {
  StagePlan::Error e;
  auto p = StagePlan::Make(q, &e);
  EXPECT_TRUE(p.has_value()) << e.key << ": " << e.message;
  return p.value_or(*StagePlan::Make({}));
}

int Total(const StagePlan& p) {
  int n = 0;
  for (int r = 0; r < p.pipeline(); ++r) n += p.RankLayers(r);
  return n;
}

TEST(StagePlanTest, EvenSplitWhenTheLayersDivide) {
  const StagePlan p = Plan({.layers = 80, .pipeline = 4, .virtual_stages = 5});
  EXPECT_TRUE(p.even());
  EXPECT_EQ(p.rule(), "even");
  EXPECT_EQ(p.Layers(3, 4), 4);
  EXPECT_EQ(p.RankLayers(0), 20);
}

// Llama 3 405B as its paper ran it: 126 layers on 16 stages, the first and
// last one layer short of the others' 8.
TEST(StagePlanTest, Llama405bFirstAndLastStagesOneLayerShort) {
  const StagePlan p = Plan({.layers = 126, .pipeline = 16, .first_stage_layers = 7, .last_stage_layers = 7});
  EXPECT_EQ(p.RankLayers(0), 7);
  EXPECT_EQ(p.RankLayers(15), 7);
  for (int r = 1; r < 15; ++r) EXPECT_EQ(p.RankLayers(r), 8) << r;
  EXPECT_EQ(Total(p), 126);
  EXPECT_EQ(p.MaxRankLayers(), 8);
  EXPECT_FALSE(p.even());
  EXPECT_EQ(p.rule(), "first/last");
  EXPECT_EQ(p.Describe(), "7,8x14,7");
}

// Megatron's account_for_embedding/loss_in_pipeline_split: 126 layers + 2 =
// 128 units over PP 8 x VP 8 = 64 virtual stages of 2; the first and last
// virtual stages hold one layer beside the embedding / the loss.
TEST(StagePlanTest, EmbeddingAndLossCountedInTheSplit) {
  const StagePlan p = Plan({.layers = 126, .pipeline = 8, .virtual_stages = 8, .embedding_in_split = true, .loss_in_split = true});
  EXPECT_EQ(p.VirtualStageLayers(0), 1);
  EXPECT_EQ(p.VirtualStageLayers(63), 1);
  EXPECT_EQ(p.VirtualStageLayers(1), 2);
  EXPECT_EQ(p.Layers(0, 0), 1);
  EXPECT_EQ(p.Layers(7, 7), 1);
  EXPECT_EQ(p.RankLayers(0), 15);
  EXPECT_EQ(p.RankLayers(7), 15);
  EXPECT_EQ(p.RankLayers(3), 16);
  EXPECT_EQ(Total(p), 126);
  EXPECT_EQ(p.Describe(), "(1+2x7),(2x8)x6,(2x7+1)");
}

// Layers that do not divide and no rule given: balanced, embedding and loss a layer each.
TEST(StagePlanTest, BalancedDefaultWhenTheLayersDoNotDivide) {
  const StagePlan p = Plan({.layers = 61, .pipeline = 16});
  EXPECT_EQ(p.rule(), "balanced");
  EXPECT_EQ(Total(p), 61);
  // 63 units over 16 stages: 4 each but the first (3); the embedding and the
  // loss take a layer's place at the ends.
  int max = 0, min = 100;
  for (int r = 0; r < 16; ++r) {
    max = std::max(max, p.RankLayers(r) + (r == 0) + (r == 15));
    min = std::min(min, p.RankLayers(r) + (r == 0) + (r == 15));
  }
  EXPECT_LE(max - min, 1);
  EXPECT_EQ(p.Describe(), "2,4x14,3");
}

// An MTP module stays in the last stage and costs about a layer: the balanced
// default counts it as one there.
TEST(StagePlanTest, BalancedDefaultCountsTheMtpModules) {
  const StagePlan p = Plan({.layers = 61, .pipeline = 16, .mtp_layers = 1});
  EXPECT_EQ(p.rule(), "balanced");
  EXPECT_EQ(Total(p), 61);
  EXPECT_EQ(p.Describe(), "3,4x14,2");  // 64 units: embedding + 3, 4 x 14, 2 + MTP + loss
}

// Megatron-Bridge's DeepSeek-V3 layout on PP 16 (its recipe's layout_map):
// the first stage takes 4 layers beside the embedding, the last 1 beside the
// MTP module and the loss, which the balanced default would give 3.
TEST(StagePlanTest, LayoutSpellsOutEachStage) {
  const StagePlan p = Plan({.layers = 61, .pipeline = 16, .layout = "Et*4|(t*4|)*14tmL", .mtp_layers = 1});
  EXPECT_EQ(p.rule(), "layout");
  EXPECT_EQ(Total(p), 61);
  EXPECT_EQ(p.Describe(), "4x15,1");
  const StagePlan v = Plan({.layers = 61, .pipeline = 8, .virtual_stages = 2, .layout = "Et*4|(t*4|)*14tmL", .mtp_layers = 1});
  EXPECT_EQ(v.Layers(0, 0), 4);
  EXPECT_EQ(v.Layers(7, 1), 1);  // virtual stage 15: chunk 1 of the last rank
  EXPECT_EQ(v.Describe(), "(4x2)x7,(4+1)");
}

TEST(StagePlanTest, LayoutErrorsNameTheLayoutKey) {
  StagePlan::Error e;
  EXPECT_FALSE(StagePlan::Make({.layers = 61, .pipeline = 16, .layout = "Et*4|(t*4|)*14tmL"}, &e));
  EXPECT_EQ(e.key, "parallelism.pipeline_layout");
  EXPECT_EQ(e.message, "\"Et*4|(t*4|)*14tmL\": it places 1 MTP modules (m); the model has 0 (model.mtp_layers; unset, the framework's mtp_layers)");
  EXPECT_FALSE(StagePlan::Make({.layers = 61, .pipeline = 16, .first_stage_layers = 4, .layout = "Et*4|(t*4|)*14tmL", .mtp_layers = 1}, &e));
  EXPECT_EQ(e.key, "parallelism.pipeline_layout");
  EXPECT_FALSE(StagePlan::Make({.layers = 8, .pipeline = 4, .layout = "Ett|tttttt|L"}, &e));
  EXPECT_EQ(e.message, "\"Ett|tttttt|L\": its 3 stages are not pipeline x virtual_stages = 4");
  // A middle rank with no layer at all is refused, as without a layout.
  EXPECT_FALSE(StagePlan::Make({.layers = 8, .pipeline = 4, .layout = "Etttt||tttt|L"}, &e));
  EXPECT_EQ(e.message, "pipeline stage 1 would hold no layer");
  EXPECT_EQ(e.key, "parallelism.pipeline_layout");  // the key that emptied it, not the pipeline's depth
}

TEST(StagePlanTest, ErrorsNameTheKey) {
  StagePlan::Error e;
  EXPECT_FALSE(StagePlan::Make({.layers = 80, .pipeline = 4, .first_stage_layers = 21}, &e));
  EXPECT_EQ(e.key, "parallelism.first_stage_layers");
  EXPECT_FALSE(StagePlan::Make({.layers = 80, .pipeline = 4, .embedding_in_split = true}, &e));
  EXPECT_EQ(e.key, "parallelism.embedding_in_pipeline_split");
  EXPECT_NE(e.message.find("81"), std::string::npos) << e.message;
  EXPECT_FALSE(StagePlan::Make({.layers = 80, .pipeline = 4, .first_stage_layers = 40, .last_stage_layers = 40}, &e));
  EXPECT_NE(e.message.find("leave 0 of the 80 layers for the 2 middle stages"), std::string::npos) << e.message;
  // Only the last end given: the error names it.
  EXPECT_FALSE(StagePlan::Make({.layers = 32, .pipeline = 8, .last_stage_layers = 1}, &e));
  EXPECT_EQ(e.key, "parallelism.last_stage_layers");
  EXPECT_FALSE(StagePlan::Make({.layers = 80, .pipeline = 1, .virtual_stages = 2}, &e));
  EXPECT_EQ(e.key, "parallelism.virtual_stages");
}

}  // namespace
}  // namespace trainsim
