#include "sim/cost/collective_model.h"

#include <gtest/gtest.h>

#include "sim/cost/step_costs.h"
#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

Scenario Load(const std::string& name, std::vector<std::string> sets = {}) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/" + name + ".yaml", sets);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

TEST(CollectiveModelTest, MegatronRankOrderPlacesGroups) {
  const Scenario s = Load("llama2-70b-8n-8nic");  // TP4 PP4 DP4 on 64 GPUs
  EXPECT_EQ(s.layout().Span(CommGroup::kTensor).nodes, 1);
  const GroupSpan dp = s.layout().Span(CommGroup::kData);
  EXPECT_EQ(dp.ranks, 4);
  EXPECT_EQ(dp.ranks_per_node, 2);
  EXPECT_EQ(dp.nodes, 2);
  const GroupSpan pp = s.layout().Span(CommGroup::kPipeline);
  EXPECT_EQ(pp.ranks_per_node, 1);
  EXPECT_EQ(pp.nodes, 4);
}

TEST(CollectiveModelTest, FourNicsHalveTheInterNodeShare) {
  const Scenario eight = Load("llama2-70b-8n-8nic");
  const Scenario four = Load("llama2-70b-8n-4nic");
  EXPECT_DOUBLE_EQ(NicShareBytesPerS(eight), 2 * NicShareBytesPerS(four));
  const CommOp dp{"dp", CollectiveKind::kReduceScatter, CommGroup::kData, 1e9, false, ""};
  EXPECT_GT(CollectiveTime(four, dp), 1.8 * CollectiveTime(eight, dp) - 1e-3);
}

// A pipeline send across nodes: with the stages a node apart (TP 8) every
// GPU of the node sends at once and 4 NICs halve each one's share; with the
// stages one GPU apart (pure PP) only the node's last GPU sends across, on a
// NIC of its own whatever the count (as the DES's flows find).
TEST(CollectiveModelTest, APipelineHopSharesTheNicsOnlyWithTheGpusThatSendAcross) {
  const CommOp p2p{"p2p", CollectiveKind::kSendRecv, CommGroup::kPipeline, 1e8, false, ""};
  const std::vector<std::string> tp8{"parallelism.tensor=8", "parallelism.pipeline=2"};
  std::vector<std::string> tp8_four = tp8;
  tp8_four.push_back("cluster.nics_per_node=4");
  EXPECT_GT(CollectiveTime(Load("llama2-7b-2n-8nic", tp8_four), p2p), 1.8 * CollectiveTime(Load("llama2-7b-2n-8nic", tp8), p2p));
  const std::vector<std::string> pp16{"parallelism.tensor=1", "parallelism.pipeline=16"};
  std::vector<std::string> pp16_four = pp16;
  pp16_four.push_back("cluster.nics_per_node=4");
  const Scenario four = Load("llama2-7b-2n-8nic", pp16_four);
  ASSERT_EQ(four.layout().Span(CommGroup::kPipeline).stride, 1);
  EXPECT_DOUBLE_EQ(CollectiveTime(four, p2p), CollectiveTime(Load("llama2-7b-2n-8nic", pp16), p2p));
}

// An oversubscribed spine (uplinks 1/o of the leaves' node ports) slows
// what crosses scalable units, in proportion to the share that does: an
// all-to-all's pieces for members in other units, a ring's hops across a
// unit boundary (k of its N), never what stays under one unit's leaves.
TEST(CollectiveModelTest, AnOversubscribedSpineSlowsWhatCrossesScalableUnits) {
  Scenario s = Load("llama2-70b-8n-8nic", {"parallelism.tensor=1", "parallelism.pipeline=1", "parallelism.virtual_stages=1", "parallelism.data=64"});
  const CommOp all_to_all{"a2a", CollectiveKind::kAllToAll, CommGroup::kData, 1e9, false, ""};
  const CommOp ring{"rs", CollectiveKind::kReduceScatter, CommGroup::kData, 1e9, false, ""};
  const auto at = [&](int nodes_per_su, double oversubscription, const CommOp& op) {
    Scenario t = s;
    t.fabric.nodes_per_su = nodes_per_su;
    t.fabric.spine_oversubscription = oversubscription;
    t.fabric.switch_radix = 16;  // 8-port leaves' worth: the nodes' ports do not fit one switch
    const CollectivePlan plan = PlanCollective(t, op);
    for (int i = 0; i < plan.phase_count; ++i) {
      if (plan.phases[i].link == LinkClass::kNic) return plan.phases[i].time_s();
    }
    return -1.0;
  };
  ASSERT_EQ(s.layout().Span(CommGroup::kData).nodes, 8);
  for (const CommOp& op : {all_to_all, ring}) {
    EXPECT_DOUBLE_EQ(at(8, 4, op), at(8, 1, op)) << op.name;   // one unit: the spine carries none of it
    EXPECT_DOUBLE_EQ(at(1, 1, op), at(8, 1, op)) << op.name;   // non-blocking: no slower across units
    EXPECT_DOUBLE_EQ(at(1, 4, op), 4 * at(8, 1, op)) << op.name;  // every piece and hop crosses
  }
  // Two units of 4 nodes: 32 of 56 off-node peers are in the other unit;
  // a ring over 8 nodes crosses at 2 of its 8 hops.
  EXPECT_NEAR(at(4, 4, all_to_all), 4 * 32.0 / 56 * at(8, 1, all_to_all), 1e-12);
  EXPECT_DOUBLE_EQ(at(4, 4, ring), at(8, 1, ring));
  EXPECT_NEAR(at(4, 8, ring), 2 * at(8, 1, ring), 1e-12);
}

