#include "calib/cuda/gpu_check.h"

#include <algorithm>
#include <cstdio>

#include "calib/host_kernels.h"

namespace trainsim::calib {

int CudaDeviceCount(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    cudaGetLastError();  // clear the sticky error
    return 0;
  }
  if (n == 0 && why) *why = "cudaGetDeviceCount reports no device";
  return n;
}

double GpuLayerCheck(const LayerShape& shape, GemmMath math, std::string* detail) {
  const LayerInputs in = MakeLayerInputs(shape);
  CudaOps gpu_ops(math);
  LayerStep<CudaOps> gpu(gpu_ops, shape, in);
  gpu.Forward();
  gpu.Backward();
  CudaCheck(cudaGetLastError(), "layer kernels");
  host::ReferenceOps ref_ops;
  LayerStep<host::ReferenceOps> ref(ref_ops, shape, in);
  ref.Forward();
  ref.Backward();
  const double e_y = host::MaxRelativeError(gpu.y().ToHost(), ref.y());
  const double e_dx = host::MaxRelativeError(gpu.dx().ToHost(), ref.dx());
  const double e_wqkv = host::MaxRelativeError(gpu.dw_qkv().ToHost(), ref.dw_qkv());
  const double e_w1 = host::MaxRelativeError(gpu.dw_1().ToHost(), ref.dw_1());
  const double e_g1 = host::MaxRelativeError(gpu.dg_1().ToHost(), ref.dg_1());
  if (detail) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "y %.2e, dx %.2e, dW_qkv %.2e, dW_1 %.2e, dg_1 %.2e", e_y, e_dx, e_wqkv, e_w1, e_g1);
    *detail = buf;
  }
  return std::max({e_y, e_dx, e_wqkv, e_w1, e_g1});
}

}  // namespace trainsim::calib
