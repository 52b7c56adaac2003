#include "calib/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "calib/measurements.h"
#include "sim/io/scenario_loader.h"

namespace trainsim::calib {
namespace {

const LayerShape kShape{256, 704, 4, 2, 128, 2};

TEST(Plan, CoversTheWorkloadOperatorsOfTheLayer) {
  const CalibrationPlan p = MakePlan({kShape});
  auto has = [&](long m, long n, long k, long b, const char* layout) {
    return std::find(p.gemms.begin(), p.gemms.end(), GemmShape{m, n, k, b, layout}) != p.gemms.end();
  };
  const long T = 256, qkv = (4 + 2 * 2) * 64;
  EXPECT_TRUE(has(T, qkv, 256, 1, "nn"));          // qkv forward
  EXPECT_TRUE(has(256, qkv, T, 1, "tn"));          // qkv wgrad: X^T dY
  EXPECT_TRUE(has(T, 256, qkv, 1, "nt"));          // qkv dgrad: dY W^T
  EXPECT_TRUE(has(T, 2 * 704, 256, 1, "nn"));      // fc1 (gate and up)
  EXPECT_TRUE(has(128, 128, 64, 2 * 4, "nt"));     // scores q k^T, one per head and sequence
  EXPECT_TRUE(has(128, 64, 128, 2 * 4, "nn"));     // attention over values (and dq = dS k)
  for (const char* k : {"rmsnorm_fwd", "rmsnorm_bwd", "rotary_fwd", "softmax_fwd", "softmax_bwd", "swiglu_fwd", "add"}) {
    EXPECT_TRUE(std::any_of(p.memory.begin(), p.memory.end(), [&](const MemoryKernel& m) { return m.kernel == k; })) << k;
  }
  EXPECT_FALSE(p.copy_floats.empty());
  // Every kernel the plan runs is one a measurements file may hold.
  for (const MemoryKernel& k : p.memory) {
    EXPECT_NE(std::find(MemoryKernelNames().begin(), MemoryKernelNames().end(), k.kernel), MemoryKernelNames().end()) << k.kernel;
  }
}

// `calibrate --scenario`: the sweep gains the GEMMs the scenario's prediction
// runs, the MoE experts batched over a rank's local experts, each in its
// operator's layout; a second call adds nothing.
TEST(Plan, AScenarioAddsTheGemmsItsPredictionRuns) {
  auto sc = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/moe/qwen3-235b-a22b-32n-8nic.yaml");
  ASSERT_TRUE(sc) << sc.error().ToString();
  const Workload w = BuildWorkload(*sc);
  CalibrationPlan p = MakePlan({kShape});
  const size_t before = p.gemms.size();
  const int added = AddWorkloadGemms(w, p);
  EXPECT_GT(added, 0);
  EXPECT_TRUE(std::is_sorted(p.gemms.begin(), p.gemms.end()));
  int experts = 0;
  for (const auto& kind : w.kinds) {
    for (const PassWork* pass : {&kind.forward, &kind.backward}) {
      for (const auto& op : pass->ops) {
        if (op.cls != OpClass::kGemm) continue;
        const GemmShape s{op.m, op.n, op.k, op.batch, LayoutForOperator(op.name.str())};
        EXPECT_NE(std::find(p.gemms.begin(), p.gemms.end(), s), p.gemms.end()) << op.name.str();
        experts += op.name.str().rfind("expert fc", 0) == 0 && op.batch > 1;
      }
    }
  }
  EXPECT_GE(experts, 2);  // fc1 and fc2 at least, batched over the local experts
  // And once more as Transformer Engine issues them, a GEMM per local expert:
  // forward, data and weight gradients of fc1 and fc2.
  const long local = 128 / 32;
  ASSERT_GE(p.grouped.size(), 4u);
  EXPECT_EQ(p.gemms.size() + p.grouped.size(), before + size_t(added));
  for (const auto& g : p.grouped) EXPECT_EQ(g.experts, local);
  EXPECT_TRUE(std::any_of(p.grouped.begin(), p.grouped.end(), [](const GroupedGemmShape& g) { return g.layout == "tn"; }));
  EXPECT_EQ(AddWorkloadGemms(w, p), 0);
  auto text = ParsePlanText(PlanText(p), "plan.txt");
  ASSERT_TRUE(text) << text.error().ToString();
  EXPECT_EQ(text->gemms.size(), p.gemms.size());
  ASSERT_EQ(text->grouped.size(), p.grouped.size());
  EXPECT_EQ(text->grouped[0].experts, local);
  // A dense model's plan has none.
  EXPECT_TRUE(MakePlan({kShape}).grouped.empty());
}

TEST(Plan, TextRoundTripsAndRejectsMalformedLines) {
  const CalibrationPlan p = MakePlan({kShape, {128, 352, 2, 1, 64, 1}});
  auto q = ParsePlanText(PlanText(p), "plan.txt");
  ASSERT_TRUE(q) << q.error().ToString();
  EXPECT_EQ(q->gemms, p.gemms);
  EXPECT_EQ(q->layers.size(), 2u);
  EXPECT_EQ(q->memory.size(), p.memory.size());
  EXPECT_EQ(q->copy_floats, p.copy_floats);
  auto bad = ParsePlanText("layer 256 704 4 2 128 2\ngemm 1 2 x 1\n", "plan.txt");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().ToString().rfind("plan.txt:2: gemm:", 0), 0u) << bad.error().ToString();
  EXPECT_FALSE(ParsePlanText("layer 256 704 3 2 128 2\n", "p"));  // heads not a multiple of kv_heads
  EXPECT_FALSE(ParsePlanText("conv 1 2 3\n", "p"));
  EXPECT_FALSE(ParsePlanText("copy 10 11\n", "p"));
  EXPECT_FALSE(ParsePlanText("gemm 1 2 3 1 xy\n", "p"));
  EXPECT_TRUE(ParsePlanText("grouped 64 128 256 8 tn\n", "p"));
  auto one = ParsePlanText("copy 10\ngrouped 64 128 256 1 nn\n", "p");  // a group of one expert is no group
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error().ToString().rfind("p:2: grouped:", 0), 0u) << one.error().ToString();
  EXPECT_FALSE(ParsePlanText("grouped 64 128 256 8\n", "p"));  // the layout is not optional
  auto nn = ParsePlanText("gemm 1 2 3 1\n", "p");  // layout defaults to nn
  ASSERT_TRUE(nn);
  EXPECT_EQ(nn->gemms[0].layout, "nn");
}

