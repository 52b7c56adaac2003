#include "sim/des/des_platform.h"
#include "sim/cost/collective_model.h"
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

namespace trainsim {
namespace {

// GB200 NVL72: a node is a 4-GPU compute tray, 18 trays share one 72-GPU
// NVLink domain through the NVLink switch trays.
Scenario Nvl72(const std::vector<std::string>& sets) {
  YAML::Node root = YAML::Load(R"(name: nvl72
cluster: {node: gb200-nvl72, nodes: 36}
model: llama2-7b
parallelism: {tensor: 8, pipeline: 2}
training: {seq_len: 4096, global_batch: 72}
)");
  ApplyOverrides(root, sets);
  auto s = ParseScenario(root, "nvl72.yaml");
  if (!s.ok()) throw std::runtime_error(s.error().ToString());
  return *s;
}

TEST(DesPlatformTest, Nvl72TensorGroupCrossingTraysStaysOnNvlink) {
  // TP 8 on 4-GPU trays: two trays, one NVLink domain.
  const Scenario s = Nvl72({});
  const GroupSpan tp = s.layout().Span(CommGroup::kTensor);
  EXPECT_EQ(tp.nodes, 2);
  EXPECT_TRUE(tp.on_nvlink());
  const CollectivePlan plan = PlanCollective(s, CommOp{"ag", CollectiveKind::kAllGather, CommGroup::kTensor, 64e6, false, ""});
  ASSERT_EQ(plan.phase_count, 1);
  EXPECT_EQ(plan.phases[0].link, LinkClass::kNvlink);
  const DesTopology t = BuildDesTopology(s);
  EXPECT_EQ(t.nodes_per_domain, 18);
  ASSERT_EQ(t.groups[0].parts.size(), 2u);
  EXPECT_TRUE(t.SameNvlinkDomain(t.groups[0].parts[0].node, t.groups[0].parts[1].node));
  // The domain's switch trays carry the simulated GPUs at their NVLink rate.
  ASSERT_EQ(t.nvlink_switch_bytes_per_s.count(0), 1u);
  EXPECT_DOUBLE_EQ(t.nvlink_switch_bytes_per_s.at(0), 8 * 900e9);
}

TEST(DesPlatformTest, Nvl72GroupCrossingTheDomainUsesTheNics) {
  // 144 GPUs, TP 8 PP 2 DP 9: stage 1 starts at GPU 72, the second rack.
  const Scenario s = Nvl72({});
  const DesTopology t = BuildDesTopology(s);
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[1].parts[0].node, 18);
  EXPECT_FALSE(t.SameNvlinkDomain(t.groups[0].parts[0].node, t.groups[1].parts[0].node));
  EXPECT_FALSE(s.layout().Span(CommGroup::kPipeline).on_nvlink());
  // The data-parallel group (9 replicas, 8 GPUs apart) stays inside the rack: NVLink only.
  EXPECT_TRUE(s.layout().Span(CommGroup::kData).on_nvlink());
  // PP 1, DP 18: the data-parallel group spans both racks and goes hierarchical, its outer phase on the NICs.
  const Scenario wide = Nvl72({"parallelism.pipeline=1"});
  const GroupSpan dp = wide.layout().Span(CommGroup::kData);
  EXPECT_EQ(dp.domains, 2);
  const CollectivePlan plan = PlanCollective(wide, CommOp{"dp", CollectiveKind::kReduceScatter, CommGroup::kData, 1e9, false, ""});
  ASSERT_GE(plan.phase_count, 1);
  EXPECT_EQ(plan.phases[0].link, LinkClass::kNic);
  // Pipeline neighbours in one rack talk over NVLink: PP 4 on 72 GPUs (one domain).
  const Scenario rack = Nvl72({"cluster.nodes=18", "parallelism.pipeline=4", "parallelism.tensor=2"});
  const DesTopology rt = BuildDesTopology(rack);
  EXPECT_NE(rt.groups[0].parts[0].node, rt.groups[1].parts[0].node);
  EXPECT_TRUE(rt.SameNvlinkDomain(rt.groups[0].parts[0].node, rt.groups[1].parts[0].node));
  EXPECT_TRUE(rack.layout().Span(CommGroup::kPipeline).on_nvlink());
}

TEST(DesPlatformTest, HgxNodesHaveNoSwitchTrayLinks) {
  const DesTopology t = BuildDesTopology(Make({}));
  EXPECT_TRUE(t.nvlink_switch_bytes_per_s.empty());
  EXPECT_EQ(t.nodes_per_domain, 1);
  EXPECT_FALSE(t.SameNvlinkDomain(0, 1));
}

}  // namespace
}  // namespace trainsim
