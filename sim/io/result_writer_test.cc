// The Chrome trace (--trace): valid trace-event JSON as Perfetto reads it,
// microsecond timestamps in fixed notation to the nanosecond, named and
// sorted processes and threads, categories and args, time 0 at the traced
// step, and no two slices overlapping on one thread.
#include "sim/io/result_writer.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <regex>
#include <set>

#include "sim/io/scenario_loader.h"
#include "sim/run/simulate.h"

namespace trainsim {
namespace {

// "12.345678" -> nanoseconds; fails the test on anything but fixed notation with 3 decimals.
long long ParseMicroseconds(const std::string& text) {
  static const std::regex fixed(R"(-?[0-9]+\.[0-9]{3})");
  EXPECT_TRUE(std::regex_match(text, fixed)) << "not fixed-notation microseconds to the ns: " << text;
  const bool neg = !text.empty() && text[0] == '-';
  const std::string t = neg ? text.substr(1) : text;
  const auto dot = t.find('.');
  if (dot == std::string::npos) return 0;
  const long long ns = std::stoll(t.substr(0, dot)) * 1000 + std::stoll(t.substr(dot + 1));
  return neg ? -ns : ns;
}

struct Slice {
  std::string name, cat;
  long long ts_ns = 0, dur_ns = 0;
  YAML::Node args;
};

struct ParsedTrace {
  std::map<int, std::string> process_name;
  std::set<int> process_sorted;
  std::map<std::pair<int, int>, std::string> thread_name;
  std::set<std::pair<int, int>> thread_sorted;
  std::map<std::pair<int, int>, std::vector<Slice>> slices;  // per (pid, tid)
};

// JSON is YAML's flow subset: yaml-cpp reads the trace and keeps each
// number's text, so the test sees exactly what Perfetto parses.
ParsedTrace ParseTrace(const std::string& json) {
  ParsedTrace t;
  const YAML::Node root = YAML::Load(json);
  EXPECT_TRUE(root.IsMap());
  EXPECT_TRUE(root["traceEvents"].IsSequence());
  EXPECT_EQ(root["displayTimeUnit"].as<std::string>(), "ms");
  for (const auto& e : root["traceEvents"]) {
    const std::string ph = e["ph"].as<std::string>();
    const int pid = e["pid"].as<int>(), tid = e["tid"].as<int>();
    const std::string name = e["name"].as<std::string>();
    if (ph == "M") {
      if (name == "process_name") t.process_name[pid] = e["args"]["name"].as<std::string>();
      else if (name == "process_sort_index") t.process_sorted.insert(pid), e["args"]["sort_index"].as<int>();
      else if (name == "thread_name") t.thread_name[{pid, tid}] = e["args"]["name"].as<std::string>();
      else if (name == "thread_sort_index") t.thread_sorted.insert({pid, tid}), e["args"]["sort_index"].as<int>();
      else ADD_FAILURE() << "unknown metadata event " << name;
      continue;
    }
    EXPECT_EQ(ph, "X") << name;
    Slice s{name, e["cat"].as<std::string>(), ParseMicroseconds(e["ts"].as<std::string>()),
            ParseMicroseconds(e["dur"].as<std::string>()), e["args"]};
    EXPECT_GE(s.dur_ns, 0) << name;
    EXPECT_TRUE(s.args.IsMap()) << name;
    t.slices[{pid, tid}].push_back(s);
  }
  return t;
}

void ExpectNoOverlap(const ParsedTrace& t) {
  for (auto [key, slices] : t.slices) {
    std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) { return a.ts_ns < b.ts_ns; });
    for (size_t i = 1; i < slices.size(); ++i) {
      EXPECT_GE(slices[i].ts_ns, slices[i - 1].ts_ns + slices[i - 1].dur_ns)
          << t.thread_name.at(key) << ": " << slices[i - 1].name << " overlaps " << slices[i].name;
    }
  }
}

