#include "calib/cuda/fp8_gemm.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "calib/cuda/cuda_ops.h"
#include "calib/cuda/device_hash.cuh"
#include "calib/host_kernels.h"

namespace trainsim::calib {
namespace {

constexpr int kThreads = 256;
// cuBLAS's recommended workspace on Hopper; split-K and stream-K algorithms need one.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;
constexpr long kFp8Multiple = 16;  // elements: 16 bytes of e4m3

__global__ void FillFp8Kernel(__nv_fp8_e4m3* p, size_t n, unsigned seed) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = __nv_fp8_e4m3(HashUnit(i, seed));
}

void LayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType_t type, long rows, long cols, long ld, long batch,
                  long long stride) {
  CublasCheck(cublasLtMatrixLayoutCreate(l, type, uint64_t(rows), uint64_t(cols), int64_t(ld)),
              "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    const int32_t count = int32_t(batch);
    const int64_t offset = stride;
    CublasCheck(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
                "cublasLtMatrixLayoutSetAttribute batch count");
    CublasCheck(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &offset, sizeof offset),
                "cublasLtMatrixLayoutSetAttribute batch stride");
  }
}

}  // namespace

std::string Fp8DeviceProblem(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();  // clear it: the caller goes on without fp8
    return "cannot read the compute capability of device " + std::to_string(device);
  }
  if (major * 10 + minor < 89) {
    return "compute capability " + std::to_string(major) + "." + std::to_string(minor) +
           " has no fp8 tensor cores (needs 8.9 or later)";
  }
  return "";
}

std::string Fp8ShapeProblem(long m, long n, long k, long batch) {
  if (m % kFp8Multiple || n % kFp8Multiple || k % kFp8Multiple) {
    return "m, n, k = " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) +
           " are not all multiples of 16 (cuBLASLt fp8 alignment)";
  }
  if (batch > INT32_MAX) return "batch " + std::to_string(batch) + " does not fit cuBLASLt's batch count";
  return "";
}

void FillRandomFp8(void* p, size_t n, unsigned seed, cudaStream_t stream) {
  FillFp8Kernel<<<unsigned((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed);
}

Fp8Gemm::Fp8Gemm(cudaStream_t stream, long m, long n, long k, long batch) : stream_(stream) {
  try {
    const std::string shape = Fp8ShapeProblem(m, n, k, batch);
    if (!shape.empty()) {
      why_not_ = shape;
      return;
    }
    CublasCheck(cublasLtCreate(&handle_), "cublasLtCreate");
    CublasCheck(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    // Row-major C = A B^T is column-major C^T (n x m) = B (n x k) A^T (k x m):
    // cuBLASLt's A is our B, transposed ("T"); its B is our A, not ("N").
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "cublasLt TRANSA");
    CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "cublasLt TRANSB");
    // Per-tensor scales, as fp8 training passes them (1: the inputs are already in range).
    CudaCheck(cudaMalloc(&scale_, sizeof(float)), "cudaMalloc fp8 scale");
    const float one = 1.0f;
    CudaCheck(cudaMemcpy(scale_, &one, sizeof one, cudaMemcpyHostToDevice), "cudaMemcpy fp8 scale");
    const float* scale = scale_;
    CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale, sizeof scale),
                "cublasLt A_SCALE_POINTER");
    CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale, sizeof scale),
                "cublasLt B_SCALE_POINTER");
    LayoutCreate(&lt_a_, CUDA_R_8F_E4M3, k, n, k, batch, (long long)n * k);
    LayoutCreate(&lt_b_, CUDA_R_8F_E4M3, k, m, k, batch, (long long)m * k);
    LayoutCreate(&d_, CUDA_R_16BF, n, m, n, batch, (long long)m * n);  // C (beta = 0) shares D's layout
    CudaCheck(cudaMalloc(&workspace_, kWorkspaceBytes), "cudaMalloc cuBLASLt workspace");
    workspace_bytes_ = kWorkspaceBytes;
    CublasCheck(cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
    const uint64_t ws = workspace_bytes_;
    CublasCheck(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                "cublasLt MAX_WORKSPACE_BYTES");
    cublasLtMatmulHeuristicResult_t result{};
    int returned = 0;
    const cublasStatus_t s =
        cublasLtMatmulAlgoGetHeuristic(handle_, op_, lt_a_, lt_b_, d_, d_, pref_, 1, &result, &returned);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || (s == CUBLAS_STATUS_SUCCESS && (returned == 0 || result.state != CUBLAS_STATUS_SUCCESS))) {
      why_not_ = "cuBLASLt has no fp8 algorithm for this shape (status " + std::to_string(int(s)) + ")";
      Release();
      return;
    }
    CublasCheck(s, "cublasLtMatmulAlgoGetHeuristic");
    algo_ = result.algo;
  } catch (...) {
    Release();
    throw;
  }
}

