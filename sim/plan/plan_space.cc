#include "sim/plan/plan_space.h"

#include <algorithm>

#include "sim/plan/planner.h"

namespace trainsim {

namespace {

std::vector<int> PowersOfTwoUpTo(int n) {
  std::vector<int> v;
  for (int x = 1; x <= n; x *= 2) v.push_back(x);
  return v;
}

std::vector<int> Divisors(int n) {
  std::vector<int> v;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) v.push_back(d);
  }
  return v;
}

std::vector<int> Switch(bool searched, bool fixed) { return searched ? std::vector<int>{1, 0} : std::vector<int>{fixed ? 1 : 0}; }

// A software choice of the MoE layer: the values the options list where
// expert parallelism makes it matter (EP > 1), else the scenario's own.
template <typename T>
std::vector<int> MoeChoice(const PlanConfig& c, const std::vector<T>& tried, int scenarios) {
  if (c.expert <= 1 || tried.empty()) return {scenarios};
  std::vector<int> v;
  for (T t : tried) v.push_back(int(t));
  return v;
}

std::vector<PlanDimension> MakeDimensions() {
  std::vector<PlanDimension> d;
  // Tensor parallelism stays inside the NVLink domain unless the options say otherwise.
  d.push_back({"TP", "parallelism", "tensor", PlanValueKind::kCount, 3,
               [](const PlanConfig& c) { return c.tensor; }, [](PlanConfig& c, int v) { c.tensor = v; },
               [](const Scenario& s) { return s.parallelism.tensor; }, [](Scenario& s, int v) { s.parallelism.tensor = v; },
               [](const PlanConfig&, const SearchContext& x) {
                 if (x.options->only_tensor > 0) return std::vector<int>{x.options->only_tensor};
                 const int domain = x.base->nvlink_domain_gpus();
                 return PowersOfTwoUpTo(std::min(x.gpus, x.options->max_tensor > 0 ? x.options->max_tensor : domain));
               }});
  // Any divisor of the GPUs left; layers that do not divide take the balanced uneven split.
  d.push_back({"PP", "parallelism", "pipeline", PlanValueKind::kCount, 3,
               [](const PlanConfig& c) { return c.pipeline; }, [](PlanConfig& c, int v) { c.pipeline = v; },
               [](const Scenario& s) { return s.parallelism.pipeline; }, [](Scenario& s, int v) { s.parallelism.pipeline = v; },
               [](const PlanConfig& c, const SearchContext& x) {
                 std::vector<int> v;
                 if (x.gpus % c.tensor != 0) return v;
                 for (int pp : Divisors(x.gpus / c.tensor)) {
                   if (pp <= x.base->model.layers && (x.options->only_pipeline == 0 || pp == x.options->only_pipeline)) v.push_back(pp);
                 }
                 return v;
               }});
  // Interleaving: chunk counts that divide each rank's layers (rounded up
  // when the pipeline does not divide them), and those whose balanced uneven
  // split (whole layers per chunk, some one more) gives the rank with most at
  // most kMaxChunkImbalance more layers than an even share: 94 layers on 2
  // ranks split into 12 chunks each of 4 and 3 layers.
  d.push_back({"VP", "parallelism", "virtual_stages", PlanValueKind::kCount, 3,
               [](const PlanConfig& c) { return c.virtual_stages; }, [](PlanConfig& c, int v) { c.virtual_stages = v; },
               [](const Scenario& s) { return s.parallelism.virtual_stages; }, [](Scenario& s, int v) { s.parallelism.virtual_stages = v; },
               [](const PlanConfig& c, const SearchContext& x) {
                 constexpr double kMaxChunkImbalance = 0.05;
                 std::vector<int> v{1};
                 if (c.pipeline == 1) return v;
                 const int layers = x.base->model.layers;
                 const int per_rank = (layers + c.pipeline - 1) / c.pipeline;
                 for (int vp = 2; vp <= per_rank && long(vp) * c.pipeline <= layers + 2; ++vp) {
                   const long chunks = long(vp) * c.pipeline;
                   const long most = (layers + chunks - 1) / chunks * vp;  // the layers of a rank whose chunks all take one more
                   if (per_rank % vp == 0 || most <= (1 + kMaxChunkImbalance) * layers / c.pipeline) v.push_back(vp);
                 }
                 return v;
               }});
  d.push_back({"CP", "parallelism", "context", PlanValueKind::kCount, 3,
               [](const PlanConfig& c) { return c.context; }, [](PlanConfig& c, int v) { c.context = v; },
               [](const Scenario& s) { return s.parallelism.context; }, [](Scenario& s, int v) { s.parallelism.context = v; },
               [](const PlanConfig& c, const SearchContext& x) {
                 std::vector<int> v;
                 const long tp_pp = long(c.tensor) * c.pipeline;
                 for (int cp : PowersOfTwoUpTo(std::min<long>(x.options->max_context, x.gpus / tp_pp))) {
                   if (x.gpus % (tp_pp * cp) == 0) v.push_back(cp);
                 }
                 return v;
               }});
  d.push_back({"DP", "parallelism", "data", PlanValueKind::kCount, 4,
               [](const PlanConfig& c) { return c.data; }, [](PlanConfig& c, int v) { c.data = v; },
               [](const Scenario& s) { return s.parallelism.data; }, [](Scenario& s, int v) { s.parallelism.data = v; },
               nullptr});
  // Expert parallelism (MoE): any divisor of the experts that divides the
  // attention ranks of a stage (TP x CP x DP), up to the NVLink domain times
  // the nodes; expert tensor parallelism 1 or the attention's TP.
  {
    PlanDimension ep{"EP", "parallelism", "expert", PlanValueKind::kCount, 3,
                     [](const PlanConfig& c) { return c.expert; }, [](PlanConfig& c, int v) { c.expert = v; },
                     [](const Scenario& s) { return s.parallelism.expert; }, [](Scenario& s, int v) { s.parallelism.expert = v; },
                     [](const PlanConfig& c, const SearchContext& x) {
                       const int experts = x.base->model.moe.experts;
                       if (experts == 0) return std::vector<int>{1};
                       const long ranks = long(c.tensor) * c.context * c.data;
                       std::vector<int> v;
                       for (int ep : Divisors(experts)) {
                         if (ranks % ep == 0) v.push_back(ep);
                       }
                       return v;
                     }};
    ep.moe_only = true;
    d.push_back(ep);
    PlanDimension etp{"ETP", "parallelism", "expert_tensor", PlanValueKind::kCount, 3,
                      [](const PlanConfig& c) { return c.expert_tensor; }, [](PlanConfig& c, int v) { c.expert_tensor = v; },
                      [](const Scenario& s) { return s.parallelism.expert_tensor; }, [](Scenario& s, int v) { s.parallelism.expert_tensor = v; },
                      [](const PlanConfig& c, const SearchContext& x) {
                        std::vector<int> v{1};
                        const long ranks = long(c.tensor) * c.context * c.data;
                        if (x.base->model.moe.enabled() && c.tensor > 1 && ranks % (long(c.expert) * c.tensor) == 0 &&
                            x.base->model.moe.ffn_hidden % c.tensor == 0) {
                          v.push_back(c.tensor);
                        }
                        return v;
                      }};
    etp.moe_only = true;
    d.push_back(etp);
    // Software choices (PlanOptions::moe_dispatchers, moe_a2a_overlaps).
    PlanDimension dispatcher{"dispatch", "parallelism", "moe_dispatcher", PlanValueKind::kDispatcher, 8,
                             [](const PlanConfig& c) { return int(c.moe_dispatcher); },
                             [](PlanConfig& c, int v) { c.moe_dispatcher = MoeDispatcher(v); },
                             [](const Scenario& s) { return int(s.parallelism.moe_dispatcher); },
                             [](Scenario& s, int v) { s.parallelism.moe_dispatcher = MoeDispatcher(v); },
                             [](const PlanConfig& c, const SearchContext& x) {
                               return MoeChoice(c, x.options->moe_dispatchers, int(x.base->parallelism.moe_dispatcher));
                             }};
    dispatcher.moe_only = true;
    d.push_back(dispatcher);
    PlanDimension overlap{"A2AOV", "parallelism", "moe_a2a_overlap", PlanValueKind::kSwitch, 5,
                          [](const PlanConfig& c) { return int(c.moe_a2a_overlap); },
                          [](PlanConfig& c, int v) { c.moe_a2a_overlap = v; },
                          [](const Scenario& s) { return int(s.parallelism.moe_a2a_overlap); },
                          [](Scenario& s, int v) { s.parallelism.moe_a2a_overlap = v; },
                          [](const PlanConfig& c, const SearchContext& x) {
                            return MoeChoice(c, x.options->moe_a2a_overlaps, int(x.base->parallelism.moe_a2a_overlap));
                          }};
    overlap.moe_only = true;
    d.push_back(overlap);
  }
  d.push_back({"mb", "training", "micro_batch", PlanValueKind::kCount, 3,
               [](const PlanConfig& c) { return c.micro_batch; }, [](PlanConfig& c, int v) { c.micro_batch = v; },
               [](const Scenario& s) { return s.training.micro_batch; }, [](Scenario& s, int v) {
                 s.training.micro_batch = v;
                 s.training.micro_batch_auto = false;
               },
               [](const PlanConfig& c, const SearchContext& x) {
                 const int per_replica = x.base->training.global_batch / c.data;  // sequences per data-parallel rank
                 std::vector<int> v;
                 for (int mb : PowersOfTwoUpTo(x.options->max_micro_batch)) {
                   if (mb <= std::max(1, per_replica)) v.push_back(mb);
                 }
                 return v;
               }});
  d.push_back({"recompute", "training", "recompute", PlanValueKind::kRecompute, 10,
               [](const PlanConfig& c) { return int(c.recompute); }, [](PlanConfig& c, int v) { c.recompute = Recompute(v); },
               [](const Scenario& s) { return int(s.training.recompute); }, [](Scenario& s, int v) { s.training.recompute = Recompute(v); },
               [](const PlanConfig&, const SearchContext&) {
                 return std::vector<int>{int(Recompute::kNone), int(Recompute::kSelective), int(Recompute::kFull)};
               }});
  d.push_back({"SP", "parallelism", "sequence_parallel", PlanValueKind::kSwitch, 3,
               [](const PlanConfig& c) { return int(c.sequence_parallel); }, [](PlanConfig& c, int v) { c.sequence_parallel = v; },
               [](const Scenario& s) { return int(s.parallelism.sequence_parallel); },
               [](Scenario& s, int v) { s.parallelism.sequence_parallel = v && s.parallelism.tensor > 1; },
               [](const PlanConfig& c, const SearchContext&) { return Switch(c.tensor > 1, false); }});
  // What data parallelism shards (design.md 3b), searched whenever there are
  // gradient replicas (DP x CP): the distributed optimizer, ZeRO-2 and FSDP
  // (which trade memory for per-micro-batch collectives). DDP is not tried:
  // its all-reduce moves what the optimizer's reduce-scatter and all-gather
  // move, with less of it overlapped, and its memory and optimizer step are
  // larger, so it never wins.
  d.push_back({"shard", "parallelism", "data_sharding", PlanValueKind::kSharding, 9,
               [](const PlanConfig& c) { return int(c.data_sharding); }, [](PlanConfig& c, int v) { c.data_sharding = DataSharding(v); },
               [](const Scenario& s) { return int(s.parallelism.data_sharding); },
               [](Scenario& s, int v) {
                 s.parallelism.data_sharding = DataSharding(v);
                 s.parallelism.distributed_optimizer = DataSharding(v) != DataSharding::kNone;
                 if (DataSharding(v) == DataSharding::kNone) s.parallelism.sharding_group = 0;
               },
               [](const PlanConfig& c, const SearchContext& x) {
                 if (long(c.data) * c.context <= 1) return std::vector<int>{int(x.base->parallelism.data_sharding)};
                 return std::vector<int>{int(DataSharding::kOptimizer), int(DataSharding::kGradients), int(DataSharding::kFull)};
               }});
  return d;
}

}  // namespace

