// The numerical check of the GPU layer step: the same layer (calib/layer_step.h)
// on the GPU backend and on the host reference (calib/host_kernels.h, naive
// GEMMs in double accumulation), same deterministic inputs; the result is the
// largest relative error over y, dx, dW_qkv, dW_1 and the first norm's gain
// gradient (max |gpu - host| / max |host| per tensor).
#pragma once

#include <string>

#include "calib/cuda/cuda_ops.h"
#include "calib/layer_step.h"

namespace trainsim::calib {

// A shape small enough for the naive host GEMMs (well under a second).
inline LayerShape CheckShape() { return LayerShape{256, 688, 8, 2, 128, 2}; }

// Number of CUDA devices; 0 when there is none or no driver ("why" says which).
int CudaDeviceCount(std::string* why);

double GpuLayerCheck(const LayerShape& shape, GemmMath math, std::string* detail);

}  // namespace trainsim::calib
