// The low-precision GEMM formats the GPU sweep measures (fp8, mxfp8, nvfp4),
// header-only (C++17, no CUDA) so that the standalone CUDA measuring program,
// the measurements reader and the fit share one description, and the host
// reference of a block-scaled GEMM (decode the elements, apply the scales,
// multiply in fp32) runs in the CPU test suite as well as in the GPU check.
// What the formats mean for the cost model (which GEMMs run in them, bytes
// with scales) is sim/core/precision.h; a test ties the two together.
//
//   fp8    e4m3 x e4m3, one fp32 scale per tensor (Transformer Engine's
//          per-tensor recipe): cuBLASLt on compute capability >= 8.9.
//   mxfp8  e4m3 elements, one UE8M0 (power-of-two) scale per 32 consecutive
//          elements along K (OCP microscaling): block-scaled tensor cores,
//          compute capability >= 10.0 (Blackwell).
//   nvfp4  e2m1 elements (two per byte, the first in the low nibble), one
//          UE4M3 scale per 16 elements along K, and one fp32 scale per
//          tensor (cuBLASLt takes the product of the two tensor scales as
//          alpha); compute capability >= 10.0.
//
// Block scales are stored in cuBLASLt's tiled layout (cuBLAS documentation,
// "1D block scaling factors layout"; the same as Transformer Engine's
// swizzled scale_inv and CUTLASS's Sm1xx block-scaled layout): the
// [rows, K / block] scale matrix of an operand whose K is contiguous is cut
// into tiles of 128 rows x 4 scale columns (512 bytes each, zero-padded at
// the edges), the tiles stored with the K direction fastest, and inside a
// tile the scale of (row r, column c) at byte (r % 32) * 16 + (r / 32) * 4 + c.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "calib/host_kernels.h"