TEST(ChromeTraceTest, DesStepIsValidFullPrecisionAndDisjointPerThread) {
  // The reference design (TP 4, PP 4, interleaved chunks, sync
  // checkpoints), shortened; the step it traces is the second of the run.
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-4n-8nic.yaml",
                        {"training.steps=4", "checkpoint.every_steps=2", "training.global_batch=32", "parallelism.virtual_stages=5"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  SimulateOptions opt;
  opt.fidelity = Fidelity::kDes;
  opt.record_timeline = true;
  const SimulationResult r = Simulate(*s, opt);
  ASSERT_TRUE(r.error.empty()) << r.error;
  const ParsedTrace t = ParseTrace(ToChromeTrace(r));
  ExpectNoOverlap(t);

  // Every thread and process used is named and sorted; stages are processes.
  std::set<std::string> processes;
  long long first_ns = 1LL << 62, last_end_ns = 0, step_ns = -1;
  int compute_slices = 0;
  for (const auto& [key, slices] : t.slices) {
    ASSERT_TRUE(t.process_name.count(key.first));
    EXPECT_TRUE(t.process_sorted.count(key.first));
    ASSERT_TRUE(t.thread_name.count(key));
    EXPECT_TRUE(t.thread_sorted.count(key));
    processes.insert(t.process_name.at(key.first));
    for (const auto& sl : slices) {
      first_ns = std::min(first_ns, sl.ts_ns);
      last_end_ns = std::max(last_end_ns, sl.ts_ns + sl.dur_ns);
      if (sl.cat == "step") step_ns = sl.dur_ns;
      if (sl.cat == "forward" || sl.cat == "backward") {
        ++compute_slices;
        EXPECT_TRUE(sl.args["micro_batch"].IsDefined()) << sl.name;
        EXPECT_TRUE(sl.args["chunk"].IsDefined()) << sl.name;
      }
      if (sl.cat == "pp" || sl.cat == "dp") {
        EXPECT_GT(sl.args["bytes"].as<double>(), 0) << sl.name;
        EXPECT_TRUE(sl.args["link"].IsDefined()) << sl.name;
      }
    }
  }
  for (const char* p : {"run", "stage 0", "stage 3"}) EXPECT_TRUE(processes.count(p)) << p;
  // A forward and a backward pass per stage, micro batch and chunk.
  EXPECT_EQ(compute_slices, 4 * 2 * s->microbatches_per_step() * 5);
  // Time 0 is the traced step's start and the step is all there is.
  EXPECT_EQ(first_ns, 0);
  ASSERT_GT(step_ns, 0);
  EXPECT_LE(last_end_ns, step_ns);
  EXPECT_NEAR(step_ns * 1e-9, r.step_time_s, 1e-6);

  // The first checkpoint is its own trace, on its own origin.
  const ParsedTrace c = ParseTrace(ToChromeTrace(r, TracePart::kCheckpoint));
  ExpectNoOverlap(c);
  bool write = false;
  for (const auto& [key, slices] : c.slices) {
    for (const auto& sl : slices) write |= sl.cat == "checkpoint";
  }
  EXPECT_TRUE(write);
}

TEST(ChromeTraceTest, OverlappingSlicesOfOneTrackGoToSeparateLanes) {
  const std::vector<TimelineEvent> events = {
      {"stage 0 comm", "send act 0", 0.0, 2.0, "pp", {}},
      {"stage 0 comm", "send grad 1", 1.0, 2.0, "pp", {}},   // in flight with the first
      {"stage 0 comm", "send act 1", 2.0, 1.0, "pp", {}},    // starts as the first ends: lane 0 again
      {"stage 0 compute", "F0", 0.5, 1.0, "forward", {}},   // other track: its own lanes
  };
  EXPECT_EQ(TimelineLanes(events), (std::vector<int>{0, 1, 0, 0}));
  SimulationResult r;
  r.timeline = events;
  const ParsedTrace t = ParseTrace(ToChromeTrace(r));
  ExpectNoOverlap(t);
  std::set<std::string> names;
  for (const auto& [key, name] : t.thread_name) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"comm", "comm (2)", "compute"}));
}

