#include "models/memory_model.h"

#include <algorithm>
#include <cstdio>

namespace trainsim {
namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}


namespace {

// Activation bytes of one layer under a given recompute mode (the layer being
// recomputed under full recompute holds its no-recompute activations).
double LayerActivationBytes(const Scenario& sc, Recompute recompute) {
  const ModelSpec& m = sc.model;
  const Parallelism& p = sc.parallelism;
  const Training& tr = sc.training;
  const double t = p.tensor;
  const double sb = double(tr.seq_len) / p.context * tr.micro_batch;  // tokens per GPU
  const double h = m.hidden, f = m.ffn_hidden;
  const double kv = double(m.kv_dim());
  const double a = m.heads, s = tr.seq_len;
  const bool dropout = tr.dropout > 0;
  const bool swiglu = m.activation == Activation::kSwiGlu;
  // Korthikanti's 34sbh splits into a part inside the TP region (divided by t)
  // and a part outside it (divided by t only with sequence parallelism).
  const double mask = dropout ? 1.0 : 0.0;
  // In a low-precision format the four projections keep their inputs for the
  // weight gradient quantized (Transformer Engine saves the quantized copy,
  // scale factors included: sim/core/precision.h), the rest stays 16-bit.
  const double in = SavedInputBytes(tr.precision, h);
  const double outside = 4 * h /* norm inputs */ + in * h + in * h /* QKV and fc1 inputs */ + 2 * mask * h /* dropout masks */;
  // With flash attention the proj input is the kernel's output O, which the
  // kernel keeps in 16-bit for its own backward; an fp8 proj keeps a copy too.
  const bool flash = tr.attention == AttentionKernel::kFlash;
  const double proj_in = flash && in < 2 ? 2 + in : in;
  const double inside_attn = 2 * h /* Q */ + 4 * kv /* K, V */ + proj_in * h /* proj input */;
  const double inside_mlp = (swiglu ? 4 * f : 2 * f) /* activation input(s) */ + in * f /* fc2 input */;
  double scores = 0;  // per token: the unfused path keeps the s x s scores, softmax output, dropout mask
  if (tr.attention == AttentionKernel::kUnfused) scores = a * s / p.context * (2 + 2 + mask);
  else scores = a * 4.0 * 2 / s;  // flash keeps only the softmax statistics (negligible)

  switch (recompute) {
    case Recompute::kFull:
      return sb * 2 * h / (p.sequence_parallel ? t : 1);  // the layer input only
    case Recompute::kSelective:
      return sb * (outside / (p.sequence_parallel ? t : 1) + (inside_attn + inside_mlp) / t);
    case Recompute::kNone:
      break;
  }
  return sb * (outside / (p.sequence_parallel ? t : 1) + (inside_attn + inside_mlp + scores) / t);
}

}  // namespace

double LayerActivationBytes(const Scenario& sc) { return LayerActivationBytes(sc, sc.training.recompute); }

double InFlightMicrobatches(const Scenario& sc, int rank) {
  const Parallelism& p = sc.parallelism;
  const double m = sc.microbatches_per_step();
  if (p.pipeline == 1) return 1;
  const double v = p.virtual_stages;
  // 1F1B: rank r holds p - r micro batches after its warm-up. Interleaved
  // (Megatron's schedule): (p - r - 1) * 2 + (v - 1) * p warm-up chunk
  // passes plus the one in flight, in units of the rank's v chunks.
  const double in_flight = v == 1 ? p.pipeline - rank : ((p.pipeline - rank - 1) * 2.0 + (v - 1) * p.pipeline + 1) / v;
  return std::min(in_flight, m);
}

double InFlightMicrobatches(const Scenario& sc) { return InFlightMicrobatches(sc, 0); }

