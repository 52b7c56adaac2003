#include "sim/sweep/sweep_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "sim/io/csv.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    static int n = 0;
    path_ = fs::temp_directory_path() / ("trainsim_sweep_runner_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

const char* kSmallSweep = R"(base:
  name: small
  cluster:
    node: xe9680-h100
    nodes: 2
    fabric: ndr-rail-optimized
  model: llama2-7b
  parallelism:
    tensor: 1
  training:
    seq_len: 4096
    global_batch: 64
    steps: 10
axes:
  cluster.nodes: [1, 2, 4]
  cluster.nics_per_node: [4, 8]
  parallelism.tensor: [1, 2, 3, 4, 8]
  parallelism.pipeline: [1, 2, 4]
)";

SweepSpec SmallSpec() {
  auto s = ParseSweepSpec(kSmallSweep, "small.yaml");
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

SweepSpec ReferenceGrid() {
  auto s = LoadSweepSpec(std::string(TRAINSIM_SOURCE_DIR) + "/examples/sweeps/reference-design.yaml");
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

TEST(SweepRunnerTest, CsvQuotingRoundTrips) {
  const std::vector<std::string> f = {"plain", "a,b", "say \"hi\"", " padded ", "", "two\nlines"};
  const std::string line = CsvLine(f);
  EXPECT_EQ(line, "plain,\"a,b\",\"say \"\"hi\"\"\",\" padded \",,two lines\n");
  auto back = ParseCsvLine(line.substr(0, line.size() - 1));
  std::vector<std::string> want = f;
  want.back() = "two lines";
  EXPECT_EQ(back, want);
  // A line break at an edge becomes an edge space: quoted, as a space there is.
  EXPECT_EQ(CsvLine({"x\r\n", "\nq\"", "a\rb,c"}), "\"x  \",\" q\"\"\",\"a b,c\"\n");
}

TEST(SweepRunnerTest, FormatFollowsTheExtension) {
  EXPECT_EQ(SweepFormatForPath("r.csv"), SweepFormat::kCsv);
  EXPECT_EQ(SweepFormatForPath("r.json"), SweepFormat::kJsonLines);
  EXPECT_EQ(SweepFormatForPath("r.jsonl"), SweepFormat::kJsonLines);
  // In any case: x.JSON wrote CSV.
  EXPECT_EQ(SweepFormatForPath("r.JSON"), SweepFormat::kJsonLines);
  EXPECT_EQ(SweepFormatForPath("r.JsonL"), SweepFormat::kJsonLines);
  EXPECT_EQ(SweepFormatForPath("r.CSV"), SweepFormat::kCsv);
  EXPECT_EQ(SweepFormatForPath("json"), SweepFormat::kCsv);
}

TEST(SweepRunnerTest, AThreadTheSystemRefusesLeavesTheOthersToFinish) {
  TempDir dir;
  const SweepSpec spec = SmallSpec();
  SweepRunOptions full;
  full.output_path = dir.File("full.csv");
  ASSERT_TRUE(RunSweep(spec, full).ok());
  // Two of four threads start: every row is still written, by them.
  SweepRunOptions opt;
  opt.output_path = dir.File("two.csv");
  opt.jobs = 4;
  opt.thread_limit_for_tests = 2;
  auto r = RunSweep(spec, opt);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_FALSE(r->interrupted);
  EXPECT_TRUE(r->failure.empty()) << r->failure;
  EXPECT_EQ(ReadFile(opt.output_path), ReadFile(full.output_path));
  // None starts: an interruption with the reason, never std::terminate; --resume then completes it.
  opt.output_path = dir.File("none.csv");
  opt.thread_limit_for_tests = 0;
  r = RunSweep(spec, opt);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->interrupted);
  EXPECT_EQ(r->written, 0u);
  EXPECT_EQ(r->failure.rfind("cannot start a worker thread", 0), 0u) << r->failure;
  opt.thread_limit_for_tests = std::numeric_limits<int>::max();
  opt.resume = true;
  r = RunSweep(spec, opt);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->written, spec.points.size());
  EXPECT_EQ(ReadFile(opt.output_path), ReadFile(full.output_path));
}

TEST(SweepRunnerTest, ReferenceGridGivesOneWellFormedRowPerPoint) {
  TempDir dir;
  const SweepSpec spec = ReferenceGrid();
  ASSERT_EQ(spec.points.size(), 2u * 5 * 2 * 4 * 4);
  SweepRunOptions opt;
  opt.output_path = dir.File("grid.csv");
  opt.jobs = 2;
  auto sum = RunSweep(spec, opt);
  ASSERT_TRUE(sum.ok()) << sum.error().ToString();
  EXPECT_EQ(sum->written, spec.points.size());
  EXPECT_FALSE(sum->interrupted);
  EXPECT_EQ(sum->ok + sum->memory + sum->invalid + sum->cannot_run + sum->internal, sum->written);
  // The grid has all kinds: 70B on one node does not fit, TP 8 x PP 8 needs more than 8 GPUs.
  EXPECT_GT(sum->ok, 0u);
  EXPECT_GT(sum->memory, 0u);
  EXPECT_GT(sum->invalid, 0u);

  const auto lines = Lines(ReadFile(opt.output_path));
  ASSERT_EQ(lines.size(), spec.points.size() + 1);
  const auto columns = SweepColumns(spec);
  EXPECT_EQ(ParseCsvLine(lines[0]), columns);
  EXPECT_EQ(columns.front(), "model");
  EXPECT_EQ(columns.back(), "error");
  std::set<std::string> ids;
  size_t with_error = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto f = ParseCsvLine(lines[i]);
    ASSERT_EQ(f.size(), columns.size()) << lines[i];
    ids.insert(SweepSpec::PointId({f.begin(), f.begin() + 5}));
    if (!f.back().empty()) ++with_error;
    // A point that ran has a step time; one that did not parse has the reason and no result.
    if (f[9].empty()) {
      EXPECT_FALSE(f.back().empty()) << lines[i];
    }
  }
  EXPECT_EQ(ids.size(), spec.points.size());  // every point once
  EXPECT_EQ(with_error, sum->memory + sum->invalid + sum->cannot_run + sum->internal);
}