TEST(ChromeTraceTest, StepPartStartsAtTheStepAndClipsWhatSpansIt) {
  const std::vector<TimelineEvent> events = {
      {"storage", "data read", 11.5, 1.0, "data", {}},  // prefetched during the step before
      {"storage", "data read", 11.0, 0.5, "data", {}},  // done before the step: in neither part
      {"steps", "step 1", 12.0, 1.5, "step", {}},
      {"stage 0 compute", "F0", 12.25, 0.5, "forward", {}},
      {"checkpoint", "checkpoint write", 300.0, 20.0, "checkpoint", {}},
  };
  const auto step = TimelinePart(events, TracePart::kStep);
  ASSERT_EQ(step.size(), 3u);
  EXPECT_DOUBLE_EQ(step[0].start_s, 0.0);
  EXPECT_DOUBLE_EQ(step[0].duration_s, 0.5);
  EXPECT_EQ(step[0].args.back().first, "clipped");
  EXPECT_DOUBLE_EQ(step[2].start_s, 0.25);
  const auto ckpt = TimelinePart(events, TracePart::kCheckpoint);
  ASSERT_EQ(ckpt.size(), 1u);
  EXPECT_DOUBLE_EQ(ckpt[0].start_s, 0.0);
  // 12.25 s into a run: written to the nanosecond, not as 1.225e+07.
  SimulationResult r;
  r.timeline = {{"stage 0 compute", "F0", 12.250000123, 0.5, "forward", {}}};
  EXPECT_NE(ToChromeTrace(r).find("\"ts\":12250000.123"), std::string::npos) << ToChromeTrace(r);
}

// A run that cannot happen before anything is simulated still says what is
// known of it (design.md 3: "the fields it could fill"), and only that: every
// other key is there, null, as in any result object.
TEST(UnsimulatedResultTest, CarriesWhatIsKnownAndNothingInvented) {
  const YAML::Node bare = YAML::Load(ToJsonOfUnsimulated("x", ErrorKind::kUnsupported, "why"));
  EXPECT_FALSE(bare["feasible"].as<bool>());
  EXPECT_EQ(bare["error"].as<std::string>(), "why");
  EXPECT_TRUE(bare["gpus"].IsDefined() && bare["gpus"].IsNull());
  EXPECT_TRUE(bare["model"]["parameters"].IsNull());
  EXPECT_TRUE(bare["memory"]["peak_gib_per_gpu"].IsNull());
  EXPECT_TRUE(bare["warnings"].IsSequence() && bare["warnings"].size() == 0);
  // The same keys as a result that ran.
  std::set<std::string> keys_bare, keys_ran;
  const YAML::Node ran = YAML::Load(ToJson(SimulationResult{}));
  for (const auto& kv : bare) keys_bare.insert(kv.first.as<std::string>());
  for (const auto& kv : ran) keys_ran.insert(kv.first.as<std::string>());
  EXPECT_EQ(keys_bare, keys_ran);
  UnsimulatedFacts known;
  known.gpus = 32;
  known.fidelity = "des";
  known.parameters = 6.9e10;
  known.active_parameters = 6.9e10;
  const YAML::Node full = YAML::Load(ToJsonOfUnsimulated("x", ErrorKind::kUnsupported, "why", known));
  EXPECT_EQ(full["gpus"].as<int>(), 32);
  EXPECT_EQ(full["fidelity"].as<std::string>(), "des");
  EXPECT_EQ(full["model"]["parameters"].as<double>(), 6.9e10);
  EXPECT_EQ(full["error_kind"].as<std::string>(), "unsupported by the hardware");
  EXPECT_TRUE(full["step_time_s"].IsNull());  // not simulated: no figure, not a 0
}

}  // namespace
}  // namespace trainsim
