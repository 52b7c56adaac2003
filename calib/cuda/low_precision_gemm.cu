#include "calib/cuda/low_precision_gemm.h"

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

// Block-scaled matmuls (scale modes VEC32_UE8M0 / VEC16_UE4M3, the e2m1 data
// type) came with cuBLAS 12.8.
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120800
#define TRAINSIM_HAVE_BLOCK_SCALED 1
#else
#define TRAINSIM_HAVE_BLOCK_SCALED 0
#endif

namespace trainsim::calib {
namespace {

constexpr int kThreads = 256;
// cuBLAS's recommended workspace on Hopper and Blackwell; split-K and stream-K algorithms need one.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;
constexpr long kMnMultiple = 16;  // rows: 16-byte aligned bf16 outputs and e4m3 operands
constexpr long kRowAlignBytes = 16;
// nvfp4's tensor scales (powers of two, so that the reference stays exact);
// not 1, so that the check sees them applied.
constexpr float kNvfp4TensorScaleA = 0.5f, kNvfp4TensorScaleB = 0.25f;

// 16 random bits of element i.
__device__ unsigned HashU16(size_t i, unsigned seed) { return unsigned((HashUnit(i, seed) + 1.0f) * 32768.0f) & 0xffffu; }

__global__ void FillE4m3Kernel(__nv_fp8_e4m3* p, size_t n, unsigned seed) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = __nv_fp8_e4m3(HashUnit(i, seed));
}

__global__ void FillBytesKernel(uint8_t* p, size_t n, unsigned seed) {  // any byte: two e2m1 codes
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = uint8_t(HashU16(i, seed));
}

// Finite block scales between 1/4 and 4: UE8M0 exponents 125..129, or UE4M3
// codes with exponent field 5..9 (bias 7) and any mantissa, sign bit clear.
__global__ void FillScalesKernel(uint8_t* p, size_t n, unsigned seed, int ue8m0) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned u = HashU16(i, seed);
  p[i] = ue8m0 ? uint8_t(125 + u % 5) : uint8_t(((5 + u % 5) << 3) | ((u / 5) % 8));
}

unsigned Blocks(size_t n) { return unsigned((n + kThreads - 1) / kThreads); }

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

cudaDataType_t ElementType(const LowPrecisionFormat& f) {
#if TRAINSIM_HAVE_BLOCK_SCALED
  if (f.element_bits == 4) return CUDA_R_4F_E2M1;
#endif
  return CUDA_R_8F_E4M3;
}

std::string CcText(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

}  // namespace

std::string LowPrecisionDeviceProblem(const LowPrecisionFormat& f, int device) {
#if !TRAINSIM_HAVE_BLOCK_SCALED
  if (f.BlockScaled()) {
    return std::string("this build's cuBLASLt predates block-scaled GEMMs (") + f.name + " needs CUDA 12.8 or later)";
  }
#endif
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();  // clear it: the caller goes on without this format
    return "cannot read the compute capability of device " + std::to_string(device);
  }
  const int cc = major * 10 + minor;
  if (cc < f.min_compute_capability) {
    return "compute capability " + CcText(cc) + " has no " + (f.BlockScaled() ? "block-scaled" : "fp8") +
           " tensor cores (" + f.name + " needs " + CcText(f.min_compute_capability) + " or later)";
  }
  return "";
}

std::string LowPrecisionShapeProblem(const LowPrecisionFormat& f, long m, long n, long k, long batch) {
  // K: 16 bytes of elements (the leading dimension) and whole scale blocks.
  const long k_multiple = std::max<long>(kRowAlignBytes * 8 / f.element_bits, f.block_elements);
  if (m % kMnMultiple || n % kMnMultiple || k % k_multiple) {
    return "m, n, k = " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) +
           " are not multiples of 16, 16, " + std::to_string(k_multiple) + " (cuBLASLt " + f.name + " alignment)";
  }
  if (f.BlockScaled() && batch != 1) {
    return "batched GEMM: " + std::string(f.name) +
           " is measured unbatched only (only the projection GEMMs run in it, sim/core/precision.h)";
  }
  if (batch > INT32_MAX) return "batch " + std::to_string(batch) + " does not fit cuBLASLt's batch count";
  return "";
}

void FillRandomOperand(const LowPrecisionFormat& f, void* p, size_t elements, unsigned seed, cudaStream_t stream) {
  if (f.element_bits == 8) {
    FillE4m3Kernel<<<Blocks(elements), kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(p), elements, seed);
  } else {
    const size_t bytes = OperandDataBytes(f, elements);
    FillBytesKernel<<<Blocks(bytes), kThreads, 0, stream>>>(static_cast<uint8_t*>(p), bytes, seed);
  }
}

