#include "sim/analytical/analytical_step.h"

#include <gtest/gtest.h>

#include <algorithm>

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

}  // namespace
}  // namespace trainsim
