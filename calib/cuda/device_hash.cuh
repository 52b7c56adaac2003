// Deterministic pseudo-random values in [-1, 1) from an element index and a
// seed, for filling GEMM operands on the device (one formula, so every fill
// of the measuring program draws the same values for the same seed).
#pragma once

#include <cstddef>

namespace trainsim::calib {

__device__ inline float HashUnit(size_t i, unsigned seed) {
  unsigned x = unsigned(i) * 2654435761u ^ (seed * 2246822519u + 0x9E3779B9u);
  x ^= x >> 15;
  x *= 2246822519u;
  x ^= x >> 13;
  x *= 3266489917u;
  x ^= x >> 16;
  return float(x) * (2.0f / 4294967296.0f) - 1.0f;
}

}  // namespace trainsim::calib
