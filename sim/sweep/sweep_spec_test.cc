#include "sim/sweep/sweep_spec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace trainsim {
namespace {

namespace fs = std::filesystem;

// Line numbers in the expectations below count from this text's first line.
const char* kInlineBase = R"(base:
  name: t
  cluster:
    node: xe9680-h100
    nodes: 4
    fabric: ndr-rail-optimized
  model: llama2-70b
  parallelism:
    tensor: 4
    pipeline: 4
  training:
    seq_len: 4096
    global_batch: 128
)";

Expected<SweepSpec> ParseText(const std::string& axes) { return ParseSweepSpec(std::string(kInlineBase) + axes, "sw.yaml"); }

std::string Error(const Expected<SweepSpec>& s) { return s.ok() ? std::string("(parsed)") : s.error().ToString(); }

TEST(SweepSpecTest, ProductInFileOrderLastAxisFastest) {
  auto s = ParseText("axes:\n  cluster.nodes: [2, 4]\n  parallelism.tensor: [1, 2, 8]\n");
  ASSERT_TRUE(s.ok()) << Error(s);
  ASSERT_EQ(s->Keys(), (std::vector<std::string>{"cluster.nodes", "parallelism.tensor"}));
  ASSERT_EQ(s->points.size(), 6u);
  EXPECT_EQ(s->Values(s->points[0]), (std::vector<std::string>{"2", "1"}));
  EXPECT_EQ(s->Values(s->points[1]), (std::vector<std::string>{"2", "2"}));
  EXPECT_EQ(s->Values(s->points[5]), (std::vector<std::string>{"4", "8"}));
  EXPECT_EQ(s->axes[0].line, 15);
  EXPECT_EQ(s->axes[1].line, 16);
}

TEST(SweepSpecTest, RangesArithmeticAndGeometric) {
  auto s = ParseText("axes:\n  cluster.nodes: {from: 2, to: 8, step: 3}\n  parallelism.tensor: {from: 1, to: 8, factor: 2}\n");
  ASSERT_TRUE(s.ok()) << Error(s);
  EXPECT_EQ(s->axes[0].values, (std::vector<std::string>{"2", "5", "8"}));
  EXPECT_EQ(s->axes[1].values, (std::vector<std::string>{"1", "2", "4", "8"}));
  EXPECT_EQ(s->points.size(), 12u);
}

TEST(SweepSpecTest, ZipAdvancesTogether) {
  auto s = ParseText(
      "axes:\n  cluster.nodes: [4, 8]\nzip:\n  training.global_batch: [128, 256, 512]\n  training.steps: [500, 250, 125]\n");
  ASSERT_TRUE(s.ok()) << Error(s);
  ASSERT_EQ(s->points.size(), 6u);
  EXPECT_EQ(s->Values(s->points[1]), (std::vector<std::string>{"4", "256", "250"}));
  EXPECT_EQ(s->Values(s->points[5]), (std::vector<std::string>{"8", "512", "125"}));
}

TEST(SweepSpecTest, FilterDropsPoints) {
  auto s = ParseText(
      "axes:\n  parallelism.tensor: [1, 2, 4, 8]\n  parallelism.pipeline: [1, 2, 4]\n"
      "filter:\n  - parallelism.tensor * parallelism.pipeline <= cluster.nodes * 2\n  - parallelism.tensor != 2 or parallelism.pipeline == 4\n");
  ASSERT_TRUE(s.ok()) << Error(s);
  // TP*PP <= 8 (cluster.nodes comes from the base): 9 of 12; then TP 2 only with PP 4: drops (2,1), (2,2).
  std::vector<std::vector<std::string>> got;
  for (const auto& p : s->points) got.push_back(s->Values(p));
  EXPECT_EQ(got, (std::vector<std::vector<std::string>>{{"1", "1"}, {"1", "2"}, {"1", "4"}, {"2", "4"}, {"4", "1"}, {"4", "2"}, {"8", "1"}}));
}

TEST(SweepSpecTest, PointScenarioAppliesOverridesAndNamesThePoint) {
  auto s = ParseText("axes:\n  cluster.nodes: [4, 8]\n  cluster.nics_per_node: [4, 8]\n");
  ASSERT_TRUE(s.ok()) << Error(s);
  auto sc = s->PointScenario(s->points[2]);  // nodes 8, nics 4
  ASSERT_TRUE(sc.ok()) << sc.error().ToString();
  EXPECT_EQ(sc->nodes, 8);
  EXPECT_EQ(sc->node.nics_per_node, 4);
  EXPECT_EQ(sc->parallelism.data, 4);
  EXPECT_EQ(sc->name, "t nodes=8 nics_per_node=4");
  // A second call parses the base afresh: no state carries over between points.
  auto first = s->PointScenario(s->points[0]);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->nodes, 4);
}

