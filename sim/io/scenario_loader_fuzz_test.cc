// Deterministic fuzzers over the scenario loader and the analytical path:
// every input must either be refused with one line of error or simulate to a
// sane result; never crash, hang, throw, or succeed with a nonsense number.
//  - text mutations of a reference scenario (characters replaced, cut, inserted);
//  - products of fields: several parallelism, cluster and training counts set
//    at once to large or awkward values, so their products (GPUs, TP x PP x CP,
//    x DP, PP x VP, batch x sequence) leave 32 bits: out of reach of the text
//    mutations, which change one field at a time.
// Each case runs in a child process, so a crash (SIGFPE, an abort) or a hang is
// counted, not fatal to the test binary. The figures are printed.
// (Runs under the sanitizer build too.)
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "sim/core/scenario.h"
#include "sim/io/scenario_loader.h"
#include "sim/run/simulate.h"

namespace trainsim {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Child exit codes.
enum Outcome { kParsedSane = 0, kRejected = 10, kNonsense = 11, kMultiLineError = 12, kThrew = 13, kBlamedSet = 14 };

// A successful result that no real run could have.
bool Nonsense(const Scenario& s, const SimulationResult& r) {
  if (!r.error.empty()) return false;  // refused with a reason: fine
  const double figures[] = {r.step_time_s, r.tokens_per_s_per_gpu, r.mfu, r.run.time_to_train_s, r.run.energy_kwh,
                            r.run.cost_usd, r.run.goodput, r.memory.peak_gib_per_gpu};
  for (double v : figures) {
    if (!std::isfinite(v) || v < 0) return true;
  }
  // The GPU count in 64 bits: a wrapped int (536,870,913 nodes "are" 8 GPUs) is nonsense.
  const long long gpus = static_cast<long long>(s.nodes) * s.node.gpus_per_node;
  return !(r.step_time_s > 0) || r.gpus <= 0 || r.gpus != gpus || r.run.goodput > 1 || r.mfu > 1;
}

// Parses (and, if it parses, simulates analytically) one scenario document.
Outcome Check(const std::string& text, const std::vector<std::string>& sets) {
  try {
    YAML::Node root = YAML::Load(text);
    Expected<Scenario> s = InputError{};
    try {
      ApplyOverrides(root, sets);
      s = ParseScenario(root, "fuzz.yaml");
    } catch (const InputException& e) {
      s = e.error();
    }
    if (!s.ok()) {
      if (s.error().ToString().find('\n') != std::string::npos) return kMultiLineError;
      if (sets.empty() && s.error().file == "--set") return kBlamedSet;  // no --set was given
      return kRejected;
    }
    const SimulationResult r = Simulate(*s, SimulateOptions{});
    return Nonsense(*s, r) ? kNonsense : kParsedSane;
  } catch (const YAML::Exception&) {
    return kRejected;  // LoadScenario turns this into a file:line error; ParseScenario takes a parsed node
  } catch (...) {
    return kThrew;
  }
}

struct Figures {
  int runs = 0, parsed = 0, rejected = 0, crashes = 0, hangs = 0, nonsense = 0, multi_line = 0, threw = 0, blamed_set = 0;
  std::string first_bad;  // the first case that was not fine, to reproduce it
  std::string Summary() const {
    char buf[320];
    std::snprintf(buf, sizeof buf, "%d runs: %d parsed and sane, %d rejected; %d crashes, %d hangs, %d exit-0-with-nonsense, "
                  "%d multi-line errors, %d threw, %d blamed --set without one", runs, parsed, rejected, crashes, hangs, nonsense,
                  multi_line, threw, blamed_set);
    return buf;
  }
};

// Runs Check in a child with a time limit; records what happened.
void RunIsolated(const std::string& text, const std::vector<std::string>& sets, const std::string& label, Figures& f) {
  ++f.runs;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(20);  // a hang ends as SIGALRM
    ::_exit(Check(text, sets));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  bool bad = true;
  if (WIFSIGNALED(status)) {
    (WTERMSIG(status) == SIGALRM ? f.hangs : f.crashes)++;
  } else {
    switch (WEXITSTATUS(status)) {
      case kParsedSane: ++f.parsed; bad = false; break;
      case kRejected: ++f.rejected; bad = false; break;
      case kNonsense: ++f.nonsense; break;
      case kMultiLineError: ++f.multi_line; break;
      case kBlamedSet: ++f.blamed_set; break;
      default: ++f.threw; break;
    }
  }
  if (bad && f.first_bad.empty()) f.first_bad = label;
}

void ExpectClean(const Figures& f) {
  std::printf("[ figures  ] %s\n", f.Summary().c_str());
  EXPECT_EQ(f.crashes, 0) << f.Summary() << "; first: " << f.first_bad;
  EXPECT_EQ(f.hangs, 0) << f.Summary() << "; first: " << f.first_bad;
  EXPECT_EQ(f.nonsense, 0) << f.Summary() << "; first: " << f.first_bad;
  EXPECT_EQ(f.multi_line, 0) << f.Summary() << "; first: " << f.first_bad;
  EXPECT_EQ(f.threw, 0) << f.Summary() << "; first: " << f.first_bad;
  EXPECT_EQ(f.blamed_set, 0) << f.Summary() << "; first: " << f.first_bad;
}

std::string Seed() {
  return ReadFile(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-4n-8nic.yaml");
}

TEST(ScenarioFuzzTest, CorruptedScenariosNeverCrash) {
  const std::string seed = Seed();
  ASSERT_FALSE(seed.empty());
  const std::string alphabet = "0123456789-.:{}[]#&*!|>'\"%@` \n\tabcxyz_eE";
  std::mt19937 rng(20261129);
  Figures f;
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
    RunIsolated(text, {}, "text mutation " + std::to_string(i) + ":\n" + text, f);
  }
  ExpectClean(f);
  EXPECT_GT(f.parsed, 100);
  EXPECT_GT(f.rejected, 100);
}

// Products of fields: 2 to 5 counts set at once from values that are large,
// prime, or just past a power of two, so a product wraps 32 bits.
// Before the 64-bit count checks (6bc56d6) it found 9 crashes (SIGFPE in 32-bit GPU counts).
TEST(ScenarioFuzzTest, ProductsOfLargeCountsNeverCrashOrWrap) {
  const std::string seed = Seed();
  ASSERT_FALSE(seed.empty());
  const char* keys[] = {"cluster.nodes", "parallelism.tensor", "parallelism.pipeline", "parallelism.context",
                        "parallelism.virtual_stages", "parallelism.data", "training.global_batch",
                        "training.micro_batch", "training.seq_len", "training.steps", "cluster.storage_nodes"};
  const char* values[] = {"1", "2", "3", "7", "8", "64", "1024", "65536", "65537", "1048576", "46341",
                          "536870913", "1000000000", "2147483647"};
  std::mt19937 rng(20261201);
  Figures f;
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::string> sets;
    std::string label = "products " + std::to_string(i) + ":";
    const int n = 2 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; ++k) {
      sets.push_back(std::string(keys[rng() % std::size(keys)]) + "=" + values[rng() % std::size(values)]);
      label += " --set " + sets.back();
    }
    RunIsolated(seed, sets, label, f);
  }
  ExpectClean(f);
  EXPECT_GT(f.rejected, 100);
}

}  // namespace
}  // namespace trainsim