MemoryReport EstimateMemory(const Scenario& sc, const Workload& w) {
  const Parallelism& p = sc.parallelism;
  const GpuProfile& g = sc.node.gpu;
  const double tokens = double(sc.training.seq_len) / p.context * sc.training.micro_batch;
  const double layer_act = LayerActivationBytes(sc);
  MemoryReport r;
  bool first = true;
  // Every rank is checked: uneven stages move the peak away from rank 0.
  for (int rank = 0; rank < p.pipeline; ++rank) {
    const RankState& state = w.rank_state[size_t(rank)];
    const double params = state.params_per_gpu;
    const double trainable = state.trainable_params_per_gpu;  // all of them, or LoRA's adapters
    const double adapters = sc.training.finetune.lora() ? trainable : 0;  // weights beside the frozen base
    // Sharded data parallel (models/memory_model.h): over the shard group G,
    // with the units in flight gathered in full.
    const double G = p.shard_group();
    const DataSharding mode = p.data_sharding;
    const double units = kShardUnitsInFlight;
    MemoryReport m;
    // Base weights and LoRA adapters (16-bit); FSDP keeps 1/G of each plus the units in flight.
    const bool full = mode == DataSharding::kFull;
    const double base = full ? params / G + units * w.layer_params_per_gpu : params;
    const double adapter = adapters == 0 ? 0 : full ? adapters / G + units * w.layer_trainable_params_per_gpu : adapters;
    // Frozen LoRA base weights under fp8 are kept as Transformer Engine's fp8
    // copy alone (fp8_model_init): no optimizer updates them, so no 16-bit copy.
    const double base_bytes = adapters > 0 && IsLowPrecision(sc.training.precision) ? OperandBytes(sc.training.precision, sc.model.hidden) : 2;
    m.weights_gib = (base * base_bytes + adapter * 2) / kGiB;
    const bool grads_sharded = mode == DataSharding::kGradients || mode == DataSharding::kFull;
    const double grads = grads_sharded ? trainable / G + units * w.layer_trainable_params_per_gpu : trainable;
    m.gradients_gib = grads * 4 / kGiB;  // fp32 main-grad buffer
    m.optimizer_gib = trainable * 12 / G / kGiB;  // master + two moments (G = 1 without sharding)
    const double in_flight = InFlightMicrobatches(sc, rank);
    double act = layer_act * w.stages.RankLayers(rank) * in_flight;
    // The embedding output of each in-flight micro batch (first rank), and
    // with full recompute one layer's full activations while it is recomputed.
    if (rank == 0) act += tokens * sc.model.hidden * 2 / (p.sequence_parallel ? p.tensor : 1) * in_flight;
    if (sc.training.recompute == Recompute::kFull) act += LayerActivationBytes(sc, Recompute::kNone);
    if (p.pipeline == 1) act += tokens * double(sc.model.vocab) / p.tensor * 4;  // fp32 logits for the loss
    m.activations_gib = act / kGiB;
    m.peak_gib_per_gpu = m.weights_gib + m.gradients_gib + m.optimizer_gib + m.activations_gib;
    if (first || m.peak_gib_per_gpu > r.peak_gib_per_gpu) {
      r = m;
      r.peak_stage = rank;
    }
    first = false;
  }
  r.capacity_gib = g.memory_bytes * g.usable_memory_fraction / kGiB;
  r.workspace_gib = g.memory_bytes * (1 - g.usable_memory_fraction) / kGiB;
  r.fits = r.peak_gib_per_gpu <= r.capacity_gib;
  if (!r.fits) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "needs %.1f GiB per GPU (weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f%s) but %s has %.1f GiB usable",
                  r.peak_gib_per_gpu, r.weights_gib, r.gradients_gib, r.optimizer_gib, r.activations_gib,
                  w.stages.even() || p.pipeline == 1 ? "" : (", on pipeline stage " + std::to_string(r.peak_stage)).c_str(), g.name.c_str(),
                  r.capacity_gib);
    r.reason = buf;
  }
  return r;
}

}  // namespace trainsim
