#include "sim/cli/args.h"

#include <gtest/gtest.h>

namespace trainsim::cli {
namespace {

const std::vector<FlagSpec> kSpecs = {{"--output", true, "-o"}, {"--set", true}, {"--json"}};

TEST(ArgsTest, OverridesAddUpAndOtherValuesAreGivenOnce) {
  ParsedArgs a;
  EXPECT_EQ(Parse({"s.yaml", "--set", "cluster.nodes=2", "--set=training.steps=5", "-o", "r.csv", "--json"}, kSpecs, a), "");
  EXPECT_EQ(a.positional, std::vector<std::string>{"s.yaml"});
  EXPECT_EQ(a.All("--set"), (std::vector<std::string>{"cluster.nodes=2", "training.steps=5"}));
  EXPECT_EQ(a.Value("--output"), "r.csv");
  EXPECT_TRUE(a.Has("--json"));
  ParsedArgs twice;
  EXPECT_EQ(Parse({"s.yaml", "-o", "a.csv", "--output", "b.csv"}, kSpecs, twice), "option '--output' given twice");
  ParsedArgs bad;
  EXPECT_EQ(Parse({"--jsn"}, kSpecs, bad), "unknown option '--jsn' (see --help)");
  EXPECT_EQ(Parse({"-o"}, kSpecs, bad), "option '-o' needs a value");
  EXPECT_EQ(Parse({"--json=1"}, kSpecs, bad), "option '--json' takes no value");
}

}  // namespace
}  // namespace trainsim::cli
