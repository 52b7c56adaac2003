// NCCL collectives over message sizes: all-reduce, all-gather,
// reduce-scatter, send/recv between rank pairs and all-to-all. Either one
// process drives every visible GPU (ncclCommInitAll: the intra-node case), or
// MPI launches one rank per GPU (ncclCommInitRank with the id broadcast over
// MPI; scope inter-node when the ranks span several hosts). Built only when
// NCCL (and, for the second mode, MPI) is found.
#pragma once

#include <string>
#include <vector>

namespace trainsim::calib {

struct NcclSample {
  std::string op, scope;
  int ranks = 0;
  double bytes = 0, seconds = 0;
};

// Returns "" or why the collectives could not run. With MPI, every rank calls
// it; only rank 0's `out` is filled. `is_root` tells the caller whether it is
// the rank that writes the measurements file.
std::string RunNcclBenchmarks(const std::vector<double>& sizes_bytes, bool use_mpi, std::vector<NcclSample>& out,
                              bool& is_root);

}  // namespace trainsim::calib
