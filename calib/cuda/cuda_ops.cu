#include "calib/cuda/cuda_ops.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <stdexcept>

#include "calib/cuda/device_hash.cuh"

namespace trainsim::calib {
namespace {

constexpr int kThreads = 256;
constexpr float kRmsEps = 1e-5f;

unsigned Blocks(size_t n) { return unsigned((n + kThreads - 1) / kThreads); }

// Sum over the block (blockDim.x == kThreads); every thread gets the result.
__device__ float BlockSum(float v) {
  __shared__ float part[kThreads / 32];
  __shared__ float total;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < kThreads / 32; ++i) t += part[i];
    total = t;
  }
  __syncthreads();
  const float r = total;
  __syncthreads();  // part/total are reused by the next call
  return r;
}

__device__ float BlockMax(float v) {
  __shared__ float part[kThreads / 32];
  __shared__ float total;
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = part[0];
    for (int i = 1; i < kThreads / 32; ++i) t = fmaxf(t, part[i]);
    total = t;
  }
  __syncthreads();
  const float r = total;
  __syncthreads();
  return r;
}

__global__ void RmsNormFwdKernel(const float* x, const float* g, float* y, float* rstd, int h) {
  const size_t row = blockIdx.x;
  const float* xr = x + row * h;
  float ss = 0;
  for (int i = threadIdx.x; i < h; i += kThreads) ss += xr[i] * xr[i];
  const float r = rsqrtf(BlockSum(ss) / h + kRmsEps);
  if (threadIdx.x == 0) rstd[row] = r;
  for (int i = threadIdx.x; i < h; i += kThreads) y[row * h + i] = xr[i] * r * g[i];
}

__global__ void RmsNormBwdKernel(const float* dy, const float* x, const float* g, const float* rstd,
                                 const float* residual, float* dx, float* dg, int h) {
  const size_t row = blockIdx.x;
  const float r = rstd[row];
  float dot = 0;
  for (int i = threadIdx.x; i < h; i += kThreads) {
    const float xhat = x[row * h + i] * r;
    dot += dy[row * h + i] * g[i] * xhat;
    atomicAdd(&dg[i], dy[row * h + i] * xhat);
  }
  dot = BlockSum(dot) / h;
  for (int i = threadIdx.x; i < h; i += kThreads) {
    const size_t j = row * h + i;
    dx[j] = residual[j] + r * (dy[j] * g[i] - x[j] * r * dot);
  }
}

__global__ void RotaryKernel(float* qkv, int s, int heads_rot, int ld, int d, float sign, size_t total) {
  const size_t idx = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const int half = d / 2;
  const int i = int(idx % half);
  const size_t rest = idx / half;
  const int hd = int(rest % heads_rot);
  const size_t token = rest / heads_rot;
  const int pos = int(token % s);
  const float angle = pos * powf(10000.0f, -2.0f * i / d);
  const float c = cosf(angle), sn = sign * sinf(angle);
  float* v = qkv + token * ld + size_t(hd) * d;
  const float x0 = v[2 * i], x1 = v[2 * i + 1];
  v[2 * i] = x0 * c - x1 * sn;
  v[2 * i + 1] = x0 * sn + x1 * c;
}

__global__ void SoftmaxFwdKernel(float* p, int s, float scale) {
  const size_t row = blockIdx.x;
  const int i = int(row % s);  // query position: keys 0..i are visible
  float* r = p + row * s;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j <= i; j += kThreads) mx = fmaxf(mx, r[j] * scale);
  mx = BlockMax(mx);
  float sum = 0;
  for (int j = threadIdx.x; j <= i; j += kThreads) {
    const float e = __expf(r[j] * scale - mx);
    r[j] = e;
    sum += e;
  }
  const float inv = 1.0f / BlockSum(sum);
  for (int j = threadIdx.x; j < s; j += kThreads) r[j] = j <= i ? r[j] * inv : 0.0f;
}

