// One Llama-style transformer layer, forward and backward, written once over
// an operator backend `Ops` (CPU: Eigen GEMMs and loops, calib/cpu_ops.h;
// GPU: cuBLAS and CUDA kernels, calib/cuda/). The sequence of operators is the
// one the workload model counts (models/workload.cc with tensor = pipeline = 1
// and `training.attention: unfused`): input RMSNorm, QKV GEMM, rotary, QK^T as
// batched GEMMs, scale-mask-softmax, attention over values, projection,
// residual, post-attention RMSNorm, fc1 (gate and up), SwiGLU, fc2, residual;
// the backward runs the data and weight gradient of every GEMM.
// Storage is float32, row-major, tokens-major ([micro_batch * seq, features]).
// Dependency-free C++17 so that the standalone CUDA program compiles it too.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainsim::calib {

// The shape of one layer step (what `trainsim calibrate` measures and
// `validate --profile` predicts).
struct LayerShape {
  int hidden = 0;
  int ffn_hidden = 0;  // SwiGLU inner size (fc1 has 2 * ffn_hidden outputs)
  int heads = 0;
  int kv_heads = 0;
  int seq_len = 0;
  int micro_batch = 1;

  int head_dim() const { return hidden / heads; }
  long tokens() const { return long(micro_batch) * seq_len; }
  int qkv_width() const { return (heads + 2 * kv_heads) * head_dim(); }
  bool Valid() const {
    return hidden > 0 && ffn_hidden > 0 && heads > 0 && kv_heads > 0 && seq_len > 0 && micro_batch > 0 &&
           hidden % heads == 0 && heads % kv_heads == 0 && head_dim() % 2 == 0;
  }
};

// Deterministic pseudo-random fill in [-scale, scale): the same values on
// every machine and backend (a 64-bit mix of seed and index).
inline void FillDeterministic(float* out, size_t n, uint64_t seed, float scale) {
  for (size_t i = 0; i < n; ++i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = double(z >> 11) / double(1ull << 53);  // [0, 1)
    out[i] = float((2 * u - 1) * scale);
  }
}

// Host copies of the layer's inputs: weights, norm gains, the input x and the
// gradient dy arriving from above. Backends upload them as they need.
struct LayerInputs {
  std::vector<float> w_qkv, w_o, w_1, w_2, g_1, g_2, x, dy;
};

inline LayerInputs MakeLayerInputs(const LayerShape& s, uint64_t seed = 1) {
  const size_t h = s.hidden, f = s.ffn_hidden, T = s.tokens(), qkv = s.qkv_width(), ad = size_t(s.heads) * s.head_dim();
  LayerInputs in;
  auto fill = [&](std::vector<float>& v, size_t n, uint64_t k, double fan_in) {
    v.resize(n);
    FillDeterministic(v.data(), n, seed * 101 + k, float(1.0 / std::sqrt(fan_in)));
  };
  fill(in.w_qkv, h * qkv, 1, double(h));
  fill(in.w_o, ad * h, 2, double(ad));
  fill(in.w_1, h * 2 * f, 3, double(h));
  fill(in.w_2, f * h, 4, double(f));
  in.g_1.assign(h, 1.0f);
  in.g_2.assign(h, 1.0f);
  fill(in.g_1, h, 5, 16.0);  // gains near 1: 1 + U(-1/4, 1/4)
  fill(in.g_2, h, 6, 16.0);
  for (auto& g : in.g_1) g += 1.0f;
  for (auto& g : in.g_2) g += 1.0f;
  fill(in.x, T * h, 7, 1.0);
  fill(in.dy, T * h, 8, 1.0);
  return in;
}

// The layer on a backend. `Ops` provides:
//   using Buffer = ...;  Buffer Alloc(size_t floats);  float* Ptr(Buffer&);
//   void Upload(float* dst, const std::vector<float>& src);
//   void Gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* A, int lda,
//             const float* B, int ldb, float beta, float* C, int ldc);   // row-major C = a op(A) op(B) + b C
//   void BatchedGemm(same, with std::vector<const float*> A, B and std::vector<float*> C);
//   RmsNormForward/Backward, RotaryForward/Backward, SoftmaxForward/Backward,
//   SwigluForward/Backward, Add, GroupReduce (see calib/cpu_ops.h for the contracts).
template <class Ops>
class LayerStep {
 public:
  using Buffer = typename Ops::Buffer;

