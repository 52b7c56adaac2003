// Low-precision GEMMs for the calibration sweep, one mechanism for the three
// formats of calib/low_precision_formats.h: fp8 (e4m3, per-tensor scales;
// Transformer Engine's delayed/current scaling), mxfp8 (e4m3 with a UE8M0
// scale per 32 elements along K) and nvfp4 (e2m1 with a UE4M3 scale per 16
// elements and an fp32 tensor scale). fp32 accumulation, bf16 output, through
// cuBLASLt (cublasLtMatmul). Kept apart from CudaOps so that a failure here
// costs that format's samples only.
//
// cuBLASLt's rules: fp8 needs compute capability >= 8.9, the block-scaled
// formats >= 10.0 (Blackwell's block-scaled tensor cores) and a cuBLASLt of
// CUDA 12.8 or later (a build against an older toolkit compiles without
// them and says so at run time). All three run the "TN" layout, i.e. in
// cuBLASLt's column-major terms its A transposed and its B not: for the
// row-major C[m,n] = A[m,k] x op(B) of calib/plan.h that is B stored
// transposed ([n,k], the "nt" layout of a data-gradient GEMM), K contiguous
// in both operands, which is also the direction the block scales run in.
// Every low-precision sample is measured, and recorded, in "nt". Pointers
// 16-byte aligned (cudaMalloc gives 256); m, n multiples of 16 and K a
// multiple of 16 bytes of elements and of the scale block, so that leading
// dimensions stay 16-byte aligned. The block-scaled formats are measured
// unbatched only: in the cost model only the projection GEMMs (batch 1) run
// in them (sim/core/precision.h).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "calib/low_precision_formats.h"

namespace trainsim::calib {

// "" when `device` (and this build's cuBLASLt) can run GEMMs in `f`, else why not (one line).
std::string LowPrecisionDeviceProblem(const LowPrecisionFormat& f, int device);

// "" when cuBLASLt's rules for `f` admit the shape, else why not (one line).
std::string LowPrecisionShapeProblem(const LowPrecisionFormat& f, long m, long n, long k, long batch);

// `elements` random elements of `f` on the device: e4m3 values in [-1, 1)
// (FillRandom's values, rounded), or random e2m1 codes (all 16 are finite).
void FillRandomOperand(const LowPrecisionFormat& f, void* p, size_t elements, unsigned seed, cudaStream_t stream);

// One low-precision GEMM shape: row-major C[m,n] (bf16) = A[m,k] x B[n,k]^T,
// both in `f`, `batch` of them, each operand contiguous per batch entry
// (strides m*k, n*k, m*n elements). Block-scaled formats own their scale
// tensors (random finite scales between 1/4 and 4, padding included, in the
// tiled layout) and tensor scales.
class LowPrecisionGemm {
 public:
  // Creates the cuBLASLt handle, descriptors, scales and workspace and picks
  // cuBLASLt's first heuristic algorithm. Throws std::runtime_error when a
  // CUDA or cuBLASLt call fails; when the shape breaks the rules above or
  // cuBLASLt merely has no algorithm for it, why_not() says so instead and
  // Run() must not be called.
  // `split_accumulator`: per-tensor fp8 only, cuBLASLt's fast accumulation
  // off (partial sums promoted to fp32, as frameworks run the backward's
  // GEMMs); otherwise fp8 accumulates fast, as the forward's. The
  // block-scaled formats have no such mode (Blackwell accumulates in fp32).
  LowPrecisionGemm(const LowPrecisionFormat& f, cudaStream_t stream, long m, long n, long k, long batch,
                   bool split_accumulator = false);
  ~LowPrecisionGemm();
  LowPrecisionGemm(const LowPrecisionGemm&) = delete;
  LowPrecisionGemm& operator=(const LowPrecisionGemm&) = delete;

  const std::string& why_not() const { return why_not_; }
  // Enqueues the GEMM on the stream; throws on a cuBLASLt error.
  void Run(const void* A, const void* B, void* C);

  // What the host reference needs: the block scales of A and B (device, tiled
  // layout; null for fp8) and the tensor scales the GEMM applies.
  const uint8_t* a_scales() const { return a_scales_; }
  const uint8_t* b_scales() const { return b_scales_; }
  float a_tensor_scale() const { return a_tensor_scale_; }
  float b_tensor_scale() const { return b_tensor_scale_; }

 private:
  void Release();

  const LowPrecisionFormat f_;
  cudaStream_t stream_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  // cuBLASLt's operands: lt_a_ is our B ([n,k] row-major = k x n column-major,
  // transposed), lt_b_ our A ([m,k] row-major = k x m column-major), d_ our C.
  cublasLtMatrixLayout_t lt_a_ = nullptr, lt_b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  float* unit_scale_ = nullptr;  // device 1.0f: fp8's per-tensor A and B scales
  uint8_t *a_scales_ = nullptr, *b_scales_ = nullptr;
  float a_tensor_scale_ = 1, b_tensor_scale_ = 1;
  float alpha_ = 1;  // the tensor scales cuBLASLt applies as alpha (nvfp4)
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::string why_not_;
};

// The GEMM against the host reference (LowPrecisionReferenceGemm): random
// inputs and scales, their codes copied back, the reference in double on the
// decoded values; returns max |gpu - host| / max |host| over the output.
// Returns -1, with `detail` saying why, where the shape breaks the rules or
// cuBLASLt has no algorithm for it; throws on CUDA/cuBLASLt errors. The device
// must pass LowPrecisionDeviceProblem.
double LowPrecisionGemmCheck(const LowPrecisionFormat& f, long m, long n, long k, long batch, std::string* detail);

// Largest LowPrecisionGemmCheck error accepted: the decoded inputs and their
// scaled products are exact in fp32, so only the bf16 output rounding (2^-9
// relative) and the tensor cores' accumulation order remain.
constexpr double kLowPrecisionCheckTolerance = 1e-2;

}  // namespace trainsim::calib
