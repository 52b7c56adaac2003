// Input files as a whole: duplicate keys, empty files, directories, devices
// and oversized files are one-line errors naming the file (never "--set"
// when no --set was given), and messages stay one line.
#include "sim/io/yaml_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>

#include "sim/io/json_writer.h"
#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {
namespace fs = std::filesystem;

const char* kScenario = R"(name: t
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

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trainsim_yaml_reader_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string LoadError(const std::string& path, const std::vector<std::string>& sets = {}) {
    auto s = LoadScenario(path, sets);
    return s.ok() ? std::string("(loaded)") : s.error().ToString();
  }
  fs::path dir_;
};

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST_F(InputFileTest, DuplicateKeyNamesBothLines) {
  const std::string f = Write("dup.yaml", Replace(kScenario, "  nodes: 4\n", "  nodes: 1\n  nodes: 2\n"));
  EXPECT_EQ(LoadError(f), f + ":5: cluster.nodes: duplicate key (first at line 4)");
}

// A required key written misspelt is named as the user wrote it, at its
// line, not reported missing; a key of its own that is merely close (cluster's
// node beside a missing nodes) is not taken for the misspelling.
TEST_F(InputFileTest, MisspeltRequiredKeyIsNamedAtItsLine) {
  const std::string typo = Write("typo.yaml", Replace(kScenario, "  global_batch: 128\n", "  global_bacth: 128\n"));
  EXPECT_EQ(LoadError(typo), typo + ":12: training.global_bacth: unknown key (did you mean 'global_batch'?)");
  const std::string missing = Write("missing.yaml", Replace(kScenario, "  nodes: 4\n", ""));
  EXPECT_EQ(LoadError(missing), missing + ":3: cluster.nodes: missing required key");
}

TEST_F(InputFileTest, DuplicateSectionIsAnError) {
  const std::string f = Write("dup-section.yaml", std::string(kScenario) + "training:\n  steps: 3\n");
  EXPECT_EQ(LoadError(f), f + ":13: training: duplicate key (first at line 10)");
}

TEST_F(InputFileTest, DuplicateKeyInsideAListIsFound) {
  const std::string f = Write("m.yaml", "samples:\n  - op: gemm\n    dtype: bf16\n    dtype: fp8\n");
  try {
    LoadYamlFile(f);
    FAIL() << "loaded";
  } catch (const InputException& e) {
    EXPECT_EQ(e.error().ToString(), f + ":4: samples.dtype: duplicate key (first at line 3)");
  }
}

TEST_F(InputFileTest, DuplicateKeyInMemoryDocumentIsCaughtByYamlMap) {
  // The GUI's editor parses text itself; the mapping check is in YamlMap.
  auto s = ParseScenario(YAML::Load(Replace(kScenario, "model: llama2-70b\n", "model: llama2-70b\nmodel: llama2-7b\n")), "s.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "s.yaml:7: model: duplicate key (first at line 6)");
}

TEST_F(InputFileTest, AliasesAreWalkedOnce) {
  // A "billion laughs" document: 9 levels of 9 aliases; walked by position, not expansion.
  std::string text = "a0: &a0 [x, y]\n";
  for (int i = 1; i < 10; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) text += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
    text += "]\n";
  }
  EXPECT_NO_THROW(ParseYamlText(text, "laughs.yaml"));
}

