// A pipeline layout in Megatron-Core's notation
// (pipeline_model_parallel_layout, megatron/core/transformer/
// pipeline_parallel_layer_layout.py): the virtual stages in Megatron's order
// (chunk x pipeline + rank) separated by '|', each a run of 'E' (embedding),
// 't' (a transformer layer), 'm' (a multi-token-prediction module) and 'L'
// (the loss); "x*n" repeats one character, "(...)*n" a group, commas are
// cosmetic. DeepSeek-V3's recipe on 16 stages: "Et*4|(t*4|)*14tmL".
//
// Megatron-Core's rules, which Parse and Check enforce: the embedding first
// and the loss last, once each; as many 't' as the model has layers, as many
// 'm' as MTP modules, all after the last 't' and in the last virtual stage
// beside the loss; as many stages as pipeline x virtual stages.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainsim {

class PipelineLayout {
 public:
  // The layout `text` describes, or why it cannot be read (the message names
  // the character or the rule). Checks the syntax and the embedding, loss and
  // MTP placement; not the counts, which need the model (Check).
  static std::optional<PipelineLayout> Parse(const std::string& text, std::string* error = nullptr);

  int stages() const { return int(stages_.size()); }
  // Transformer layers of virtual stage vs (chunk x pipeline + rank).
  int StageLayers(int vs) const;
  int layers() const;
  int mtp_modules() const;

  // Whether the layout fits `layers` transformer layers, `mtp` MTP modules and
  // pipeline x virtual_stages stages; else why not.
  bool Check(int layers, int mtp, int pipeline, int virtual_stages, std::string* error = nullptr) const;

  // The same layout with `mtp` MTP modules before the loss instead of its own:
  // how Megatron-Bridge's recipes build a layout for a model's MTP depth.
  PipelineLayout WithMtpModules(int mtp) const;

  // The unrolled notation: "Etttt|tttt|...|tmL".
  std::string Unrolled() const;

 private:
  std::vector<std::string> stages_;  // each stage's characters, unrolled
};

}  // namespace trainsim
