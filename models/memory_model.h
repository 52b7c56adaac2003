// Memory per GPU, on the pipeline rank that needs the most: 16-bit weights, fp32 gradient buffer, Adam state (sharded
// over data-parallel ranks with the distributed optimizer), and activations by
// Korthikanti et al. 2022 (arXiv 2205.05198) §4, generalised to GQA, SwiGLU
// and flash attention, times the micro batches a 1F1B or interleaved pipeline
// keeps in flight on its first stage. Checked against the GPU's usable memory.
#pragma once

#include "models/workload.h"
#include "sim/core/result.h"
#include "sim/core/scenario.h"

namespace trainsim {

// Activation bytes one transformer layer stores for one micro batch on one GPU.
double LayerActivationBytes(const Scenario& s);

// Micro batches whose activations pipeline rank `rank` holds at its peak
// (in units of the rank's whole layer set); without `rank`, the first rank's.
double InFlightMicrobatches(const Scenario& s, int rank);
double InFlightMicrobatches(const Scenario& s);

MemoryReport EstimateMemory(const Scenario& s, const Workload& w);

}  // namespace trainsim
