#include "calib/host_launch_trace.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>

namespace trainsim::calib {
namespace {

// The header `nsys stats --report cuda_api_trace --format csv` writes.
const char* kHeader = "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n";

std::string Row(long start_ns, long duration_ns, const std::string& name, int tid, const std::string& thread = "python") {
  return std::to_string(start_ns) + "," + std::to_string(duration_ns) + "," + name + ",0,1,100," + std::to_string(tid) +
         ",20," + thread + "\n";
}

Expected<HostLaunchCost> Read(const std::string& text, HostLaunchCostOptions o = {}) {
  std::istringstream in(text);
  return ReadHostLaunchCost(in, "trace.csv", o);
}

TEST(HostLaunchTraceTest, MeanGapBetweenLaunchesOnAThread) {
  // The main thread issues a kernel every 20 us; nsys's progress lines come first.
  std::string t = "Generating SQLite file report.sqlite from report.nsys-rep\nProcessing [report.sqlite] with [cuda_api_trace.py]...\n";
  t += kHeader;
  for (int i = 0; i < 100; ++i) t += Row(1'000'000 + i * 20'000, 4'000, "cudaLaunchKernel_v7000", 7);
  const auto c = Read(t);
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->launches, 100);
  EXPECT_EQ(c->counted_gaps, 99);
  EXPECT_EQ(c->threads, 1);
  EXPECT_NEAR(c->host_s_per_kernel, 20e-6, 1e-9);
  EXPECT_NEAR(c->median_gap_s, 20e-6, 1e-9);
}

TEST(HostLaunchTraceTest, WaitsForTheGpuAndIdleGapsAreNotIssuing) {
  std::string t = kHeader;
  long now = 0;
  auto launch = [&](long after_ns, const char* name = "cuLaunchKernel") {
    now += after_ns;
    t += Row(now, 3'000, name, 1);
  };
  launch(0);
  launch(10'000);
  // .item(): a copy, then 500 us waiting for the GPU, then 10 us to the next launch.
  t += Row(now + 2'000, 2'000, "cudaMemcpyAsync", 1);
  t += Row(now + 4'000, 500'000, "cudaStreamSynchronize", 1);
  launch(514'000);
  launch(10'000, "cudaGraphLaunch_v10000");
  // The thread idles 5 ms (the optimizer step elsewhere): left out.
  launch(5'000'000);
  launch(10'000);
  // Another thread (autograd) issues every 30 us.
  t += Row(now + 1, 3'000, "cudaLaunchKernel", 2, "pt_autograd_0");
  t += Row(now + 30'001, 3'000, "cudaLaunchKernel", 2, "pt_autograd_0");
  const auto c = Read(t);
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->launches, 8);
  EXPECT_EQ(c->threads, 2);
  EXPECT_EQ(c->idle_gaps, 1);
  EXPECT_EQ(c->counted_gaps, 5);  // 10, 14 (514 less the 500 waited), 10, 10 on thread 1; 30 on thread 2
  EXPECT_NEAR(c->host_s_per_kernel, (10 + 14 + 10 + 10 + 30) / 5.0 * 1e-6, 1e-9);
  EXPECT_NEAR(c->sync_s, 500e-6, 1e-9);
  // A longer idle threshold counts the 5 ms as issuing.
  HostLaunchCostOptions o;
  o.idle_gap_s = 10e-3;
  const auto all = Read(t, o);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->idle_gaps, 0);
  EXPECT_EQ(all->counted_gaps, 6);
}

TEST(HostLaunchTraceTest, LaunchesThatWaitForAFullQueueAreNotIssuing) {
  // The host issues every 10 us (4 us of it in the launch call) until the
  // launch queue fills; then each launch call blocks 90 us longer until the
  // GPU frees a slot: the GPU sets that pace, and the host still spent 10 us.
  std::string t = kHeader;
  long now = 0;
  for (int i = 0; i < 60; ++i) t += Row(now += 10'000, 4'000, "cudaLaunchKernel", 3);
  for (int i = 0; i < 40; ++i) t += Row(now += i == 0 ? 10'000 : 100'000, 94'000, "cudaLaunchKernel", 3);
  const auto c = Read(t);
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->counted_gaps, 99);
  EXPECT_NEAR(c->host_s_per_kernel, 10e-6, 1e-9);
  EXPECT_NEAR(c->queue_wait_s, 39 * 90e-6, 1e-9);  // the last launch's wait opens no gap
}

TEST(HostLaunchTraceTest, TimeUnitFromTheHeader) {
  // Other nsys releases spell the thread columns PID and TID.
  std::string t = "Start (us),Duration (us),Name,Result,CorrID,PID,TID,T-Pri,Thread Name\n";
  t += Row(100, 3, "cudaLaunchKernel", 1) + Row(125, 3, "cudaLaunchKernel", 1);
  const auto c = Read(t);
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_NEAR(c->host_s_per_kernel, 25e-6, 1e-9);
}

TEST(HostLaunchTraceTest, BadInputNamesTheFileLineAndColumn) {
  const auto no_header = Read("a,b,c\n1,2,3\n");
  ASSERT_FALSE(no_header.ok());
  EXPECT_NE(no_header.error().ToString().find("trace.csv"), std::string::npos);
  EXPECT_NE(no_header.error().ToString().find("cuda_api_trace"), std::string::npos);

  const auto bad_number = Read(std::string(kHeader) + Row(0, 1, "cudaLaunchKernel", 1) + "12x,3,cudaLaunchKernel,0,1,100,1,20,p\n");
  ASSERT_FALSE(bad_number.ok());
  EXPECT_EQ(bad_number.error().line, 3);
  EXPECT_EQ(bad_number.error().key, "Start");

  const auto short_row = Read(std::string(kHeader) + "5,3,cudaLaunchKernel\n");
  ASSERT_FALSE(short_row.ok());
  EXPECT_EQ(short_row.error().line, 2);

  const auto unordered = Read(std::string(kHeader) + Row(50'000, 1, "cudaLaunchKernel", 1) + Row(10'000, 1, "cudaLaunchKernel", 1));
  ASSERT_FALSE(unordered.ok());
  EXPECT_NE(unordered.error().message.find("start order"), std::string::npos);

  const auto unit = Read("Start (h),Duration (ns),Name,Pid,Tid\n");
  ASSERT_FALSE(unit.ok());
  EXPECT_NE(unit.error().message.find("unit"), std::string::npos);

  HostLaunchCostOptions few;
  few.max_launches = 10;
  std::string many = kHeader;
  for (int i = 0; i < 11; ++i) many += Row(i * 10'000, 1'000, "cudaLaunchKernel", 1);
  const auto too_many = Read(many, few);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().line, 12);
  EXPECT_NE(too_many.error().message.find("more than 10 kernel launches"), std::string::npos);

  // One launch per thread: no gap to measure.
  const auto one = Read(std::string(kHeader) + Row(0, 1, "cudaLaunchKernel", 1) + Row(5, 1, "cudaLaunchKernel", 2));
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.error().message.find("2 launches"), std::string::npos);
}

// Mutations of a valid trace (characters replaced, cut, inserted; lines
// dropped or repeated): each is read to a sane figure or refused with one
// line naming the file; never a crash, a throw or a negative or infinite cost.
TEST(HostLaunchTraceTest, FuzzedTracesAreReadOrRefused) {
  std::string valid = "Processing [r.sqlite] with [cuda_api_trace.py]...\n";
  valid += kHeader;
  long now = 0;
  for (int i = 0; i < 40; ++i) {
    valid += Row(now += 12'000 + 1'000 * (i % 7), 4'000, i % 9 ? "cudaLaunchKernel_v7000" : "cudaGraphLaunch_v10000", 1 + i % 2);
    if (i % 10 == 9) valid += Row(now + 5'000, 300'000, "cudaStreamSynchronize_v3020", 1);
  }
  std::mt19937 rng(20261204);
  const std::string alphabet = "0123456789,\"\n\r -.eE(nsu)cudaLaunchKernelSynchronizeTidPid\xff";
  int read = 0, refused = 0;
  for (int n = 0; n < 3000; ++n) {
    std::string t = valid;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      const size_t at = rng() % t.size();
      switch (rng() % 4) {
        case 0: t[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: t.erase(at, 1 + rng() % 40); break;
        case 2: t.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        default: {  // repeat a line elsewhere
          const size_t from = t.rfind('\n', at), to = t.find('\n', at);
          const std::string line = t.substr(from == std::string::npos ? 0 : from, to == std::string::npos ? std::string::npos : to - from);
          t.insert(rng() % t.size(), line);
        }
      }
    }
    const auto c = Read(t);
    if (c.ok()) {
      ++read;
      ASSERT_TRUE(std::isfinite(c->host_s_per_kernel) && c->host_s_per_kernel >= 0) << t;
      ASSERT_LE(c->host_s_per_kernel, 1e-3) << "a counted gap is never idle-long";
      ASSERT_GE(c->launches, c->counted_gaps);
    } else {
      ++refused;
      const std::string m = c.error().ToString();
      ASSERT_EQ(m.find('\n'), std::string::npos) << m;
      ASSERT_EQ(m.rfind("trace.csv", 0), 0u) << m;
    }
  }
  std::printf("fuzzed traces: %d read, %d refused\n", read, refused);
  EXPECT_GT(read, 0);
  EXPECT_GT(refused, 0);
}

TEST(HostLaunchTraceTest, ProfileTextIsAFrameworkProfileScaledToTheReferenceHost) {
  HostLaunchCost c;
  c.host_s_per_kernel = 41.25e-6;
  c.median_gap_s = 30e-6;
  c.launches = 1000;
  c.counted_gaps = 990;
  c.idle_gaps = 9;
  c.threads = 2;
  c.sync_s = 0.5;
  const std::string text = HostCostFrameworkProfileText("mine", "megatron-bridge-perf", c, "step.csv", "gb200-nvl72", 2.75);
  // A base path that YAML would misread unquoted stays one string.
  EXPECT_EQ(YAML::Load(HostCostFrameworkProfileText("m", "/data/stacks: mine #2.yaml", c, "t.csv", "x", 1))["based_on"].as<std::string>(),
            "/data/stacks: mine #2.yaml");
  const YAML::Node n = YAML::Load(text);
  EXPECT_EQ(n["name"].as<std::string>(), "mine");
  EXPECT_EQ(n["based_on"].as<std::string>(), "megatron-bridge-perf");
  EXPECT_NEAR(n["host_us_per_kernel"].as<double>(), 15.0, 1e-9);
  EXPECT_NE(text.find("measured: step.csv"), std::string::npos);
  EXPECT_NE(text.find("host_op_time_factor 2.75"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::calib
