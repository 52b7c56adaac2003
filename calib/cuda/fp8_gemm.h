// fp8 GEMMs for the calibration sweep: e4m3 x e4m3 inputs, fp32 accumulation,
// bf16 output, through cuBLASLt (cublasLtMatmul) with per-tensor scales of 1:
// the GEMM an fp8 training step (Transformer Engine's delayed scaling) runs.
// Kept apart from CudaOps so that a failure here costs the fp8 samples only.
//
// cuBLASLt's fp8 rules: compute capability >= 8.9 (Ada, Hopper and later);
// the "TN" layout, i.e. in cuBLASLt's column-major terms its A transposed and
// its B not. For the row-major C[m,n] = A[m,k] x op(B) of calib/plan.h that is
// B stored transposed ([n,k], the "nt" layout of a data-gradient GEMM): every
// fp8 sample is measured, and recorded, in "nt". Pointers 16-byte aligned
// (cudaMalloc gives 256) and m, n, k multiples of 16, so that the leading
// dimensions and the batch strides stay 16-byte aligned too.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace trainsim::calib {

// "" when `device` can run fp8 GEMMs, else why not (one line).
std::string Fp8DeviceProblem(int device);

// "" when cuBLASLt's fp8 rules admit the shape, else why not (one line).
std::string Fp8ShapeProblem(long m, long n, long k, long batch);

// n e4m3 values in [-1, 1) on the device (FillRandom's values, rounded to fp8).
void FillRandomFp8(void* p, size_t n, unsigned seed, cudaStream_t stream);

// One fp8 GEMM shape: row-major C[m,n] (bf16) = A[m,k] (e4m3) x B[n,k]^T
// (e4m3), `batch` of them, each operand contiguous per batch entry (strides
// m*k, n*k, m*n elements).
class Fp8Gemm {
 public:
  // Creates the cuBLASLt handle, descriptors and workspace and picks cuBLASLt's
  // first heuristic algorithm. Throws std::runtime_error when a CUDA or
  // cuBLASLt call fails; when cuBLASLt merely has no fp8 algorithm for the
  // shape, why_not() says so instead and Run() must not be called.
  Fp8Gemm(cudaStream_t stream, long m, long n, long k, long batch);
  ~Fp8Gemm();
  Fp8Gemm(const Fp8Gemm&) = delete;
  Fp8Gemm& operator=(const Fp8Gemm&) = delete;

  const std::string& why_not() const { return why_not_; }
  // Enqueues the GEMM on the stream; throws on a cuBLASLt error.
  void Run(const void* A, const void* B, void* C);

 private:
  void Release();

  cudaStream_t stream_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  // cuBLASLt's operands: lt_a_ is our B ([n,k] row-major = k x n column-major,
  // transposed), lt_b_ our A ([m,k] row-major = k x m column-major), d_ our C.
  cublasLtMatrixLayout_t lt_a_ = nullptr, lt_b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  float* scale_ = nullptr;  // device 1.0f, the A and B scale factors
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::string why_not_;
};

// The fp8 GEMM against the host: random e4m3 inputs, their quantised values
// copied back, a naive GEMM in double on the host; returns max |gpu - host| /
// max |host| over the output (bf16 rounding alone allows ~4e-3). Returns -1,
// with `detail` saying why, where cuBLASLt has no algorithm for the shape;
// throws on CUDA/cuBLASLt errors. The device must pass Fp8DeviceProblem.
double Fp8GemmCheck(long m, long n, long k, long batch, std::string* detail);

// Largest Fp8GemmCheck error accepted: fp8 inputs are exact, so only the bf16
// output rounding (2^-9 relative) and the tensor cores' accumulation order remain.
constexpr double kFp8CheckTolerance = 1e-2;

}  // namespace trainsim::calib