TEST_F(InputFileTest, MissingKeysNameTheFileNotSet) {
  const std::string no_model = Write("no-model.yaml", Replace(kScenario, "model: llama2-70b\n", ""));
  EXPECT_EQ(LoadError(no_model), no_model + ":1: model: missing required key (a catalogue name, a file, or the model's keys)");
  const std::string no_node = Write("no-node.yaml", Replace(kScenario, "  node: xe9680-h100\n", ""));
  EXPECT_EQ(LoadError(no_node), no_node + ":3: cluster.node: missing required key (a node profile name or path)");
  // cluster.fabric left out: the node profile's default_fabric (design.md 3b) ...
  const std::string no_fabric = Write("no-fabric.yaml", Replace(kScenario, "  fabric: ndr-rail-optimized\n", ""));
  auto s = LoadScenario(no_fabric);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->fabric.name, "ndr-rail-optimized");
  // ... and a node without one: the scenario file's error, at its cluster section.
  std::ifstream node_in(std::string(TRAINSIM_SOURCE_DIR) + "/hardware-profiles/nodes/xe9680-h100.yaml");
  std::string node_text((std::istreambuf_iterator<char>(node_in)), std::istreambuf_iterator<char>());
  const size_t df = node_text.find("default_fabric:");
  ASSERT_NE(df, std::string::npos);
  node_text.erase(df, node_text.find('\n', df) + 1 - df);
  Write("plain-node.yaml", node_text);
  const std::string no_default = Write("no-default.yaml", Replace(Replace(kScenario, "  fabric: ndr-rail-optimized\n", ""),
                                                                   "node: xe9680-h100", "node: ./plain-node.yaml"));
  EXPECT_EQ(LoadError(no_default), no_default + ":3: cluster.fabric: missing required key (a fabric profile name or path; node 'xe9680-h100' has no default_fabric)");
  // With an unrelated --set the missing key is still the file's.
  EXPECT_EQ(LoadError(no_model, {"cluster.nodes=8"}), no_model + ":1: model: missing required key (a catalogue name, a file, or the model's keys)");
}

