#include "sim/cost/host_issue.h"

#include <gtest/gtest.h>

#include <vector>

namespace trainsim {
namespace {

Operator Kernels(int kernels, bool host_waits = false) {
  Operator o;
  o.bytes = 1;  // some work: it launches its kernels
  o.kernels = kernels;
  o.host_waits = host_waits;
  return o;
}

TEST(HostIssueTest, WithoutHostCostThePassIsItsOperatorsSum) {
  const std::vector<Operator> ops = {Kernels(1), Kernels(100)};
  const double gpu_s[] = {1e-3, 1e-4};
  EXPECT_EQ(HostIssuedPassTime(ops, gpu_s, 0), 1e-3 + 1e-4);
}

// Kernels longer than the host's cost per kernel hide it: exactly the sum.
TEST(HostIssueTest, LongKernelsHideTheHost) {
  const std::vector<Operator> ops = {Kernels(1), Kernels(1), Kernels(1)};
  const double gpu_s[] = {1e-3, 2e-3, 5e-4};
  EXPECT_EQ(HostIssuedPassTime(ops, gpu_s, 15e-6), 1e-3 + 2e-3 + 5e-4);
}

// A run of captured operators is one graph launch: a hundred 1 us kernels in
// a graph take the one launch and their own 100 us; outside it, 1 ms.
TEST(HostIssueTest, ACudaGraphIsOneLaunch) {
  std::vector<Operator> ops = {Kernels(50), Kernels(50)};
  const double gpu_s[] = {50e-6, 50e-6};
  EXPECT_NEAR(HostIssuedPassTime(ops, gpu_s, 10e-6), 1000e-6, 1e-12);
  for (Operator& o : ops) o.graphed = true;
  EXPECT_NEAR(HostIssuedPassTime(ops, gpu_s, 10e-6), 100e-6, 1e-12);  // the next pass's launch hides behind this one's kernels
  ops[1].graphed = false;  // half captured: the host issues the other 50 after the graph's launch
  EXPECT_NEAR(HostIssuedPassTime(ops, gpu_s, 10e-6), 10e-6 + 50 * 10e-6, 1e-9);
}

// A hundred 1 us kernels issued 10 us apart: the pass takes the host's 1 ms.
TEST(HostIssueTest, ShortKernelsWaitForTheHost) {
  const std::vector<Operator> ops = {Kernels(100)};
  const double gpu_s[] = {100e-6};
  EXPECT_NEAR(HostIssuedPassTime(ops, gpu_s, 10e-6), 1000e-6, 1e-12);
}

// After a device-to-host sync the host issues from an empty queue: a long
// kernel followed by 50 short ones takes the long one, then the host's 50
// issues, then the next pass's long kernel waits for its own issue (51 in
// all), where without the sync the host issues the short ones while the
// long one runs.
TEST(HostIssueTest, ASyncMakesTheGpuWaitForWhatFollowsIt) {
  const double h = 10e-6;
  const double gpu_s[] = {500e-6, 50e-6};
  const std::vector<Operator> free = {Kernels(1), Kernels(50)};
  const std::vector<Operator> synced = {Kernels(1), Kernels(50, true)};
  EXPECT_EQ(HostIssuedPassTime(free, gpu_s, h), 550e-6);  // 510 us of issuing hide behind 550 us of GPU
  EXPECT_NEAR(HostIssuedPassTime(synced, gpu_s, h), 500e-6 + 51 * h, 1e-12);
}

// An operator with no work (a cast that bf16 does not need) issues nothing.
TEST(HostIssueTest, AnOperatorWithoutWorkIssuesNothing) {
  Operator none = Kernels(16);
  none.bytes = 0;
  const std::vector<Operator> ops = {none, Kernels(10)};
  const double gpu_s[] = {0, 10e-6};
  EXPECT_NEAR(HostIssuedPassTime(ops, gpu_s, 10e-6), 100e-6, 1e-12);
}

}  // namespace
}  // namespace trainsim
