#include "sim/core/precision.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace trainsim {
namespace {

constexpr double k16BitBytes = 2.0;
constexpr double kFp32ScaleBytes = 4.0;
// Elements sharing one scale: DeepSeek-V3's 1x128 / 128x128 tiles, the OCP MX
// block of 32, NVFP4's block of 16 (its per-tensor fp32 scale is negligible).
constexpr double kBlockwiseElems = 128;
constexpr double kMxBlockElems = 32;
constexpr double kNvfp4BlockElems = 16;
constexpr double kE8m0Bytes = 1.0;   // MX scale
constexpr double kE4m3Bytes = 1.0;   // NVFP4 block scale
constexpr double kFp4Bytes = 0.5;

constexpr const char* kNames[] = {"bf16", "fp16", "fp8", "fp8-blockwise", "fp8-rowwise", "mxfp8", "nvfp4"};
constexpr Precision kValues[] = {Precision::kBf16,         Precision::kFp16,  Precision::kFp8,  Precision::kFp8Blockwise,
                                 Precision::kFp8Rowwise,   Precision::kMxfp8, Precision::kNvfp4};

// Quantized copies a forward input cast writes (see precision.h).
int ForwardCopies(Precision p) { return p == Precision::kFp8 ? 1 : 2; }

}  // namespace

std::string ToString(Precision p) {
  for (size_t i = 0; i < std::size(kValues); ++i) {
    if (kValues[i] == p) return kNames[i];
  }
  return "bf16";
}

bool ParsePrecision(const std::string& name, Precision& out) {
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (name == kNames[i]) {
      out = kValues[i];
      return true;
    }
  }
  return false;
}

const char* const* PrecisionNames(int& count) {
  count = int(std::size(kNames));
  return kNames;
}

const char* PrecisionOfRecipeName(std::string_view name) {
  std::string key(name);
  for (char& c : key) c = c == '-' ? '_' : char(std::tolower(static_cast<unsigned char>(c)));
  // Megatron-Bridge src/megatron/bridge/training/mixed_precision.py registers each recipe under its
  // function name with underscores and with hyphens; scripts/performance names them by compute dtype.
  constexpr const char* kDelayed = "fp8 (with fp8_scaling: delayed in the framework profile)";
  constexpr const char* kCurrent = "fp8 (with fp8_scaling: current in the framework profile)";
  static const std::pair<const char*, const char*> kRecipes[] = {
      {"bf16_mixed", "bf16"},
      {"bf16_true", "bf16"},
      {"fp16_mixed", "fp16"},
      {"16_mixed", "fp16"},
      {"bf16_with_fp8_delayed_scaling_mixed", kDelayed},
      {"fp16_with_fp8_delayed_scaling_mixed", kDelayed},
      {"fp8_ds", kDelayed},
      {"bf16_with_fp8_current_scaling_mixed", kCurrent},
      {"fp16_with_fp8_current_scaling_mixed", kCurrent},
      {"fp8_cs", kCurrent},
      {"bf16_with_mxfp8_mixed", "mxfp8"},
      {"fp16_with_mxfp8_mixed", "mxfp8"},
      {"fp8_mx", "mxfp8"},
      {"bf16_with_fp8_subchannel_scaling_mixed", "fp8-blockwise"},
      {"fp16_with_fp8_subchannel_scaling_mixed", "fp8-blockwise"},
      {"fp8_sc", "fp8-blockwise"},
      {"bf16_with_nvfp4_mixed", "nvfp4"},
  };
  for (const auto& [recipe, precision] : kRecipes) {
    if (key == recipe) return precision;
  }
  return nullptr;
}

bool IsLowPrecision(Precision p) { return p != Precision::kBf16 && p != Precision::kFp16; }

const char* GemmRateKey(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp8:
    case Precision::kFp8Blockwise:
    case Precision::kFp8Rowwise: return "fp8";
    case Precision::kMxfp8: return "mxfp8";
    case Precision::kNvfp4: return "nvfp4";
  }
  return "bf16";
}

const char* RequiredPeakKey(Precision p) { return IsLowPrecision(p) ? GemmRateKey(p) : ""; }

double OperandBytes(Precision p, double row_elems) {
  switch (p) {
    case Precision::kBf16:
    case Precision::kFp16: return k16BitBytes;
    case Precision::kFp8: return 1.0;
    case Precision::kFp8Blockwise: return 1.0 + kFp32ScaleBytes / kBlockwiseElems;
    case Precision::kFp8Rowwise: return 1.0 + kFp32ScaleBytes / std::max(1.0, row_elems);
    case Precision::kMxfp8: return 1.0 + kE8m0Bytes / kMxBlockElems;
    case Precision::kNvfp4: return kFp4Bytes + kE4m3Bytes / kNvfp4BlockElems;
  }
  return k16BitBytes;
}

bool NeedsTensorAmax(Precision p, Fp8Scaling scaling) {
  return p == Precision::kNvfp4 || (p == Precision::kFp8 && scaling == Fp8Scaling::kCurrent);
}

bool KeepsAmaxHistory(Precision p, Fp8Scaling scaling) { return p == Precision::kFp8 && scaling == Fp8Scaling::kDelayed; }

int CastKernels(Precision p, Fp8Scaling scaling) {
  if (!IsLowPrecision(p)) return 0;
  return NeedsTensorAmax(p, scaling) ? 4 : 1;
}

int GroupedCastKernels(Precision p, Fp8Scaling scaling, int tensors) {
  if (!IsLowPrecision(p)) return 0;
  return KeepsAmaxHistory(p, scaling) ? 1 : tensors * CastKernels(p, scaling);
}

int ScaleSwizzleKernels(Precision p) { return p == Precision::kMxfp8 || p == Precision::kNvfp4 ? 2 : 0; }

double ForwardCastBytesPerElement(Precision p, Fp8Scaling scaling, double row_elems) {
  if (!IsLowPrecision(p)) return 0;
  const double reads = NeedsTensorAmax(p, scaling) ? 2 : 1;
  return reads * k16BitBytes + ForwardCopies(p) * OperandBytes(p, row_elems);
}

double BackwardCastBytesPerElement(Precision p, Fp8Scaling scaling, double row_elems) {
  if (!IsLowPrecision(p)) return 0;
  const double reads = NeedsTensorAmax(p, scaling) ? 2 : 1;
  return reads * k16BitBytes + 2 * OperandBytes(p, row_elems);
}

double SavedInputBytes(Precision p, double row_elems) { return OperandBytes(p, row_elems); }

}  // namespace trainsim