__global__ void SoftmaxBwdKernel(const float* p, float* dp, int s, float scale) {
  const size_t row = blockIdx.x;
  const float* pr = p + row * s;
  float* dr = dp + row * s;
  float dot = 0;
  for (int j = threadIdx.x; j < s; j += kThreads) dot += pr[j] * dr[j];
  dot = BlockSum(dot);
  for (int j = threadIdx.x; j < s; j += kThreads) dr[j] = scale * pr[j] * (dr[j] - dot);
}

__global__ void SwigluFwdKernel(const float* u, float* g, int f, size_t total) {
  const size_t idx = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const size_t t = idx / f, i = idx % f;
  const float a = u[t * 2 * f + i];
  g[idx] = a / (1.0f + __expf(-a)) * u[t * 2 * f + f + i];
}

__global__ void SwigluBwdKernel(const float* u, const float* dg, float* du, int f, size_t total) {
  const size_t idx = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const size_t t = idx / f, i = idx % f;
  const float a = u[t * 2 * f + i], up = u[t * 2 * f + f + i];
  const float sig = 1.0f / (1.0f + __expf(-a));
  du[t * 2 * f + i] = dg[idx] * up * sig * (1.0f + a * (1.0f - sig));
  du[t * 2 * f + f + i] = dg[idx] * a * sig;
}

__global__ void AddKernel(const float* a, const float* b, float* out, size_t n) {
  const size_t idx = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx < n) out[idx] = a[idx] + b[idx];
}

__global__ void GroupReduceKernel(const float* dk, const float* dv, float* dqkv, int s, int heads, int kv_heads, int d,
                                  size_t total) {
  const size_t idx = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const int i = int(idx % d);
  const size_t rest = idx / d;
  const int kh = int(rest % kv_heads);
  const size_t token = rest / kv_heads;  // b * s + pos
  const size_t bi = token / s, pos = token % s;
  const int group = heads / kv_heads, ld = (heads + 2 * kv_heads) * d;
  float sk = 0, sv = 0;
  for (int g = 0; g < group; ++g) {
    const size_t off = ((bi * heads + size_t(kh) * group + g) * s + pos) * d + i;
    sk += dk[off];
    sv += dv[off];
  }
  dqkv[token * ld + size_t(heads + kh) * d + i] = sk;
  dqkv[token * ld + size_t(heads + kv_heads + kh) * d + i] = sv;
}

__global__ void FillKernel(float* p, size_t n, unsigned seed) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = HashUnit(i, seed);
}

__global__ void FillBf16Kernel(__nv_bfloat16* p, size_t n, unsigned seed) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = __float2bfloat16(HashUnit(i, seed));
}

}  // namespace

void FillRandom(float* p, size_t n, unsigned seed, cudaStream_t stream) {
  FillKernel<<<Blocks(n), kThreads, 0, stream>>>(p, n, seed);
}

void FillRandomBf16(void* p, size_t n, unsigned seed, cudaStream_t stream) {
  FillBf16Kernel<<<Blocks(n), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(p), n, seed);
}

void CudaCheck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

void CublasCheck(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(int(s)));
}

DeviceBuffer::DeviceBuffer(size_t floats) : n_(floats) {
  CudaCheck(cudaMalloc(&p_, std::max<size_t>(1, floats) * sizeof(float)), "cudaMalloc");
  CudaCheck(cudaMemset(p_, 0, std::max<size_t>(1, floats) * sizeof(float)), "cudaMemset");
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFree(p_);
    p_ = o.p_;
    n_ = o.n_;
    o.p_ = nullptr;
    o.n_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (p_) cudaFree(p_);
}