namespace trainsim::calib {

enum class ScaleKind {
  kTensorFp32,   // one fp32 scale per tensor (fp8)
  kBlockUe8m0,   // one power-of-two byte per block (mxfp8)
  kBlockUe4m3,   // one unsigned e4m3 byte per block, plus an fp32 tensor scale (nvfp4)
};

struct LowPrecisionFormat {
  const char* name;           // the measurements' `precision` and the profile key (sim/core/precision.h spelling)
  int element_bits;           // 8 (e4m3) or 4 (e2m1)
  int block_elements;         // elements along K sharing one scale; 0: one scale per tensor
  ScaleKind scale;
  int min_compute_capability;  // major * 10 + minor
  const char* what;           // for the profile's comments
  bool BlockScaled() const { return block_elements > 0; }
  // Bytes per element with its scale factors (sim/core/precision.h OperandBytes).
  double OperandBytes() const { return element_bits / 8.0 + (BlockScaled() ? 1.0 / block_elements : 0.0); }
};

inline constexpr LowPrecisionFormat kLowPrecisionFormats[] = {
    {"fp8", 8, 0, ScaleKind::kTensorFp32, 89, "cuBLASLt e4m3 x e4m3, per-tensor scales, fp32 accumulation, bf16 output"},
    {"mxfp8", 8, 32, ScaleKind::kBlockUe8m0, 100,
     "cuBLASLt mxfp8: e4m3 with one UE8M0 scale per 32 elements along K, fp32 accumulation, bf16 output"},
    {"nvfp4", 4, 16, ScaleKind::kBlockUe4m3, 100,
     "cuBLASLt nvfp4: e2m1 with one UE4M3 scale per 16 elements along K and an fp32 tensor scale, fp32 accumulation, "
     "bf16 output"},
};

// The format named `name`; nullptr when it is not a low-precision format.
inline const LowPrecisionFormat* FindLowPrecisionFormat(const std::string& name) {
  for (const auto& f : kLowPrecisionFormats) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

// --- element and scale codes -------------------------------------------------

// OCP e4m3 ("fn": no infinities, 0x7f/0xff NaN), bias 7.
inline float DecodeE4m3(uint8_t b) {
  const int sign = b >> 7, exp = (b >> 3) & 0xf, mant = b & 7;
  if (exp == 15 && mant == 7) return NAN;
  const float mag = exp == 0 ? std::ldexp(float(mant) / 8.0f, -6) : std::ldexp(1.0f + float(mant) / 8.0f, exp - 7);
  return sign ? -mag : mag;
}

// e2m1 (a nibble): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
inline float DecodeE2m1(uint8_t nibble) {
  const int sign = (nibble >> 3) & 1, exp = (nibble >> 1) & 3, mant = nibble & 1;
  const float mag = exp == 0 ? 0.5f * float(mant) : std::ldexp(1.0f + 0.5f * float(mant), exp - 1);
  return sign ? -mag : mag;
}

// UE8M0: 2^(b - 127); 0xff is NaN.
inline float DecodeUe8m0(uint8_t b) { return b == 0xff ? NAN : std::ldexp(1.0f, int(b) - 127); }

// UE4M3: e4m3 without its sign bit (cuBLASLt ignores it; the fills keep it 0).
inline float DecodeUe4m3(uint8_t b) { return DecodeE4m3(uint8_t(b & 0x7f)); }

inline float DecodeBlockScale(const LowPrecisionFormat& f, uint8_t b) {
  return f.scale == ScaleKind::kBlockUe8m0 ? DecodeUe8m0(b) : DecodeUe4m3(b);
}

// Element `i` of a row-major operand stored in `f`'s element type.
inline float DecodeElement(const LowPrecisionFormat& f, const uint8_t* data, size_t i) {
  if (f.element_bits == 8) return DecodeE4m3(data[i]);
  const uint8_t byte = data[i / 2];
  return DecodeE2m1(uint8_t(i % 2 ? byte >> 4 : byte & 0xf));
}

inline size_t OperandDataBytes(const LowPrecisionFormat& f, size_t elements) {
  return (elements * size_t(f.element_bits) + 7) / 8;
}

// --- the tiled scale layout ----------------------------------------------------

constexpr long kScaleTileRows = 128;
constexpr long kScaleTileCols = 4;

inline long RoundUp(long x, long to) { return (x + to - 1) / to * to; }

// Scale columns (blocks along K) of a row, padded to whole tiles.
inline long PaddedScaleCols(const LowPrecisionFormat& f, long k) {
  return RoundUp((k + f.block_elements - 1) / f.block_elements, kScaleTileCols);
}

// Bytes of the scale tensor of a [rows, k] operand (K contiguous).
inline size_t ScaleTensorBytes(const LowPrecisionFormat& f, long rows, long k) {
  return f.BlockScaled() ? size_t(RoundUp(rows, kScaleTileRows)) * size_t(PaddedScaleCols(f, k)) : 0;
}

// Where the scale of (row, K block `col`) lies, for an operand with
// `padded_cols` scale columns (PaddedScaleCols).
inline size_t ScaleOffset(long row, long col, long padded_cols) {
  const long tile = (row / kScaleTileRows) * (padded_cols / kScaleTileCols) + col / kScaleTileCols;
  const long r = row % kScaleTileRows;
  return size_t(tile) * (kScaleTileRows * kScaleTileCols) + size_t((r % 32) * 16 + (r / 32) * 4 + col % kScaleTileCols);
}

// --- the host reference ------------------------------------------------------

// A row-major [rows, k] operand in `f` with its block scales (tiled layout;
// ignored for fp8) and tensor scale, dequantized to float (exact: every
// element x scale product of these formats is a float).
inline std::vector<float> DequantizeOperand(const LowPrecisionFormat& f, const uint8_t* data, const uint8_t* scales,
                                            long rows, long k, float tensor_scale) {
  std::vector<float> out(size_t(rows) * size_t(k));
  const long cols = f.BlockScaled() ? PaddedScaleCols(f, k) : 0;
  for (long r = 0; r < rows; ++r) {
    for (long c = 0; c < k; ++c) {
      const size_t i = size_t(r) * size_t(k) + size_t(c);
      float v = DecodeElement(f, data, i) * tensor_scale;
      if (f.BlockScaled()) v *= DecodeBlockScale(f, scales[ScaleOffset(r, c / f.block_elements, cols)]);
      out[i] = v;
    }
  }
  return out;
}

// The reference of the sweep's low-precision GEMM: row-major C[m,n] =
// A[m,k] x B[n,k]^T (the "nt" layout cuBLASLt's low-precision kernels run),
// from the stored codes, in double accumulation (host::NaiveGemm).
inline std::vector<float> LowPrecisionReferenceGemm(const LowPrecisionFormat& f, const uint8_t* a, const uint8_t* a_scales,
                                                    float a_tensor_scale, const uint8_t* b, const uint8_t* b_scales,
                                                    float b_tensor_scale, long m, long n, long k) {
  const std::vector<float> fa = DequantizeOperand(f, a, a_scales, m, k, a_tensor_scale);
  const std::vector<float> fb = DequantizeOperand(f, b, b_scales, n, k, b_tensor_scale);
  std::vector<float> c(size_t(m) * size_t(n), 0.0f);
  host::NaiveGemm(false, true, int(m), int(n), int(k), 1.0f, fa.data(), int(k), fb.data(), int(k), 0.0f, c.data(), int(n));
  return c;
}

}  // namespace trainsim::calib