TEST(SweepRunnerTest, InfeasibleRowsSayWhy) {
  TempDir dir;
  const SweepSpec spec = SmallSpec();
  SweepRunOptions opt;
  opt.output_path = dir.File("small.csv");
  auto sum = RunSweep(spec, opt);
  ASSERT_TRUE(sum.ok()) << sum.error().ToString();
  bool saw_heads = false, saw_gpus = false;
  for (const auto& line : Lines(ReadFile(opt.output_path))) {
    const auto f = ParseCsvLine(line);
    if (f[2] == "3") {
      // The axis value's line in the sweep file, and the parser's message.
      EXPECT_EQ(f.back().rfind("small.yaml:17: parallelism.tensor: tensor x pipeline x context = ", 0), 0u) << f.back();
      saw_heads = true;
    }
    if (f[0] == "1" && f[2] == "8" && f[3] == "2") {
      EXPECT_NE(f.back().find("does not divide the 8 GPUs"), std::string::npos) << f.back();
      saw_gpus = true;
    }
  }
  EXPECT_TRUE(saw_heads);
  EXPECT_TRUE(saw_gpus);
}

// An interrupted sweep (a prefix of the points, plus a row torn mid-write)
// resumed gives exactly the rows of an uninterrupted run, none twice.
TEST(SweepRunnerTest, ResumeAfterInterruptionGivesTheUninterruptedRows) {
  TempDir dir;
  const SweepSpec spec = ReferenceGrid();
  SweepRunOptions full;
  full.output_path = dir.File("full.csv");
  full.jobs = 1;
  ASSERT_TRUE(RunSweep(spec, full).ok());

  SweepRunOptions part = full;
  part.output_path = dir.File("resumed.csv");
  part.jobs = 3;
  part.max_new_rows = 117;
  auto first = RunSweep(spec, part);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(first->written, 117u);
  EXPECT_TRUE(first->interrupted);
  {
    std::ofstream torn(part.output_path, std::ios::app);
    torn << "llama2-70b,16,8,4,";  // killed in the middle of a row
  }
  SweepRunOptions resume = part;
  resume.jobs = 2;
  resume.resume = true;
  resume.max_new_rows = std::numeric_limits<size_t>::max();
  auto second = RunSweep(spec, resume);
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(second->resumed, 117u);
  EXPECT_EQ(second->written, spec.points.size() - 117);
  EXPECT_FALSE(second->interrupted);
  EXPECT_EQ(ReadFile(part.output_path), ReadFile(full.output_path));
  EXPECT_EQ(Lines(ReadFile(part.output_path))[0], Lines(ReadFile(full.output_path))[0]);

  // Resuming a finished sweep computes nothing and keeps the file.
  auto third = RunSweep(spec, resume);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->written, 0u);
  EXPECT_EQ(ReadFile(part.output_path), ReadFile(full.output_path));
}

TEST(SweepRunnerTest, JsonLinesResume) {
  TempDir dir;
  const SweepSpec spec = SmallSpec();
  SweepRunOptions full;
  full.output_path = dir.File("full.jsonl");
  ASSERT_TRUE(RunSweep(spec, full).ok());
  const auto lines = Lines(ReadFile(full.output_path));
  ASSERT_EQ(lines.size(), spec.points.size());
  for (const auto& l : lines) {
    const YAML::Node n = YAML::Load(l);
    ASSERT_TRUE(n.IsMap()) << l;
    EXPECT_EQ(n["settings"].size(), 4u);
    // null where the point ran, the reason where it cannot; a figure only where it ran.
    const bool feasible = n["feasible"].as<bool>();
    EXPECT_EQ(n["error"].IsNull(), feasible) << l;
    EXPECT_EQ(n["error_kind"].IsNull(), feasible) << l;
    if (!feasible) {
      EXPECT_FALSE(n["error"].Scalar().empty()) << l;
    }
    if (n["result"].IsMap()) {
      EXPECT_EQ(n["result"]["step_time_s"].IsScalar(), feasible) << l;
    }
  }

  SweepRunOptions part = full;
  part.output_path = dir.File("part.jsonl");
  part.max_new_rows = 20;
  part.jobs = 2;
  ASSERT_TRUE(RunSweep(spec, part).ok());
  std::ofstream(part.output_path, std::ios::app) << "{\"settings\":{\"cluster.nodes\":4";
  part.resume = true;
  part.max_new_rows = std::numeric_limits<size_t>::max();
  auto r = RunSweep(spec, part);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->resumed, 20u);
  EXPECT_EQ(ReadFile(part.output_path), ReadFile(full.output_path));
}

TEST(SweepRunnerTest, ResumeRefusesAFileOfAnotherSweep) {
  TempDir dir;
  const std::string path = dir.File("other.csv");
  std::ofstream(path) << "a,b,c\n1,2,3\n";
  SweepRunOptions opt;
  opt.output_path = path;
  opt.resume = true;
  auto r = RunSweep(SmallSpec(), opt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().ToString(), path + ":1: its columns are not this sweep's (write to another file, or give --overwrite instead of --resume to start it again)");
  // Without --resume its row is kept and the reason given; with overwrite the file is rewritten.
  opt.resume = false;
  r = RunSweep(SmallSpec(), opt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().ToString(), path + ": already holds 1 row: --resume keeps them and runs the missing points, --overwrite starts again");
  EXPECT_EQ(ReadFile(path), "a,b,c\n1,2,3\n");
  opt.overwrite = true;
  ASSERT_TRUE(RunSweep(SmallSpec(), opt).ok());
  EXPECT_EQ(Lines(ReadFile(path)).size(), SmallSpec().points.size() + 1);
}

// A sweep writes each point once: a file holding a row twice (joined by
// hand) is refused by --resume rather than kept with the duplicate.
// Options writing `name` in `dir`, after a first run that wrote three rows and stopped.
SweepRunOptions AfterThreeRows(const TempDir& dir, const std::string& name) {
  SweepRunOptions opt;
  opt.output_path = dir.File(name);
  opt.max_new_rows = 3;
  EXPECT_TRUE(RunSweep(SmallSpec(), opt).ok());
  return opt;
}

