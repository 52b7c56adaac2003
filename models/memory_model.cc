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
  // With fp8 the four projections keep their inputs for the weight gradient
  // in fp8 (Transformer Engine saves the quantized copy), the rest stays 16-bit.
  const double in = tr.precision == Precision::kFp8 ? 1.0 : 2.0;
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

double InFlightMicrobatches(const Scenario& sc) {
  const Parallelism& p = sc.parallelism;
  const double m = sc.microbatches_per_step();
  if (p.pipeline == 1) return 1;
  // 1F1B: the first stage holds p micro batches; interleaving adds (p-1)/(p v) of a stage's worth.
  const double in_flight = p.pipeline * (1.0 + (p.virtual_stages > 1 ? double(p.pipeline - 1) / (p.pipeline * p.virtual_stages) : 0.0));
  return std::min(in_flight, m * 1.0);
}

MemoryReport EstimateMemory(const Scenario& sc, const Workload& w) {
  const Parallelism& p = sc.parallelism;
  MemoryReport r;
  const double params = w.params_per_gpu_max_stage;
  r.weights_gib = params * 2 / kGiB;
  r.gradients_gib = params * 4 / kGiB;  // fp32 main-grad buffer
  r.optimizer_gib = params * 12 / (p.distributed_optimizer ? p.gradient_replicas() : 1) / kGiB;  // master + two moments
  const double layers_on_stage = double(sc.model.layers) / p.pipeline;
  double act = LayerActivationBytes(sc) * layers_on_stage * InFlightMicrobatches(sc);
  // The embedding output of each in-flight micro batch, and with full recompute one layer's
  // full activations while it is recomputed.
  const double tokens = double(sc.training.seq_len) / p.context * sc.training.micro_batch;
  act += tokens * sc.model.hidden * 2 / (p.sequence_parallel ? p.tensor : 1) * InFlightMicrobatches(sc);
  if (sc.training.recompute == Recompute::kFull) act += LayerActivationBytes(sc, Recompute::kNone);
  if (p.pipeline == 1) act += tokens * double(sc.model.vocab) / p.tensor * 4;  // fp32 logits for the loss
  r.activations_gib = act / kGiB;
  const GpuProfile& g = sc.node.gpu;
  r.capacity_gib = g.memory_bytes * g.usable_memory_fraction / kGiB;
  r.workspace_gib = g.memory_bytes * (1 - g.usable_memory_fraction) / kGiB;
  r.peak_gib_per_gpu = r.weights_gib + r.gradients_gib + r.optimizer_gib + r.activations_gib;
  r.fits = r.peak_gib_per_gpu <= r.capacity_gib;
  if (!r.fits) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "needs %.1f GiB per GPU (weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f) but %s has %.1f GiB usable",
                  r.peak_gib_per_gpu, r.weights_gib, r.gradients_gib, r.optimizer_gib, r.activations_gib, g.name.c_str(),
                  r.capacity_gib);
    r.reason = buf;
  }
  return r;
}

}  // namespace trainsim
