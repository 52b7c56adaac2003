// The number formats a training step can run its matrix multiplies in
// (training.precision, design.md 3b), and what each one means for the cost
// and memory models: which GEMMs run in the low-precision format, which of the
// GPU profile's peak/efficiency keys they use, what the GPU must have, and how
// many bytes an element takes with its scale factors. The one place these
// facts live: the GPU cost model (sim/cost/gpu_cost_model.cc), the
// workload's cast operators (models/workload.cc) and the memory model
// (models/memory_model.cc) ask here.
//
// Recipes (what the frameworks do):
//   fp8            Transformer Engine per-tensor scaling (delayed or current):
//                  e4m3/e5m2 values, one fp32 scale per tensor.
//   fp8-blockwise  DeepSeek-V3 style fine-grained scaling: activations and
//                  gradients in 1x128 tiles, weights in 128x128 blocks, one
//                  fp32 scale per 128 elements of the operand.
//   fp8-rowwise    torchtitan's "rowwise" float8 recipe: one fp32 scale per
//                  row (per token of an activation, per output channel of a
//                  weight) for all three GEMMs.
//   mxfp8          OCP microscaling: e4m3 values, one E8M0 (1-byte) scale per
//                  32 consecutive elements along the reduction dimension;
//                  needs block-scaled tensor cores (Blackwell, sm_100+).
//   nvfp4          NVIDIA NVFP4: e2m1 (4-bit) values, one E4M3 (1-byte) scale
//                  per 16 elements plus one fp32 scale per tensor; Blackwell.
// In all low-precision recipes only the transformer layers' projection GEMMs
// (QKV, attention output, fc1, fc2: fprop, dgrad and wgrad) run in the low
// format; the attention core (flash kernel), the LM head, the embedding,
// norms and the optimizer stay in 16/32-bit (Transformer Engine and
// torchtitan both leave them out).
#pragma once

#include <string>
#include <string_view>