LowPrecisionGemm::LowPrecisionGemm(const LowPrecisionFormat& f, cudaStream_t stream, long m, long n, long k, long batch,
                                   bool split_accumulator)
    : f_(f), stream_(stream) {
  try {
    const std::string shape = LowPrecisionShapeProblem(f, m, n, k, batch);
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
    if (!f.BlockScaled()) {
      // Per-tensor scales, as fp8 training passes them (1: the inputs are already in range).
      CudaCheck(cudaMalloc(&unit_scale_, sizeof(float)), "cudaMalloc fp8 scale");
      const float one = 1.0f;
      CudaCheck(cudaMemcpy(unit_scale_, &one, sizeof one, cudaMemcpyHostToDevice), "cudaMemcpy fp8 scale");
      const float* scale = unit_scale_;
      CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale, sizeof scale),
                  "cublasLt A_SCALE_POINTER");
      CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale, sizeof scale),
                  "cublasLt B_SCALE_POINTER");
      // cuBLASLt's default is 0 (split); the sweep's fp8 curve is the forward's fast one.
      const int8_t fast_accumulation = split_accumulator ? 0 : 1;
      CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accumulation, sizeof fast_accumulation),
                  "cublasLt FAST_ACCUM");
    } else {
#if TRAINSIM_HAVE_BLOCK_SCALED
      // One scale per block along K of each row of our A ([m,k]) and B ([n,k]),
      // tiled as calib/low_precision_formats.h describes; the whole padded
      // tensor is filled so that no padding byte is NaN.
      const size_t a_bytes = ScaleTensorBytes(f, m, k), b_bytes = ScaleTensorBytes(f, n, k);
      CudaCheck(cudaMalloc(&a_scales_, a_bytes), "cudaMalloc A block scales");
      CudaCheck(cudaMalloc(&b_scales_, b_bytes), "cudaMalloc B block scales");
      const int ue8m0 = f.scale == ScaleKind::kBlockUe8m0;
      FillScalesKernel<<<Blocks(a_bytes), kThreads, 0, stream>>>(a_scales_, a_bytes, 21, ue8m0);
      FillScalesKernel<<<Blocks(b_bytes), kThreads, 0, stream>>>(b_scales_, b_bytes, 22, ue8m0);
      CudaCheck(cudaGetLastError(), "FillScalesKernel");
      const int32_t mode = ue8m0 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 : CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
      CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode),
                  "cublasLt A_SCALE_MODE");
      CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode),
                  "cublasLt B_SCALE_MODE");
      // cuBLASLt's A is our B: its scale pointer takes B's scales, and the other way round.
      const void* lt_a_scales = b_scales_;
      const void* lt_b_scales = a_scales_;
      CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &lt_a_scales, sizeof lt_a_scales),
                  "cublasLt A_SCALE_POINTER (block scales)");
      CublasCheck(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &lt_b_scales, sizeof lt_b_scales),
                  "cublasLt B_SCALE_POINTER (block scales)");
      if (f.scale == ScaleKind::kBlockUe4m3) {  // nvfp4's second level: the tensor scales, as alpha
        a_tensor_scale_ = kNvfp4TensorScaleA;
        b_tensor_scale_ = kNvfp4TensorScaleB;
        alpha_ = a_tensor_scale_ * b_tensor_scale_;
      }
#else
      throw std::runtime_error(std::string(f.name) + ": this build's cuBLASLt has no block-scaled GEMMs");