TEST(SweepRunnerTest, ResumeRefusesAFileHoldingAPointTwice) {
  TempDir dir;
  SweepRunOptions opt = AfterThreeRows(dir, "dup.csv");
  const std::vector<std::string> lines = Lines(ReadFile(opt.output_path));
  ASSERT_EQ(lines.size(), 4u);  // the header and three rows
  std::ofstream(opt.output_path, std::ios::app | std::ios::binary) << lines[2] << "\n";
  const std::string before = ReadFile(opt.output_path);
  opt.resume = true;
  opt.max_new_rows = std::numeric_limits<size_t>::max();
  auto r = RunSweep(SmallSpec(), opt);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().ToString().find("holds 1 row of a point already in it (this row's point is at line 3)"), std::string::npos)
      << r.error().ToString();
  EXPECT_NE(r.error().ToString().find(":5:"), std::string::npos) << r.error().ToString();
  EXPECT_EQ(ReadFile(opt.output_path), before);
}

// A row whose settings are no point of the sweep (edited by hand) is not kept
// by a resume: the file would no longer be this sweep's output.
TEST(SweepRunnerTest, ResumeRefusesARowOfNoPointOfTheSweep) {
  TempDir dir;
  SweepRunOptions opt = AfterThreeRows(dir, "foreign.csv");
  std::vector<std::string> lines = Lines(ReadFile(opt.output_path));
  ASSERT_EQ(lines.size(), 4u);
  const size_t comma = lines[3].find(',');
  ASSERT_NE(comma, std::string::npos);
  lines[3] = "no-such-value" + lines[3].substr(comma);  // the first axis's value, changed
  {
    std::ofstream f(opt.output_path, std::ios::trunc | std::ios::binary);
    for (const auto& l : lines) f << l << "\n";
    f << "torn";  // and a torn last row, which a refusal must leave
  }
  const std::string before = ReadFile(opt.output_path);
  opt.resume = true;
  opt.max_new_rows = std::numeric_limits<size_t>::max();
  auto r = RunSweep(SmallSpec(), opt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r.error().ToString().find(":4: holds 1 row whose settings are no point of this sweep"), std::string::npos)
      << r.error().ToString();
  EXPECT_EQ(ReadFile(opt.output_path), before);
}

// The file's rows follow the sweep's points whatever the number of threads.
TEST(SweepRunnerTest, RowsFollowThePointsUnderAnyNumberOfThreads) {
  TempDir dir;
  const SweepSpec spec = ReferenceGrid();
  std::string first;
  for (const int jobs : {1, 2, 5}) {
    for (const char* name : {"rows.csv", "rows.jsonl"}) {
      SweepRunOptions opt;
      opt.output_path = dir.File(std::to_string(jobs) + name);
      opt.jobs = jobs;
      ASSERT_TRUE(RunSweep(spec, opt).ok());
      if (jobs == 1) continue;
      EXPECT_EQ(ReadFile(opt.output_path), ReadFile(dir.File(std::string("1") + name))) << jobs << " " << name;
    }
  }
}

// A rerun that forgot --resume never drops finished rows: its own, whole ones
// are counted (a torn last row is not one), and the file is left as it was.
TEST(SweepRunnerTest, ARerunWithoutResumeKeepsFinishedRows) {
  TempDir dir;
  SweepRunOptions opt = AfterThreeRows(dir, "done.jsonl");
  const std::string three = ReadFile(opt.output_path);
  std::ofstream(opt.output_path, std::ios::app | std::ios::binary) << "{\"sett";
  opt.max_new_rows = std::numeric_limits<size_t>::max();
  auto r = RunSweep(SmallSpec(), opt);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().ToString().find("already holds 3 rows"), std::string::npos) << r.error().ToString();
  EXPECT_EQ(ReadFile(opt.output_path), three + "{\"sett");
  opt.resume = true;
  r = RunSweep(SmallSpec(), opt);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->resumed, 3u);
  EXPECT_EQ(Lines(ReadFile(opt.output_path)).size(), SmallSpec().points.size());
}

TEST(SweepRunnerTest, ARefusedResumeLeavesTheFileAsItWas) {
  TempDir dir;
  SweepRunOptions opt;
  opt.resume = true;
  auto refused_unchanged = [&](const std::string& name, const std::string& text, const std::string& why) {
    opt.output_path = dir.File(name);
    std::ofstream(opt.output_path, std::ios::binary) << text;
    auto r = RunSweep(SmallSpec(), opt);
    EXPECT_FALSE(r.ok()) << name;
    if (!r.ok()) {
      EXPECT_NE(r.error().ToString().find(why), std::string::npos) << r.error().ToString();
    }
    EXPECT_EQ(ReadFile(opt.output_path), text) << name;  // not even its torn last line cut off
  };
  // Another sweep's columns, with a torn last line.
  refused_unchanged("precious.csv", "my,precious,data\n1,2,3\n4,5,6", "its columns are not this sweep's");
  // One line with no newline that is not the start of this sweep's header (it was wiped and overwritten).
  refused_unchanged("notes.txt", "notes without newline", "its first line is not this sweep's header");
  refused_unchanged("notes.jsonl", "{\"note\": 1", "its first line is not a sweep's JSON row");
  refused_unchanged("lines.jsonl", "{\"note\": 1}\n{\"settings\":{", "not a row of a sweep");
  // This sweep's rows with a torn last one but no fingerprint: refused, and the torn row stays.
  SweepRunOptions part;
  part.output_path = dir.File("part.csv");
  part.max_new_rows = 5;
  ASSERT_TRUE(RunSweep(SmallSpec(), part).ok());
  const std::string rows = ReadFile(part.output_path);
  fs::remove(SweepFingerprintPath(part.output_path));
  refused_unchanged("part.csv", rows + "1,4,", "has rows but no");

  // The start of this sweep's header, torn: the file is this sweep's, begun; it is completed.
  opt.output_path = dir.File("header.csv");
  const std::string header = CsvLine(SweepColumns(SmallSpec()));
  std::ofstream(opt.output_path, std::ios::binary) << header.substr(0, 20);
  auto r = RunSweep(SmallSpec(), opt);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->written, SmallSpec().points.size());
  EXPECT_EQ(Lines(ReadFile(opt.output_path))[0] + "\n", header);
  // And a torn first JSON row.
  opt.output_path = dir.File("row.jsonl");
  std::ofstream(opt.output_path, std::ios::binary) << "{\"sett";
  r = RunSweep(SmallSpec(), opt);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Lines(ReadFile(opt.output_path)).size(), SmallSpec().points.size());
}

