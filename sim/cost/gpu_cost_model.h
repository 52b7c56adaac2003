// How long one operator takes on one GPU: GEMMs by a roofline with the
// profile's best-shape efficiency, wave quantization over the SMs and a
// small-K penalty; flash attention by its sequence-length curve; everything
// else by HBM bandwidth. The same functions serve the analytical path, the
// DES and `validate --profile` of a calibrated profile.
#pragma once

#include "models/workload.h"
#include "sim/core/hardware_profile.h"

namespace trainsim {

// out_bytes: what the epilogue moves per output element; the profile's k_half
// is for a 2-byte output and the per-tile epilogue grows with the bytes.
double GemmEfficiency(const GpuProfile& gpu, Precision precision, double m, double n, double k, double batch,
                      double out_bytes = 2);
double OperatorTime(const Operator& op, const GpuProfile& gpu, Precision precision, bool backward = false);
double PassComputeTime(const PassWork& pass, const GpuProfile& gpu, Precision precision, bool backward);

}  // namespace trainsim