  LayerStep(Ops& ops, const LayerShape& s, const LayerInputs& in) : ops_(ops), s_(s) {
    const size_t h = s.hidden, f = s.ffn_hidden, T = s.tokens(), qkv = s.qkv_width();
    const size_t ad = size_t(s.heads) * s.head_dim();
    const size_t scores = size_t(s.micro_batch) * s.heads * size_t(s.seq_len) * s.seq_len;
    const size_t per_head = size_t(s.micro_batch) * s.heads * s.seq_len * s.head_dim();
    auto alloc = [&](Buffer& b, size_t n) { b = ops_.Alloc(n); };
    alloc(w_qkv_, h * qkv); alloc(w_o_, ad * h); alloc(w_1_, h * 2 * f); alloc(w_2_, f * h);
    alloc(g_1_, h); alloc(g_2_, h); alloc(x_, T * h); alloc(dy_, T * h);
    alloc(xn1_, T * h); alloc(rstd1_, T); alloc(qkv_, T * qkv); alloc(p_, scores); alloc(o_, T * ad);
    alloc(a_, T * h); alloc(x1_, T * h); alloc(xn2_, T * h); alloc(rstd2_, T); alloc(u_, T * 2 * f);
    alloc(g_, T * f); alloc(m_, T * h); alloc(y_, T * h);
    alloc(dg_, T * f); alloc(du_, T * 2 * f); alloc(dxn_, T * h); alloc(dx1_, T * h); alloc(do_, T * ad);
    alloc(dp_, scores); alloc(dqkv_, T * qkv); alloc(dk_heads_, per_head); alloc(dv_heads_, per_head);
    alloc(dx_, T * h); alloc(dw_qkv_, h * qkv); alloc(dw_o_, ad * h); alloc(dw_1_, h * 2 * f);
    alloc(dw_2_, f * h); alloc(dg_1_, h); alloc(dg_2_, h);
    ops_.Upload(P(w_qkv_), in.w_qkv); ops_.Upload(P(w_o_), in.w_o); ops_.Upload(P(w_1_), in.w_1);
    ops_.Upload(P(w_2_), in.w_2); ops_.Upload(P(g_1_), in.g_1); ops_.Upload(P(g_2_), in.g_2);
    ops_.Upload(P(x_), in.x); ops_.Upload(P(dy_), in.dy);
  }

  void Forward() {
    const int T = int(s_.tokens()), h = s_.hidden, f = s_.ffn_hidden, qkv = s_.qkv_width();
    const int ad = s_.heads * s_.head_dim();
    ops_.RmsNormForward(P(x_), P(g_1_), P(xn1_), P(rstd1_), T, h);
    ops_.Gemm(false, false, T, qkv, h, 1, P(xn1_), h, P(w_qkv_), qkv, 0, P(qkv_), qkv);
    ops_.RotaryForward(P(qkv_), s_.micro_batch, s_.seq_len, s_.heads, s_.kv_heads, s_.head_dim());
    Attention(P(qkv_), P(p_), P(o_));
    ops_.Gemm(false, false, T, h, ad, 1, P(o_), ad, P(w_o_), h, 0, P(a_), h);
    ops_.Add(P(x_), P(a_), P(x1_), size_t(T) * h);
    ops_.RmsNormForward(P(x1_), P(g_2_), P(xn2_), P(rstd2_), T, h);
    ops_.Gemm(false, false, T, 2 * f, h, 1, P(xn2_), h, P(w_1_), 2 * f, 0, P(u_), 2 * f);
    ops_.SwigluForward(P(u_), P(g_), T, f);
    ops_.Gemm(false, false, T, h, f, 1, P(g_), f, P(w_2_), h, 0, P(m_), h);
    ops_.Add(P(x1_), P(m_), P(y_), size_t(T) * h);
  }