TEST(SweepRunnerTest, JsonLinesResumeReadsEscapedSettings) {
  // String settings with quotes, backslashes and non-ASCII text (model files
  // named so): the resume reads the settings object without a YAML parse and
  // must get them back as written.
  TempDir dir;
  const std::string model = "layers: 32\nhidden: 4096\nffn_hidden: 11008\nheads: 32\nvocab: 32000\n";
  std::string axis = "  model: [";
  for (const std::string name : {"say \"hi\".yaml", "back\\slash.yaml", "caf\u00e9 \u2713.yaml", "tab\there.yaml"}) {
    std::ofstream(dir.File(name)) << model;
    axis += (axis.back() == '[' ? "'" : ", '") + dir.File(name) + "'";
  }
  auto spec = ParseSweepSpec(std::string(kSmallSweep) + axis + "]\n", dir.File("names.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  SweepRunOptions full;
  full.output_path = dir.File("full.jsonl");
  ASSERT_TRUE(RunSweep(*spec, full).ok());
  ASSERT_NE(ReadFile(full.output_path).find("say \\\"hi\\\".yaml"), std::string::npos);  // written escaped
  SweepRunOptions part = full;
  part.output_path = dir.File("part.jsonl");
  part.max_new_rows = 123;
  ASSERT_TRUE(RunSweep(*spec, part).ok());
  part.resume = true;
  part.max_new_rows = std::numeric_limits<size_t>::max();
  auto r = RunSweep(*spec, part);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->resumed, 123u);
  EXPECT_EQ(r->written, spec->points.size() - 123);
  EXPECT_EQ(ReadFile(part.output_path), ReadFile(full.output_path));
}

// Each row is counted by what it says: a number format the GPU lacks is a
// run that cannot happen, not invalid settings and not a failure of trainsim.
TEST(SweepRunnerTest, OutcomesCountWhyAPointDidNotRun) {
  TempDir dir;
  auto spec = ParseSweepSpec(std::string(kSmallSweep).substr(0, std::string(kSmallSweep).find("axes:")) +
                                 "axes:\n  training.precision: [bf16, nvfp4]\n  parallelism.tensor: [1, 3]\n",
                             "outcomes.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  SweepRunOptions opt;
  opt.output_path = dir.File("o.csv");
  auto r = RunSweep(*spec, opt);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->ok, 1u);          // bf16, TP 1
  EXPECT_EQ(r->invalid, 1u);     // bf16, TP 3: it does not divide the heads
  EXPECT_EQ(r->cannot_run, 2u);  // nvfp4 on H100 (said before the divisibility)
  EXPECT_EQ(r->internal, 0u);
}

TEST(SweepRunnerTest, UnwritableOutputIsAnError) {
  SweepRunOptions opt;
  opt.output_path = "/nonexistent-dir/r.csv";
  auto r = RunSweep(SmallSpec(), opt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().ToString().rfind("/nonexistent-dir/r.csv: cannot open for writing", 0), 0u) << r.error().ToString();
}

// --- The built CLI (skipped when it has not been built) ---------------------

std::string Binary() { return std::string(TRAINSIM_BINARY_DIR) + "/bin/trainsim"; }

int Shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(SweepCliTest, BadSweepFileExitsTwoWithOneLine) {
  if (!fs::exists(Binary())) GTEST_SKIP() << "trainsim not built";
  TempDir dir;
  std::ofstream(dir.File("bad.yaml")) << kSmallSweep << "filterr: x\n";
  const int rc = Shell(Binary() + " sweep " + dir.File("bad.yaml") + " -o " + dir.File("o.csv") + " 2> " + dir.File("err.txt"));
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(ReadFile(dir.File("err.txt")), dir.File("bad.yaml") + ":19: filterr: unknown key (did you mean 'filter'?)\n");
}

TEST(SweepCliTest, TooManyJobsIsBadInputNotAnAbort) {
  if (!fs::exists(Binary())) GTEST_SKIP() << "trainsim not built";
  TempDir dir;
  std::ofstream(dir.File("s.yaml")) << kSmallSweep;
  const int rc = Shell(Binary() + " sweep " + dir.File("s.yaml") + " -o " + dir.File("o.csv") + " -q -j 100000 2> " + dir.File("err.txt"));
  EXPECT_EQ(rc, 2);  // it was SIGABRT: thread creation failed with the threads started still joinable
  EXPECT_EQ(ReadFile(dir.File("err.txt")), "trainsim sweep: --jobs: at most 1024 threads (got 100000); 0 gives one per core\n");
  EXPECT_FALSE(fs::exists(dir.File("o.csv")));
  EXPECT_EQ(Shell(Binary() + " sweep " + dir.File("s.yaml") + " -o " + dir.File("o.csv") + " -q -j 1024 > /dev/null"), 0);
}

TEST(SweepCliTest, SigtermAfterCtrlCIsTheSameRequest) {
  // mpirun passes a Ctrl-C on to its ranks as SIGTERM: that is not the
  // second Ctrl-C that quits at once, so the sweep still stops after the
  // points in flight and says how to resume.
  if (!fs::exists(Binary())) GTEST_SKIP() << "trainsim not built";
  TempDir dir;
  std::ofstream(dir.File("s.yaml")) << "base:\n  name: long\n  cluster: {node: xe9680-h100, nodes: 1}\n  model: llama2-7b\n"
                                       "  training: {seq_len: 4096, global_batch: 64, steps: 10}\n"
                                       "axes:\n  training.steps: {from: 1, to: 2000, step: 1}\n  cluster.nics_per_node: [4, 8]\n"
                                       "  training.seq_len: [1024, 2048, 4096, 8192]\n  parallelism.tensor: [1, 2, 4, 8]\n";
  const std::string cmd = Binary() + " sweep " + dir.File("s.yaml") + " -o " + dir.File("o.csv") + " -q > " + dir.File("out.txt") +
                          " 2> " + dir.File("err.txt");
  // Job control (set -m): a shell's background command otherwise starts with SIGINT ignored.
  // The signals once rows are being written (the watcher is up), at most 20 s on.
  const std::string rows_written = "[ $(wc -c < " + dir.File("o.csv") + " 2>/dev/null || echo 0) -gt 20000 ]";
  const int rc = Shell("set -m; " + cmd + " & pid=$!; n=0; until " + rows_written +
                       " || [ $n -ge 400 ]; do sleep 0.05; n=$((n+1)); done; kill -INT $pid; kill -TERM $pid; wait $pid");
  const std::string err = ReadFile(dir.File("err.txt"));
  EXPECT_EQ(rc, 1) << err;
  const std::string stopping = "stopping after the points in flight";
  ASSERT_NE(err.find(stopping), std::string::npos) << err;
  EXPECT_EQ(err.find(stopping, err.find(stopping) + 1), std::string::npos) << err;  // said once
  EXPECT_NE(err.find("rerun with --resume"), std::string::npos) << err;
  EXPECT_NE(ReadFile(dir.File("out.txt")).find("sweep: 64000 points"), std::string::npos);
}

TEST(SweepCliTest, SweepWritesCsvAndReportsCounts) {
  if (!fs::exists(Binary())) GTEST_SKIP() << "trainsim not built";
  TempDir dir;
  std::ofstream(dir.File("s.yaml")) << kSmallSweep;
  const int rc = Shell(Binary() + " sweep " + dir.File("s.yaml") + " -o " + dir.File("o.csv") + " --jobs 2 > " +
                       dir.File("out.txt") + " 2> " + dir.File("err.txt"));
  EXPECT_EQ(rc, 0) << ReadFile(dir.File("err.txt"));
  EXPECT_EQ(Lines(ReadFile(dir.File("o.csv"))).size(), SmallSpec().points.size() + 1);
  EXPECT_NE(ReadFile(dir.File("out.txt")).find("sweep: 90 points"), std::string::npos) << ReadFile(dir.File("out.txt"));
}

// Under mpirun the points are spread over the ranks and one file comes out
// (OpenMPI's own allocations are not freed at exit: leak checking is off for the ranks),
// with the rows of a one-process run.
TEST(SweepCliTest, MpiRanksWriteOneFile) {
#ifndef TRAINSIM_HAVE_MPI
  GTEST_SKIP() << "built without MPI";
#else
  if (!fs::exists(Binary())) GTEST_SKIP() << "trainsim not built";
  if (Shell("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  TempDir dir;
  std::ofstream(dir.File("s.yaml")) << kSmallSweep;
  auto spec = LoadSweepSpec(dir.File("s.yaml"));
  ASSERT_TRUE(spec.ok());
  SweepRunOptions one;
  one.output_path = dir.File("one.csv");
  one.allow_mpi = false;
  ASSERT_TRUE(RunSweep(*spec, one).ok());
  const std::string cmd = "ASAN_OPTIONS=detect_leaks=0 mpirun -x ASAN_OPTIONS --allow-run-as-root --oversubscribe -n 3 " + Binary() + " sweep " + dir.File("s.yaml") +
                          " -o " + dir.File("mpi.csv") + " --quiet > " + dir.File("out.txt") + " 2> " + dir.File("err.txt");
  const int rc = Shell(cmd);
  ASSERT_EQ(rc, 0) << ReadFile(dir.File("err.txt"));
  const std::string out = ReadFile(dir.File("out.txt"));
  EXPECT_NE(out.find("x 3 MPI ranks"), std::string::npos) << out;
  EXPECT_EQ(Lines(ReadFile(dir.File("mpi.csv")))[0], Lines(ReadFile(one.output_path))[0]);
  EXPECT_EQ(ReadFile(dir.File("mpi.csv")), ReadFile(one.output_path));

  // Interrupted (a prefix and a torn row) and resumed under mpirun: the same rows again.
  const std::string text = ReadFile(dir.File("mpi.csv"));
  std::ofstream(dir.File("mpi.csv"), std::ios::trunc) << text.substr(0, text.size() / 3);
  ASSERT_EQ(Shell(cmd + " --resume"), 0) << ReadFile(dir.File("err.txt"));
  EXPECT_NE(ReadFile(dir.File("out.txt")).find("already there (resumed)"), std::string::npos) << ReadFile(dir.File("out.txt"));
  EXPECT_EQ(ReadFile(dir.File("mpi.csv")), ReadFile(one.output_path));
#endif
}

// --- Integrity: lock, fingerprint, disk full, feasible column ---------------

TEST(SweepIntegrityTest, ASecondSweepOnALockedFileStopsWithTheReason) {
  TempDir dir;
  const SweepSpec spec = SmallSpec();
  SweepRunOptions opt;
  opt.output_path = dir.File("locked.csv");
  ASSERT_TRUE(RunSweep(spec, opt).ok());
  const std::string before = ReadFile(opt.output_path);
  // Another sweep holds the file (flock locks belong to an open file description).
  const int fd = ::open(opt.output_path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  for (bool resume : {false, true}) {
    opt.resume = resume;
    auto r = RunSweep(spec, opt);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_TRUE(r->locked);
    EXPECT_TRUE(r->interrupted);
    EXPECT_EQ(r->written, 0u);
    EXPECT_NE(r->failure.find("another trainsim sweep is writing this file"), std::string::npos) << r->failure;
    EXPECT_EQ(ReadFile(opt.output_path), before);  // neither truncated nor appended to
  }
  ::close(fd);
  opt.resume = true;
  auto r = RunSweep(spec, opt);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->locked);
  EXPECT_EQ(r->written, 0u);
}

// A profile edited between two runs of a sweep (a GPU's sustained clock, a
// framework default) changes every row it touches: resuming would mix rows of
// both. The fingerprint holds the bundled data's, so the resume is refused.
TEST(SweepIntegrityTest, ResumeRefusesRowsOfOtherHardwareProfiles) {
  TempDir dir;
  const fs::path data = dir.File("data");
  for (const char* sub : {"hardware-profiles", "models/catalogue"}) {
    fs::create_directories(data / sub);
    fs::copy(fs::path(TRAINSIM_SOURCE_DIR) / sub, data / sub, fs::copy_options::recursive);
  }
  ASSERT_EQ(::setenv("TRAINSIM_DATA_DIR", data.c_str(), 1), 0);
  SweepRunOptions part;
  part.output_path = dir.File("profiles.csv");
  part.max_new_rows = 10;
  const bool first_ok = RunSweep(SmallSpec(), part).ok();
  {
    std::ofstream gpu(data / "hardware-profiles/gpus/h100-sxm-80g.yaml", std::ios::app);
    gpu << "# edited\n";
  }
  part.max_new_rows = std::numeric_limits<size_t>::max();
  part.resume = true;
  auto r = RunSweep(SmallSpec(), part);
  ::unsetenv("TRAINSIM_DATA_DIR");
  ASSERT_TRUE(first_ok);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().ToString().find("its rows were produced with another version of the hardware profiles or model catalogue"), std::string::npos)
      << r.error().ToString();
  EXPECT_EQ(Lines(ReadFile(part.output_path)).size(), 11u);  // nothing added
}

TEST(SweepIntegrityTest, ResumeRefusesRowsOfAnEditedModelOrProfileFile) {
  // Files the scenario names by path (a model file, a node profile, a path as
  // an axis value) are part of what produced the rows.
  TempDir dir;
  std::ofstream(dir.File("model.yaml")) << "layers: 32\nhidden: 4096\nffn_hidden: 11008\nheads: 32\nvocab: 32000\n";
  std::ofstream(dir.File("model2.yaml")) << "layers: 16\nhidden: 4096\nffn_hidden: 11008\nheads: 32\nvocab: 32000\n";
  fs::copy_file(fs::path(TRAINSIM_SOURCE_DIR) / "hardware-profiles/nodes/xe9680-h100.yaml", dir.File("node.yaml"));
  std::ofstream(dir.File("base.yaml")) << "name: files\ncluster:\n  node: " << dir.File("node.yaml")
                                       << "\n  nodes: 1\n  fabric: ndr-rail-optimized\nmodel: model.yaml\nparallelism:\n  tensor: 1\n"
                                          "training:\n  seq_len: 4096\n  global_batch: 64\n  steps: 10\n";
  std::ofstream(dir.File("sweep.yaml")) << "base: base.yaml\naxes:\n  parallelism.tensor: [1, 2, 4, 8]\n";
  std::ofstream(dir.File("axis.yaml")) << "base: base.yaml\naxes:\n  model: [" << dir.File("model.yaml") << ", "
                                       << dir.File("model2.yaml") << "]\n";
  auto resume_after = [&](const std::string& sweep, const std::string& edited) {
    auto spec = LoadSweepSpec(dir.File(sweep));
    EXPECT_TRUE(spec.ok()) << spec.error().ToString();
    if (!spec.ok()) return std::string();
    EXPECT_NE(std::find(spec->input_files.begin(), spec->input_files.end(), dir.File(edited)), spec->input_files.end()) << edited;
    SweepRunOptions part;
    part.output_path = dir.File(sweep + "." + edited + ".csv");
    part.max_new_rows = 1;
    EXPECT_TRUE(RunSweep(*spec, part).ok());
    const std::string before = ReadFile(part.output_path);
    const std::string original = ReadFile(dir.File(edited));
    std::ofstream(dir.File(edited), std::ios::app) << "# edited\n";
    auto again = LoadSweepSpec(dir.File(sweep));
    part.resume = true;
    part.max_new_rows = std::numeric_limits<size_t>::max();
    auto r = RunSweep(*again, part);
    EXPECT_EQ(ReadFile(part.output_path), before);  // nothing added
    std::ofstream(dir.File(edited), std::ios::trunc) << original;
    // As it was, the same file resumes.
    auto same = RunSweep(*LoadSweepSpec(dir.File(sweep)), part);
    EXPECT_TRUE(same.ok()) << same.error().ToString();
    return r.ok() ? std::string("(accepted)") : r.error().ToString();
  };
  const std::string why = "its rows were produced with another version of a file the scenario reads";
  EXPECT_NE(resume_after("sweep.yaml", "model.yaml").find(why), std::string::npos);
  EXPECT_NE(resume_after("sweep.yaml", "node.yaml").find(why), std::string::npos);
  EXPECT_NE(resume_after("axis.yaml", "model2.yaml").find(why), std::string::npos);
  // The fingerprint file lists them for whoever reads it; the bundled data has its own fingerprint.
  const std::string fp = ReadFile(SweepFingerprintPath(dir.File("sweep.yaml.model.yaml.csv")));
  EXPECT_NE(fp.find("#   " + dir.File("model.yaml") + "\n"), std::string::npos) << fp;
  EXPECT_EQ(fp.find("hardware-profiles/"), std::string::npos) << fp;
}

TEST(SweepIntegrityTest, ResumeRefusesRowsOfAnotherBaseAxesOrFidelity) {
  TempDir dir;
  SweepRunOptions part;
  part.output_path = dir.File("fp.csv");
  part.max_new_rows = 10;
  ASSERT_TRUE(RunSweep(SmallSpec(), part).ok());
  ASSERT_TRUE(fs::exists(SweepFingerprintPath(part.output_path)));
  part.max_new_rows = std::numeric_limits<size_t>::max();
  part.resume = true;
  auto refused = [&](const std::string& sweep_text, Fidelity fidelity) {
    auto spec = ParseSweepSpec(sweep_text, "small.yaml");
    EXPECT_TRUE(spec.ok()) << spec.error().ToString();
    SweepRunOptions o = part;
    o.fidelity = fidelity;
    auto r = RunSweep(*spec, o);
    return r.ok() ? std::string("(accepted)") : r.error().ToString();
  };
  auto replace = [](std::string t, const std::string& from, const std::string& to) { return t.replace(t.find(from), from.size(), to); };
  const std::string base = kSmallSweep;
  // The base scenario edited (steps 10 -> 5): the old rows would sit beside new ones.
  EXPECT_NE(refused(replace(base, "steps: 10", "steps: 5"), Fidelity::kAnalytical).find("its rows were produced with another base scenario"),
            std::string::npos);
  // An axis value removed, and a filter added.
  EXPECT_NE(refused(replace(base, "[1, 2, 4]\n  cluster.nics", "[1, 2]\n  cluster.nics"), Fidelity::kAnalytical)
                .find("another axes, zip groups or filters"), std::string::npos);
  EXPECT_NE(refused(base + "filter: cluster.nodes > 1\n", Fidelity::kAnalytical).find("another axes, zip groups or filters"),
            std::string::npos);
  // Another fidelity: DES rows would be mixed with analytical ones.
  EXPECT_NE(refused(base, Fidelity::kDes).find("another fidelity: 'analytical', now 'des'"), std::string::npos);
  const size_t rows = Lines(ReadFile(part.output_path)).size();
  EXPECT_EQ(rows, 11u);  // nothing was added by the refused resumes
  // The same sweep resumes.
  auto ok = RunSweep(SmallSpec(), part);
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(ok->resumed, 10u);
  // Rows without a fingerprint (a file from elsewhere) are refused too.
  fs::remove(SweepFingerprintPath(part.output_path));
  auto none = RunSweep(SmallSpec(), part);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().ToString().find("has rows but no " + SweepFingerprintPath(part.output_path)), std::string::npos)
      << none.error().ToString();
}

TEST(SweepIntegrityTest, DiskFullIsAnInterruptionNotBadInput) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  SweepRunOptions opt;
  opt.output_path = "/dev/full";  // every write fails with ENOSPC
  opt.jobs = 2;
  auto r = RunSweep(SmallSpec(), opt);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->interrupted);
  EXPECT_FALSE(r->locked);
  EXPECT_EQ(r->written, 0u);
  EXPECT_NE(r->failure.find("No space left on device"), std::string::npos) << r->failure;
  EXPECT_FALSE(fs::exists("/dev/full.fingerprint"));  // no fingerprint beside a device
}

