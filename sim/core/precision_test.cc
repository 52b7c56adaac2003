#include "sim/core/precision.h"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

TEST(PrecisionTest, EverySpellingRoundTrips) {
  int n = 0;
  const char* const* names = PrecisionNames(n);
  ASSERT_EQ(n, 7);  // design.md 3b: bf16 | fp16 | fp8 | fp8-blockwise | fp8-rowwise | mxfp8 | nvfp4
  for (int i = 0; i < n; ++i) {
    Precision p = Precision::kBf16;
    ASSERT_TRUE(ParsePrecision(names[i], p)) << names[i];
    EXPECT_EQ(ToString(p), names[i]);
  }
  Precision p = Precision::kBf16;
  EXPECT_FALSE(ParsePrecision("fp4", p));
}

TEST(PrecisionTest, OperandBytesCountTheScaleFactors) {
  EXPECT_DOUBLE_EQ(OperandBytes(Precision::kBf16), 2.0);
  EXPECT_DOUBLE_EQ(OperandBytes(Precision::kFp8), 1.0);                    // one fp32 scale per tensor
  EXPECT_DOUBLE_EQ(OperandBytes(Precision::kFp8Blockwise), 1.0 + 4.0 / 128);  // fp32 per 128 elements
  EXPECT_DOUBLE_EQ(OperandBytes(Precision::kFp8Rowwise, 4096), 1.0 + 4.0 / 4096);  // fp32 per row
  EXPECT_DOUBLE_EQ(OperandBytes(Precision::kMxfp8), 1.0 + 1.0 / 32);     // E8M0 per 32
  EXPECT_DOUBLE_EQ(OperandBytes(Precision::kNvfp4), 0.5 + 1.0 / 16);     // e2m1 + E4M3 per 16
}

TEST(PrecisionTest, CastTrafficReadsSixteenBitAndWritesTheCopies) {
  const Fp8Scaling delayed = Fp8Scaling::kDelayed, current = Fp8Scaling::kCurrent;
  EXPECT_DOUBLE_EQ(ForwardCastBytesPerElement(Precision::kBf16, current), 0.0);
  EXPECT_DOUBLE_EQ(BackwardCastBytesPerElement(Precision::kFp16, current), 0.0);
  // Per-tensor fp8: one forward copy (TE transposes it on the fly), both layouts of the gradient.
  EXPECT_DOUBLE_EQ(ForwardCastBytesPerElement(Precision::kFp8, delayed), 3.0);
  EXPECT_DOUBLE_EQ(BackwardCastBytesPerElement(Precision::kFp8, delayed), 4.0);
  // Current scaling reads the tensor once more for its amax.
  EXPECT_DOUBLE_EQ(ForwardCastBytesPerElement(Precision::kFp8, current), 5.0);
  EXPECT_DOUBLE_EQ(BackwardCastBytesPerElement(Precision::kFp8, current), 6.0);
  // Block-scaled: both layouts in the forward too (blocks run along the reduction axis).
  EXPECT_DOUBLE_EQ(ForwardCastBytesPerElement(Precision::kMxfp8, current), 2.0 + 2 * (1.0 + 1.0 / 32));
  // NVFP4's per-tensor scale needs the amax whatever the fp8 recipe.
  EXPECT_DOUBLE_EQ(ForwardCastBytesPerElement(Precision::kNvfp4, delayed), 4.0 + 2 * 0.5625);
}

TEST(PrecisionTest, OnlyPerTensorScalesNeedTheTensorsAmax) {
  EXPECT_FALSE(NeedsTensorAmax(Precision::kFp8, Fp8Scaling::kDelayed));
  EXPECT_TRUE(NeedsTensorAmax(Precision::kFp8, Fp8Scaling::kCurrent));
  EXPECT_TRUE(NeedsTensorAmax(Precision::kNvfp4, Fp8Scaling::kDelayed));
  for (Precision p : {Precision::kBf16, Precision::kFp8Blockwise, Precision::kFp8Rowwise, Precision::kMxfp8}) {
    EXPECT_FALSE(NeedsTensorAmax(p, Fp8Scaling::kCurrent)) << ToString(p);
  }
}

