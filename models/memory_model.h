// Memory per GPU, on the pipeline rank that needs the most: 16-bit weights, fp32 gradient buffer, Adam state (sharded
// over data-parallel ranks with the distributed optimizer), and activations by
// Korthikanti et al. 2022 (arXiv 2205.05198) §4, generalised to GQA, SwiGLU
// and flash attention, times the micro batches a 1F1B or interleaved pipeline
// keeps in flight on its first stage. Checked against the GPU's usable memory.
//
// Sharded data parallel over a shard group of G gradient replicas
// (parallelism.data_sharding, sharding_group): optimizer (ZeRO-1) divides the
// Adam state by G; gradients (ZeRO-2) also the fp32 gradients, plus the
// unsharded gradients of the units in flight before their reduce-scatter;
// full (FSDP / ZeRO-3) also the 16-bit weights, plus the gathered units in
// flight. Under LoRA the base weights are frozen: gradients and optimizer
// state are the adapters' alone (Hu et al. 2021, arXiv 2106.09685).
#pragma once

#include "models/workload.h"
#include "sim/core/result.h"
#include "sim/core/scenario.h"

namespace trainsim {

// Activation bytes one transformer layer stores for one micro batch on one GPU
// (the first layer's kind, or the given kind), under the scenario's recompute.
double LayerActivationBytes(const Scenario& s);
double LayerActivationBytes(const Scenario& s, const LayerKind& kind);

// What training.recompute = selective frees of one layer's activations (the
// first layer's kind) against keeping them all, 0..1; 0 unless recompute is
// selective. Near 0 where only the attention core is recomputed and the
// attention kernel is fused: it keeps no s x s scores to free.
double SelectiveRecomputeFreedShare(const Scenario& s);

// Activation offload (training.activation_offload_layers = N): the bytes
// one GPU keeps in host memory for one micro batch, the first N layers'
// activations; and the largest of them, which stays on the GPU while its
// copy runs behind the next layer (Transformer Engine's offload handler
// releases a layer's tensors once their copy is done).
struct OffloadedActivations {
  double host_bytes = 0;
  double largest_layer_bytes = 0;
};
OffloadedActivations OffloadedActivationBytes(const Scenario& s, const Workload& w);

// Micro batches whose activations pipeline rank `rank` holds at its peak
// (in units of the rank's whole layer set); without `rank`, the first rank's.
double InFlightMicrobatches(const Scenario& s, int rank);
double InFlightMicrobatches(const Scenario& s);

// Units (layers) a sharded data-parallel rank holds unsharded at once: the
// one computing and the one prefetched behind it (FSDP2's implicit prefetch of
// one unit; torchtitan's default).
constexpr double kShardUnitsInFlight = 2;

// Reads only the workload's kHoldings part (BuildWorkload). `explain`:
// format the reason of a GPU that does not fit (a search that only counts
// the configurations that do not fit skips it).
MemoryReport EstimateMemory(const Scenario& s, const Workload& w, bool explain = true);

}  // namespace trainsim