TEST(SweepIntegrityTest, FeasibleColumnAndNoCostWhereTheRunCannotHappen) {
  TempDir dir;
  const SweepSpec spec = ReferenceGrid();
  SweepRunOptions opt;
  opt.output_path = dir.File("grid.csv");
  opt.jobs = 2;
  ASSERT_TRUE(RunSweep(spec, opt).ok());
  const auto lines = Lines(ReadFile(opt.output_path));
  const auto columns = ParseCsvLine(lines[0]);
  auto col = [&](const std::string& k) { return size_t(std::find(columns.begin(), columns.end(), k) - columns.begin()); };
  ASSERT_EQ(col("feasible"), spec.Keys().size());  // right after the axis keys
  size_t infeasible = 0, feasible = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto f = ParseCsvLine(lines[i]);
    const bool ok = f[col("feasible")] == "true";
    EXPECT_EQ(ok, f[col("error")].empty()) << lines[i];
    if (ok) {
      ++feasible;
      EXPECT_FALSE(f[col("run.cost_usd")].empty()) << lines[i];
      EXPECT_EQ(f[col("memory.fits")], "true");
    } else {
      ++infeasible;
      for (const char* k : {"step_time_s", "run.cost_usd", "run.time_to_train_s", "run.energy_kwh", "mfu"}) {
        EXPECT_TRUE(f[col(k)].empty()) << k << ": " << lines[i];
      }
    }
    if (f[col("memory.fits")] == "false") {
      EXPECT_FALSE(ok) << lines[i];
    }
  }
  EXPECT_GT(feasible, 0u);
  EXPECT_GT(infeasible, 0u);
}