namespace trainsim {

enum class Precision { kBf16, kFp16, kFp8, kFp8Blockwise, kFp8Rowwise, kMxfp8, kNvfp4 };

// Where a per-tensor fp8 recipe takes its scale from (the framework's
// recipe, FrameworkProfile::fp8_scaling): the amax history of earlier
// iterations, which the cast itself updates as it goes (Transformer Engine's
// DelayedScaling), or the tensor's own amax, found before the cast can
// start (Float8CurrentScaling; torchao's dynamic "tensorwise" float8).
enum class Fp8Scaling { kDelayed, kCurrent };

// True when a cast must know the tensor's own absolute maximum before it
// quantizes: fp8 under current scaling, and nvfp4 always (its second-level
// fp32 scale is per tensor: TE's NVFP4Quantizer runs compute_amax, or the
// Hadamard transform's amax, then quantizes). Such a cast reads the 16-bit
// tensor once more, and a tensor split over the sequence-parallel ranks
// first agrees on one amax (a one-float max all-reduce over the TP group:
// TE sets with_amax_reduction on column-parallel inputs and row-parallel
// output gradients under sequence parallelism).
bool NeedsTensorAmax(Precision p, Fp8Scaling scaling);
// True when the step keeps an amax history per fp8 tensor (Transformer
// Engine's DelayedScaling): per-tensor fp8 under delayed scaling. Its scales
// are agreed across ranks after the forward and the backward of each model
// chunk (FrameworkProfile::fp8_amax_reduction), not cast by cast.
bool KeepsAmaxHistory(Precision p, Fp8Scaling scaling);

// CUDA kernels Transformer Engine launches to quantize one tensor for a
// low-precision GEMM (0 in 16-bit). A cast that NeedsTensorAmax takes four:
// it zeroes the amax, reduces the tensor into it, turns it into a scale,
// then casts and transposes (TE v2.9 pytorch/csrc/quantizer.cpp
// Float8CurrentScalingQuantizer::quantize, common/recipe/current_scaling.cu;
// nvfp4's per-tensor amax taken to cost the same); the others one, their
// scale being the amax history's or the block's own (cast_kernels.cuh).
int CastKernels(Precision p, Fp8Scaling scaling);
// The casts of a grouped GEMM's inputs, one tensor per local expert: TE's
// split_quantize has a multi-tensor kernel for delayed scaling alone and
// loops over the experts otherwise (TE v2.9 pytorch/csrc/extensions/cast.cpp).
int GroupedCastKernels(Precision p, Fp8Scaling scaling, int tensors);
// Kernels a low-precision GEMM call launches beside the GEMM: the
// block-scaled formats swizzle both operands' scale factors into the tensor
// cores' layout first (TE v2.9 pytorch/csrc/extensions/gemm.cpp; a grouped
// GEMM swizzles each operand list in one multi-tensor launch); 0 otherwise.
int ScaleSwizzleKernels(Precision p);

// Scenario spelling ("bf16", "fp8-blockwise", ...).
std::string ToString(Precision p);
// The precision of a scenario spelling; false when there is none.
bool ParsePrecision(const std::string& name, Precision& out);
// Every scenario spelling, in the order design.md 3b lists them.
const char* const* PrecisionNames(int& count);

// A training recipe's name as a framework spells it (Megatron-Bridge's
// mixed-precision recipes, "bf16_with_fp8_current_scaling_mixed", and its
// performance scripts' "fp8_cs"; Lightning's "bf16-mixed"), for an error that
// says what to write instead: trainsim's spelling, and for per-tensor fp8 the
// framework profile's fp8_scaling it implies. nullptr for any other name.
const char* PrecisionOfRecipeName(std::string_view name);

// True when the projection GEMMs run in an 8- or 4-bit format.
bool IsLowPrecision(Precision p);

// The GPU profile key (peak_tflops, matmul.*) whose rate a GEMM of this
// precision runs at: "bf16" / "fp16" for the 16-bit formats, "fp8" for the
// three fp8 recipes (the scales are applied outside the tensor-core MMA on
// Hopper: DeepGEMM's and cuBLASLt's scaled GEMMs run at the fp8 rate),
// "mxfp8" and "nvfp4" for the block-scaled formats.
const char* GemmRateKey(Precision p);
// The key whose presence in a GPU profile's peak_tflops says the GPU can run
// the precision at all: "fp8" for the fp8 recipes, "mxfp8" / "nvfp4" for the
// block-scaled ones (Hopper has no block-scaled MMA, so a Hopper profile has
// neither), "" for the 16-bit formats (every profile has them).
const char* RequiredPeakKey(Precision p);

// Bytes per element of a quantized GEMM operand, scale factors included, for
// rows of `row_elems` elements (the rowwise recipe's scale is per row):
// 16-bit 2; fp8 1; fp8-blockwise 1 + 4/128; fp8-rowwise 1 + 4/row_elems;
// mxfp8 1 + 1/32; nvfp4 0.5 + 1/16.
double OperandBytes(Precision p, double row_elems = 8192);

// HBM bytes per element of the cast that quantizes a 16-bit tensor before a
// low-precision GEMM (0 in 16-bit): it reads the 16-bit element and writes
// `copies` quantized ones. Forward inputs: one copy for fp8 (Transformer
// Engine's per-tensor copy is transposed on the fly for the weight
// gradient), two for the block-scaled recipes (blocks run along the
// reduction dimension, so the weight gradient, which reduces over tokens,
// needs a second copy quantized along the other axis). Output gradients in
// the backward: always both orientations (dgrad and wgrad reduce over
// different axes). A cast that NeedsTensorAmax reads the 16-bit element a
// second time for its amax pass.
double ForwardCastBytesPerElement(Precision p, Fp8Scaling scaling, double row_elems = 8192);
double BackwardCastBytesPerElement(Precision p, Fp8Scaling scaling, double row_elems = 8192);

// Bytes per element of a projection input saved for the backward: the
// quantized copy the weight gradient reads (Transformer Engine keeps it
// instead of the 16-bit tensor), 2 in 16-bit.
double SavedInputBytes(Precision p, double row_elems = 8192);

}  // namespace trainsim
