// The memory-bound operators of calib/layer_step.h on the host, in plain
// C++ (no Eigen, no CUDA): the CPU backend (calib/cpu_ops.h) runs them, and the
// standalone CUDA program uses them, with NaiveGemm, as its reference for the
// numerical check of the GPU layer step. Contracts: see calib/cpu_ops.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace trainsim::calib::host {

constexpr float kRmsEps = 1e-5f;

// Row-major C = alpha op(A) op(B) + beta C, in double accumulation (reference only: slow).
inline void NaiveGemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* A, int lda, const float* B,
                      int ldb, float beta, float* C, int ldc) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) {
        const float a = ta ? A[size_t(p) * lda + i] : A[size_t(i) * lda + p];
        const float b = tb ? B[size_t(j) * ldb + p] : B[size_t(p) * ldb + j];
        acc += double(a) * b;
      }
      float& c = C[size_t(i) * ldc + j];
      c = float(alpha * acc + (beta == 0.0f ? 0.0 : double(beta) * c));
    }
  }
}

inline void RmsNormForward(const float* x, const float* g, float* y, float* rstd, int T, int h) {
  for (int t = 0; t < T; ++t) {
    const float* xr = x + size_t(t) * h;
    float* yr = y + size_t(t) * h;
    float ss = 0;
    for (int i = 0; i < h; ++i) ss += xr[i] * xr[i];
    const float r = 1.0f / std::sqrt(ss / h + kRmsEps);
    rstd[t] = r;
    for (int i = 0; i < h; ++i) yr[i] = xr[i] * r * g[i];
  }
}

inline void RmsNormBackward(const float* dy, const float* x, const float* g, const float* rstd, const float* residual,
                             float* dx, float* dg, int T, int h) {
  std::fill(dg, dg + h, 0.0f);
  for (int t = 0; t < T; ++t) {
    const float* dyr = dy + size_t(t) * h;
    const float* xr = x + size_t(t) * h;
    const float* rr = residual + size_t(t) * h;
    float* dxr = dx + size_t(t) * h;
    const float r = rstd[t];
    float dot = 0;  // mean over the row of (dy * g) * xhat
    for (int i = 0; i < h; ++i) {
      const float xhat = xr[i] * r;
      dot += dyr[i] * g[i] * xhat;
      dg[i] += dyr[i] * xhat;
    }
    dot /= h;
    for (int i = 0; i < h; ++i) dxr[i] = rr[i] + r * (dyr[i] * g[i] - xr[i] * r * dot);
  }
}

inline void Rotary(float* qkv, int b, int s, int heads, int kv_heads, int d, float sign) {
  const int ld = (heads + 2 * kv_heads) * d;
  const int half = d / 2;
  std::vector<float> inv_freq(half);
  for (int i = 0; i < half; ++i) inv_freq[i] = std::pow(10000.0f, -2.0f * i / d);
  std::vector<float> cs(half), sn(half);
  for (int bi = 0; bi < b; ++bi) {
    for (int pos = 0; pos < s; ++pos) {
      for (int i = 0; i < half; ++i) {
        const float angle = pos * inv_freq[i];
        cs[i] = std::cos(angle);
        sn[i] = sign * std::sin(angle);
      }
      float* row = qkv + (size_t(bi) * s + pos) * ld;
      for (int hd = 0; hd < heads + kv_heads; ++hd) {  // query heads, then key heads
        float* v = row + hd * d;
        for (int i = 0; i < half; ++i) {
          const float x0 = v[2 * i], x1 = v[2 * i + 1];
          v[2 * i] = x0 * cs[i] - x1 * sn[i];
          v[2 * i + 1] = x0 * sn[i] + x1 * cs[i];
        }
      }
    }
  }
}

inline void SoftmaxForward(float* p, size_t blocks, int s, float scale) {
  for (size_t blk = 0; blk < blocks; ++blk) {
    for (int i = 0; i < s; ++i) {
      float* row = p + (blk * s + i) * size_t(s);
      float mx = -std::numeric_limits<float>::infinity();
      for (int j = 0; j <= i; ++j) mx = std::max(mx, row[j] * scale);
      float sum = 0;
      for (int j = 0; j <= i; ++j) {
        row[j] = std::exp(row[j] * scale - mx);
        sum += row[j];
      }
      const float inv = 1.0f / sum;
      for (int j = 0; j <= i; ++j) row[j] *= inv;
      for (int j = i + 1; j < s; ++j) row[j] = 0.0f;  // causal mask
    }
  }
}

inline void SoftmaxBackward(const float* p, float* dp, size_t blocks, int s, float scale) {
  for (size_t blk = 0; blk < blocks; ++blk) {
    for (int i = 0; i < s; ++i) {
      const float* pr = p + (blk * s + i) * size_t(s);
      float* dr = dp + (blk * s + i) * size_t(s);
      float dot = 0;
      for (int j = 0; j < s; ++j) dot += pr[j] * dr[j];
      for (int j = 0; j < s; ++j) dr[j] = scale * pr[j] * (dr[j] - dot);
    }
  }
}