TEST(Plan, ShapeSpecs) {
  LayerShape s;
  EXPECT_EQ(ParseShapeSpec("256:704:4:2:128:2", s), "");
  EXPECT_EQ(s.ffn_hidden, 704);
  EXPECT_EQ(s.micro_batch, 2);
  EXPECT_NE(ParseShapeSpec("256:704:4:2:128", s), "");
  EXPECT_NE(ParseShapeSpec("256:704:4:2:128:2x", s), "");
  EXPECT_NE(ParseShapeSpec("250:704:4:2:128:2", s), "");
}

TEST(Plan, OperatorNamesMapToKernels) {
  EXPECT_EQ(KernelForOperator("input norm"), "rmsnorm_fwd");
  EXPECT_EQ(KernelForOperator("post-attention norm backward"), "rmsnorm_bwd");
  EXPECT_EQ(KernelForOperator("scale-mask-softmax backward"), "softmax_bwd");
  EXPECT_EQ(KernelForOperator("residual backward"), "add");
  EXPECT_EQ(KernelForOperator("qkv"), "");
  EXPECT_EQ(LayoutForOperator("fc1"), "nn");
  EXPECT_EQ(LayoutForOperator("fc1 dgrad"), "nt");
  EXPECT_EQ(LayoutForOperator("fc1 wgrad"), "tn");
  EXPECT_EQ(LayoutForOperator("attention scores QK^T"), "nt");
  EXPECT_EQ(LayoutForOperator("attention scores QK^T dgrad"), "nn");
  EXPECT_EQ(LayoutForOperator("attention over values dgrad2"), "tn");
}

}  // namespace
}  // namespace trainsim::calib
