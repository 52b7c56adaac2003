#include "sim/cost/step_costs.h"

#include <gtest/gtest.h>

#include "sim/cost/collective_model.h"
#include "sim/cost/gpu_cost_model.h"
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

// One GEMM and one collective overlapped with it, moved by `engine`.
PassWork GemmWithComm(CommEngine engine, double comm_bytes) {
  PassWork p;
  Operator g;
  g.name = "fc2";
  g.cls = OpClass::kGemm;
  g.m = 4096, g.n = 4096, g.k = 11008;
  g.flops = 2.0 * g.m * g.n * g.k;
  g.bytes = 2.0 * (g.m * g.k + g.k * g.n + g.m * g.n);
  p.ops.push_back(g);
  p.comms.push_back(CommOp{"fc2 reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kTensor, comm_bytes, true, "fc2", engine});
  return p;
}

TEST(StepCostsTest, OverlappedCollectivesCostTheSmsTheyHold) {
  const Scenario s = H100Tp8();
  const int sms = s.node.gpu.sms;
  const FrameworkProfile& f = s.framework;
  ASSERT_GT(f.userbuffer_pipelined_sms, 0);
  ASSERT_GT(f.userbuffer_bulk_sms, 0);
  const double small = 1e6;  // a collective much shorter than the GEMM
  const PassWork pipe = GemmWithComm(CommEngine::kUserbufferPipelined, small);
  const double gemm_s = PassComputeTime(pipe, s.node.gpu, s.training.precision, false);
  const double comm_s = CollectiveTime(s, pipe.comms[0]);
  ASSERT_LT(comm_s, gemm_s);
  // Pipelined userbuffers: the GEMM runs on the SMs left over for its whole duration.
  EXPECT_NEAR(ExposedCommTime(s, pipe, gemm_s), gemm_s * f.userbuffer_pipelined_sms / (sms - f.userbuffer_pipelined_sms), 1e-12);
  // Bulk and NCCL: only while the collective runs.
  const PassWork bulk = GemmWithComm(CommEngine::kUserbufferBulk, small);
  EXPECT_NEAR(ExposedCommTime(s, bulk, gemm_s), comm_s * f.userbuffer_bulk_sms / (sms - f.userbuffer_bulk_sms), 1e-12);
  // Copy engines hold no SMs: fully hidden.
  EXPECT_EQ(ExposedCommTime(s, GemmWithComm(CommEngine::kCopyEngine, small), gemm_s), 0.0);
  // A collective longer than its GEMM: the rest is exposed, the contention lasts the GEMM.
  const PassWork long_bulk = GemmWithComm(CommEngine::kUserbufferBulk, 4e9);
  const double long_s = CollectiveTime(s, long_bulk.comms[0]);
  ASSERT_GT(long_s, gemm_s);
  EXPECT_NEAR(ExposedCommTime(s, long_bulk, gemm_s),
              (long_s - gemm_s) + gemm_s * f.userbuffer_bulk_sms / (sms - f.userbuffer_bulk_sms), 1e-12);
}

TEST(StepCostsTest, OverlappedDataParallelCollectivesSlowTheirPass) {
  const Scenario on = H100Tp8({"parallelism.tensor=1", "cluster.nodes=2"});
  const StepCosts c = ComputeStepCosts(on);
  ASSERT_GT(c.grad_reduce_s, 0);
  const double k = on.framework.nccl_overlap_sms, sms = on.node.gpu.sms;
  EXPECT_NEAR(c.grad_reduce_contention_s, std::min(c.grad_reduce_s, c.slowest().backward_compute_s) * k / (sms - k), 1e-12);
  const StepCosts off = ComputeStepCosts(H100Tp8({"parallelism.tensor=1", "cluster.nodes=2", "parallelism.overlap_grad_reduce=false"}));
  EXPECT_EQ(off.grad_reduce_contention_s, 0.0);
}

}  // namespace
}  // namespace trainsim
