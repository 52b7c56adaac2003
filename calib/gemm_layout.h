// A sweep GEMM as the layer step runs it (header-only, shared by the CPU
// backend and the standalone CUDA measuring program): row-major op(A)[m,k] x
// op(B)[k,n], "nt" storing B transposed (a data gradient), "tn" A transposed
// (a weight gradient); batched GEMMs as consecutive matrices.
#pragma once

#include <string>
#include <vector>

namespace trainsim::calib {

struct GemmCall {
  bool ta = false, tb = false;
  int lda = 0, ldb = 0;
};

inline GemmCall GemmCallFor(long m, long n, long k, const std::string& layout) {
  GemmCall c;
  c.ta = layout == "tn";
  c.tb = layout == "nt";
  c.lda = c.ta ? int(m) : int(k);
  c.ldb = c.tb ? int(k) : int(n);
  return c;
}

// Pointers to the `batch` consecutive A, B and C matrices of a batched GEMM.
template <class T>
struct BatchPointers {
  std::vector<const T*> a, b;
  std::vector<T*> c;
  BatchPointers(const T* a0, const T* b0, T* c0, long m, long n, long k, long batch) {
    for (long i = 0; i < batch; ++i) {
      a.push_back(a0 + i * m * k);
      b.push_back(b0 + i * k * n);
      c.push_back(c0 + i * m * n);
    }
  }
};

}  // namespace trainsim::calib