  // Needs Forward() first (uses its saved activations).
  void Backward() {
    const int T = int(s_.tokens()), h = s_.hidden, f = s_.ffn_hidden, qkv = s_.qkv_width();
    const int ad = s_.heads * s_.head_dim();
    // y = x1 + fc2(swiglu(fc1(norm2(x1)))): dy flows to x1 directly and through the MLP.
    ops_.Gemm(false, true, T, f, h, 1, P(dy_), h, P(w_2_), h, 0, P(dg_), f);       // fc2 dgrad
    ops_.Gemm(true, false, f, h, T, 1, P(g_), f, P(dy_), h, 0, P(dw_2_), h);       // fc2 wgrad
    ops_.SwigluBackward(P(u_), P(dg_), P(du_), T, f);
    ops_.Gemm(false, true, T, h, 2 * f, 1, P(du_), 2 * f, P(w_1_), 2 * f, 0, P(dxn_), h);  // fc1 dgrad
    ops_.Gemm(true, false, h, 2 * f, T, 1, P(xn2_), h, P(du_), 2 * f, 0, P(dw_1_), 2 * f);  // fc1 wgrad
    ops_.RmsNormBackward(P(dxn_), P(x1_), P(g_2_), P(rstd2_), P(dy_), P(dx1_), P(dg_2_), T, h);
    // x1 = x + proj(attention(qkv(norm1(x)))).
    ops_.Gemm(false, true, T, ad, h, 1, P(dx1_), h, P(w_o_), h, 0, P(do_), ad);     // proj dgrad
    ops_.Gemm(true, false, ad, h, T, 1, P(o_), ad, P(dx1_), h, 0, P(dw_o_), h);     // proj wgrad
    AttentionBackward();
    ops_.RotaryBackward(P(dqkv_), s_.micro_batch, s_.seq_len, s_.heads, s_.kv_heads, s_.head_dim());
    ops_.Gemm(false, true, T, h, qkv, 1, P(dqkv_), qkv, P(w_qkv_), qkv, 0, P(dxn_), h);  // qkv dgrad
    ops_.Gemm(true, false, h, qkv, T, 1, P(xn1_), h, P(dqkv_), qkv, 0, P(dw_qkv_), qkv);  // qkv wgrad
    ops_.RmsNormBackward(P(dxn_), P(x_), P(g_1_), P(rstd1_), P(dx1_), P(dx_), P(dg_1_), T, h);
  }

  // Results, for the numerical comparison of backends.
  Buffer& y() { return y_; }
  Buffer& dx() { return dx_; }
  Buffer& dw_qkv() { return dw_qkv_; }
  Buffer& dw_1() { return dw_1_; }
  Buffer& dg_1() { return dg_1_; }

  // The attention core alone (scores, softmax, values), forward and backward,
  // for the attention microbenchmark.
  void AttentionForwardOnly() { Attention(P(qkv_), P(p_), P(o_)); }
  void AttentionBackwardOnly() { AttentionBackward(); }

 private:
  float* P(Buffer& b) { return ops_.Ptr(b); }

  // Per (batch, head) pointers into qkv's row-major [tokens, qkv_width]
  // layout; query head hd reads key/value head hd / (heads / kv_heads) (GQA).
  struct HeadPtrs {
    std::vector<const float*> q, k, v;
    std::vector<float*> q_w, k_w, v_w;
  };
  HeadPtrs Heads(float* base) const {
    HeadPtrs p;
    const int d = s_.head_dim(), group = s_.heads / s_.kv_heads, ld = s_.qkv_width();
    for (int b = 0; b < s_.micro_batch; ++b) {
      for (int hd = 0; hd < s_.heads; ++hd) {
        float* row = base + size_t(b) * s_.seq_len * ld;
        p.q_w.push_back(row + hd * d);
        p.k_w.push_back(row + (s_.heads + hd / group) * d);
        p.v_w.push_back(row + (s_.heads + s_.kv_heads + hd / group) * d);
        p.q.push_back(p.q_w.back());
        p.k.push_back(p.k_w.back());
        p.v.push_back(p.v_w.back());
      }
    }
    return p;
  }
  std::vector<float*> Blocks(float* base, size_t stride) const {
    std::vector<float*> out;
    for (int i = 0; i < s_.micro_batch * s_.heads; ++i) out.push_back(base + i * stride);
    return out;
  }
  // Head hd of batch b inside a [tokens, heads * head_dim] buffer.
  std::vector<float*> HeadColumns(float* base) const {
    std::vector<float*> out;
    const int d = s_.head_dim(), ld = s_.heads * d;
    for (int b = 0; b < s_.micro_batch; ++b) {
      for (int hd = 0; hd < s_.heads; ++hd) out.push_back(base + size_t(b) * s_.seq_len * ld + hd * d);
    }
    return out;
  }
  static std::vector<const float*> Const(const std::vector<float*>& v) { return {v.begin(), v.end()}; }