TEST(SweepCliTest, LockedFileAndFullDiskExitOne) {
  if (!fs::exists(Binary())) GTEST_SKIP() << "trainsim not built";
  TempDir dir;
  std::ofstream(dir.File("s.yaml")) << kSmallSweep;
  std::ofstream(dir.File("o.csv")) << "";
  const int fd = ::open(dir.File("o.csv").c_str(), O_RDONLY);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  int rc = Shell(Binary() + " sweep " + dir.File("s.yaml") + " -o " + dir.File("o.csv") + " -q > /dev/null 2> " + dir.File("err.txt"));
  ::close(fd);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(ReadFile(dir.File("err.txt")), dir.File("o.csv") +
            ": another trainsim sweep is writing this file (it holds its lock); wait for it to finish, or write to another file\n");
  if (!fs::exists("/dev/full")) return;
  rc = Shell(Binary() + " sweep " + dir.File("s.yaml") + " -o /dev/full -q > /dev/null 2> " + dir.File("err.txt"));
  EXPECT_EQ(rc, 1);
  EXPECT_NE(ReadFile(dir.File("err.txt")).find("/dev/full: cannot write: No space left on device; interrupted with 90 points left"),
            std::string::npos) << ReadFile(dir.File("err.txt"));
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// The parsed path (one document per worker, reused with each point's values
// set in place; profiles loaded once) must give every point exactly what
// parsing the base text afresh gives: the same result fields, the same
// error, FILE:LINE: KEY and kind, on points that parse, that do not fit and
// that are invalid for several reasons (divisibility, NIC count, interleaving,
// steps against tokens, data_sharding against distributed_optimizer, a section
// the base does not have), in any order (a document that saw an error is reused).
void ExpectEveryPointEqualsTheTextAfresh(const char* sweep) {
  auto parsed = ParseSweepSpec(sweep, "eq.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  ASSERT_TRUE(parsed->parsed) << "ParseSweepSpec parses the base once";
  SweepSpec text = *parsed;
  text.parsed.reset();  // every point parses base_text afresh, as before
  std::vector<size_t> order(parsed->points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::reverse(order.begin() + long(order.size() / 2), order.end());  // documents carry history both ways
  std::set<std::string> errors;
  size_t ok = 0;
  for (size_t i : order) {
    const SweepPoint& p = parsed->points[i];
    const Expected<Scenario> a = parsed->PointScenario(p), b = text.PointScenario(p);
    ASSERT_EQ(a.ok(), b.ok()) << "point " << i;
    if (!a.ok()) {
      EXPECT_EQ(a.error().ToString(), b.error().ToString()) << "point " << i;
      EXPECT_EQ(a.error().kind, b.error().kind) << "point " << i;
      errors.insert(a.error().ToString().substr(0, a.error().ToString().find(": ", 10)));
      continue;
    }
    ++ok;
    EXPECT_EQ(a->name, b->name);
    std::vector<std::string> fa, fb;
    std::string ja, jb;
    RunSweepPoint(*parsed, p, Fidelity::kAnalytical, fa, &ja);
    RunSweepPoint(text, p, Fidelity::kAnalytical, fb, &jb);
    EXPECT_EQ(fa, fb) << "point " << i;
    EXPECT_EQ(ja, jb) << "point " << i;
  }
  EXPECT_GT(ok, 10u);
  EXPECT_GE(errors.size(), 4u) << "the set covers several kinds of invalid point";
}

// Each row carries what run would warn of for its point (here a capacity
// factor that drops tokens), and a DES sweep keeps the closed-form figures of
// a point the DES declines (524,288 sequences: more passes than it takes on),
// saying so in the row and counting it apart.
TEST(SweepRunnerTest, RowsCarryTheirWarningsAndDesRefusalsRunInClosedForm) {
  const std::string mixtral = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf/mixtral-8x7b/config.json";
  const std::string text = std::string(R"(base:
  name: warned
  cluster: {node: xe9680-h100, nodes: 8}
  model: )") + mixtral + R"(
  parallelism: {tensor: 1, pipeline: 4, virtual_stages: 8, expert: 8}
  training: {seq_len: 4096, global_batch: 64, micro_batch: 1, precision: bf16}
axes:
  model.moe.capacity_factor: [1.0, 0.5]
  training.global_batch: [64, 524288]
)";
  auto spec = ParseSweepSpec(text, "warned.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  const std::vector<std::string> columns = SweepColumns(*spec);
  const auto column = [&](const char* key) { return size_t(std::find(columns.begin(), columns.end(), key) - columns.begin()); };
  const size_t warnings = column("warnings"), fidelity = column("fidelity"), feasible = column("feasible");
  ASSERT_LT(warnings, columns.size());
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> rows;
  std::map<std::pair<std::string, std::string>, SweepOutcome> outcomes;
  for (const SweepPoint& p : spec->points) {
    std::vector<std::string> f;
    const SweepOutcome o = RunSweepPoint(*spec, p, Fidelity::kDes, f, nullptr);
    ASSERT_EQ(f.size(), columns.size());
    rows[{f[0], f[1]}] = f;
    outcomes[{f[0], f[1]}] = o;
  }
  const auto row = [&](const char* cf, const char* gb) { return rows[std::make_pair(std::string(cf), std::string(gb))]; };
  const auto outcome = [&](const char* cf, const char* gb) { return outcomes[std::make_pair(std::string(cf), std::string(gb))]; };
  EXPECT_EQ(row("1.0", "64")[warnings], "");
  EXPECT_NE(row("0.5", "64")[warnings].find("drops at least 50%"), std::string::npos);
  EXPECT_EQ(row("1.0", "64")[fidelity], "des");
  EXPECT_EQ(outcome("1.0", "64"), SweepOutcome::kOk);
  const std::vector<std::string> big = row("1.0", "524288");
  EXPECT_EQ(big[feasible], "true");
  EXPECT_EQ(big[fidelity], "analytical");
  EXPECT_NE(big[warnings].find("the DES refused this point"), std::string::npos) << big[warnings];
  EXPECT_EQ(outcome("1.0", "524288"), SweepOutcome::kOkAnalytical);
}

TEST(SweepParsedPathTest, EveryPointEqualsParsingTheTextAfresh) {
  const char* sweep = R"(base:
  name: eq
  cluster:
    node: xe9680-h100
    nodes: 2
    fabric: ndr-rail-optimized
    storage: powerscale-f710
  model: llama2-7b
  parallelism:
    tensor: 1
    data_sharding: optimizer
  training:
    seq_len: 4096
    global_batch: 64
    tokens: 2621440
  checkpoint:
    every_steps: 5
axes:
  cluster.nodes: [1, 2, 4]
  cluster.nics_per_node: [4, 6, 8]
  parallelism.tensor: [1, 2, 3, 8]
  parallelism.pipeline: [1, 2]
  parallelism.virtual_stages: [1, 2]
  parallelism.distributed_optimizer: [true, false]
  training.steps: [10, 20]
  data.bytes_per_token: [4, 8]
zip:
  training.micro_batch: [1, 4]
  training.precision: [bf16, fp8]
)";
  ExpectEveryPointEqualsTheTextAfresh(sweep);
}

// Every axis key a key of a mapping the base has, every value a scalar: the
// points read their values over the shared base document (YamlOverlay)
// instead of writing them into it; a key the base lacks (parallelism.context,
// training.micro_batch) comes after the mapping's own, as SetDottedKey puts it.
TEST(SweepParsedPathTest, OverlayPointsEqualParsingTheTextAfresh) {
  const char* sweep = R"(base:
  name: overlay
  cluster:
    node: xe9680-h100
    nodes: 2
    fabric: ndr-rail-optimized
    storage: powerscale-f710
  model: llama2-7b
  parallelism:
    tensor: 1
    data_sharding: optimizer
  training:
    seq_len: 4096
    global_batch: 64
    tokens: 2621440
  checkpoint:
    every_steps: 5
  data:
    bytes_per_token: 4
axes:
  cluster.nodes: [1, 2, 4]
  cluster.nics_per_node: [4, 6, 8]
  parallelism.tensor: [1, 2, 3, 8]
  parallelism.pipeline: [1, 2]
  parallelism.context: [1, 2]
  parallelism.distributed_optimizer: [true, false]
  training.steps: [10, 20]
  data.bytes_per_token: [4, 8]
zip:
  training.micro_batch: [1, 4]
  training.precision: [bf16, fp8]
)";
  ExpectEveryPointEqualsTheTextAfresh(sweep);
}

}  // namespace
}  // namespace trainsim
