// A deterministic mutation fuzzer over the scenario loader: thousands of
// corrupted scenario texts must each either parse or give one line of error;
// never crash, hang or throw. (Runs under the sanitizer build too.)
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <random>
#include <sstream>

#include "sim/core/scenario.h"
#include "sim/run/simulate.h"
#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ScenarioFuzzTest, CorruptedScenariosNeverCrash) {
  const std::string seed = ReadFile(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-4n-8nic.yaml");
  ASSERT_FALSE(seed.empty());
  const std::string alphabet = "0123456789-.:{}[]#&*!|>'\"%@` \n\tabcxyz_eE";
  std::mt19937 rng(20261129);
  int parsed = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(pos, 1 + rng() % 8); break;
        default: text.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
      }
      if (text.empty()) text = "x";
    }
    Expected<Scenario> s = InputError{};
    try {
      s = ParseScenario(YAML::Load(text), "fuzz.yaml");
    } catch (const YAML::Exception&) {
      ++rejected;  // LoadScenario turns this into a file:line error; ParseScenario takes a parsed node
      continue;
    }
    if (s.ok()) {
      ++parsed;
      SimulateOptions analytical;  // a parsed scenario must also simulate without crashing
      const SimulationResult r = Simulate(*s, analytical);
      EXPECT_TRUE(r.step_time_s > 0 || !r.error.empty()) << text;
    } else {
      ++rejected;
      const std::string msg = s.error().ToString();
      EXPECT_FALSE(msg.empty());
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
  EXPECT_GT(parsed, 100);
  EXPECT_GT(rejected, 100);
}

}  // namespace
}  // namespace trainsim