  void Attention(float* qkv, float* p, float* o) {
    const int s = s_.seq_len, d = s_.head_dim(), ld = s_.qkv_width(), batch = s_.micro_batch * s_.heads;
    const HeadPtrs hp = Heads(qkv);
    const auto pb = Blocks(p, size_t(s) * s);
    // Unfused attention as Megatron runs it: full s x s scores, then mask.
    ops_.BatchedGemm(false, true, s, s, d, 1, hp.q, ld, hp.k, ld, 0, pb, s, batch);
    ops_.SoftmaxForward(p, size_t(batch), s, 1.0f / std::sqrt(float(d)));
    ops_.BatchedGemm(false, false, s, d, s, 1, Const(pb), s, hp.v, ld, 0, HeadColumns(o), s_.heads * d, batch);
  }

  void AttentionBackward() {
    const int s = s_.seq_len, d = s_.head_dim(), ld = s_.qkv_width(), batch = s_.micro_batch * s_.heads;
    const int ad = s_.heads * d;
    const HeadPtrs hp = Heads(P(qkv_));
    const HeadPtrs dp = Heads(P(dqkv_));
    const auto pb = Blocks(P(p_), size_t(s) * s);
    const auto dpb = Blocks(P(dp_), size_t(s) * s);
    const auto dkh = Blocks(P(dk_heads_), size_t(s) * d);
    const auto dvh = Blocks(P(dv_heads_), size_t(s) * d);
    const auto dob = Const(HeadColumns(P(do_)));
    // o = P v: dP = dO v^T, dv = P^T dO (per query head; summed per KV group below).
    ops_.BatchedGemm(false, true, s, s, d, 1, dob, ad, hp.v, ld, 0, dpb, s, batch);
    ops_.BatchedGemm(true, false, s, d, s, 1, Const(pb), s, dob, ad, 0, dvh, d, batch);
    ops_.SoftmaxBackward(P(p_), P(dp_), size_t(batch), s, 1.0f / std::sqrt(float(d)));
    // S = q k^T: dq = dS k, dk = dS^T q.
    ops_.BatchedGemm(false, false, s, d, s, 1, Const(dpb), s, hp.k, ld, 0, dp.q_w, ld, batch);
    ops_.BatchedGemm(true, false, s, d, s, 1, Const(dpb), s, hp.q, ld, 0, dkh, d, batch);
    ops_.GroupReduce(P(dk_heads_), P(dv_heads_), P(dqkv_), s_.micro_batch, s, s_.heads, s_.kv_heads, d);
  }

  Ops& ops_;
  LayerShape s_;
  Buffer w_qkv_, w_o_, w_1_, w_2_, g_1_, g_2_, x_, dy_;
  Buffer xn1_, rstd1_, qkv_, p_, o_, a_, x1_, xn2_, rstd2_, u_, g_, m_, y_;
  Buffer dg_, du_, dxn_, dx1_, do_, dp_, dqkv_, dk_heads_, dv_heads_, dx_;
  Buffer dw_qkv_, dw_o_, dw_1_, dw_2_, dg_1_, dg_2_;
};

}  // namespace trainsim::calib
