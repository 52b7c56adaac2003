// Storage benchmark: several clients (threads) each write one checkpoint-sized
// file sequentially (fsync'd before the clock stops), then read it back after
// asking the kernel to drop it from the page cache. Reported per client; the
// aggregate is total bytes over the slowest client's time. Runs on the host
// for both backends (a GPU node's checkpoint path is a host path).
#pragma once

#include <string>

#include "calib/measurements.h"

namespace trainsim::calib {

struct StorageOptions {
  std::string dir;  // must exist and be writable; files are removed afterwards
  int clients = 1;
  double bytes_per_client = 64.0 * 1024 * 1024;
  size_t block_bytes = 4 << 20;
};

// Fills `out`; returns "" or a one-line error (naming the path).
std::string RunStorageBenchmark(const StorageOptions& o, StorageSample& out);

// Aggregate throughputs of a sample: total bytes / slowest client.
double AggregateWriteBytesPerS(const StorageSample& s);
double AggregateReadBytesPerS(const StorageSample& s);

}  // namespace trainsim::calib
