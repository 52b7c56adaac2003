#include "sim/scenario.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace trainsim {
namespace {

const char* kBase = R"(name: t
cluster:
  node: xe9680-h100
  nodes: 4
  fabric: ndr-rail-optimized
model: llama2-70b
parallelism:
  tensor: 4
  pipeline: 4
training:
  seq_len: 4096
  global_batch: 128
)";

Expected<Scenario> ParseText(const std::string& text, const std::vector<std::string>& sets = {}) {
  YAML::Node root = YAML::Load(text);
  ApplyOverrides(root, sets);
  return ParseScenario(root, "s.yaml");
}

TEST(ScenarioTest, LoadsCatalogueModelAndResolvesDataParallel) {
  auto s = ParseText(kBase);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->gpus(), 32);
  EXPECT_EQ(s->parallelism.data, 2);
  EXPECT_EQ(s->model.layers, 80);
  EXPECT_TRUE(s->parallelism.sequence_parallel);
  EXPECT_EQ(s->node.nics_per_node, 8);
}

TEST(ScenarioTest, OverrideSetsNestedKey) {
  auto s = ParseText(kBase, {"cluster.nics_per_node=4", "parallelism.tensor=8"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->node.nics_per_node, 4);
  EXPECT_EQ(s->parallelism.tensor, 8);
  EXPECT_EQ(s->parallelism.data, 1);
}

TEST(ScenarioTest, UnknownKeySuggestsClosest) {
  auto s = ParseText(std::string(kBase) + "trainig:\n  steps: 3\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "s.yaml:13: trainig: unknown key (did you mean 'training'?)");
}

}  // namespace
}  // namespace trainsim