// Transformer Engine's casts: an amax of the tensor itself costs three
// kernels before the cast (zero, reduce, scale); a grouped GEMM's inputs share
// one multi-tensor kernel under delayed scaling only; block-scaled GEMMs
// swizzle their scales first.
TEST(PrecisionTest, KernelsACastAndALowPrecisionGemmLaunch) {
  EXPECT_EQ(CastKernels(Precision::kBf16, Fp8Scaling::kCurrent), 0);
  EXPECT_EQ(CastKernels(Precision::kFp8, Fp8Scaling::kDelayed), 1);
  EXPECT_EQ(CastKernels(Precision::kFp8, Fp8Scaling::kCurrent), 4);
  EXPECT_EQ(CastKernels(Precision::kMxfp8, Fp8Scaling::kCurrent), 1);
  EXPECT_EQ(CastKernels(Precision::kNvfp4, Fp8Scaling::kDelayed), 4);
  EXPECT_EQ(GroupedCastKernels(Precision::kFp8, Fp8Scaling::kDelayed, 16), 1);
  EXPECT_EQ(GroupedCastKernels(Precision::kFp8, Fp8Scaling::kCurrent, 16), 64);
  EXPECT_EQ(GroupedCastKernels(Precision::kMxfp8, Fp8Scaling::kDelayed, 16), 16);
  EXPECT_EQ(GroupedCastKernels(Precision::kBf16, Fp8Scaling::kDelayed, 16), 0);
  EXPECT_EQ(ScaleSwizzleKernels(Precision::kMxfp8), 2);
  EXPECT_EQ(ScaleSwizzleKernels(Precision::kNvfp4), 2);
  for (Precision p : {Precision::kBf16, Precision::kFp8, Precision::kFp8Blockwise, Precision::kFp8Rowwise}) {
    EXPECT_EQ(ScaleSwizzleKernels(p), 0) << ToString(p);
  }
}

TEST(PrecisionTest, OnlyDelayedScalingKeepsAnAmaxHistory) {
  EXPECT_TRUE(KeepsAmaxHistory(Precision::kFp8, Fp8Scaling::kDelayed));
  EXPECT_FALSE(KeepsAmaxHistory(Precision::kFp8, Fp8Scaling::kCurrent));
  for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp8Blockwise, Precision::kFp8Rowwise, Precision::kMxfp8, Precision::kNvfp4}) {
    EXPECT_FALSE(KeepsAmaxHistory(p, Fp8Scaling::kDelayed)) << ToString(p);
  }
}

TEST(PrecisionTest, RateAndHardwareKeys) {
  EXPECT_STREQ(GemmRateKey(Precision::kFp8Blockwise), "fp8");
  EXPECT_STREQ(GemmRateKey(Precision::kFp8Rowwise), "fp8");
  EXPECT_STREQ(GemmRateKey(Precision::kMxfp8), "mxfp8");
  EXPECT_STREQ(RequiredPeakKey(Precision::kNvfp4), "nvfp4");
  EXPECT_STREQ(RequiredPeakKey(Precision::kBf16), "");
  EXPECT_FALSE(IsLowPrecision(Precision::kFp16));
  EXPECT_TRUE(IsLowPrecision(Precision::kFp8Rowwise));
  EXPECT_DOUBLE_EQ(SavedInputBytes(Precision::kBf16), 2.0);
  EXPECT_DOUBLE_EQ(SavedInputBytes(Precision::kNvfp4), 0.5625);
}

// A framework's recipe name points at trainsim's spelling (and the fp8
// scaling it implies); trainsim's own names and strangers get no hint.
TEST(PrecisionTest, RecipeNamesPointAtTheScenarioSpelling) {
  EXPECT_STREQ(PrecisionOfRecipeName("fp8_cs"), "fp8 (with fp8_scaling: current in the framework profile)");
  EXPECT_STREQ(PrecisionOfRecipeName("bf16-with-fp8-delayed-scaling-mixed"), "fp8 (with fp8_scaling: delayed in the framework profile)");
  EXPECT_STREQ(PrecisionOfRecipeName("BF16-mixed"), "bf16");
  EXPECT_STREQ(PrecisionOfRecipeName("fp8_mx"), "mxfp8");
  EXPECT_STREQ(PrecisionOfRecipeName("fp8_sc"), "fp8-blockwise");
  EXPECT_EQ(PrecisionOfRecipeName("fp8"), nullptr);
  EXPECT_EQ(PrecisionOfRecipeName("int8"), nullptr);
  int count = 0;
  const char* const* names = PrecisionNames(count);
  for (int i = 0; i < count; ++i) EXPECT_EQ(PrecisionOfRecipeName(names[i]), nullptr) << names[i];
}

}  // namespace
}  // namespace trainsim
