#include "sim/analytical/analytical_step.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "sim/cost/step_costs.h"
#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

Scenario H100Tp8(std::vector<std::string> sets = {}) {
  sets.insert(sets.begin(), {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "parallelism.tensor=8",
                             "parallelism.pipeline=1", "training.framework=megatron-core-2024"});
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-7b-1n-8nic.yaml", sets);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

// Interleaving divides the pipeline fill's compute by v, not its transfers:
// the first micro batch crosses all v x p - 1 virtual-stage boundaries before
// the last stage's first backward, the last one as many in the drain. Without
// data parallelism the exposed communication grows by 2 p (v - v') transfers
// from v' to v chunks. Without interleaving Megatron-Core overlaps no transfer
// (its non-interleaved 1F1B refuses overlap_p2p_comm): each micro batch's
// activations and gradients wait, 2 m transfers beside the fill's 2 (p - 1).
TEST(StepCostsTest, InterleavingKeepsTheFillsTransfers) {
  constexpr int kPipeline = 4, kMicroBatches = 16;
  auto exposed = [](int v, double* p2p_s) {
    const Scenario s = H100Tp8({"parallelism.tensor=2", "parallelism.pipeline=" + std::to_string(kPipeline),
                                "parallelism.virtual_stages=" + std::to_string(v), "training.global_batch=" + std::to_string(kMicroBatches),
                                "training.micro_batch=1"});
    EXPECT_EQ(s.parallelism.data, 1);
    EXPECT_EQ(s.parallelism.p2p_overlapped(), v > 1);  // the framework asks for the overlap; only interleaving has it
    const StepCosts c = ComputeStepCosts(s);
    *p2p_s = c.p2p_s;
    return AnalyticalStep(s, c).breakdown.exposed_communication_s;
  };
  double p2p1 = 0, p2p2 = 0, p2p4 = 0;
  const double one = exposed(1, &p2p1), two = exposed(2, &p2p2), four = exposed(4, &p2p4);
  ASSERT_GT(p2p1, 0);
  EXPECT_DOUBLE_EQ(p2p1, p2p4);
  EXPECT_DOUBLE_EQ(p2p2, p2p4);
  EXPECT_NEAR(four - two, 2 * kPipeline * (4 - 2) * p2p1, 1e-12);
  const double fill_two = 2 * (2 * kPipeline - 1), fill_one = 2 * (kPipeline - 1);
  EXPECT_NEAR(one - two, (fill_one + 2 * kMicroBatches - fill_two) * p2p1, 1e-12);
}

// The analytical step charges an overlapped DP collective what outlasts the
// last backward, or the SMs it takes from it, and at least its last bucket,
// which starts when the backward ends; without overlap, all of it.
TEST(StepCostsTest, OverlappedDataParallelCollectivesSlowTheirPass) {
  // (The parameter gather exposed in both, so that only the reduction differs.)
  const Scenario on = H100Tp8({"parallelism.tensor=1", "cluster.nodes=2", "parallelism.overlap_param_gather=false"});
  const Scenario off = H100Tp8({"parallelism.tensor=1", "cluster.nodes=2", "parallelism.overlap_param_gather=false",
                                "parallelism.overlap_grad_reduce=false"});
  const StepCosts c = ComputeStepCosts(on);
  ASSERT_GT(c.grad_reduce_s, 0);
  const double tail = c.grad_reduce_chunks.tail_s;
  ASSERT_GT(tail, 0);
  ASSERT_LT(tail, c.grad_reduce_s);
  const double k = on.framework.nccl_overlap_sms, sms = on.node.gpu.sms;
  const double bwd = c.slowest().backward_s();
  const double on_s = AnalyticalStep(on, c).breakdown.exposed_communication_s;
  const double off_s = AnalyticalStep(off, ComputeStepCosts(off)).breakdown.exposed_communication_s;
  const double overlapped = std::max(c.grad_reduce_s - bwd, tail + std::min(c.grad_reduce_s - tail, bwd) * k / (sms - k));
  EXPECT_NEAR(off_s - on_s, c.grad_reduce_s - overlapped, 1e-9);
  EXPECT_GT(off_s, on_s);
}

// The next step's tokens are read during this one: a storage that reads
// them slower than the step stalls each step to the read time, and a fast
// one costs nothing (the DES's prefetch, in closed form).
TEST(StepCostsTest, DataReadLongerThanTheStepStallsIt) {
  auto run = [](const std::string& bytes_per_token) {
    auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-7b-16n-8nic.yaml",
                          {"cluster.storage_nodes=1", "data.bytes_per_token=" + bytes_per_token});
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    const StepCosts c = ComputeStepCosts(*s);
    return std::pair{c.data_read_s, AnalyticalStep(*s, c)};
  };
  const auto [fast_read_s, fast] = run("4");
  EXPECT_EQ(fast.breakdown.data_stall_s, 0);
  EXPECT_LT(fast_read_s, fast.step_time_s);
  const auto [slow_read_s, slow] = run("100000");
  // 128 x 4096 tokens x 100 kB from one storage node's 9 GB/s of reads.
  EXPECT_NEAR(slow_read_s, 128.0 * 4096 * 1e5 / 9e9, 0.01);
  EXPECT_NEAR(slow.step_time_s, slow_read_s, 1e-9);
  EXPECT_NEAR(slow.breakdown.data_stall_s, slow_read_s - fast.step_time_s, 1e-6);
}

}  // namespace
}  // namespace trainsim
