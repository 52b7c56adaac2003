#include "sim/run/host_issue_share.h"

#include <gtest/gtest.h>

#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

Scenario Load(const std::string& file, const std::vector<std::string>& sets = {}) {
  Expected<Scenario> s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + file, sets);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

TEST(HostIssueShareTest, FineGrainedExpertsWaitForTheHostDenseLayersHardly) {
  // Qwen3-30B-A3B: 16 small local experts per GPU, each with its own GEMMs and casts.
  const HostIssueShare moe = HostIssueShareOf(Load("tests/data/qwen3-30b-a3b-2n-dgx-h100.yaml"));
  // Llama 2 70B with TP 8: a few long GEMMs per layer hide the host.
  const HostIssueShare dense = HostIssueShareOf(Load("examples/reference-design/llama2-70b-4n-8nic.yaml"));
  EXPECT_GT(moe.host_s_per_kernel, 0);
  EXPECT_GT(moe.Share(), 0.05);
  EXPECT_LT(dense.Share(), moe.Share());
  EXPECT_GE(dense.Share(), 0);
  EXPECT_LE(moe.free_host_step_s, moe.step_s);
  // What the summaries say: the MoE run's share and host cost, nothing for the dense one.
  const std::string line = HostIssueShareLine(Load("tests/data/qwen3-30b-a3b-2n-dgx-h100.yaml"));
  EXPECT_NE(line.find("% of the step (analytical), the host issuing kernels at 15 us each"), std::string::npos) << line;
  EXPECT_EQ(HostIssueShareLine(Load("examples/reference-design/llama2-70b-4n-8nic.yaml")), "");
}

TEST(HostIssueShareTest, ADearerHostWaitsLonger) {
  Scenario s = Load("tests/data/qwen3-30b-a3b-2n-dgx-h100.yaml");
  const double base = HostIssueShareOf(s).Share();
  s.framework.host_s_per_kernel *= 3;
  EXPECT_GT(HostIssueShareOf(s).Share(), base);
  s.framework.host_s_per_kernel = 0;
  const HostIssueShare none = HostIssueShareOf(s);
  EXPECT_EQ(none.Share(), 0);
  EXPECT_EQ(none.host_s_per_kernel, 0);
}

}  // namespace
}  // namespace trainsim
