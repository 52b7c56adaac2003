// InOrderQueue: hands positions 0..n-1 to worker threads and gives their
// results back to one reader in position order, whatever order the workers
// finish in. A sweep's rows then follow its points under any -j, so two runs
// of a sweep (or a run and its resume) give the same file, line for line.
//
// At most `window` positions are out (taken and not yet read) at once: a
// worker waits for room rather than run ahead of a slow point without bound,
// which caps the results held in memory. Every position a worker takes it
// finishes (stopping is checked before taking, never after), so what the
// reader gets is always a prefix 0..k-1: after a stop it ends where the first
// untaken position begins, with no gap.
//
// Thread-safety: Take/Put/WorkerDone from the workers, Read from one reader.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace trainsim {

template <typename T>
class InOrderQueue {
 public:
  // Preconditions: window >= 1, workers >= 1 (SetWorkers may lower it later).
  InOrderQueue(size_t positions, size_t window, int workers)
      : positions_(positions), slots_(window), workers_(workers) {}

  // The workers that will call WorkerDone; lowered when the system refused some threads.
  void SetWorkers(int workers) {
    std::lock_guard<std::mutex> lock(mu_);
    workers_ = workers;
    reader_cv_.notify_all();
  }

  // Worker: the next position to compute, or nullopt once none is left or
  // `stop()` is true (polled while waiting for room, since a signal handler
  // cannot notify).
  std::optional<size_t> Take(const std::function<bool()>& stop) {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      if (abandoned_ || stop() || next_ >= positions_) return std::nullopt;
      if (next_ < read_ + slots_.size()) return next_++;
      worker_cv_.wait_for(lock, std::chrono::milliseconds(20));
    }
  }

  // Worker: the result of a position it took.
  void Put(size_t position, T result) {
    std::lock_guard<std::mutex> lock(mu_);
    slots_[position % slots_.size()] = std::move(result);
    if (++ready_since_wake_ >= wake_every_) {
      ready_since_wake_ = 0;
      reader_cv_.notify_one();
    }
  }

  // Worker: it will take no more positions.
  void WorkerDone() {
    std::lock_guard<std::mutex> lock(mu_);
    ++finished_;
    reader_cv_.notify_one();
  }

  // Reader: no more positions are handed out (workers finish the ones they hold).
  void Abandon() {
    std::lock_guard<std::mutex> lock(mu_);
    abandoned_ = true;
    worker_cv_.notify_all();
  }

  // Reader: waits until `batch` results are ready in order, every worker has
  // finished, or `wait` has passed with at least one ready; then moves out
  // the results ready in order (up to `batch`). `all_read` is true once the
  // workers have finished and every position taken has been read.
  std::vector<T> Read(size_t batch, std::chrono::milliseconds wait, bool& all_read) {
    std::unique_lock<std::mutex> lock(mu_);
    wake_every_ = batch;
    while (true) {
      const size_t ready = ReadyInOrder(batch);
      const bool workers_done = finished_ >= workers_;
      if (ready >= batch || workers_done) break;
      if (reader_cv_.wait_for(lock, wait) == std::cv_status::timeout && ReadyInOrder(1) > 0) break;
    }
    std::vector<T> out;
    const size_t n = ReadyInOrder(batch);
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      auto& slot = slots_[(read_ + i) % slots_.size()];
      out.push_back(std::move(*slot));
      slot.reset();
    }
    read_ += n;
    all_read = finished_ >= workers_ && read_ == next_;
    if (n > 0) worker_cv_.notify_all();
    return out;
  }

 private:
  // How many results from read_ on are there, without a gap (at most `limit`).
  size_t ReadyInOrder(size_t limit) const {
    size_t n = 0;
    while (n < limit && read_ + n < next_ && slots_[(read_ + n) % slots_.size()].has_value()) ++n;
    return n;
  }

  std::mutex mu_;
  std::condition_variable worker_cv_, reader_cv_;
  const size_t positions_;
  std::vector<std::optional<T>> slots_;  // position p in slots_[p % window] while it is out
  int workers_;
  int finished_ = 0;
  size_t next_ = 0;  // positions taken: 0..next_-1
  size_t read_ = 0;  // positions read: 0..read_-1
  size_t ready_since_wake_ = 0, wake_every_ = 1;
  bool abandoned_ = false;
};

}  // namespace trainsim
