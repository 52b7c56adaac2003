// The GPU layer step against the host reference (calib/cuda/gpu_check.h).
// Skips where no CUDA device is present.
#include <gtest/gtest.h>

#include "calib/cuda/gpu_check.h"
#include "calib/host_kernels.h"

namespace trainsim::calib {
namespace {

// GTEST_SKIP returns from the function it is in: each test calls it itself.
#define SKIP_WITHOUT_GPU()                                              \
  do {                                                                  \
    std::string why_;                                                   \
    if (CudaDeviceCount(&why_) == 0) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)

TEST(GpuLayerStep, MatchesHostReferenceInFp32) {
  SKIP_WITHOUT_GPU();
  std::string detail;
  EXPECT_LT(GpuLayerCheck(CheckShape(), GemmMath::kFp32, &detail), 1e-4) << detail;
}

TEST(GpuLayerStep, MatchesHostReferenceWithTf32TensorCores) {
  SKIP_WITHOUT_GPU();
  std::string detail;
  EXPECT_LT(GpuLayerCheck(CheckShape(), GemmMath::kTf32, &detail), 2e-2) << detail;
}

TEST(GpuLayerStep, GqaAndMicroBatchShapes) {
  SKIP_WITHOUT_GPU();
  std::string detail;
  EXPECT_LT(GpuLayerCheck(LayerShape{128, 352, 4, 1, 64, 3}, GemmMath::kFp32, &detail), 1e-4) << detail;
}

TEST(GpuLayerStep, DeviceCountIsReported) {
  std::string why;
  const int n = CudaDeviceCount(&why);
  if (n == 0) EXPECT_FALSE(why.empty());
  else EXPECT_GT(n, 0);
}

}  // namespace
}  // namespace trainsim::calib