TEST_F(InputFileTest, EmptyAndCommentOnlyFilesNameTheFile) {
  const std::string empty = Write("empty.yaml", "");
  EXPECT_EQ(LoadError(empty), empty + ": the file is empty (nothing but comments or blank lines); expected a mapping of keys");
  const std::string comments = Write("comments.yaml", "# nothing here\n\n# still nothing\n");
  EXPECT_EQ(LoadError(comments), comments + ": the file is empty (nothing but comments or blank lines); expected a mapping of keys");
  const std::string null_doc = Write("null.yaml", "# a placeholder\nnull\n");
  EXPECT_EQ(LoadError(null_doc), null_doc + ":2: the document is null; expected a mapping of keys");
  // In memory (no file read): still not "--set".
  auto s = ParseScenario(YAML::Load(""), "mem.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().file, "mem.yaml");
}

TEST_F(InputFileTest, DirectoryDeviceAndHugeFilesAreRefused) {
  EXPECT_EQ(LoadError(dir_.string()), dir_.string() + ": is a directory, not a file");
  EXPECT_EQ(LoadError("/dev/zero"), "/dev/zero: not a regular file (a device, pipe or socket); inputs are read from files");
  const fs::path big = dir_ / "big.yaml";
  std::ofstream(big) << "name: x\n";
  fs::resize_file(big, kMaxInputBytes + 1);  // sparse: no 4 MiB written
  EXPECT_EQ(LoadError(big.string()), big.string() + ": larger than the 4 MiB input limit");
}

// What would otherwise be dropped or crash: a second document below "---"
// (its edits would not be simulated), a model file or profile that is a
// folder or a device, a config.json nested past the reader's stack.
TEST_F(InputFileTest, SecondDocumentsFoldersAndDeepJsonAreBadInput) {
  const std::string two = Write("two.yaml", std::string(kScenario) + "---\nname: edited\n");
  EXPECT_EQ(LoadError(two), two + ":14: a second YAML document (after '---'): a scenario or profile is one document");
  EXPECT_EQ(LoadError(Write("trailing.yaml", std::string(kScenario) + "---\n")), "(loaded)");
  // yaml-cpp's LoadAll never ends on a top-level ',' (a document per pass, all the memory there is).
  for (const std::string& text : {std::string(","), std::string("# c\n, a\n")}) {
    const std::string comma = Write("comma.yaml", text);
    EXPECT_NE(LoadError(comma).find(comma + ":" + (text == "," ? "1" : "2") + ": malformed YAML: the parser cannot read on"), std::string::npos)
        << LoadError(comma);
  }
  const std::string folder = Write("folder.yaml", Replace(kScenario, "model: llama2-70b", "model: {file: " + dir_.string() + "}"));
  EXPECT_EQ(LoadError(folder), folder + ":6: model.file: model file '" + dir_.string() + "' is a directory, not a file (and holds no readable config.json)");
  const std::string device = Write("device.yaml", Replace(kScenario, "node: xe9680-h100", "node: /dev/null"));
  EXPECT_EQ(LoadError(device), device + ":3: cluster.node: profile file '/dev/null' is not a regular file (a device, pipe or socket)");
  const std::string deep_json = Write("deep.json", "{\"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  const std::string deep = Write("deep.yaml", Replace(kScenario, "model: llama2-70b", "model: {file: " + deep_json + "}"));
  EXPECT_EQ(LoadError(deep), deep_json + ":1: nested more than 200 levels deep");
}

TEST_F(InputFileTest, OverrideListsAndNullsAreBlamedOnSet) {
  // A --set value's own one-line document must not lend its line to the scenario file.
  const std::string f = Write("s.yaml", kScenario);
  EXPECT_EQ(LoadError(f, {"cluster.nodes=[1, 2]"}), "--set: cluster.nodes: expected a number, got a list");
  EXPECT_EQ(LoadError(f, {"model=~"}), "--set: model: missing required key (a catalogue name, a file, or the model's keys)");
}

TEST_F(InputFileTest, BlockScalarInAMessageStaysOneLine) {
  const std::string f = Write("block.yaml", Replace(kScenario, "  seq_len: 4096\n", "  seq_len: |\n    4096\n    8192\n"));
  const std::string e = LoadError(f);
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_EQ(e, f + ":11: training.seq_len: expected a number, got the string \"4096\\n8192\\n\"");
}

// The "did you mean" of every unknown key and name: the nearest by edits,
// a truncated name first, and of two as near the one sharing the longer start
// (DeepSeek-V3.2's model_type is DeepSeek-V3's extended, not DeepSeek-V2's).
TEST(ClosestMatchTest, NearestNameWithTheLongerSharedStartOnATie) {
  EXPECT_EQ(ClosestMatch("deepseek_v32", {"deepseek_v2", "deepseek_v3"}), "deepseek_v3");
  EXPECT_EQ(ClosestMatch("deepseek_v32", {"deepseek_v3", "deepseek_v2"}), "deepseek_v3");
  EXPECT_EQ(ClosestMatch("xe9680", {"xe9680l-b200", "xe9680-h100"}), "xe9680l-b200");  // a truncation: the first that extends it
  EXPECT_EQ(ClosestMatch("paralelism", {"training", "parallelism"}), "parallelism");
  EXPECT_EQ(ClosestMatch("cluster", {"training", "parallelism"}), "");
  // As near and as long a shared start: the one as long as the word (a mistyped letter).
  EXPECT_EQ(ClosestMatch("nodez", {"node", "nodes"}), "nodes");
  EXPECT_EQ(ClosestMatch("nodez", {"nodes", "node"}), "nodes");
}

TEST(JsonQuoteTest, InvalidUtf8BecomesReplacementCharacter) {
  EXPECT_EQ(JsonWriter::Quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");           // valid: kept
  EXPECT_EQ(JsonWriter::Quote("caf\xe9"), "\"caf\\ufffd\"");                // Latin-1 byte
  EXPECT_EQ(JsonWriter::Quote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");           // overlong '/'
  EXPECT_EQ(JsonWriter::Quote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
  EXPECT_EQ(JsonWriter::Quote("\xf0\x9f\x98\x80!"), "\"\xf0\x9f\x98\x80!\"");  // 4-byte emoji kept
  EXPECT_EQ(JsonWriter::Quote("\xe2\x82"), "\"\\ufffd\\ufffd\"");           // truncated sequence
}

}  // namespace
}  // namespace trainsim
