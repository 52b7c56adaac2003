// Which transformer layers each pipeline stage holds: layers per pipeline
// rank and per virtual chunk (interleaved 1F1B), as data. Megatron-Core's
// rules: an even split; `decoder_first_pipeline_num_layers` /
// `decoder_last_pipeline_num_layers` (first_stage_layers / last_stage_layers,
// the rest spread evenly over the middle ranks); and
// `account_for_embedding_in_pipeline_split` / `account_for_loss_in_pipeline_split`
// (the embedding, the loss each counted as one layer of the first / last
// virtual stage). When none is given and the layers do not divide
// pipeline x virtual_stages, a balanced split with embedding and loss counted
// as a layer each (as Megatron-Bridge's layouts for DeepSeek-V3 and Qwen3 do),
// and each MTP module, which stays in the last stage, as one more;
// or `pipeline_model_parallel_layout`, each virtual stage's layers spelled out
// (pipeline_layout.h).
// Every cost and memory figure per stage starts from this one plan.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainsim {

struct StagePlanRequest {
  int layers = 1;
  int pipeline = 1;
  int virtual_stages = 1;
  int first_stage_layers = 0;  // 0: not given
  int last_stage_layers = 0;
  bool embedding_in_split = false;
  bool loss_in_split = false;
  std::string layout{};  // Megatron's notation (pipeline_layout.h); empty: not given
  int mtp_layers = 0;  // MTP modules: a layout must place them; the balanced default counts them
};

class StagePlan {
 public:
  // Virtual stage vs = chunk * pipeline + rank (Megatron's model-chunk order).
  int pipeline() const { return pipeline_; }
  int virtual_stages() const { return virtual_stages_; }
  int Layers(int rank, int chunk) const { return chunk_layers_[size_t(chunk) * pipeline_ + rank]; }
  int VirtualStageLayers(int vs) const { return chunk_layers_[size_t(vs)]; }
  int RankLayers(int rank) const;
  int MaxRankLayers() const;
  bool even() const { return even_; }
  // How the split was chosen: "even", "first/last", "embedding/loss in split", "balanced", "layout".
  const std::string& rule() const { return rule_; }
  // Layers per rank, runs of equal ranks as "8x14", and with interleaving
  // each rank as its chunks: "7,8x14,7"; "(1+2x7),(2x8)x6,(2x7+1)". An even
  // split is layers per rank x ranks: "20x4".
  std::string Describe() const;

  // The plan for `r`, or why there is none (the key to blame and the message).
  struct Error {
    std::string key;
    std::string message;
  };
  static std::optional<StagePlan> Make(const StagePlanRequest& r, Error* error = nullptr);

 private:
  int pipeline_ = 1;
  int virtual_stages_ = 1;
  bool even_ = true;
  std::string rule_ = "even";
  std::vector<int> chunk_layers_;
};

}  // namespace trainsim