TEST(SweepSpecTest, InfeasiblePointNamesTheAxisLine) {
  auto s = ParseText("axes:\n  parallelism.tensor: [3, 4]\n");
  ASSERT_TRUE(s.ok()) << Error(s);
  auto bad = s->PointScenario(s->points[0]);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().ToString(), "sw.yaml:15: parallelism.tensor: tensor x pipeline x context = 12 does not divide the 32 GPUs");
  EXPECT_TRUE(s->PointScenario(s->points[1]).ok());
}

TEST(SweepSpecTest, BadFilesGiveOneLineErrors) {
  EXPECT_EQ(Error(ParseText("axis:\n  cluster.nodes: [1]\n")), "sw.yaml:14: axis: unknown key (did you mean 'axes'?)");
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodess: [1, 2]\n")), "sw.yaml:15: cluster.nodess: unknown key (did you mean 'nodes'?)");
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodes: [1, two]\n")), "sw.yaml:15: cluster.nodes: expected a number, got 'two'");
  EXPECT_EQ(Error(ParseText("axes:\n  training.recompute: [none, selectiv]\n")),
            "sw.yaml:15: training.recompute: 'selectiv' is not one of: none, selective, full (did you mean 'selective'?)");
  EXPECT_EQ(Error(ParseText("axes:\n  model: [llama2-7b, llama2-7c]\n")).rfind("sw.yaml:15: model: unknown model 'llama2-7c'", 0), 0u)
      << Error(ParseText("axes:\n  model: [llama2-7b, llama2-7c]\n"));
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.node: [xe9680-h100, nodes/missing.yaml]\n")),
            "sw.yaml:15: cluster.node: profile file 'nodes/missing.yaml' not found (neither beside sw.yaml nor in the working directory)");
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodes: []\n")), "sw.yaml:15: cluster.nodes: an axis needs at least one value");
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodes: [1, 2, 1]\n")), "sw.yaml:15: cluster.nodes: lists the value '1' twice");
  // Numbers by value: three spellings of one value would be three rows of one run.
  EXPECT_EQ(Error(ParseText("axes:\n  training.tokens: [1e9, 1.0e9, 1000000000]\n")),
            "sw.yaml:15: training.tokens: lists the value '1.0e9' twice (as '1e9' and '1.0e9')");
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodes: [2, 02]\n")), "sw.yaml:15: cluster.nodes: lists the value '02' twice (as '2' and '02')");
  EXPECT_TRUE(ParseText("axes:\n  training.tokens: [1e9, 2e9]\n  model: [llama2-7b, llama2-70b]\n").ok());
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodes: {from: 1, to: 8}\n")),
            "sw.yaml:15: cluster.nodes.step: a range takes exactly one of step or factor");
  // One axis takes at most 100,000 values, as a range or as a list (each holds its parsed override).
  EXPECT_EQ(Error(ParseText("axes:\n  training.steps: {from: 1, to: 100001, step: 1}\n")),
            "sw.yaml:15: training.steps.step: the range has 100001 values, more than an axis takes (100000)");
  // A geometric range too: counted before a value is made (a factor of 1.0000000001 once took all the memory).
  EXPECT_EQ(Error(ParseText("axes:\n  failures.node_mtbf_hours: {from: 1e-300, to: 1e300, factor: 1.0000000001}\n")).rfind(
                "sw.yaml:15: failures.node_mtbf_hours.factor: the range has ", 0),
            0u);
  EXPECT_EQ(Error(ParseText("axes:\n  training.steps: {from: 1, to: 1e47, step: 1}\n")),
            "sw.yaml:15: training.steps.step: the range has about 1e+47 values, more than an axis takes (100000)");
  EXPECT_EQ(Error(ParseText("axes:\n  training.steps: {from: 1, to: 1e300, step: 1e-300}\n")),
            "sw.yaml:15: training.steps.step: the range has more than 1e+308 values, more than an axis takes (100000)");
  std::string long_list = "axes:\n  training.steps: [1";
  for (int i = 2; i <= 100001; ++i) long_list += "," + std::to_string(i);
  EXPECT_EQ(Error(ParseText(long_list + "]\n")), "sw.yaml:15: training.steps: a list of 100001 values, more than an axis takes (100000)");
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodes: [1]\nzip:\n  training.global_batch: [128, 256]\n  training.steps: [5]\n")),
            "sw.yaml:18: zip.training.steps: has 1 values but training.global_batch has 2 (zipped lists advance together)");
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodes: [1]\nfilter: cluster.nodez > 1\n")),
            "sw.yaml:16: filter: unknown key 'cluster.nodez': neither an axis nor a value of the base scenario (did you mean 'cluster.nodes'?)");
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodes: [1]\nfilter: cluster.nodes >\n")),
            "sw.yaml:16: filter: cannot parse 'cluster.nodes >': expression ends early");
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodes: [1, 2]\nfilter: cluster.nodes > 4\n")),
            "sw.yaml:16: filter: the filters leave no point to run");
  EXPECT_EQ(Error(ParseText("")), "sw.yaml:1: axes: missing required key (a sweep needs at least one axis)");
  EXPECT_EQ(Error(ParseSweepSpec("base: nope.yaml\naxes:\n  cluster.nodes: [1]\n", "sw.yaml")),
            "sw.yaml:1: base: no scenario file 'nope.yaml' (paths are relative to the sweep file)");
  EXPECT_EQ(Error(ParseSweepSpec("base: [\naxes: 1\n", "sw.yaml")).rfind("sw.yaml:3: malformed YAML", 0), 0u)
      << Error(ParseSweepSpec("base: [\naxes: 1\n", "sw.yaml"));
  EXPECT_EQ(Error(LoadSweepSpec("/nonexistent/sweep.yaml")), "/nonexistent/sweep.yaml: cannot open file");
}

