// The low-precision GEMMs (calib/cuda/low_precision_gemm.h: fp8, mxfp8,
// nvfp4) against the host reference (calib/low_precision_formats.h, whose
// decoding and scale layout calib/low_precision_formats_test.cc checks on the
// CPU). The GPU tests skip where there is no CUDA device, or the device lacks
// the format (fp8: compute capability < 8.9; mxfp8, nvfp4: < 10.0).
#include <gtest/gtest.h>

#include "calib/cuda/gpu_check.h"
#include "calib/cuda/low_precision_gemm.h"

namespace trainsim::calib {
namespace {

class LowPrecisionGemmTest : public ::testing::TestWithParam<const char*> {
 protected:
  const LowPrecisionFormat& Format() const { return *FindLowPrecisionFormat(GetParam()); }
};

// GTEST_SKIP returns from the function it is in: each test calls it itself.
#define SKIP_WITHOUT_FORMAT_GPU(f)                                                                     \
  do {                                                                                                 \
    std::string why_;                                                                                  \
    if (CudaDeviceCount(&why_) == 0) GTEST_SKIP() << "no CUDA device: " << why_;                       \
    int device_ = 0;                                                                                   \
    CudaCheck(cudaGetDevice(&device_), "cudaGetDevice");                                               \
    const std::string problem_ = LowPrecisionDeviceProblem(f, device_);                                \
    if (!problem_.empty()) GTEST_SKIP() << "no " << (f).name << " on device " << device_ << ": " << problem_; \
  } while (0)

TEST(LowPrecisionGemmRules, ShapeRules) {  // host only: runs everywhere
  const LowPrecisionFormat& fp8 = *FindLowPrecisionFormat("fp8");
  const LowPrecisionFormat& mx = *FindLowPrecisionFormat("mxfp8");
  const LowPrecisionFormat& nv = *FindLowPrecisionFormat("nvfp4");
  EXPECT_EQ(LowPrecisionShapeProblem(fp8, 4096, 11008, 4096, 1), "");
  EXPECT_EQ(LowPrecisionShapeProblem(fp8, 2048, 128, 2048, 64), "");
  EXPECT_NE(LowPrecisionShapeProblem(fp8, 4096, 11000 + 4, 4096, 1), "");
  EXPECT_NE(LowPrecisionShapeProblem(fp8, 8, 64, 64, 1).find("multiples of 16"), std::string::npos);
  EXPECT_NE(LowPrecisionShapeProblem(fp8, 64, 64, 40, 1), "");
  // Block-scaled: K in whole 32-element blocks (mxfp8) or 16-byte rows of e2m1 (nvfp4); unbatched.
  for (const auto* f : {&mx, &nv}) {
    EXPECT_EQ(LowPrecisionShapeProblem(*f, 4096, 11008, 4096, 1), "") << f->name;
    EXPECT_NE(LowPrecisionShapeProblem(*f, 64, 64, 48, 1), "") << f->name;
    EXPECT_NE(LowPrecisionShapeProblem(*f, 2048, 128, 2048, 64).find("unbatched"), std::string::npos) << f->name;
  }
  EXPECT_EQ(LowPrecisionShapeProblem(fp8, 64, 64, 48, 1), "");
}

TEST_P(LowPrecisionGemmTest, MatchesHostReference) {
  SKIP_WITHOUT_FORMAT_GPU(Format());
  std::string detail;
  // 160 and 192 rows: a partial second 128-row scale tile in both operands.
  const double err = LowPrecisionGemmCheck(Format(), 160, 192, 256, 1, &detail);
  ASSERT_GE(err, 0) << "cuBLASLt cannot run it: " << detail;
  EXPECT_LT(err, kLowPrecisionCheckTolerance) << detail;
}

TEST_P(LowPrecisionGemmTest, LongKMatchesHostReference) {
  SKIP_WITHOUT_FORMAT_GPU(Format());
  std::string detail;
  // K = 1056: 33 mxfp8 / 66 nvfp4 blocks, a partial 4-column scale tile.
  const double err = LowPrecisionGemmCheck(Format(), 128, 64, 1056, 1, &detail);
  ASSERT_GE(err, 0) << "cuBLASLt cannot run it: " << detail;
  EXPECT_LT(err, kLowPrecisionCheckTolerance) << detail;
}

TEST(LowPrecisionGemmFp8, StridedBatchMatchesHostReference) {
  const LowPrecisionFormat& fp8 = *FindLowPrecisionFormat("fp8");
  SKIP_WITHOUT_FORMAT_GPU(fp8);
  std::string detail;
  const double err = LowPrecisionGemmCheck(fp8, 64, 128, 512, 3, &detail);
  ASSERT_GE(err, 0) << "cuBLASLt cannot run it: " << detail;
  EXPECT_LT(err, kLowPrecisionCheckTolerance) << detail;
}

TEST_P(LowPrecisionGemmTest, UnalignedShapeIsSkippedNotFailed) {
  SKIP_WITHOUT_FORMAT_GPU(Format());
  cudaStream_t stream = nullptr;
  CudaCheck(cudaStreamCreate(&stream), "cudaStreamCreate");
  {
    LowPrecisionGemm g(Format(), stream, 100, 64, 64, 1);
    EXPECT_NE(g.why_not(), "");
    EXPECT_THROW(g.Run(nullptr, nullptr, nullptr), std::runtime_error);
  }
  cudaStreamDestroy(stream);
}

TEST(LowPrecisionGemmDevice, BlockScaledFormatsNeedBlackwell) {
  std::string why;
  if (CudaDeviceCount(&why) == 0) GTEST_SKIP() << "no CUDA device: " << why;
  int device = 0, major = 0;
  CudaCheck(cudaGetDevice(&device), "cudaGetDevice");
  CudaCheck(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
  for (const char* name : {"mxfp8", "nvfp4"}) {
    const std::string problem = LowPrecisionDeviceProblem(*FindLowPrecisionFormat(name), device);
    if (problem.find("predates block-scaled") != std::string::npos) continue;  // a pre-12.8 toolkit: nothing to run
    if (major < 10) EXPECT_NE(problem.find("needs 10.0 or later"), std::string::npos) << name << ": " << problem;
    else EXPECT_EQ(problem, "") << name << " on compute capability " << major << ".x";
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, LowPrecisionGemmTest, ::testing::Values("fp8", "mxfp8", "nvfp4"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
}  // namespace trainsim::calib
