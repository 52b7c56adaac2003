// The fp8 GEMM (calib/cuda/fp8_gemm.h) against the host reference. The GPU
// tests skip where there is no CUDA device, or no fp8 (compute capability < 8.9).
#include <gtest/gtest.h>

#include "calib/cuda/fp8_gemm.h"
#include "calib/cuda/gpu_check.h"

namespace trainsim::calib {
namespace {

// GTEST_SKIP returns from the function it is in: each test calls it itself.
#define SKIP_WITHOUT_FP8_GPU()                                                         \
  do {                                                                                 \
    std::string why_;                                                                  \
    if (CudaDeviceCount(&why_) == 0) GTEST_SKIP() << "no CUDA device: " << why_;       \
    int device_ = 0;                                                                   \
    CudaCheck(cudaGetDevice(&device_), "cudaGetDevice");                               \
    const std::string fp8_ = Fp8DeviceProblem(device_);                                \
    if (!fp8_.empty()) GTEST_SKIP() << "no fp8 on device " << device_ << ": " << fp8_; \
  } while (0)

TEST(Fp8Gemm, ShapeRulesNeedMultiplesOf16) {  // host only: runs everywhere
  EXPECT_EQ(Fp8ShapeProblem(4096, 11008, 4096, 1), "");
  EXPECT_EQ(Fp8ShapeProblem(2048, 128, 2048, 64), "");
  EXPECT_NE(Fp8ShapeProblem(4096, 11000 + 4, 4096, 1), "");
  EXPECT_NE(Fp8ShapeProblem(8, 64, 64, 1).find("multiples of 16"), std::string::npos);
  EXPECT_NE(Fp8ShapeProblem(64, 64, 40, 1), "");
}

TEST(Fp8Gemm, MatchesHostReference) {
  SKIP_WITHOUT_FP8_GPU();
  std::string detail;
  const double err = Fp8GemmCheck(128, 192, 256, 1, &detail);
  ASSERT_GE(err, 0) << "cuBLASLt cannot run it: " << detail;
  EXPECT_LT(err, kFp8CheckTolerance) << detail;
}

TEST(Fp8Gemm, StridedBatchMatchesHostReference) {
  SKIP_WITHOUT_FP8_GPU();
  std::string detail;
  const double err = Fp8GemmCheck(64, 128, 512, 3, &detail);
  ASSERT_GE(err, 0) << "cuBLASLt cannot run it: " << detail;
  EXPECT_LT(err, kFp8CheckTolerance) << detail;
}

TEST(Fp8Gemm, UnalignedShapeIsSkippedNotFailed) {
  SKIP_WITHOUT_FP8_GPU();
  cudaStream_t stream = nullptr;
  CudaCheck(cudaStreamCreate(&stream), "cudaStreamCreate");
  {
    Fp8Gemm g(stream, 100, 64, 64, 1);
    EXPECT_NE(g.why_not(), "");
    EXPECT_THROW(g.Run(nullptr, nullptr, nullptr), std::runtime_error);
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace trainsim::calib
