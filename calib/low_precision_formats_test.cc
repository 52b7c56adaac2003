// The host side of the low-precision GEMMs (calib/low_precision_formats.h),
// on the CPU: the element and scale codes, cuBLASLt's tiled scale layout and
// the reference GEMM that the GPU check (calib/cuda/gpu_low_precision_test.cu)
// compares cuBLASLt with, on tiny cases whose answers are known by hand; and
// that the formats agree with the cost model's description (sim/core/precision.h).
#include "calib/low_precision_formats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "sim/core/precision.h"

namespace trainsim::calib {
namespace {

const LowPrecisionFormat& F(const char* name) { return *FindLowPrecisionFormat(name); }

TEST(LowPrecisionFormats, ElementAndScaleCodes) {
  const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(DecodeE2m1(uint8_t(c)), e2m1[c]) << c;
    EXPECT_EQ(DecodeE2m1(uint8_t(c | 8)), -e2m1[c]) << c;
  }
  EXPECT_EQ(DecodeE4m3(0x38), 1.0f);
  EXPECT_EQ(DecodeE4m3(0x3c), 1.5f);
  EXPECT_EQ(DecodeE4m3(0xb8), -1.0f);
  EXPECT_EQ(DecodeE4m3(0x7e), 448.0f);  // the largest e4m3
  EXPECT_EQ(DecodeE4m3(0x01), std::ldexp(1.0f, -9));  // the smallest subnormal
  EXPECT_TRUE(std::isnan(DecodeE4m3(0x7f)));
  EXPECT_EQ(DecodeUe8m0(127), 1.0f);
  EXPECT_EQ(DecodeUe8m0(130), 8.0f);
  EXPECT_EQ(DecodeUe8m0(125), 0.25f);
  EXPECT_TRUE(std::isnan(DecodeUe8m0(255)));
  EXPECT_EQ(DecodeUe4m3(0x40), 2.0f);
  EXPECT_EQ(DecodeUe4m3(0xc0), 2.0f);  // unsigned: the sign bit is not one
  // e2m1 packs two to a byte, the first element in the low nibble.
  const uint8_t packed[] = {0x72, 0x00};
  EXPECT_EQ(DecodeElement(F("nvfp4"), packed, 0), 1.0f);
  EXPECT_EQ(DecodeElement(F("nvfp4"), packed, 1), 6.0f);
  EXPECT_EQ(OperandDataBytes(F("nvfp4"), 33), 17u);
  EXPECT_EQ(OperandDataBytes(F("mxfp8"), 33), 33u);
}

TEST(LowPrecisionFormats, ScalesUseCublasLtTiledLayout) {
  const LowPrecisionFormat& mx = F("mxfp8");
  // 160 rows of K = 256: 8 blocks of 32 per row, two 128-row tiles (the second
  // partial, padded), two 4-column tiles across K.
  EXPECT_EQ(PaddedScaleCols(mx, 256), 8);
  EXPECT_EQ(ScaleTensorBytes(mx, 160, 256), 256u * 8u);
  EXPECT_EQ(PaddedScaleCols(mx, 1056), 36);  // 33 blocks padded to whole tiles
  EXPECT_EQ(PaddedScaleCols(F("nvfp4"), 256), 16);
  EXPECT_EQ(ScaleTensorBytes(F("fp8"), 160, 256), 0u);
  // Inside a 128 x 4 tile: rows 0..31 step 16 bytes, row groups of 32 step 4, columns 1.
  EXPECT_EQ(ScaleOffset(0, 0, 8), 0u);
  EXPECT_EQ(ScaleOffset(1, 0, 8), 16u);
  EXPECT_EQ(ScaleOffset(31, 0, 8), 496u);
  EXPECT_EQ(ScaleOffset(32, 0, 8), 4u);
  EXPECT_EQ(ScaleOffset(0, 3, 8), 3u);
  EXPECT_EQ(ScaleOffset(127, 3, 8), 511u);
  // Tiles: K fastest, then the next 128 rows.
  EXPECT_EQ(ScaleOffset(0, 4, 8), 512u);
  EXPECT_EQ(ScaleOffset(128, 0, 8), 1024u);
  EXPECT_EQ(ScaleOffset(130, 5, 8), 1024u + 512u + 2 * 16 + 1);
  // A bijection onto the padded tensor.
  std::set<size_t> seen;
  for (long r = 0; r < 256; ++r) {
    for (long c = 0; c < 8; ++c) seen.insert(ScaleOffset(r, c, 8));
  }
  EXPECT_EQ(seen.size(), 256u * 8u);
  EXPECT_EQ(*seen.rbegin(), 256u * 8u - 1);
}

TEST(LowPrecisionFormats, Mxfp8DequantizeAppliesEachBlocksScale) {
  const LowPrecisionFormat& mx = F("mxfp8");
  const long k = 64;  // two blocks of 32
  std::vector<uint8_t> data(k, 0x38);  // all 1.0
  std::vector<uint8_t> scales(ScaleTensorBytes(mx, 1, k), 127);
  scales[ScaleOffset(0, 0, PaddedScaleCols(mx, k))] = 128;  // x2
  scales[ScaleOffset(0, 1, PaddedScaleCols(mx, k))] = 124;  // x1/8
  const std::vector<float> v = DequantizeOperand(mx, data.data(), scales.data(), 1, k, 1.0f);
  for (long i = 0; i < k; ++i) EXPECT_EQ(v[i], i < 32 ? 2.0f : 0.125f) << i;
}

TEST(LowPrecisionFormats, Nvfp4ReferenceGemmKnownAnswer) {
  // C[1,2] = A[1,32] x B[2,32]^T, two 16-element blocks along K.
  const LowPrecisionFormat& nv = F("nvfp4");
  const long m = 1, n = 2, k = 32;
  const long cols = PaddedScaleCols(nv, k);
  std::vector<uint8_t> a(OperandDataBytes(nv, m * k), 0x22);  // every element 1.0
  std::vector<uint8_t> b(OperandDataBytes(nv, n * k), 0x11);  // row 0: every element 0.5
  for (long i = k / 2; i < k; ++i) b[i] = 0;                   // row 1: zero ...
  b[k / 2] = 0x07;                                              // ... but its first element, 6
  std::vector<uint8_t> sa(ScaleTensorBytes(nv, m, k), 0x38), sb(ScaleTensorBytes(nv, n, k), 0x38);
  sa[ScaleOffset(0, 0, cols)] = 0x38;  // 1.0
  sa[ScaleOffset(0, 1, cols)] = 0x40;  // 2.0
  sb[ScaleOffset(0, 0, cols)] = 0x48;  // 4.0
  sb[ScaleOffset(0, 1, cols)] = 0x48;  // 4.0
  sb[ScaleOffset(1, 0, cols)] = 0x30;  // 0.5
  // Tensor scales 0.5 and 0.25: the product, 1/8, multiplies every output.
  const std::vector<float> c = LowPrecisionReferenceGemm(nv, a.data(), sa.data(), 0.5f, b.data(), sb.data(), 0.25f, m, n, k);
  ASSERT_EQ(c.size(), 2u);
  // Row 0 of B: 16 x (1 x 1)(0.5 x 4) + 16 x (1 x 2)(0.5 x 4) = 96, x 1/8.
  EXPECT_EQ(c[0], 12.0f);
  // Row 1: (1 x 1)(6 x 0.5) = 3, x 1/8.
  EXPECT_EQ(c[1], 0.375f);
}

TEST(LowPrecisionFormats, Fp8ReferenceIsThePlainGemm) {
  const LowPrecisionFormat& fp8 = F("fp8");
  const std::vector<uint8_t> a = {0x38, 0x40, 0xb8, 0x3c};  // [1, 2; -1, 1.5]
  const std::vector<uint8_t> b = {0x40, 0x38};               // [2, 1]
  const std::vector<float> c = LowPrecisionReferenceGemm(fp8, a.data(), nullptr, 1.0f, b.data(), nullptr, 1.0f, 2, 1, 2);
  EXPECT_EQ(c, (std::vector<float>{4.0f, -0.5f}));
}

TEST(LowPrecisionFormats, AgreeWithTheCostModelsPrecisions) {
  // Every format the sweep measures is a precision the cost model runs, the
  // profile key the fit writes is the one the cost model reads, and the bytes
  // per element with scales are the same in both places.
  for (const auto& f : kLowPrecisionFormats) {
    Precision p{};
    ASSERT_TRUE(ParsePrecision(f.name, p)) << f.name;
    EXPECT_TRUE(IsLowPrecision(p)) << f.name;
    EXPECT_STREQ(GemmRateKey(p), f.name);
    EXPECT_STREQ(RequiredPeakKey(p), f.name);
    EXPECT_DOUBLE_EQ(f.OperandBytes(), OperandBytes(p)) << f.name;
  }
  EXPECT_EQ(FindLowPrecisionFormat("fp8-blockwise"), nullptr);  // measured as fp8 (the same MMA rate)
  EXPECT_EQ(F("mxfp8").min_compute_capability, 100);
  EXPECT_EQ(F("nvfp4").min_compute_capability, 100);
}

}  // namespace
}  // namespace trainsim::calib