// A map-valued axis: its rows show each value on one line (a results file
// is a row a line, and --resume finds finished points by them), a filter
// reads its keys from the point's map, and an axis inside or above it is
// refused (the later would set what the earlier's rows say).
TEST(SweepSpecTest, MapValuedAxesAreOneLineFilterableAndExclusive) {
  auto s = ParseText("axes:\n  parallelism:\n    - tensor: 4\n      pipeline: 4\n    - tensor: 8\n      pipeline: 2\n"
                     "filter: parallelism.tensor == 8\n");
  ASSERT_TRUE(s.ok()) << Error(s);
  ASSERT_EQ(s->points.size(), 1u);
  EXPECT_EQ(s->Values(s->points[0]), (std::vector<std::string>{"{tensor: 8, pipeline: 2}"}));
  EXPECT_EQ(Error(ParseText("axes:\n  parallelism.tensor: [4, 8]\n  parallelism: [{tensor: 4, pipeline: 4}]\n")),
            "sw.yaml:16: axes.parallelism: overlaps the axis 'parallelism.tensor' (one sets what the other does): sweep one of them");
}

// A zipped list may repeat a value (TP 4 with PP 4 and with PP 2); the
// tuples may not repeat.
TEST(SweepSpecTest, ZippedListsRepeatValuesNotTuples) {
  auto s = ParseText("axes:\n  cluster.nodes: [4]\nzip:\n  parallelism.tensor: [4, 4, 8]\n  parallelism.pipeline: [4, 2, 2]\n");
  ASSERT_TRUE(s.ok()) << Error(s);
  EXPECT_EQ(s->points.size(), 3u);
  EXPECT_EQ(Error(ParseText("axes:\n  cluster.nodes: [4]\nzip:\n  parallelism.tensor: [4, 8, 4]\n  parallelism.pipeline: [2, 2, 2.0]\n")),
            "sw.yaml:17: zip: values 1 and 3 of the zipped lists are the same point");
}

// A filter is a line of arithmetic: nesting and length are bounded (a
// recursive parser would otherwise run out of stack).
TEST(SweepSpecTest, FiltersAreBounded) {
  const std::string deep = std::string(100, '(') + "cluster.nodes" + std::string(100, ')') + " > 0";
  EXPECT_NE(Error(ParseText("axes:\n  cluster.nodes: [1]\nfilter: \"" + deep + "\"\n")).find("nested more than 64 deep"), std::string::npos);
  std::string longest = "cluster.nodes";
  for (int i = 0; i < 2000; ++i) longest += " + 1";
  EXPECT_NE(Error(ParseText("axes:\n  cluster.nodes: [1]\nfilter: " + longest + " > 0\n")).find("more than 1000 operations"), std::string::npos);
}