#endif
    }
    const cudaDataType_t et = ElementType(f);
    LayoutCreate(&lt_a_, et, k, n, k, batch, (long long)n * k);
    LayoutCreate(&lt_b_, et, k, m, k, batch, (long long)m * k);
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
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE ||
        (s == CUBLAS_STATUS_SUCCESS && (returned == 0 || result.state != CUBLAS_STATUS_SUCCESS))) {
      why_not_ = std::string("cuBLASLt has no ") + f.name + " algorithm for this shape (status " + std::to_string(int(s)) + ")";
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

LowPrecisionGemm::~LowPrecisionGemm() { Release(); }

void LowPrecisionGemm::Release() {
  // Destroy calls only fail for null or invalid handles; nothing to report in a destructor.
  if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (lt_b_) cublasLtMatrixLayoutDestroy(lt_b_);
  if (lt_a_) cublasLtMatrixLayoutDestroy(lt_a_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  if (handle_) cublasLtDestroy(handle_);
  // cudaFree synchronizes the device: no enqueued GEMM still uses these.
  if (workspace_) cudaFree(workspace_);
  if (unit_scale_) cudaFree(unit_scale_);
  if (a_scales_) cudaFree(a_scales_);
  if (b_scales_) cudaFree(b_scales_);
  pref_ = nullptr;
  d_ = lt_b_ = lt_a_ = nullptr;
  op_ = nullptr;
  handle_ = nullptr;
  workspace_ = nullptr;
  unit_scale_ = nullptr;
  a_scales_ = b_scales_ = nullptr;
  workspace_bytes_ = 0;
}

void LowPrecisionGemm::Run(const void* A, const void* B, void* C) {
  if (!why_not_.empty() || !handle_) {
    throw std::runtime_error(std::string("LowPrecisionGemm::Run (") + f_.name + ") on a shape without an algorithm: " + why_not_);
  }
  const float beta = 0;
  CublasCheck(cublasLtMatmul(handle_, op_, &alpha_, B, lt_a_, A, lt_b_, &beta, C, d_, C, d_, &algo_, workspace_,
                             workspace_bytes_, stream_),
              "cublasLtMatmul low precision");
}

double LowPrecisionGemmCheck(const LowPrecisionFormat& f, long m, long n, long k, long batch, std::string* detail) {
  cudaStream_t stream = nullptr;
  CudaCheck(cudaStreamCreate(&stream), "cudaStreamCreate");
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{stream};
  LowPrecisionGemm gemm(f, stream, m, n, k, batch);
  if (!gemm.why_not().empty()) {
    if (detail) *detail = gemm.why_not();
    return -1;
  }
  const size_t ea = size_t(batch) * m * k, eb = size_t(batch) * n * k, nc = size_t(batch) * m * n;
  const size_t na = OperandDataBytes(f, ea), nb = OperandDataBytes(f, eb);
  // Float buffers hold the narrower types (4, 8 and 16 bits per element).
  DeviceBuffer a(ea), b(eb), c(nc);
  FillRandomOperand(f, a.data(), ea, 11, stream);
  FillRandomOperand(f, b.data(), eb, 12, stream);
  CudaCheck(cudaGetLastError(), "FillRandomOperand");
  gemm.Run(a.data(), b.data(), c.data());
  CudaCheck(cudaStreamSynchronize(stream), "cudaStreamSynchronize low-precision GEMM");
  std::vector<uint8_t> ha(na), hb(nb), sa(ScaleTensorBytes(f, m, k)), sb(ScaleTensorBytes(f, n, k));
  std::vector<__nv_bfloat16> hc(nc);
  CudaCheck(cudaMemcpy(ha.data(), a.data(), na, cudaMemcpyDeviceToHost), "cudaMemcpy A codes");
  CudaCheck(cudaMemcpy(hb.data(), b.data(), nb, cudaMemcpyDeviceToHost), "cudaMemcpy B codes");
  if (f.BlockScaled()) {
    CudaCheck(cudaMemcpy(sa.data(), gemm.a_scales(), sa.size(), cudaMemcpyDeviceToHost), "cudaMemcpy A scales");
    CudaCheck(cudaMemcpy(sb.data(), gemm.b_scales(), sb.size(), cudaMemcpyDeviceToHost), "cudaMemcpy B scales");
  }
  CudaCheck(cudaMemcpy(hc.data(), c.data(), nc * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost), "cudaMemcpy bf16 C");
  std::vector<float> gpu(nc), ref;
  ref.reserve(nc);
  for (size_t i = 0; i < nc; ++i) gpu[i] = __bfloat162float(hc[i]);
  // Batch entries (fp8 only) start on whole bytes: m*k and n*k are multiples of 16.
  for (long i = 0; i < batch; ++i) {
    const std::vector<float> r = LowPrecisionReferenceGemm(
        f, ha.data() + OperandDataBytes(f, size_t(i) * m * k), sa.data(), gemm.a_tensor_scale(),
        hb.data() + OperandDataBytes(f, size_t(i) * n * k), sb.data(), gemm.b_tensor_scale(), m, n, k);
    ref.insert(ref.end(), r.begin(), r.end());
  }
  const double err = host::MaxRelativeError(gpu, ref);
  if (detail) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s GEMM %ldx%ldx%ld batch %ld: max rel error %.2e", f.name, m, n, k, batch, err);
    *detail = buf;
  }
  return err;
}

}  // namespace trainsim::calib
