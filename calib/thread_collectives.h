// Collectives between threads of one process, the CPU twin of NCCL inside a
// node: all-reduce (reduce-scatter then all-gather), all-gather,
// reduce-scatter, send/recv between rank pairs and all-to-all, each rank
// summing or copying its chunk from the shared buffers of the others. Timed
// from the first rank's start to the last rank's finish (best of a few
// repetitions per size).
#pragma once

#include <vector>

#include "calib/measurements.h"

namespace trainsim::calib {

// Measures every collective at every size (bytes per rank, as nccl-tests
// counts "size"); scope "intra-node". Sizes are rounded to whole floats per rank chunk.
std::vector<CollectiveSample> RunThreadCollectives(int ranks, const std::vector<double>& sizes_bytes, int repetitions);

// Alpha-beta fit of one collective's samples: t = alpha + bytes / bandwidth,
// least squares on relative error (Eigen). False when fewer than two sizes.
struct AlphaBeta {
  double alpha_s = 0;
  double bytes_per_s = 0;
};
bool FitAlphaBeta(const std::vector<CollectiveSample>& samples, AlphaBeta& out);

}  // namespace trainsim::calib