// Pipeline stages a node apart (TP 4 x DP 2 per node): each node its own
// scalable unit, every GPU's hop crosses the uplinks at 1/o of its NIC; in
// one unit none does. (The DES agrees: des_simulator_test.)
TEST(CollectiveModelTest, PipelineHopsBetweenScalableUnitsShareTheUplinks) {
  const Scenario s = Load("llama2-70b-4n-8nic");
  ASSERT_EQ(s.layout().Span(CommGroup::kPipeline).stride, 8);
  const CommOp p2p{"p2p", CollectiveKind::kSendRecv, CommGroup::kPipeline, 1e8, false, ""};
  const auto at = [&](int nodes_per_su, double oversubscription) {
    Scenario t = s;
    t.fabric.nodes_per_su = nodes_per_su;
    t.fabric.spine_oversubscription = oversubscription;
    t.fabric.switch_radix = 16;  // 8-port leaves' worth: the nodes' ports do not fit one switch
    return PlanCollective(t, p2p).phases[0].time_s();
  };
  EXPECT_DOUBLE_EQ(at(4, 4), at(4, 1));
  EXPECT_DOUBLE_EQ(at(1, 4), 4 * at(4, 1));
  EXPECT_DOUBLE_EQ(at(2, 4), 2 * at(4, 1));  // the unit's last node of two sends across
}

TEST(CollectiveModelTest, NicCountDoesNotMatterInsideOneNode) {
  const Scenario eight = Load("llama2-7b-1n-8nic");
  const Scenario four = Load("llama2-7b-1n-4nic");
  const StepCosts a = ComputeStepCosts(eight), b = ComputeStepCosts(four);
  EXPECT_DOUBLE_EQ(a.grad_reduce_s, b.grad_reduce_s);
  EXPECT_GT(a.grad_reduce_s, 0);
}

// Small messages take NCCL's LL protocol (half the link rate, no pipeline to
// fill) rather than paying the Simple protocol's pipeline: a one-float
// all-reduce (a current-scaling amax) costs the measured 8-byte latency, and
// large messages keep the Simple protocol's size curve.
TEST(CollectiveModelTest, SmallMessagesCostTheLatencyNotTheSimplePipeline) {
  const Scenario s = Load("llama2-70b-8n-8nic");  // TP 4 inside the node
  const double half = s.node.intra_half_chunk_bytes;
  ASSERT_GT(half, 0);
  EXPECT_DOUBLE_EQ(MessageSizeFactor(s, 1024), kLowLatencyProtocolEfficiency);
  EXPECT_DOUBLE_EQ(MessageSizeFactor(s, 16 * half), 16 / 17.0);
  const CommOp amax{"amax", CollectiveKind::kAllReduce, CommGroup::kTensor, 4, false, ""};
  EXPECT_NEAR(CollectiveTime(s, amax), s.node.intra_latency_s, 0.01 * s.node.intra_latency_s);
}

TEST(CollectiveModelTest, AllReduceMovesTwiceAnAllGather) {
  const Scenario s = Load("llama2-70b-8n-8nic");
  const CommOp ag{"ag", CollectiveKind::kAllGather, CommGroup::kTensor, 256e6, false, ""};
  CommOp ar = ag;
  ar.kind = CollectiveKind::kAllReduce;
  // NVLS all-reduce is faster per byte than a ring; without it the ratio is exactly 2 minus latency.
  EXPECT_GT(CollectiveTime(s, ar), CollectiveTime(s, ag));
}

// NCCL reaches its effective NVLink rate (the ring bus rate, 370 of 450 GB/s
// on H100) in everything but an NVLS all-reduce: all-to-all and send/recv too.
TEST(CollectiveModelTest, AllToAllAndSendRecvOnNvlinkRunAtNcclsEffectiveRate) {
  const Scenario s = Load("llama2-70b-8n-8nic");  // TP 4 inside the node
  EXPECT_DOUBLE_EQ(NvlinkNcclBytesPerS(s), s.node.intra_ring_bus_bytes_per_s);
  EXPECT_LT(NvlinkNcclBytesPerS(s), s.node.nvlink_bytes_per_s);
  for (CollectiveKind kind : {CollectiveKind::kAllToAll, CollectiveKind::kSendRecv}) {
    const CollectivePlan plan = PlanCollective(s, CommOp{"x", kind, CommGroup::kTensor, 256e6, false, ""});
    ASSERT_EQ(plan.phase_count, 1);
    EXPECT_EQ(plan.phases[0].link, LinkClass::kNvlink);
    EXPECT_DOUBLE_EQ(plan.phases[0].shared_bytes_per_s, s.node.intra_ring_bus_bytes_per_s);
    EXPECT_DOUBLE_EQ(plan.phases[0].unshared_bytes_per_s, s.node.intra_ring_bus_bytes_per_s);
  }
}

}  // namespace
}  // namespace trainsim
