#include "sim/sweep/in_order_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

namespace trainsim {
namespace {

// Workers that finish in a scrambled order (a random sleep per position).
struct Scrambled {
  std::atomic<size_t> most_out{0};
  std::atomic<size_t> out{0};
  std::vector<std::thread> threads;

  void Start(InOrderQueue<size_t>& q, int n, const std::function<bool()>& stop) {
    for (int t = 0; t < n; ++t) {
      threads.emplace_back([&q, this, stop, t] {
        std::mt19937 rng{static_cast<unsigned>(t)};
        while (const auto i = q.Take(stop)) {
          const size_t now = ++out;
          for (size_t m = most_out.load(); now > m && !most_out.compare_exchange_weak(m, now);) {
          }
          std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
          --out;
          q.Put(*i, *i * 10);
        }
        q.WorkerDone();
      });
    }
  }
  void Join() {
    for (auto& t : threads) t.join();
  }
};

TEST(InOrderQueueTest, ResultsComeBackInPositionOrderWhateverOrderTheyFinishIn) {
  InOrderQueue<size_t> q(2000, 16, 4);
  Scrambled w;
  w.Start(q, 4, [] { return false; });
  std::vector<size_t> got;
  for (bool all_read = false; !all_read;) {
    for (size_t v : q.Read(7, std::chrono::milliseconds(1), all_read)) got.push_back(v);
  }
  w.Join();
  ASSERT_EQ(got.size(), 2000u);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], i * 10) << i;
  EXPECT_LE(w.most_out.load(), 4u);
}

TEST(InOrderQueueTest, NoWorkerRunsMoreThanTheWindowAheadOfTheReader) {
  // The reader holds back; the workers must stop at the window, not compute everything.
  InOrderQueue<size_t> q(1000, 8, 3);
  Scrambled w;
  w.Start(q, 3, [] { return false; });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  bool all_read = false;
  const std::vector<size_t> first = q.Read(1000, std::chrono::milliseconds(1), all_read);
  EXPECT_LE(first.size(), 8u);
  EXPECT_FALSE(all_read);
  size_t total = first.size();
  while (!all_read) total += q.Read(1000, std::chrono::milliseconds(1), all_read).size();
  w.Join();
  EXPECT_EQ(total, 1000u);
}

TEST(InOrderQueueTest, AStopEndsOnAPrefixWithNoGap) {
  InOrderQueue<size_t> q(100000, 64, 4);
  std::atomic<bool> stop{false};
  Scrambled w;
  w.Start(q, 4, [&] { return stop.load(); });
  std::vector<size_t> got;
  bool all_read = false;
  while (got.size() < 500) {
    for (size_t v : q.Read(16, std::chrono::milliseconds(1), all_read)) got.push_back(v);
  }
  stop = true;
  while (!all_read) {
    for (size_t v : q.Read(16, std::chrono::milliseconds(1), all_read)) got.push_back(v);
  }
  w.Join();
  ASSERT_LT(got.size(), 100000u);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], i * 10) << i;
}

TEST(InOrderQueueTest, NoWorkersMeansNothingToReadAndNoWait) {
  InOrderQueue<size_t> q(10, 4, 2);
  q.SetWorkers(0);
  bool all_read = false;
  EXPECT_TRUE(q.Read(4, std::chrono::milliseconds(1000), all_read).empty());
  EXPECT_TRUE(all_read);
}

TEST(InOrderQueueTest, AbandonHandsOutNoMorePositions) {
  InOrderQueue<size_t> q(10, 4, 1);
  ASSERT_EQ(q.Take([] { return false; }), std::optional<size_t>(0));
  q.Abandon();
  EXPECT_EQ(q.Take([] { return false; }), std::nullopt);
  q.Put(0, 7);
  q.WorkerDone();
  bool all_read = false;
  EXPECT_EQ(q.Read(4, std::chrono::milliseconds(1), all_read), std::vector<size_t>{7});
  EXPECT_TRUE(all_read);
}

}  // namespace
}  // namespace trainsim