std::vector<float> DeviceBuffer::ToHost() const {
  std::vector<float> out(n_);
  CudaCheck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  CudaCheck(cudaMemcpy(out.data(), p_, n_ * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  return out;
}

CudaOps::CudaOps(GemmMath math) : math_(math) {
  CudaCheck(cudaStreamCreate(&stream_), "cudaStreamCreate");
  CublasCheck(cublasCreate(&handle_), "cublasCreate");
  CublasCheck(cublasSetStream(handle_, stream_), "cublasSetStream");
}

CudaOps::~CudaOps() {
  for (auto h : side_handles_) cublasDestroy(h);
  for (auto s : side_streams_) cudaStreamDestroy(s);
  for (auto e : side_done_) cudaEventDestroy(e);
  if (fork_) cudaEventDestroy(fork_);
  for (auto& [k, p] : pointer_cache_) cudaFree(p);
  if (handle_) cublasDestroy(handle_);
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaOps::Upload(float* dst, const std::vector<float>& src) {
  CudaCheck(cudaMemcpy(dst, src.data(), src.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}

namespace {
cublasComputeType_t Compute(GemmMath m) {
  return m == GemmMath::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}
}  // namespace

void CudaOps::Gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
                   float beta, float* C, int ldc) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  CublasCheck(cublasGemmEx(handle_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, B,
                           CUDA_R_32F, ldb, A, CUDA_R_32F, lda, &beta, C, CUDA_R_32F, ldc, Compute(math_),
                           CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
}

void** CudaOps::DevicePointers(const std::vector<const void*>& host) {
  auto it = pointer_cache_.find(host);
  if (it != pointer_cache_.end()) return it->second;
  void** dev = nullptr;
  CudaCheck(cudaMalloc(&dev, host.size() * sizeof(void*)), "cudaMalloc pointers");
  CudaCheck(cudaMemcpy(dev, host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice), "cudaMemcpy pointers");
  pointer_cache_[host] = dev;
  return dev;
}

void CudaOps::BatchedGemm(bool ta, bool tb, int m, int n, int k, float alpha, const std::vector<const float*>& A,
                          int lda, const std::vector<const float*>& B, int ldb, float beta,
                          const std::vector<float*>& C, int ldc, int batch) {
  void** a = DevicePointers({A.begin(), A.end()});
  void** b = DevicePointers({B.begin(), B.end()});
  void** c = DevicePointers({C.begin(), C.end()});
  CublasCheck(cublasGemmBatchedEx(handle_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                                  &alpha, (const void* const*)b, CUDA_R_32F, ldb, (const void* const*)a, CUDA_R_32F,
                                  lda, &beta, c, CUDA_R_32F, ldc, batch, Compute(math_), CUBLAS_GEMM_DEFAULT),
              "cublasGemmBatchedEx");
}

void CudaOps::GemmBf16(bool ta, bool tb, int m, int n, int k, const void* A, const void* B, void* C, int batch) {
  const float alpha = 1, beta = 0;
  // As Gemm: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  const int lda = ta ? m : k, ldb = tb ? k : n;
  CublasCheck(cublasGemmStridedBatchedEx(handle_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                                         &alpha, B, CUDA_R_16BF, ldb, (long long)k * n, A, CUDA_R_16BF, lda,
                                         (long long)m * k, &beta, C, CUDA_R_16BF, n, (long long)m * n, batch,
                                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "cublasGemmStridedBatchedEx bf16");
}

void CudaOps::GroupedGemmBf16(bool ta, bool tb, int m, int n, int k, const void* A, const void* B, void* C, int experts,
                              int streams) {
  if (!fork_) CudaCheck(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "cudaEventCreate");
  while (int(side_streams_.size()) < streams) {
    cudaStream_t s = nullptr;
    cublasHandle_t h = nullptr;
    cudaEvent_t e = nullptr;
    // As TE makes its compute streams: non-blocking, priority -1 (util/multi_stream.cpp).
    CudaCheck(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -1), "cudaStreamCreateWithPriority");
    CublasCheck(cublasCreate(&h), "cublasCreate");
    CublasCheck(cublasSetStream(h, s), "cublasSetStream");
    CudaCheck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    side_streams_.push_back(s);
    side_handles_.push_back(h);
    side_done_.push_back(e);
  }
  const int used = std::min(streams, experts);
  CudaCheck(cudaEventRecord(fork_, stream_), "cudaEventRecord");
  for (int i = 0; i < used; ++i) CudaCheck(cudaStreamWaitEvent(side_streams_[size_t(i)], fork_, 0), "cudaStreamWaitEvent");
  const float alpha = 1, beta = 0;
  const int lda = ta ? m : k, ldb = tb ? k : n;
  constexpr size_t kBf16Bytes = 2;
  for (int e = 0; e < experts; ++e) {
    const char* a = static_cast<const char*>(A) + size_t(e) * size_t(m) * size_t(k) * kBf16Bytes;
    const char* b = static_cast<const char*>(B) + size_t(e) * size_t(k) * size_t(n) * kBf16Bytes;
    char* c = static_cast<char*>(C) + size_t(e) * size_t(m) * size_t(n) * kBf16Bytes;
    CublasCheck(cublasGemmEx(side_handles_[size_t(e % used)], tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                             &alpha, b, CUDA_R_16BF, ldb, a, CUDA_R_16BF, lda, &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx bf16 (grouped)");
  }
  for (int i = 0; i < used; ++i) {
    CudaCheck(cudaEventRecord(side_done_[size_t(i)], side_streams_[size_t(i)]), "cudaEventRecord");
    CudaCheck(cudaStreamWaitEvent(stream_, side_done_[size_t(i)], 0), "cudaStreamWaitEvent");
  }
}

void CudaOps::RmsNormForward(const float* x, const float* g, float* y, float* rstd, int T, int h) {
  RmsNormFwdKernel<<<T, kThreads, 0, stream_>>>(x, g, y, rstd, h);
}

void CudaOps::RmsNormBackward(const float* dy, const float* x, const float* g, const float* rstd,
                              const float* residual, float* dx, float* dg, int T, int h) {
  CudaCheck(cudaMemsetAsync(dg, 0, size_t(h) * sizeof(float), stream_), "cudaMemsetAsync");
  RmsNormBwdKernel<<<T, kThreads, 0, stream_>>>(dy, x, g, rstd, residual, dx, dg, h);
}

void CudaOps::Rotary(float* qkv, int b, int s, int heads, int kv_heads, int d, float sign) {
  const size_t total = size_t(b) * s * (heads + kv_heads) * (d / 2);
  RotaryKernel<<<Blocks(total), kThreads, 0, stream_>>>(qkv, s, heads + kv_heads, (heads + 2 * kv_heads) * d, d, sign,
                                                        total);
}

void CudaOps::SoftmaxForward(float* p, size_t blocks, int s, float scale) {
  SoftmaxFwdKernel<<<unsigned(blocks * s), kThreads, 0, stream_>>>(p, s, scale);
}

void CudaOps::SoftmaxBackward(const float* p, float* dp, size_t blocks, int s, float scale) {
  SoftmaxBwdKernel<<<unsigned(blocks * s), kThreads, 0, stream_>>>(p, dp, s, scale);
}

void CudaOps::SwigluForward(const float* u, float* g, int T, int f) {
  const size_t total = size_t(T) * f;
  SwigluFwdKernel<<<Blocks(total), kThreads, 0, stream_>>>(u, g, f, total);
}

void CudaOps::SwigluBackward(const float* u, const float* dg, float* du, int T, int f) {
  const size_t total = size_t(T) * f;
  SwigluBwdKernel<<<Blocks(total), kThreads, 0, stream_>>>(u, dg, du, f, total);
}

void CudaOps::Add(const float* a, const float* b, float* out, size_t n) {
  AddKernel<<<Blocks(n), kThreads, 0, stream_>>>(a, b, out, n);
}

void CudaOps::GroupReduce(const float* dk, const float* dv, float* dqkv, int b, int s, int heads, int kv_heads, int d) {
  const size_t total = size_t(b) * s * kv_heads * d;
  GroupReduceKernel<<<Blocks(total), kThreads, 0, stream_>>>(dk, dv, dqkv, s, heads, kv_heads, d, total);
}

}  // namespace trainsim::calib
