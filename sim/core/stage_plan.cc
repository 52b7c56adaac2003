#include "sim/core/stage_plan.h"

#include <algorithm>

#include "sim/core/pipeline_layout.h"

namespace trainsim {

namespace {

std::string Str(long v) { return std::to_string(v); }

bool Fail(StagePlan::Error* e, const std::string& key, const std::string& msg) {
  if (e) *e = {key, msg};
  return false;
}

}  // namespace

int StagePlan::RankLayers(int rank) const {
  int n = 0;
  for (int c = 0; c < virtual_stages_; ++c) n += Layers(rank, c);
  return n;
}

int StagePlan::MaxRankLayers() const {
  int n = 0;
  for (int r = 0; r < pipeline_; ++r) n = std::max(n, RankLayers(r));
  return n;
}

namespace {

// "a,a,a,b" -> "a x3,b" style run-length encoding with `sep` between runs.
std::string RunLength(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size();) {
    size_t j = i;
    while (j < items.size() && items[j] == items[i]) ++j;
    if (!out.empty()) out += sep;
    out += items[i] + (j - i > 1 ? "x" + std::to_string(j - i) : "");
    i = j;
  }
  return out;
}

}  // namespace

std::string StagePlan::Describe() const {
  if (even_) return pipeline_ > 1 ? Str(chunk_layers_[0] * virtual_stages_) + "x" + Str(pipeline_) : Str(chunk_layers_[0] * virtual_stages_);
  std::vector<std::string> ranks;
  for (int r = 0; r < pipeline_; ++r) {
    // A rank of several chunks shows them, equal ones too ("(7x3)", not "21", which reads as one chunk).
    std::vector<std::string> chunks;
    for (int c = 0; c < virtual_stages_; ++c) chunks.push_back(Str(Layers(r, c)));
    ranks.push_back(virtual_stages_ == 1 ? Str(RankLayers(r)) : "(" + RunLength(chunks, "+") + ")");
  }
  return RunLength(ranks, ",");
}

