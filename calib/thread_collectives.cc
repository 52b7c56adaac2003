#include "calib/thread_collectives.h"

#include <Eigen/Dense>
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>

namespace trainsim::calib {
namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

const char* const kOps[] = {"all-reduce", "all-gather", "reduce-scatter", "send-recv", "all-to-all"};

}  // namespace

std::vector<CollectiveSample> RunThreadCollectives(int ranks, const std::vector<double>& sizes_bytes, int repetitions) {
  std::vector<CollectiveSample> out;
  if (ranks < 2) return out;
  const size_t max_floats = size_t(*std::max_element(sizes_bytes.begin(), sizes_bytes.end()) / sizeof(float)) + ranks;
  std::vector<std::vector<float>> in(ranks, std::vector<float>(max_floats, 1.0f));
  std::vector<std::vector<float>> mid(ranks, std::vector<float>(max_floats, 0.0f));
  std::vector<std::vector<float>> res(ranks, std::vector<float>(max_floats, 0.0f));
  std::barrier sync(ranks);
  std::vector<double> best;  // in the order of (op, size)
  std::vector<double> start(ranks), done(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      for (const char* op : kOps) {
        for (double size : sizes_bytes) {
          const size_t chunk = std::max<size_t>(1, size_t(size / sizeof(float)) / ranks);
          const size_t n = chunk * ranks;
          double t_best = std::numeric_limits<double>::infinity();
          for (int rep = 0; rep < repetitions; ++rep) {
            sync.arrive_and_wait();
            start[r] = Now();
            const std::string o = op;
            if (o == "all-reduce" || o == "reduce-scatter") {
              // Rank r reduces chunk r over all ranks.
              float* dst = mid[r].data() + r * chunk;
              std::memcpy(dst, in[0].data() + r * chunk, chunk * sizeof(float));
              for (int j = 1; j < ranks; ++j) {
                const float* src = in[j].data() + r * chunk;
                for (size_t i = 0; i < chunk; ++i) dst[i] += src[i];
              }
              if (o == "all-reduce") {
                sync.arrive_and_wait();
                for (int j = 0; j < ranks; ++j) std::memcpy(res[r].data() + j * chunk, mid[j].data() + j * chunk, chunk * sizeof(float));
              }
            } else if (o == "all-gather") {
              for (int j = 0; j < ranks; ++j) std::memcpy(res[r].data() + j * chunk, in[j].data() + j * chunk, chunk * sizeof(float));
            } else if (o == "send-recv") {
              // Pairs (0,1), (2,3), ...: the receiver pulls the sender's whole buffer.
              const int peer = r ^ 1;
              if ((r & 1) && peer < ranks) std::memcpy(res[r].data(), in[peer].data(), n * sizeof(float));
            } else {  // all-to-all: chunk r of every rank comes to rank r
              for (int j = 0; j < ranks; ++j) std::memcpy(res[r].data() + j * chunk, in[j].data() + r * chunk, chunk * sizeof(float));
            }
            done[r] = Now();
            sync.arrive_and_wait();
            // From the first rank starting to the last one finishing: not
            // rank 0's view, which misses work done while it was waking up.
            if (r == 0) {
              const double t = *std::max_element(done.begin(), done.end()) - *std::min_element(start.begin(), start.end());
              t_best = std::min(t_best, t);
            }
            sync.arrive_and_wait();  // start/done are reused by the next repetition
          }
          if (r == 0) best.push_back(t_best);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  size_t i = 0;
  for (const char* op : kOps) {
    for (double size : sizes_bytes) {
      const size_t chunk = std::max<size_t>(1, size_t(size / sizeof(float)) / ranks);
      out.push_back(CollectiveSample{op, "intra-node", ranks, double(chunk * ranks * sizeof(float)), best[i++]});
    }
  }
  return out;
}

bool FitAlphaBeta(const std::vector<CollectiveSample>& samples, AlphaBeta& out) {
  if (samples.size() < 2) return false;
  // A latency and a bandwidth need two distinct sizes.
  if (std::all_of(samples.begin(), samples.end(), [&](const CollectiveSample& c) { return c.bytes == samples[0].bytes; })) return false;
  // t_i = alpha + bytes_i * inv_bw; divide each row by t_i to weight relative errors equally.
  Eigen::MatrixXd A(samples.size(), 2);
  Eigen::VectorXd y = Eigen::VectorXd::Ones(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    A(i, 0) = 1.0 / samples[i].seconds;
    A(i, 1) = samples[i].bytes / samples[i].seconds;
  }
  Eigen::Vector2d x = A.colPivHouseholderQr().solve(y);
  double alpha = x(0), inv_bw = x(1);
  if (inv_bw <= 0) return false;
  if (alpha < 0) {  // no measurable latency: refit bandwidth alone through the origin
    alpha = 0;
    double num = 0, den = 0;
    for (const auto& s : samples) {
      num += s.bytes / s.seconds;
      den += (s.bytes / s.seconds) * (s.bytes / s.seconds);
    }
    inv_bw = num / den;
  }
  out.alpha_s = alpha;
  out.bytes_per_s = 1.0 / inv_bw;
  return true;
}

}  // namespace trainsim::calib