// A base key no axis touches that is wrong in itself (an unknown node, a
// negative step count) is the sweep's error, not every row's.
TEST(SweepSpecTest, BaseValueErrorsAreTheSweepFilesError) {
  const std::string base = std::string(kInlineBase);
  auto with = [&](const std::string& from, const std::string& to, const std::string& axes) {
    std::string text = base;
    text.replace(text.find(from), from.size(), to);
    return ParseSweepSpec(text + axes, "sw.yaml");
  };
  EXPECT_EQ(Error(with("node: xe9680-h100", "node: xe9999", "axes:\n  cluster.nodes: [1, 2]\n")).rfind("sw.yaml:4: cluster.node: ", 0), 0u)
      << Error(with("node: xe9680-h100", "node: xe9999", "axes:\n  cluster.nodes: [1, 2]\n"));
  EXPECT_TRUE(with("node: xe9680-h100", "node: xe9999", "axes:\n  cluster.node: [xe9680-h100]\n").ok());
}

TEST(SweepSpecTest, BasePathIsRelativeToTheSweepFile) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim_sweep_spec_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sweeps");
  // The scenario of kInlineBase, un-indented from under "base:".
  std::string text = std::string(kInlineBase).substr(6), out;
  for (size_t i = 0; i < text.size();) {
    const size_t nl = text.find('\n', i);
    std::string line = text.substr(i, nl - i);
    out += (line.rfind("  ", 0) == 0 ? line.substr(2) : line) + "\n";
    i = nl + 1;
  }
  std::ofstream(dir / "base.yaml") << out;
  std::ofstream(dir / "sweeps" / "s.yaml") << "base: ../base.yaml\naxes:\n  parallelism.tensor: [3]\n";
  auto s = LoadSweepSpec((dir / "sweeps" / "s.yaml").string());
  ASSERT_TRUE(s.ok()) << Error(s);
  auto p = s->PointScenario(s->points[0]);
  ASSERT_FALSE(p.ok());
  // The failing value came from the sweep file's axis line.
  EXPECT_EQ(p.error().file, (dir / "sweeps" / "s.yaml").string());
  EXPECT_EQ(p.error().line, 3);
  fs::remove_all(dir);
}