std::optional<StagePlan> StagePlan::Make(const StagePlanRequest& q, Error* error) {
  const long P = q.pipeline, V = q.virtual_stages, L = q.layers;
  if (P < 1 || V < 1 || L < 1) {
    Fail(error, "parallelism.pipeline", "pipeline, virtual_stages and layers must be positive");
    return std::nullopt;
  }
  if (V > 1 && P == 1) {
    Fail(error, "parallelism.virtual_stages", "interleaving needs pipeline > 1");
    return std::nullopt;
  }
  const long PV = P * V;
  StagePlan plan;
  plan.pipeline_ = int(P);
  plan.virtual_stages_ = int(V);
  plan.chunk_layers_.assign(size_t(PV), 0);
  auto& cl = plan.chunk_layers_;
  const bool explicit_ends = q.first_stage_layers > 0 || q.last_stage_layers > 0;
  const bool units = q.embedding_in_split || q.loss_in_split;
  if (explicit_ends && units) {
    Fail(error, "parallelism.first_stage_layers", "first/last_stage_layers and embedding/loss_in_pipeline_split exclude each other");
    return std::nullopt;
  }
  if (!q.layout.empty()) {
    if (explicit_ends || units) {
      Fail(error, "parallelism.pipeline_layout", "a layout excludes first/last_stage_layers and embedding/loss_in_pipeline_split");
      return std::nullopt;
    }
    std::string why;
    const auto layout = PipelineLayout::Parse(q.layout, &why);
    if (!layout || !layout->Check(int(L), q.mtp_layers, int(P), int(V), &why)) {
      Fail(error, "parallelism.pipeline_layout", "\"" + q.layout + "\": " + why);
      return std::nullopt;
    }
    for (long vs = 0; vs < PV; ++vs) cl[size_t(vs)] = layout->StageLayers(int(vs));
    plan.rule_ = "layout";
  } else if (explicit_ends) {
    // Megatron-Core get_num_layers_to_build: the given ends, the rest evenly
    // over the middle ranks; with interleaving each rank's layers evenly over its chunks.
    if (P == 1) {
      Fail(error, "parallelism.first_stage_layers", "uneven stages need pipeline > 1");
      return std::nullopt;
    }
    // The ends' shared errors name the end given (the first where both are).
    const char* ends_key = q.first_stage_layers > 0 ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers";
    long rest = L, ranks_left = P;
    for (auto [n, key] : {std::pair{q.first_stage_layers, "parallelism.first_stage_layers"}, std::pair{q.last_stage_layers, "parallelism.last_stage_layers"}}) {
      if (n <= 0) continue;
      if (n % V != 0) {
        Fail(error, key, Str(n) + " layers do not divide into the " + Str(V) + " virtual stages of the rank");
        return std::nullopt;
      }
      rest -= n;
      ranks_left -= 1;
    }
    if (rest < 0 || (ranks_left == 0 && rest != 0) || (ranks_left > 0 && rest == 0)) {
      Fail(error, ends_key, "first and last stage layers leave " + Str(rest) + " of the " + Str(L) + " layers for the " + Str(ranks_left) + " middle stages");
      return std::nullopt;
    }
    if (ranks_left > 0 && rest % (ranks_left * V) != 0) {
      Fail(error, ends_key, "the " + Str(rest) + " layers left for the " + Str(ranks_left) + " middle stages do not divide evenly" +
                                 (V > 1 ? " into their " + Str(V) + " virtual stages each" : ""));
      return std::nullopt;
    }
    const int middle = ranks_left > 0 ? int(rest / (ranks_left * V)) : 0;
    for (long r = 0; r < P; ++r) {
      int per_chunk = middle;
      if (r == 0 && q.first_stage_layers > 0) per_chunk = int(q.first_stage_layers / V);
      if (r == P - 1 && q.last_stage_layers > 0) per_chunk = int(q.last_stage_layers / V);
      for (long c = 0; c < V; ++c) cl[size_t(c * P + r)] = per_chunk;
    }
    plan.rule_ = "first/last";
  } else if (units || L % PV != 0) {
    // Embedding and loss count as a layer each of the first and last virtual
    // stage. Given explicitly, the units must divide; otherwise the balanced
    // default spreads the remainder over the last virtual stages, and counts
    // each MTP module (a transformer layer and a projection, which Megatron
    // keeps in the last stage) as a layer there too.
    const long emb = units ? (q.embedding_in_split ? 1 : 0) : 1;
    const long loss = units ? (q.loss_in_split ? 1 : 0) : 1 + std::max(0, q.mtp_layers);
    const long total = L + emb + loss;
    if (units && total % PV != 0) {
      Fail(error, q.embedding_in_split ? "parallelism.embedding_in_pipeline_split" : "parallelism.loss_in_pipeline_split",
           "the " + Str(L) + " layers plus the embedding/loss counted as layers (" + Str(total) + ") do not divide pipeline x virtual_stages = " + Str(PV));
      return std::nullopt;
    }
    const long base = total / PV, extra = total % PV;
    for (long vs = 0; vs < PV; ++vs) {
      long n = base + (vs >= PV - extra ? 1 : 0);
      if (vs == 0) n -= emb;
      if (vs == PV - 1) n -= loss;
      if (n < 0) {
        Fail(error, "parallelism.pipeline", "the " + Str(L) + " layers are too few for pipeline x virtual_stages = " + Str(PV));
        return std::nullopt;
      }
      cl[size_t(vs)] = int(n);
    }
    plan.rule_ = units ? "embedding/loss in split" : "balanced";
  } else {
    std::fill(cl.begin(), cl.end(), int(L / PV));
  }
  plan.even_ = std::all_of(cl.begin(), cl.end(), [&](int n) { return n == cl[0]; });
  for (long r = 0; r < P; ++r) {
    if (P > 1 && r != 0 && r != P - 1 && plan.RankLayers(int(r)) == 0) {  // a middle rank (counted only there)
      // Named by the rule that emptied it: a layout, the ends given, or the pipeline's depth.
      const char* key = plan.rule_ == "layout"       ? "parallelism.pipeline_layout"
                        : plan.rule_ == "first/last" ? (q.first_stage_layers > 0 ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers")
                                                     : "parallelism.pipeline";
      Fail(error, key, "pipeline stage " + Str(r) + " would hold no layer");
      return std::nullopt;
    }
  }
  return plan;
}

}  // namespace trainsim