Fp8Gemm::~Fp8Gemm() { Release(); }

void Fp8Gemm::Release() {
  // Destroy calls only fail for null or invalid handles; nothing to report in a destructor.
  if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (lt_b_) cublasLtMatrixLayoutDestroy(lt_b_);
  if (lt_a_) cublasLtMatrixLayoutDestroy(lt_a_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  if (handle_) cublasLtDestroy(handle_);
  // cudaFree synchronizes the device: no enqueued GEMM still uses these.
  if (workspace_) cudaFree(workspace_);
  if (scale_) cudaFree(scale_);
  pref_ = nullptr;
  d_ = lt_b_ = lt_a_ = nullptr;
  op_ = nullptr;
  handle_ = nullptr;
  workspace_ = nullptr;
  scale_ = nullptr;
  workspace_bytes_ = 0;
}

void Fp8Gemm::Run(const void* A, const void* B, void* C) {
  if (!why_not_.empty() || !handle_) throw std::runtime_error("Fp8Gemm::Run on a shape without an algorithm: " + why_not_);
  const float alpha = 1, beta = 0;
  CublasCheck(cublasLtMatmul(handle_, op_, &alpha, B, lt_a_, A, lt_b_, &beta, C, d_, C, d_, &algo_, workspace_,
                             workspace_bytes_, stream_),
              "cublasLtMatmul fp8");
}

double Fp8GemmCheck(long m, long n, long k, long batch, std::string* detail) {
  cudaStream_t stream = nullptr;
  CudaCheck(cudaStreamCreate(&stream), "cudaStreamCreate");
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{stream};
  Fp8Gemm gemm(stream, m, n, k, batch);
  if (!gemm.why_not().empty()) {
    if (detail) *detail = gemm.why_not();
    return -1;
  }
  const size_t na = size_t(batch) * m * k, nb = size_t(batch) * n * k, nc = size_t(batch) * m * n;
  // Float buffers hold the narrower types (1 and 2 bytes per element).
  DeviceBuffer a(na), b(nb), c(nc);
  FillRandomFp8(a.data(), na, 11, stream);
  FillRandomFp8(b.data(), nb, 12, stream);
  CudaCheck(cudaGetLastError(), "FillRandomFp8");
  gemm.Run(a.data(), b.data(), c.data());
  CudaCheck(cudaStreamSynchronize(stream), "cudaStreamSynchronize fp8 GEMM");
  std::vector<__nv_fp8_e4m3> ha(na), hb(nb);
  std::vector<__nv_bfloat16> hc(nc);
  CudaCheck(cudaMemcpy(ha.data(), a.data(), na, cudaMemcpyDeviceToHost), "cudaMemcpy fp8 A");
  CudaCheck(cudaMemcpy(hb.data(), b.data(), nb, cudaMemcpyDeviceToHost), "cudaMemcpy fp8 B");
  CudaCheck(cudaMemcpy(hc.data(), c.data(), nc * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost), "cudaMemcpy bf16 C");
  // The quantised inputs in float (exact: e4m3 is a subset of float).
  std::vector<float> fa(na), fb(nb), gpu(nc), ref(nc, 0.0f);
  for (size_t i = 0; i < na; ++i) fa[i] = float(ha[i]);
  for (size_t i = 0; i < nb; ++i) fb[i] = float(hb[i]);
  for (size_t i = 0; i < nc; ++i) gpu[i] = __bfloat162float(hc[i]);
  for (long i = 0; i < batch; ++i) {
    host::NaiveGemm(false, true, int(m), int(n), int(k), 1.0f, fa.data() + size_t(i) * m * k, int(k),
                    fb.data() + size_t(i) * n * k, int(k), 0.0f, ref.data() + size_t(i) * m * n, int(n));
  }
  const double err = host::MaxRelativeError(gpu, ref);
  if (detail) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "fp8 GEMM %ldx%ldx%ld batch %ld: max rel error %.2e", m, n, k, batch, err);
    *detail = buf;
  }
  return err;
}

}  // namespace trainsim::calib
