#include "sim/core/scenario.h"

#include <string>

namespace trainsim {

std::string ToString(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "none";
}

std::optional<InputError> CheckParallelism(const Scenario& s) {
  // One set of rules for the parser, sweeps and the planner, so a sweep row,
  // a plan rejection and `trainsim run` say the same thing about the same settings.
  const Parallelism& par = s.parallelism;
  const ModelSpec& m = s.model;
  auto fail = [&](const std::string& key, const std::string& msg) { return InputError{s.source_file, 0, key, msg}; };
  const int gpus = s.gpus();
  const int tpc = par.tensor * par.pipeline * par.context;
  if (tpc <= 0 || par.data <= 0 || gpus % tpc != 0) {
    return fail("parallelism.tensor", "tensor x pipeline x context = " + std::to_string(tpc) + " does not divide the " + std::to_string(gpus) + " GPUs");
  }
  if (tpc * par.data != gpus) {
    return fail("parallelism.data", "tensor x pipeline x context x data = " + std::to_string(tpc * par.data) + " but the cluster has " + std::to_string(gpus) + " GPUs");
  }
  if (m.heads % par.tensor != 0) return fail("parallelism.tensor", "tensor " + std::to_string(par.tensor) + " does not divide the " + std::to_string(m.heads) + " attention heads");
  if (m.kv_heads % par.tensor != 0 && par.tensor % m.kv_heads != 0) {
    return fail("parallelism.tensor", "tensor " + std::to_string(par.tensor) + " and the " + std::to_string(m.kv_heads) + " KV heads do not divide one another");
  }
  if (m.ffn_hidden % par.tensor != 0) return fail("parallelism.tensor", "tensor " + std::to_string(par.tensor) + " does not divide ffn_hidden " + std::to_string(m.ffn_hidden));
  if (m.layers % (par.pipeline * par.virtual_stages) != 0) {
    return fail(par.virtual_stages > 1 ? "parallelism.virtual_stages" : "parallelism.pipeline",
                "pipeline x virtual_stages = " + std::to_string(par.pipeline * par.virtual_stages) + " does not divide the " + std::to_string(m.layers) + " layers");
  }
  if (par.virtual_stages > 1 && par.pipeline == 1) return fail("parallelism.virtual_stages", "interleaving needs pipeline > 1");
  if (s.training.seq_len % par.context != 0) {
    return fail("parallelism.context", "context " + std::to_string(par.context) + " does not divide seq_len " + std::to_string(s.training.seq_len));
  }
  if (par.sequence_parallel && par.tensor > 1 && (s.training.seq_len / par.context) % par.tensor != 0) {
    return fail("parallelism.sequence_parallel", "sequence parallel needs seq_len/context divisible by tensor " + std::to_string(par.tensor));
  }
  const long per_step = long(s.training.micro_batch) * par.data;
  if (s.training.global_batch % per_step != 0) {
    return fail("training.global_batch", "global_batch " + std::to_string(s.training.global_batch) + " is not divisible by micro_batch x data = " +
                                             std::to_string(s.training.micro_batch) + " x " + std::to_string(par.data));
  }
  if (par.virtual_stages > 1 && s.microbatches_per_step() % par.pipeline != 0) {
    return fail("training.global_batch", "interleaved 1F1B needs the " + std::to_string(s.microbatches_per_step()) +
                                             " micro batches per step to be a multiple of pipeline " + std::to_string(par.pipeline));
  }
  return std::nullopt;
}

}  // namespace trainsim
