#include "sim/validate/track_record.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

const std::string kReference = std::string(TRAINSIM_SOURCE_DIR) + "/tests/reference/";

Scenario Example(const std::string& path) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/" + path);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

// The record of a scenario is validate's figures over the cases of its GPU
// and kind of workload, every file's together, and nothing else.
TEST(TrackRecordTest, IsValidateOverTheCasesOfTheSameGpuAndKind) {
  const Scenario moe = Example("moe/qwen3-235b-a22b-32n-8nic.yaml");
  const std::vector<std::string> files = {kReference + "measured.yaml", kReference + "published-2025.yaml"};
  const Expected<TrackRecord> t = TrackRecordOf(moe, files);
  ASSERT_TRUE(t.ok()) << t.error().ToString();
  EXPECT_EQ(t->gpu, "h100-sxm-80g");
  EXPECT_EQ(t->workload, "MoE pre-training");
  EXPECT_EQ(t->files, 2);
  int cases = 0;
  double abs_sum = 0, signed_sum = 0, max_abs = 0;
  for (const std::string& f : files) {
    const auto rep = ValidateReference(f, Fidelity::kAnalytical);
    ASSERT_TRUE(rep.ok());
    for (const ValidationCase& c : rep->cases) {
      if (!c.failure.empty() || c.gpu != "h100-sxm-80g" || c.workload != "MoE pre-training") continue;
      ++cases;
      abs_sum += std::fabs(c.error);
      signed_sum += c.error;
      max_abs = std::max(max_abs, std::fabs(c.error));
    }
  }
  ASSERT_GT(cases, 10);  // published-2025's Grok-1, DeepSeek-V3, Qwen3 and GPT-OSS runs on H100
  EXPECT_EQ(t->summary.cases, cases);
  EXPECT_NEAR(t->summary.mean_abs_error, abs_sum / cases, 1e-12);
  EXPECT_NEAR(t->summary.mean_signed_error, signed_sum / cases, 1e-12);
  EXPECT_DOUBLE_EQ(t->summary.max_abs_error, max_abs);
  // A dense run on the same GPU has a record of its own.
  const Expected<TrackRecord> dense = TrackRecordOf(Example("reference-design/llama2-70b-8n-8nic.yaml"), files);
  ASSERT_TRUE(dense.ok());
  EXPECT_EQ(dense->workload, "dense pre-training");
  EXPECT_GT(dense->summary.cases, 20);
  EXPECT_NE(dense->summary.mean_abs_error, t->summary.mean_abs_error);
}

TEST(TrackRecordTest, TheSourceTreeShipsItsReferenceFiles) {
  const std::vector<std::string> files = DefaultReferenceFiles();
  ASSERT_GE(files.size(), 2u);
  EXPECT_TRUE(std::is_sorted(files.begin(), files.end()));
  for (const auto& f : files) EXPECT_EQ(f.substr(f.size() - 5), ".yaml") << f;
}

TEST(TrackRecordTest, TextSaysHowFarOffAndWhichWay) {
  TrackRecord t{"b200-sxm-180g", "MoE pre-training", {17, 0.222, 0.514, -0.219}, 3};
  EXPECT_EQ(TrackRecordText(t),
            "17 published MoE pre-training runs on b200-sxm-180g: predicted 22.2% off on average (mean -21.9%: too fast), "
            "at worst 51.4% (trainsim validate)");
  t.summary.mean_signed_error = 0.05;  // mostly scatter, not a lean
  EXPECT_EQ(TrackRecordText(t).find("too"), std::string::npos) << TrackRecordText(t);
  t.summary.cases = 0;
  EXPECT_EQ(TrackRecordText(t), "no published MoE pre-training run on b200-sxm-180g in the reference files");
  t.files = 0;
  EXPECT_NE(TrackRecordText(t).find("no reference files"), std::string::npos);
}

TEST(TrackRecordTest, ABrokenReferenceFileIsTheErrorNamingIt) {
  const Expected<TrackRecord> t = TrackRecordOf(Example("reference-design/llama2-7b-1n-8nic.yaml"), {"/nonexistent/ref.yaml"});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().ToString().find("/nonexistent/ref.yaml"), std::string::npos) << t.error().ToString();
}

}  // namespace
}  // namespace trainsim
