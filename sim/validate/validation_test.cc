#include "sim/validate/validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace trainsim {
namespace {

// The reference file lives in ../shared beside the checkout; a copy of its
// format ships in tests/data so the test runs anywhere.
std::string ReferenceFile() {
  const std::string shared = DefaultReferenceFile();
  if (std::filesystem::exists(shared)) return shared;
  return std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/reference-sample.yaml";
}

TEST(ValidationTest, EveryReferenceCaseIsLoadedAndPredicted) {
  auto rep = ValidateReference(ReferenceFile(), Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_FALSE(rep->cases.empty());
  for (const auto& c : rep->cases) {
    EXPECT_TRUE(c.failure.empty()) << c.id << ": " << c.failure;
    EXPECT_GT(c.predicted_step_time_s, 0) << c.id;
    EXPECT_TRUE(std::isfinite(c.error)) << c.id;
  }
  EXPECT_GT(rep->mean_abs_error, 0);
  EXPECT_LE(rep->mean_abs_error, rep->max_abs_error);
}

TEST(ValidationTest, ReportsDefaultedFields) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/reference-sample.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_EQ(rep->cases.size(), 2u);
  const auto& d = rep->cases[0].defaulted;
  EXPECT_NE(std::find(d.begin(), d.end(), "training.micro_batch"), d.end());
  EXPECT_NE(ValidationTable(*rep).find("mean |error|"), std::string::npos);
  EXPECT_NE(ValidationJson(*rep).find("\"mean_abs_error\""), std::string::npos);
}

TEST(ValidationTest, SummarizesPerGpu) {
  // The sample has one A100 and one H100 case: a summary line each, and the
  // per-GPU figures are those of their single case.
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/reference-sample.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_EQ(rep->by_gpu.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rep->by_gpu[i].first, rep->cases[i].gpu);
    EXPECT_EQ(rep->by_gpu[i].second.cases, 1);
    EXPECT_DOUBLE_EQ(rep->by_gpu[i].second.mean_abs_error, std::fabs(rep->cases[i].error));
  }
  EXPECT_NE(ValidationTable(*rep).find("  " + rep->cases[1].gpu), std::string::npos);
}

TEST(ValidationTest, MalformedReferenceIsAnInputError) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/malformed.yaml", Fidelity::kAnalytical);
  ASSERT_FALSE(rep.ok());
  EXPECT_NE(rep.error().ToString().find("malformed YAML"), std::string::npos);
}

}  // namespace
}  // namespace trainsim
