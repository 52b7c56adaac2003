// The CPU operator backend of calib/layer_step.h: Eigen GEMMs (one thread:
// Eigen is built without OpenMP here, so runs are deterministic) and plain
// loops for the memory-bound operators. Float32, row-major.
// Contracts of the operators (the CUDA backend implements the same):
//   RmsNormForward(x, g, y, rstd, T, h): y = x * rstd * g, rstd = 1/sqrt(mean(x^2) + 1e-5) per row.
//   RmsNormBackward(dy, x, g, rstd, residual, dx, dg, T, h): dx = residual + d(norm)/dx . dy; dg = sum_rows dy * x * rstd.
//   RotaryForward/Backward(qkv, b, s, heads, kv_heads, d): rotate (in place) the query and key
//     columns of [b*s, (heads + 2 kv_heads) d] by position (pairs 2i, 2i+1; base 10000); backward rotates back.
//   SoftmaxForward(p, blocks, s, scale): each s x s block in place: causal-masked softmax(scale * p).
//   SoftmaxBackward(p, dp, blocks, s, scale): dp in place becomes dS = scale * p * (dp - sum(dp * p)).
//   SwigluForward(u, g, T, f): g = silu(u[:, :f]) * u[:, f:]; SwigluBackward(u, dg, du, T, f).
//   Add(a, b, out, n): out = a + b.
//   GroupReduce(dk_heads, dv_heads, dqkv, b, s, heads, kv_heads, d): sums the per-query-head key and
//     value gradients ([b, heads, s, d]) of each KV group into dqkv's key and value columns.
#pragma once

#include <cstddef>
#include <vector>

namespace trainsim::calib {

class CpuOps {
 public:
  using Buffer = std::vector<float>;
  Buffer Alloc(size_t n) { return Buffer(n, 0.0f); }
  float* Ptr(Buffer& b) { return b.data(); }
  void Upload(float* dst, const std::vector<float>& src);

  void Gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
            float beta, float* C, int ldc);
  void BatchedGemm(bool ta, bool tb, int m, int n, int k, float alpha, const std::vector<const float*>& A, int lda,
                   const std::vector<const float*>& B, int ldb, float beta, const std::vector<float*>& C, int ldc,
                   int batch);
  void RmsNormForward(const float* x, const float* g, float* y, float* rstd, int T, int h);
  void RmsNormBackward(const float* dy, const float* x, const float* g, const float* rstd, const float* residual,
                       float* dx, float* dg, int T, int h);
  void RotaryForward(float* qkv, int b, int s, int heads, int kv_heads, int d) { Rotary(qkv, b, s, heads, kv_heads, d, 1.0f); }
  void RotaryBackward(float* qkv, int b, int s, int heads, int kv_heads, int d) { Rotary(qkv, b, s, heads, kv_heads, d, -1.0f); }
  void SoftmaxForward(float* p, size_t blocks, int s, float scale);
  void SoftmaxBackward(const float* p, float* dp, size_t blocks, int s, float scale);
  void SwigluForward(const float* u, float* g, int T, int f);
  void SwigluBackward(const float* u, const float* dg, float* du, int T, int f);
  void Add(const float* a, const float* b, float* out, size_t n);
  void GroupReduce(const float* dk_heads, const float* dv_heads, float* dqkv, int b, int s, int heads, int kv_heads,
                   int d);

 private:
  void Rotary(float* qkv, int b, int s, int heads, int kv_heads, int d, float sign);
};

}  // namespace trainsim::calib
