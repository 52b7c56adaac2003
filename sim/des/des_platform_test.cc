#include "sim/des/des_platform.h"
#include "sim/io/scenario_loader.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <yaml-cpp/yaml.h>

namespace trainsim {
namespace {

Scenario Make(const std::vector<std::string>& sets) {
  YAML::Node root = YAML::Load(R"(name: p
cluster: {node: xe9680-h100, nodes: 8, fabric: ndr-rail-optimized, storage: powerscale-f710, storage_nodes: 4}
model: llama2-7b
parallelism: {tensor: 8, pipeline: 2}
training: {seq_len: 4096, global_batch: 64}
)");
  ApplyOverrides(root, sets);
  auto s = ParseScenario(root, "p.yaml");
  if (!s.ok()) throw std::runtime_error(s.error().ToString());
  return *s;
}

TEST(DesPlatformTest, OneGroupPerStageOnDataParallelRankZero) {
  const DesTopology t = BuildDesTopology(Make({}));
  ASSERT_EQ(t.groups.size(), 2u);
  // DP 4: stage 1 starts at rank 8*4 = 32, node 4.
  EXPECT_EQ(t.groups[1].first_rank, 32);
  ASSERT_EQ(t.groups[1].parts.size(), 1u);
  EXPECT_EQ(t.groups[1].parts[0].node, 4);
  // TP 8 uses all 8 NICs of its node as one bundle, unshared.
  const NicBundle& b = t.bundles[t.groups[0].parts[0].bundle];
  EXPECT_EQ(b.nics, 8);
  EXPECT_EQ(b.simulated_gpus, 8);
  EXPECT_DOUBLE_EQ(b.capacity_bytes_per_s, 8 * 50e9);
  // All 64 GPUs write shards (distributed optimizer); 16 are simulated.
  EXPECT_DOUBLE_EQ(t.storage_write_share, 16.0 / 64.0);
}

TEST(DesPlatformTest, FoldedReplicasShareNicsWithTheSimulatedOnes) {
  // TP 1 with 4 NICs: GPU 0 (simulated) and GPU 1 (a folded DP replica)
  // share NIC 0, so the simulated GPU gets half of it.
  const DesTopology t = BuildDesTopology(Make({"parallelism.tensor=1", "cluster.nics_per_node=4"}));
  const NicBundle& b = t.bundles[t.groups[0].parts[0].bundle];
  EXPECT_EQ(b.nics, 1);
  EXPECT_EQ(b.all_gpus, 2);
  EXPECT_EQ(b.simulated_gpus, 1);
  EXPECT_DOUBLE_EQ(b.capacity_bytes_per_s, 25e9);
}

TEST(DesPlatformTest, GroupsOnOneNodeKeepTheirOwnRails) {
  // TP 4, PP 2, DP 1 on one node: each stage has its own 4 NICs.
  const DesTopology t = BuildDesTopology(Make({"cluster.nodes=1", "parallelism.tensor=4"}));
  ASSERT_EQ(t.bundles.size(), 2u);
  EXPECT_NE(t.groups[0].parts[0].bundle, t.groups[1].parts[0].bundle);
  EXPECT_EQ(t.bundles[0].nics, 4);
}

TEST(DesPlatformTest, CostDoesNotGrowWithDataParallelDegree) {
  const DesTopology small = BuildDesTopology(Make({}));
  const DesTopology big = BuildDesTopology(Make({"cluster.nodes=1024", "training.global_batch=1024"}));
  EXPECT_EQ(small.groups.size(), big.groups.size());
  EXPECT_EQ(small.bundles.size(), big.bundles.size());
  EXPECT_GT(Make({"cluster.nodes=1024", "training.global_batch=1024"}).layout().Span(CommGroup::kData).scalable_units, 1);
  EXPECT_EQ(Make({}).layout().Span(CommGroup::kData).scalable_units, 1);
}

}  // namespace
}  // namespace trainsim