inline void SwigluForward(const float* u, float* g, int T, int f) {
  for (int t = 0; t < T; ++t) {
    const float* ur = u + size_t(t) * 2 * f;
    float* gr = g + size_t(t) * f;
    for (int i = 0; i < f; ++i) {
      const float a = ur[i];
      gr[i] = a / (1.0f + std::exp(-a)) * ur[f + i];
    }
  }
}

inline void SwigluBackward(const float* u, const float* dg, float* du, int T, int f) {
  for (int t = 0; t < T; ++t) {
    const float* ur = u + size_t(t) * 2 * f;
    const float* dgr = dg + size_t(t) * f;
    float* dur = du + size_t(t) * 2 * f;
    for (int i = 0; i < f; ++i) {
      const float a = ur[i], up = ur[f + i];
      const float sig = 1.0f / (1.0f + std::exp(-a));
      const float silu = a * sig;
      dur[i] = dgr[i] * up * sig * (1.0f + a * (1.0f - sig));
      dur[f + i] = dgr[i] * silu;
    }
  }
}

inline void Add(const float* a, const float* b, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

inline void GroupReduce(const float* dk_heads, const float* dv_heads, float* dqkv, int b, int s, int heads,
                         int kv_heads, int d) {
  const int ld = (heads + 2 * kv_heads) * d, group = heads / kv_heads;
  for (int bi = 0; bi < b; ++bi) {
    for (int pos = 0; pos < s; ++pos) {
      float* row = dqkv + (size_t(bi) * s + pos) * ld;
      for (int kh = 0; kh < kv_heads; ++kh) {
        float* dk = row + (heads + kh) * d;
        float* dv = row + (heads + kv_heads + kh) * d;
        std::fill(dk, dk + d, 0.0f);
        std::fill(dv, dv + d, 0.0f);
        for (int g = 0; g < group; ++g) {
          const size_t off = ((size_t(bi) * heads + kh * group + g) * s + pos) * d;
          for (int i = 0; i < d; ++i) {
            dk[i] += dk_heads[off + i];
            dv[i] += dv_heads[off + i];
          }
        }
      }
    }
  }
}

// The whole operator backend on the host with the naive GEMM: the reference
// the GPU layer step is checked against (and the Eigen backend, in its test).
class ReferenceOps {
 public:
  using Buffer = std::vector<float>;
  Buffer Alloc(size_t n) { return Buffer(n, 0.0f); }
  float* Ptr(Buffer& b) { return b.data(); }
  void Upload(float* dst, const std::vector<float>& src) { std::copy(src.begin(), src.end(), dst); }
  void Gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
            float beta, float* C, int ldc) {
    NaiveGemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  }
  void BatchedGemm(bool ta, bool tb, int m, int n, int k, float alpha, const std::vector<const float*>& A, int lda,
                   const std::vector<const float*>& B, int ldb, float beta, const std::vector<float*>& C, int ldc,
                   int batch) {
    for (int i = 0; i < batch; ++i) NaiveGemm(ta, tb, m, n, k, alpha, A[i], lda, B[i], ldb, beta, C[i], ldc);
  }
  void RmsNormForward(const float* x, const float* g, float* y, float* rstd, int T, int h) {
    host::RmsNormForward(x, g, y, rstd, T, h);
  }
  void RmsNormBackward(const float* dy, const float* x, const float* g, const float* rstd, const float* residual,
                       float* dx, float* dg, int T, int h) {
    host::RmsNormBackward(dy, x, g, rstd, residual, dx, dg, T, h);
  }
  void RotaryForward(float* qkv, int b, int s, int heads, int kv_heads, int d) { Rotary(qkv, b, s, heads, kv_heads, d, 1.0f); }
  void RotaryBackward(float* qkv, int b, int s, int heads, int kv_heads, int d) { Rotary(qkv, b, s, heads, kv_heads, d, -1.0f); }
  void SoftmaxForward(float* p, size_t blocks, int s, float scale) { host::SoftmaxForward(p, blocks, s, scale); }
  void SoftmaxBackward(const float* p, float* dp, size_t blocks, int s, float scale) {
    host::SoftmaxBackward(p, dp, blocks, s, scale);
  }
  void SwigluForward(const float* u, float* g, int T, int f) { host::SwigluForward(u, g, T, f); }
  void SwigluBackward(const float* u, const float* dg, float* du, int T, int f) { host::SwigluBackward(u, dg, du, T, f); }
  void Add(const float* a, const float* b, float* out, size_t n) { host::Add(a, b, out, n); }
  void GroupReduce(const float* dk, const float* dv, float* dqkv, int b, int s, int heads, int kv_heads, int d) {
    host::GroupReduce(dk, dv, dqkv, b, s, heads, kv_heads, d);
  }
};

// max |a - b| / max |b|: the relative error of a result against its reference.
inline double MaxRelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(b[i])));
  }
  if (a.size() != b.size()) return 1e30;
  return scale > 0 ? diff / scale : diff;
}

}  // namespace trainsim::calib::host