const std::vector<PlanDimension>& PlanDimensions() {
  static const std::vector<PlanDimension> dims = MakeDimensions();
  return dims;
}

std::string ShowValue(const PlanDimension& d, int v) {
  switch (d.kind) {
    case PlanValueKind::kCount: return v > 0 ? std::to_string(v) : "?";  // 0: not derived (a layout its GPUs do not divide)
    case PlanValueKind::kSwitch: return v ? "on" : "off";
    case PlanValueKind::kRecompute: return ToString(Recompute(v));
    case PlanValueKind::kSharding: return ToString(DataSharding(v));
    case PlanValueKind::kDispatcher: return ToString(MoeDispatcher(v));
  }
  return "?";
}

std::string JsonValue(const PlanDimension& d, int v) {
  switch (d.kind) {
    case PlanValueKind::kCount: return v > 0 ? std::to_string(v) : "null";  // 0: not derived (a layout its GPUs do not divide)
    case PlanValueKind::kSwitch: return v ? "true" : "false";
    case PlanValueKind::kRecompute: return "\"" + ToString(Recompute(v)) + "\"";
    case PlanValueKind::kSharding: return "\"" + ToString(DataSharding(v)) + "\"";
    case PlanValueKind::kDispatcher: return "\"" + ToString(MoeDispatcher(v)) + "\"";
  }
  return "null";
}

}  // namespace trainsim
