#include "sim/core/model_spec.h"

#include <gtest/gtest.h>

#include "sim/io/data_paths.h"
#include "sim/io/model_loader.h"

namespace trainsim {
namespace {

TEST(ModelSpecTest, CatalogueParameterCountsMatchPublishedSizes) {
  struct Expect { const char* name; double params; };
  // Published parameter counts (model cards / papers).
  for (const Expect& e : {Expect{"llama2-7b", 6.74e9}, Expect{"llama2-13b", 13.0e9}, Expect{"llama2-70b", 68.98e9},
                          Expect{"llama3-8b", 8.03e9}, Expect{"llama3-70b", 70.6e9}, Expect{"llama3.1-405b", 405.9e9},
                          Expect{"gpt3-175b", 174.6e9}}) {
    auto m = LoadModelFile(DataDir() + "/models/catalogue/" + e.name + ".yaml");
    ASSERT_TRUE(m.ok()) << e.name << ": " << m.error().ToString();
    EXPECT_NEAR(m->TotalParameters(2048) / e.params, 1.0, 0.01) << e.name;
  }
}

TEST(ModelSpecTest, EveryCatalogueFileLoads) {
  const auto names = CatalogueNames("models/catalogue");
  EXPECT_GE(names.size(), 9u);
  for (const auto& n : names) {
    auto m = LoadModelFile(DataDir() + "/models/catalogue/" + n + ".yaml");
    EXPECT_TRUE(m.ok()) << n << ": " << m.error().ToString();
    EXPECT_EQ(m->name, n);
  }
}

TEST(ModelSpecTest, HuggingFaceConfigMatchesCatalogue) {
  auto hf = LoadModelFile(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/llama-2-7b-hf-config.json");
  auto cat = LoadModelFile(DataDir() + "/models/catalogue/llama2-7b.yaml");
  ASSERT_TRUE(hf.ok()) << hf.error().ToString();
  ASSERT_TRUE(cat.ok());
  EXPECT_DOUBLE_EQ(hf->TotalParameters(4096), cat->TotalParameters(4096));
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A config.json key trainsim does not model is exit 2 naming the key and
// the file, never a silently dense model (Mixtral: 46.7B read as 7.2B).
TEST(ModelSpecTest, HuggingFaceKeyNotModelledIsAnError) {
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/mixtral-8x7b-hf-config.json";
  auto m = LoadModelFile(file);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().ToString().find("mixtral-8x7b-hf-config.json:"), std::string::npos) << m.error().ToString();
  EXPECT_TRUE(m.error().key == "num_local_experts" || m.error().key == "num_experts_per_tok") << m.error().ToString();
  EXPECT_EQ(m.error().kind, ErrorKind::kBadInput);
  // The real Llama 2 config (token ids, rope_scaling, transformers_version, ...) still loads.
  EXPECT_TRUE(LoadModelFile(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/llama-2-7b-hf-config.json").ok());
}

}  // namespace
}  // namespace trainsim
