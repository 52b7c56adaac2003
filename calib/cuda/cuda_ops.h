// The GPU operator backend of calib/layer_step.h: cuBLAS for the GEMMs
// (row-major through the transposed column-major call), CUDA kernels for the
// memory-bound operators with the contracts of calib/cpu_ops.h. Float32
// storage; the GEMM math mode is fp32 (exact, for the numerical check) or
// tf32 (tensor cores, for timing). All work goes to one stream.
// Only the CUDA toolkit is needed (no Eigen, SimGrid or yaml-cpp).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace trainsim::calib {

// Throws std::runtime_error with the call and the CUDA/cuBLAS message.
void CudaCheck(cudaError_t e, const char* what);
void CublasCheck(cublasStatus_t s, const char* what);

// Device memory that frees itself.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t floats);
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; o.n_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  float* data() { return p_; }
  size_t size() const { return n_; }
  std::vector<float> ToHost() const;

 private:
  float* p_ = nullptr;
  size_t n_ = 0;
};

// Deterministic values in [-1, 1) on the device (GEMM timing on all-zero data
// would flatter the tensor cores' power-limited clocks).
void FillRandom(float* p, size_t n, unsigned seed, cudaStream_t stream);
void FillRandomBf16(void* p, size_t n, unsigned seed, cudaStream_t stream);

enum class GemmMath { kFp32, kTf32, kBf16 };

class CudaOps {
 public:
  using Buffer = DeviceBuffer;
  explicit CudaOps(GemmMath math = GemmMath::kTf32);
  ~CudaOps();
  CudaOps(const CudaOps&) = delete;
  CudaOps& operator=(const CudaOps&) = delete;

  Buffer Alloc(size_t n) { return Buffer(n); }
  float* Ptr(Buffer& b) { return b.data(); }
  void Upload(float* dst, const std::vector<float>& src);
  cudaStream_t stream() const { return stream_; }
  void SetMath(GemmMath m) { math_ = m; }

  void Gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
            float beta, float* C, int ldc);
  void BatchedGemm(bool ta, bool tb, int m, int n, int k, float alpha, const std::vector<const float*>& A, int lda,
                   const std::vector<const float*>& B, int ldb, float beta, const std::vector<float*>& C, int ldc,
                   int batch);
  // bf16 GEMM (inputs and output bf16, fp32 accumulation) for the sweep: row-major
  // C[m,n] = op(A) op(B) with A, B stored transposed where ta, tb say (the
  // plan's layouts), `batch` of them, each operand contiguous per batch entry;
  // A, B, C are bf16 device arrays.
  void GemmBf16(bool ta, bool tb, int m, int n, int k, const void* A, const void* B, void* C, int batch);
  // The same `experts` GEMMs (A, B, C hold each expert's operands one after
  // another) as Transformer Engine's GroupedLinear issues them: one cuBLAS
  // call per expert, round robin on `streams` side streams that first wait
  // for the ops' stream, which then waits for all of them
  // (multi_stream_cublas_gemm, TE 2.x); each side stream has its own handle
  // (and so its own workspace).
  void GroupedGemmBf16(bool ta, bool tb, int m, int n, int k, const void* A, const void* B, void* C, int experts, int streams);

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
  // Device copies of pointer arrays, cached: the layer passes the same arrays every step.
  void** DevicePointers(const std::vector<const void*>& host);

  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  GemmMath math_;
  // GroupedGemmBf16's side streams, each with its cuBLAS handle and the event
  // it records when done, and the event that forks them; made on first use.
  std::vector<cudaStream_t> side_streams_;
  std::vector<cublasHandle_t> side_handles_;
  std::vector<cudaEvent_t> side_done_;
  cudaEvent_t fork_ = nullptr;
  std::map<std::vector<const void*>, void**> pointer_cache_;
};

// Two CUDA events around a batch of calls on a stream.
class EventTimer {
 public:
  EventTimer() {
    CudaCheck(cudaEventCreate(&a_), "cudaEventCreate");
    CudaCheck(cudaEventCreate(&b_), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  // Seconds `calls` calls of fn take on `stream`, waited for.
  template <class F>
  double Time(cudaStream_t stream, F& fn, int calls) {
    CudaCheck(cudaEventRecord(a_, stream), "cudaEventRecord");
    for (int i = 0; i < calls; ++i) fn();
    CudaCheck(cudaEventRecord(b_, stream), "cudaEventRecord");
    CudaCheck(cudaEventSynchronize(b_), "cudaEventSynchronize");
    float ms = 0;
    CudaCheck(cudaEventElapsedTime(&ms, a_, b_), "cudaEventElapsedTime");
    return double(ms) * 1e-3;
  }

 private:
  cudaEvent_t a_, b_;
};

// Times fn on the ops' stream with CUDA events: `reps` calls after a warm-up,
// best of three such batches; seconds per call.
template <class F>
double TimeOnStream(cudaStream_t stream, F fn, int reps = 5) {
  fn();
  EventTimer timer;
  double best = 1e30;
  for (int trial = 0; trial < 3; ++trial) best = std::min(best, timer.Time(stream, fn, reps) / reps);
  return best;
}

// The rate `fn` keeps up back to back: run in chunks of `chunk` calls for
// `run_s` seconds of wall time, each chunk timed by events; seconds per call
// over the chunks of the last third (the GPU at its power cap by then).
template <class F>
double SustainedTimeOnStream(cudaStream_t stream, F fn, double run_s, int chunk = 10) {
  fn();
  CudaCheck(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  EventTimer timer;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  double late_s = 0;
  long late_calls = 0;
  while (elapsed() < run_s) {
    const bool late = elapsed() >= run_s * 2 / 3;
    const double s = timer.Time(stream, fn, chunk);
    if (late) {
      late_s += s;
      late_calls += chunk;
    }
  }
  return late_calls > 0 ? late_s / double(late_calls) : 0;
}

}  // namespace trainsim::calib