TEST(SweepSpecTest, BaseWithoutModelNamesTheBaseFile) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim_sweep_nomodel_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "base.yaml") << "name: t\ncluster:\n  node: xe9680-h100\n  nodes: 4\n  fabric: ndr-rail-optimized\n"
                                      "parallelism:\n  tensor: 4\ntraining:\n  seq_len: 4096\n  global_batch: 128\n";
  std::ofstream(dir / "s.yaml") << "base: base.yaml\naxes:\n  parallelism.pipeline: [1, 2]\n";
  // No axis supplies the model: every row would carry the error, so the sweep file is bad input.
  EXPECT_EQ(Error(LoadSweepSpec((dir / "s.yaml").string())),
            (dir / "base.yaml").string() + ":1: model: missing required key (a catalogue name, a file, or the model's keys)");
  // An axis that sets it: each point names its own model.
  std::ofstream(dir / "s2.yaml") << "base: base.yaml\naxes:\n  model: [llama2-7b, llama2-13b]\n";
  EXPECT_TRUE(LoadSweepSpec((dir / "s2.yaml").string()).ok());
  // A duplicate key in the base is the base file's error, at load.
  std::ofstream(dir / "base.yaml", std::ios::app) << "training:\n  steps: 2\n";
  EXPECT_EQ(Error(LoadSweepSpec((dir / "s.yaml").string())), (dir / "base.yaml").string() + ":11: training: duplicate key (first at line 8)");
  // And in the sweep file itself.
  std::ofstream(dir / "s.yaml", std::ios::app) << "axes:\n  cluster.nodes: [1]\n";
  EXPECT_EQ(Error(LoadSweepSpec((dir / "s.yaml").string())), (dir / "s.yaml").string() + ":4: axes: duplicate key (first at line 2)");
  // A sweep file named as the base is the sweep's error, at its base key.
  std::ofstream(dir / "s3.yaml") << "base: s2.yaml\naxes:\n  cluster.nodes: [1, 2]\n";
  EXPECT_EQ(Error(LoadSweepSpec((dir / "s3.yaml").string())),
            (dir / "s3.yaml").string() + ":1: base: 's2.yaml' is a sweep file (it has axes), not a scenario");
  // A base without a section no axis sets: the base's error, once.
  std::ofstream(dir / "nocluster.yaml") << "name: t\nmodel: llama2-7b\ntraining:\n  seq_len: 4096\n  global_batch: 128\n";
  std::ofstream(dir / "s4.yaml") << "base: nocluster.yaml\naxes:\n  training.steps: [1, 2]\n";
  EXPECT_EQ(Error(LoadSweepSpec((dir / "s4.yaml").string())).rfind((dir / "nocluster.yaml").string() + ":1: cluster: missing required", 0), 0u)
      << Error(LoadSweepSpec((dir / "s4.yaml").string()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A model axis whose config.json has a key accepted unread warns once, before
// the rows, as `run` does; a sweep without one warns of nothing.
TEST(SweepSpecTest, AcceptedConfigKeysWarnOnce) {
  EXPECT_TRUE(ParseSweepSpec(std::string(kInlineBase) + "axes:\n  cluster.nodes: [4, 8]\n", "sw.yaml")->warnings.empty());
  const std::string gated = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf-accepted-key/config.json";
  auto s = ParseSweepSpec(std::string(kInlineBase) + "axes:\n  model: [llama2-7b, {file: " + gated +
                              ", accept_unknown_keys: [attn_output_gate]}]\n  cluster.nodes: [4, 8]\n",
                          "sw.yaml");
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_NE(s->warnings[0].find("attn_output_gate"), std::string::npos) << s->warnings[0];
}

// A precision the node's default framework has no recipe for warns once too
// (ScenarioWarnings: the same lines `run` prints), whichever points reach it.
TEST(SweepSpecTest, APrecisionWithoutARecipeWarnsOnce) {
  auto s = ParseSweepSpec(std::string(kInlineBase) + "axes:\n  training.precision: [bf16, fp8-blockwise]\n  cluster.nodes: [4, 8]\n",
                          "sw.yaml");
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_NE(s->warnings[0].find("has no fp8-blockwise recipe"), std::string::npos) << s->warnings[0];
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A file an axis value names by a relative path is found beside the sweep
// file that names it, as `base:` is, whatever the working directory; a
// file of that name beside the base scenario does not take its place.
TEST(SweepSpecTest, AnAxisFileIsFoundBesideTheSweepFile) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("sweep_axis_file_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "base.yaml") << std::string(kInlineBase).substr(std::string("base:\n").size());
  std::ofstream(dir / "m.yaml") << "name: beside-the-sweep\nlayers: 4\nhidden: 1024\nffn_hidden: 4096\nheads: 8\nvocab: 32000\n";
  std::ofstream(dir / "sub" / "m.yaml") << "name: beside-the-base\nlayers: 8\nhidden: 1024\nffn_hidden: 4096\nheads: 8\nvocab: 32000\n";
  std::ofstream(dir / "s.yaml") << "base: sub/base.yaml\naxes:\n  model: [llama2-7b, m.yaml]\n";
  const fs::path cwd = fs::current_path();
  fs::current_path(fs::temp_directory_path());
  auto s = LoadSweepSpec((dir / "s.yaml").string());
  fs::current_path(cwd);
  ASSERT_TRUE(s.ok()) << Error(s);
  ASSERT_EQ(s->points.size(), 2u);
  EXPECT_EQ(s->Values(s->points[1]), (std::vector<std::string>{"m.yaml"}));  // the row says what the file says
  auto point = s->PointScenario(s->points[1]);
  ASSERT_TRUE(point.ok()) << point.error().ToString();
  EXPECT_EQ(point->model.name, "beside-the-sweep");
  EXPECT_EQ(point->model.layers, 4);
  // A malformed file an axis value names is bad input of that file at once, not a row per point.
  std::ofstream(dir / "broken.yaml") << "name: broken\nlayers: [4\n";
  std::ofstream(dir / "s2.yaml") << "base: sub/base.yaml\naxes:\n  model: [llama2-7b, broken.yaml]\n";
  auto broken = LoadSweepSpec((dir / "s2.yaml").string());
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(broken.error().ToString().find("broken.yaml:"), std::string::npos) << broken.error().ToString();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainsim
