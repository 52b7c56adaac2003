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

// The record of a scenario is validate's figures over the cases of its GPU,
// kind of workload, band of experts per GPU and precision (the last two where
// enough runs had them), every file's together, and nothing else.
TEST(TrackRecordTest, IsValidateOverTheCasesOfTheSameGpuKindBandAndPrecision) {
  const std::vector<std::string> files = {kReference + "measured.yaml", kReference + "published-2025.yaml"};
  std::vector<ValidationCase> all;
  for (const std::string& f : files) {
    const auto rep = ValidateReference(f, Fidelity::kAnalytical);
    ASSERT_TRUE(rep.ok());
    for (const ValidationCase& c : rep->cases) {
      if (c.failure.empty()) all.push_back(c);
    }
  }
  const auto expect_record = [&](const TrackRecord& t, const std::string& band, const std::string& precision) {
    int cases = 0;
    double abs_sum = 0, signed_sum = 0, max_abs = 0;
    for (const ValidationCase& c : all) {
      if (c.gpu != t.gpu || c.workload != t.workload || (!band.empty() && c.experts_per_gpu != band) ||
          (!precision.empty() && c.precision != precision)) {
        continue;
      }
      ++cases;
      abs_sum += std::fabs(c.error);
      signed_sum += c.error;
      max_abs = std::max(max_abs, std::fabs(c.error));
    }
    ASSERT_GT(cases, 0);
    EXPECT_EQ(t.experts_per_gpu, band);
    EXPECT_EQ(t.precision, precision);
    EXPECT_EQ(t.summary.cases, cases);
    EXPECT_NEAR(t.summary.mean_abs_error, abs_sum / cases, 1e-12);
    EXPECT_NEAR(t.summary.mean_signed_error, signed_sum / cases, 1e-12);
    EXPECT_DOUBLE_EQ(t.summary.max_abs_error, max_abs);
  };
  // fp8 MoE on H100 with 4 experts per GPU (EP 32 of 128): published-2025's Grok-1 and Qwen3-235B fp8
  // runs with 2-4, enough for a record of their own.
  const Expected<TrackRecord> moe = TrackRecordOf(Example("moe/qwen3-235b-a22b-32n-8nic.yaml"), files);
  ASSERT_TRUE(moe.ok()) << moe.error().ToString();
  EXPECT_EQ(moe->gpu, "h100-sxm-80g");
  EXPECT_EQ(moe->workload, "MoE pre-training");
  EXPECT_EQ(moe->files, 2);
  EXPECT_GE(moe->summary.cases, kTrackRecordMinCases);
  expect_record(*moe, "2-4", "fp8");
  // Mixtral 8x7B without EP on H100: 8 experts per GPU, a band too few H100 runs had: every band of the kind.
  auto mixtral = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/moe/mixtral-8x7b-8n-8nic.yaml", {"parallelism.expert=1"});
  ASSERT_TRUE(mixtral.ok()) << mixtral.error().ToString();
  EXPECT_EQ(ExpertsPerGpuBand(*mixtral), "5-15");
  const Expected<TrackRecord> unbanded = TrackRecordOf(*mixtral, files);
  ASSERT_TRUE(unbanded.ok()) << unbanded.error().ToString();
  expect_record(*unbanded, "", "bf16");
  // LoRA in fp8 on H100: fewer than kTrackRecordMinCases runs, so every precision of the kind.
  const Expected<TrackRecord> lora = TrackRecordOf(Example("finetune/llama2-70b-lora-xe9680.yaml"), files);
  ASSERT_TRUE(lora.ok());
  EXPECT_EQ(lora->workload, "dense LoRA");
  expect_record(*lora, "", "");
}

TEST(TrackRecordTest, TheSourceTreeShipsItsReferenceFiles) {
  const std::vector<std::string> files = DefaultReferenceFiles();
  ASSERT_GE(files.size(), 2u);
  EXPECT_TRUE(std::is_sorted(files.begin(), files.end()));
  for (const auto& f : files) EXPECT_EQ(f.substr(f.size() - 5), ".yaml") << f;
}

TEST(TrackRecordTest, TextSaysHowFarOffAndWhichWay) {
  TrackRecord t{"b200-sxm-180g", "MoE pre-training", "", "", {17, 0.222, 0.514, -0.219}, 3};
  EXPECT_EQ(TrackRecordText(t),
            "17 published MoE pre-training runs on b200-sxm-180g: predicted 22.2% off on average (mean -21.9%: too fast), "
            "at worst 51.4% (trainsim validate)");
  t.precision = "mxfp8";
  EXPECT_EQ(TrackRecordText(t).rfind("17 published mxfp8 MoE pre-training runs on b200-sxm-180g: ", 0), 0u) << TrackRecordText(t);
  t.experts_per_gpu = "16+";
  EXPECT_EQ(TrackRecordText(t).rfind("17 published mxfp8 MoE pre-training runs with 16+ experts per GPU on b200-sxm-180g: ", 0), 0u)
      << TrackRecordText(t);
  t.experts_per_gpu = "1";
  EXPECT_NE(TrackRecordText(t).find(" with 1 expert per GPU on "), std::string::npos) << TrackRecordText(t);
  t.experts_per_gpu.clear();
  t.precision.clear();
  t.summary.mean_signed_error = 0.05;  // mostly scatter, not a lean
  EXPECT_EQ(TrackRecordText(t).find("too"), std::string::npos) << TrackRecordText(t);
  t.summary.cases = 0;
  EXPECT_EQ(TrackRecordText(t), "no published MoE pre-training run on b200-sxm-180g in the reference files");
  t.files = 0;
  EXPECT_NE(TrackRecordText(t).find("no reference files"), std::string::npos);
}

// The printed line is the record's text over the shipped files, the same
// when asked again (kept for the process).
TEST(TrackRecordTest, TheLineIsTheTextOfTheShippedFilesRecord) {
  const Scenario s = Example("reference-design/llama2-7b-1n-8nic.yaml");
  const Expected<TrackRecord> t = TrackRecordOf(s, DefaultReferenceFiles());
  ASSERT_TRUE(t.ok()) << t.error().ToString();
  EXPECT_EQ(TrackRecordLine(s), TrackRecordText(*t));
  EXPECT_EQ(TrackRecordLine(s), TrackRecordText(*t));
  // A GPU file of the same name elsewhere (edited, calibrated) gets the stock profile's record, saying so.
  Scenario edited = s;
  edited.node.gpu.source_file = "/elsewhere/h100-sxm-80g.yaml";
  EXPECT_EQ(TrackRecordLine(edited),
            TrackRecordText(*t) + " (the stock h100-sxm-80g profile's record; this run's GPU is /elsewhere/h100-sxm-80g.yaml)");
}

TEST(TrackRecordTest, ABrokenReferenceFileIsTheErrorNamingIt) {
  const Expected<TrackRecord> t = TrackRecordOf(Example("reference-design/llama2-7b-1n-8nic.yaml"), {"/nonexistent/ref.yaml"});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().ToString().find("/nonexistent/ref.yaml"), std::string::npos) << t.error().ToString();
}

}  // namespace
}  // namespace trainsim
