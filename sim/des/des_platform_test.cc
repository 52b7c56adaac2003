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

TEST(DesPlatformTest, Nvl72JobsFillRacksAsTheLaunchersSlurmSegments) {
  // Megatron-Bridge's launcher asks Slurm for segments of the largest tray
  // count up to 18 that divides the job's: 64 trays run as 4 racks of 16.
  auto domain_nodes = [](int nodes) {
    return Nvl72({"cluster.nodes=" + std::to_string(nodes), "parallelism.pipeline=1", "parallelism.tensor=4",
                  "training.global_batch=" + std::to_string(nodes)})
        .nvlink_domain_nodes();
  };
  EXPECT_EQ(domain_nodes(64), 16);
  EXPECT_EQ(domain_nodes(36), 18);
  EXPECT_EQ(domain_nodes(8), 8);  // one rack holds the job
  EXPECT_EQ(domain_nodes(20), 10);
  EXPECT_EQ(domain_nodes(19), 18);  // no divisor but 1: racks filled in turn
  EXPECT_EQ(Nvl72({"cluster.nodes=19", "parallelism.pipeline=1", "parallelism.tensor=4", "training.global_batch=19"}).nvlink_domains_text(),
            "1 x 18 + 1 x 1 of 18 nodes (filled in turn); across domains: dp");
  EXPECT_EQ(Make({}).nvlink_domain_nodes(), 1);  // HGX: the node is the domain
  const Scenario given = Nvl72({"cluster.nodes=64", "cluster.nodes_per_nvlink_domain=18", "parallelism.pipeline=1", "parallelism.tensor=4",
                                "training.global_batch=64"});
  EXPECT_EQ(given.nvlink_domain_nodes(), 18);
  EXPECT_EQ(BuildDesTopology(given).nodes_per_domain, 18);
  EXPECT_EQ(given.nvlink_domains_text(), "3 x 18 + 1 x 10 of 18 nodes (cluster.nodes_per_nvlink_domain); across domains: dp");
  // Fewer nodes than the domains asked for: one partial domain, no "0 x 18".
  EXPECT_EQ(Nvl72({"cluster.nodes=16", "cluster.nodes_per_nvlink_domain=18", "parallelism.pipeline=1", "parallelism.tensor=4",
                   "training.global_batch=16"})
                .nvlink_domains_text(),
            "1 x 16 of 18 nodes (cluster.nodes_per_nvlink_domain); every group on NVLink");
}

TEST(DesPlatformTest, Nvl72GroupStraddlingTwoRacksTakesItsAllToAllOverTheNics) {
  // EP 32 on 64 trays: in segments of 16 trays every expert group sits in one
  // rack; with racks of 18 filled in turn the third group has 8 members in
  // the first rack and 24 in the second.
  const std::vector<std::string> ep32 = {"cluster.nodes=64",        "model=mixtral-8x7b",     "model.moe.experts=32",
                                         "parallelism.pipeline=1",  "parallelism.tensor=1",   "parallelism.expert=32",
                                         "training.global_batch=256"};
  const CommOp a2a{"dispatch", CollectiveKind::kAllToAll, CommGroup::kExpert, 64e6, false, ""};
  const Scenario segments = Nvl72(ep32);
  const CollectivePlan inside = PlanCollective(segments, a2a);
  ASSERT_EQ(inside.phase_count, 1);
  EXPECT_EQ(inside.phases[0].link, LinkClass::kNvlink);
  std::vector<std::string> filled = ep32;
  filled.push_back("cluster.nodes_per_nvlink_domain=18");
  const Scenario racks = Nvl72(filled);
  const GroupSpan ep = racks.layout().Span(CommGroup::kExpert);
  EXPECT_EQ(ep.domains, 2);
  EXPECT_EQ(ep.ranks_per_domain, 8);
  const CollectivePlan across = PlanCollective(racks, a2a);
  ASSERT_EQ(across.phase_count, 2);
  EXPECT_EQ(across.phases[1].link, LinkClass::kNic);
  // The 8 members in one rack send 24 of their 32 pieces over the NICs, 7 over NVLink.
  EXPECT_DOUBLE_EQ(across.phases[1].bytes / across.phases[0].bytes, 24.0 / 7.0);
  EXPECT_GT(across.Time(), 3 * inside.Time());
}

TEST(DesPlatformTest, HgxNodesHaveNoSwitchTrayLinks) {
  const DesTopology t = BuildDesTopology(Make({}));
  EXPECT_TRUE(t.nvlink_switch_bytes_per_s.empty());
  EXPECT_EQ(t.nodes_per_domain, 1);
  EXPECT_FALSE(t.SameNvlinkDomain(0, 1));
}

}  // namespace
}  // namespace trainsim
