#include "calib/storage_bench.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "calib/layer_step.h"

namespace trainsim::calib {
namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string WriteFile(const std::string& path, const std::vector<char>& block, size_t total, double& seconds) {
  const double t0 = Now();
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  if (fd < 0) return "cannot create '" + path + "': " + std::strerror(errno);
  for (size_t done = 0; done < total;) {
    const size_t n = std::min(block.size(), total - done);
    const ssize_t w = ::write(fd, block.data(), n);
    if (w <= 0) {
      const std::string e = std::strerror(errno);
      ::close(fd);
      return "cannot write '" + path + "': " + e;
    }
    done += size_t(w);
  }
  if (::fsync(fd) != 0) {
    const std::string e = std::strerror(errno);
    ::close(fd);
    return "cannot fsync '" + path + "': " + e;
  }
  ::close(fd);
  seconds = Now() - t0;
  return "";
}

std::string ReadFile(const std::string& path, size_t block_bytes, double& seconds) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return "cannot open '" + path + "': " + std::strerror(errno);
  // The pages were just written: drop them so the read goes to the device.
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  std::vector<char> buf(block_bytes);
  const double t0 = Now();
  while (true) {
    const ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r < 0) {
      const std::string e = std::strerror(errno);
      ::close(fd);
      return "cannot read '" + path + "': " + e;
    }
    if (r == 0) break;
  }
  seconds = Now() - t0;
  ::close(fd);
  return "";
}

}  // namespace

std::string RunStorageBenchmark(const StorageOptions& o, StorageSample& out) {
  std::error_code ec;
  if (!std::filesystem::is_directory(o.dir, ec)) return "storage path '" + o.dir + "' is not a directory";
  if (o.clients < 1 || o.bytes_per_client < 1) return "storage benchmark needs at least one client and one byte";
  out = StorageSample{};
  out.clients = o.clients;
  out.bytes_per_client = o.bytes_per_client;
  out.write_s.assign(o.clients, 0);
  out.read_s.assign(o.clients, 0);
  std::vector<std::string> errors(o.clients), paths(o.clients);
  std::barrier sync(o.clients);
  std::vector<std::thread> threads;
  for (int c = 0; c < o.clients; ++c) {
    paths[c] = (std::filesystem::path(o.dir) / ("trainsim-calib-" + std::to_string(::getpid()) + "-" + std::to_string(c) + ".bin")).string();
    threads.emplace_back([&, c] {
      std::vector<char> block(o.block_bytes);
      std::vector<float> noise(o.block_bytes / sizeof(float));
      FillDeterministic(noise.data(), noise.size(), 1000 + c, 1.0f);  // incompressible-ish content
      std::memcpy(block.data(), noise.data(), noise.size() * sizeof(float));
      sync.arrive_and_wait();
      errors[c] = WriteFile(paths[c], block, size_t(o.bytes_per_client), out.write_s[c]);
      sync.arrive_and_wait();
      if (errors[c].empty()) errors[c] = ReadFile(paths[c], o.block_bytes, out.read_s[c]);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& p : paths) std::filesystem::remove(p, ec);
  for (const auto& e : errors) {
    if (!e.empty()) return e;
  }
  return "";
}

double AggregateWriteBytesPerS(const StorageSample& s) {
  const double slowest = *std::max_element(s.write_s.begin(), s.write_s.end());
  return s.clients * s.bytes_per_client / slowest;
}

double AggregateReadBytesPerS(const StorageSample& s) {
  const double slowest = *std::max_element(s.read_s.begin(), s.read_s.end());
  return s.clients * s.bytes_per_client / slowest;
}

}  // namespace trainsim::calib
