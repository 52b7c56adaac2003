#include "sim/core/rank_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <tuple>

namespace trainsim {
namespace {

RankLayoutShape Shape(int tensor, int context, int data, int pipeline, int gpus_per_node, int domain_gpus) {
  RankLayoutShape s;
  s.tensor = tensor;
  s.context = context;
  s.data = data;
  s.pipeline = pipeline;
  s.gpus_per_node = gpus_per_node;
  s.nvlink_domain_gpus = domain_gpus;
  return s;
}

TEST(RankLayoutTest, GroupsThatTileTheDomainsAreSpreadAsRankZerosGroup) {
  // TP 8 on 4-GPU trays in 64-GPU domains: two trays, one domain, every group alike.
  const RankLayout l(Shape(8, 1, 32, 1, 4, 64));
  const GroupSpan tp = l.Span(CommGroup::kTensor);
  EXPECT_EQ(tp.nodes, 2);
  EXPECT_EQ(tp.ranks_per_node, 4);
  EXPECT_TRUE(tp.on_nvlink());
  // DP 32, 8 GPUs apart: 8 in each of the 4 domains.
  const GroupSpan dp = l.Span(CommGroup::kData);
  EXPECT_EQ(dp.domains, 4);
  EXPECT_EQ(dp.ranks_per_domain, 8);
}

TEST(RankLayoutTest, AGroupAcrossARackBoundaryIsTheSlowest) {
  // EP 32 on 256 GPUs in racks of 72 filled in turn: ranks 0-31 and 32-63 sit
  // in the first rack, 64-95 has 8 there and 24 in the second: its
  // all-to-all crosses the NICs, and the 8 carry the most.
  RankLayoutShape s = Shape(1, 1, 256, 1, 4, 72);
  s.expert = 32;
  const RankLayout racks(s);
  const GroupSpan ep = racks.Span(CommGroup::kExpert);
  EXPECT_FALSE(ep.on_nvlink());
  EXPECT_EQ(ep.domains, 2);
  EXPECT_EQ(ep.ranks_per_domain, 8);
  EXPECT_TRUE(racks.Span(32, 1, 0).on_nvlink());  // rank 0's group alone would say NVLink
  // 64 GPUs of each rack (Slurm segments of 16 trays): every group inside one.
  s.nvlink_domain_gpus = 64;
  EXPECT_TRUE(RankLayout(s).Span(CommGroup::kExpert).on_nvlink());
}

TEST(RankLayoutTest, AnUnevenGroupCountsItsFewestPerNode) {
  // DP 12 at TP 1 on 8-GPU nodes: 8 on the first node, 4 on the second.
  const GroupSpan dp = RankLayout(Shape(1, 1, 12, 2, 8, 8)).Span(CommGroup::kData);
  EXPECT_EQ(dp.nodes, 2);
  EXPECT_EQ(dp.ranks_per_node, 4);
  EXPECT_EQ(dp.domains, 2);
  EXPECT_EQ(dp.ranks_per_domain, 4);
}

TEST(RankLayoutTest, MembersADomainApartEachHaveOne) {
  // PP 4, 72 GPUs apart: one stage per rack.
  const GroupSpan pp = RankLayout(Shape(8, 1, 9, 4, 4, 72)).Span(CommGroup::kPipeline);
  EXPECT_EQ(pp.domains, 4);
  EXPECT_EQ(pp.ranks_per_domain, 1);
  EXPECT_EQ(pp.stride, 72);
}

// Every group of every kind, member by member, from Megatron-Core's rank
// order (tensor, context, data, pipeline; the experts folded over a stage as
// expert-tensor, expert, expert-data): the slowest by the layout's order.
GroupSpan SlowestByBruteForce(const RankLayoutShape& s, CommGroup kind) {
  const long gpus = long(s.tensor) * s.context * s.data * s.pipeline, stage = long(s.tensor) * s.context * s.data;
  // The coordinates that name a rank's group of `kind` (the ranks agreeing on them).
  auto group_of = [&](long r) -> std::tuple<long, long, long> {
    const long tp = r % s.tensor, cp = r / s.tensor % s.context, dp = r / (long(s.tensor) * s.context) % s.data, pp = r / stage;
    const long in_stage = r % stage, etp = in_stage % s.expert_tensor, ep = in_stage / s.expert_tensor % s.expert,
               edp = in_stage / (long(s.expert_tensor) * s.expert);
    switch (kind) {
      case CommGroup::kTensor: return {cp, dp, pp};
      case CommGroup::kContext: return {tp, dp, pp};
      case CommGroup::kData: return {tp, pp, 0};
      case CommGroup::kPipeline: return {tp, cp, dp};
      case CommGroup::kExpert: return {etp, edp, pp};
      case CommGroup::kExpertData: return {etp, ep, pp};
      default: return {0, 0, 0};
    }
  };
  std::map<std::tuple<long, long, long>, std::vector<long>> groups;
  for (long r = 0; r < gpus; ++r) groups[group_of(r)].push_back(r);
  auto key = [](const GroupSpan& g) {
    return std::make_tuple(g.domains > 1, -g.ranks_per_domain, g.domains, g.nodes > 1, -g.ranks_per_node, g.nodes);
  };
  GroupSpan slowest;
  bool first = true;
  for (const auto& [_, members] : groups) {
    auto spread = [&](long size, int& containers, int& fewest) {
      std::map<long, int> count;
      for (long r : members) count[r / size]++;
      containers = int(count.size());
      fewest = int(members.size());
      for (const auto& [c, k] : count) fewest = std::min(fewest, k);
    };
    GroupSpan g;
    g.ranks = int(members.size());
    spread(s.gpus_per_node, g.nodes, g.ranks_per_node);
    spread(s.nvlink_domain_gpus, g.domains, g.ranks_per_domain);
    if (first || key(g) > key(slowest)) slowest = g;
    first = false;
  }
  return slowest;
}

// Scalable units of 6 nodes against EP groups of 4 nodes: the group on
// nodes 4-7 straddles the first two units, and it is the slowest (what it
// moves across them shares the spines' uplinks), though the one at GPU 0 fits
// in one unit.
TEST(RankLayoutTest, AGroupAcrossAScalableUnitBoundaryIsTheSlowest) {
  RankLayoutShape s = Shape(1, 1, 512, 1, 8, 8);
  s.expert = 32;
  s.nodes_per_su = 6;
  const RankLayout l(s);
  EXPECT_EQ(l.Span(32, 1, 0).scalable_units, 1);
  EXPECT_EQ(l.Span(32, 1, 32).scalable_units, 2);
  const GroupSpan ep = l.Span(CommGroup::kExpert);
  EXPECT_EQ(ep.scalable_units, 2);
  EXPECT_EQ(ep.nodes, 4);
  // Units of 8 nodes take whole groups of 4: none straddles.
  s.nodes_per_su = 8;
  EXPECT_EQ(RankLayout(s).Span(CommGroup::kExpert).scalable_units, 1);
}

TEST(RankLayoutTest, SlowestGroupMatchesEveryGroupWalkedMemberByMember) {
  std::mt19937 rng(7);
  auto pick = [&](std::initializer_list<int> v) { return *(v.begin() + rng() % v.size()); };
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int gpn = pick({4, 8});
    RankLayoutShape s = Shape(pick({1, 2, 4, 8}), pick({1, 2, 3}), pick({1, 2, 3, 4, 5, 6, 9, 16}), pick({1, 2, 3, 5}), gpn,
                              gpn * pick({1, 2, 3, 5, 9, 10, 16, 18}));
    const long stage = long(s.tensor) * s.context * s.data;
    s.expert_tensor = pick({1, 2});
    s.expert = pick({1, 2, 4, 8, 16, 32});
    if (stage % (long(s.expert) * s.expert_tensor) != 0) s.expert = s.expert_tensor = 1;
    const RankLayout l(s);
    for (CommGroup kind : {CommGroup::kTensor, CommGroup::kContext, CommGroup::kData, CommGroup::kPipeline, CommGroup::kExpert,
                           CommGroup::kExpertData}) {
      const GroupSpan want = SlowestByBruteForce(s, kind), got = l.Span(kind);
      ASSERT_EQ(got.ranks, want.ranks) << trial;
      EXPECT_EQ(got.domains, want.domains) << "trial " << trial << " kind " << ToString(kind);
      EXPECT_EQ(got.ranks_per_domain, want.ranks_per_domain) << "trial " << trial << " kind " << ToString(kind);
      EXPECT_EQ(got.nodes, want.nodes) << "trial " << trial << " kind " << ToString(kind);
      EXPECT_EQ(got.ranks_per_node, want.ranks_per_node) << "trial " << trial << " kind " << ToString(kind);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2400);
}

}  // namespace
}  // namespace trainsim
