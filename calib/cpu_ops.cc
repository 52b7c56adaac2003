#include "calib/cpu_ops.h"

#include <Eigen/Core>
#include <cstring>

#include "calib/host_kernels.h"

namespace trainsim::calib {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMat, 0, Eigen::OuterStride<>>;
using MutMap = Eigen::Map<RowMat, 0, Eigen::OuterStride<>>;

}  // namespace

void CpuOps::Upload(float* dst, const std::vector<float>& src) { std::memcpy(dst, src.data(), src.size() * sizeof(float)); }

void CpuOps::Gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
                  float beta, float* C, int ldc) {
  // op(A) is m x k: stored k x m when transposed; likewise op(B) is k x n.
  ConstMap a(A, ta ? k : m, ta ? m : k, Eigen::OuterStride<>(lda));
  ConstMap b(B, tb ? n : k, tb ? k : n, Eigen::OuterStride<>(ldb));
  MutMap c(C, m, n, Eigen::OuterStride<>(ldc));
  if (beta == 0.0f) c.setZero();
  else if (beta != 1.0f) c *= beta;
  if (!ta && !tb) c.noalias() += alpha * a * b;
  else if (ta && !tb) c.noalias() += alpha * a.transpose() * b;
  else if (!ta && tb) c.noalias() += alpha * a * b.transpose();
  else c.noalias() += alpha * a.transpose() * b.transpose();
}

void CpuOps::BatchedGemm(bool ta, bool tb, int m, int n, int k, float alpha, const std::vector<const float*>& A, int lda,
                         const std::vector<const float*>& B, int ldb, float beta, const std::vector<float*>& C, int ldc,
                         int batch) {
  for (int i = 0; i < batch; ++i) Gemm(ta, tb, m, n, k, alpha, A[i], lda, B[i], ldb, beta, C[i], ldc);
}

void CpuOps::RmsNormForward(const float* x, const float* g, float* y, float* rstd, int T, int h) {
  host::RmsNormForward(x, g, y, rstd, T, h);
}
void CpuOps::RmsNormBackward(const float* dy, const float* x, const float* g, const float* rstd, const float* residual,
                             float* dx, float* dg, int T, int h) {
  host::RmsNormBackward(dy, x, g, rstd, residual, dx, dg, T, h);
}
void CpuOps::Rotary(float* qkv, int b, int s, int heads, int kv_heads, int d, float sign) {
  host::Rotary(qkv, b, s, heads, kv_heads, d, sign);
}
void CpuOps::SoftmaxForward(float* p, size_t blocks, int s, float scale) { host::SoftmaxForward(p, blocks, s, scale); }
void CpuOps::SoftmaxBackward(const float* p, float* dp, size_t blocks, int s, float scale) {
  host::SoftmaxBackward(p, dp, blocks, s, scale);
}
void CpuOps::SwigluForward(const float* u, float* g, int T, int f) { host::SwigluForward(u, g, T, f); }
void CpuOps::SwigluBackward(const float* u, const float* dg, float* du, int T, int f) { host::SwigluBackward(u, dg, du, T, f); }
void CpuOps::Add(const float* a, const float* b, float* out, size_t n) { host::Add(a, b, out, n); }
void CpuOps::GroupReduce(const float* dk_heads, const float* dv_heads, float* dqkv, int b, int s, int heads, int kv_heads,
                         int d) {
  host::GroupReduce(dk_heads, dv_heads, dqkv, b, s, heads, kv_heads, d);
}

}  // namespace trainsim::calib
