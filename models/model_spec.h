// The architecture of a transformer: everything the workload model needs to
// count operators, FLOPs, bytes and memory. Loaded from the catalogue
// (models/catalogue/NAME.yaml), a trainsim YAML file, a Hugging Face
// config.json, or keys inline in a scenario; all four go through one parser.
#pragma once

#include <cstdint>
#include <string>

#include "sim/error.h"

namespace YAML { class Node; }

namespace trainsim {

class YamlMap;

enum class Activation { kGelu, kSwiGlu };
enum class NormKind { kLayerNorm, kRmsNorm };
enum class PositionKind { kLearned, kRope };

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int ffn_hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int vocab = 0;
  int max_positions = 0;  // learned position table size; 0: the training seq_len
  Activation activation = Activation::kSwiGlu;
  NormKind norm = NormKind::kRmsNorm;
  PositionKind position = PositionKind::kRope;
  bool tied_embeddings = false;

  int head_dim() const { return hidden / heads; }
  int kv_dim() const { return head_dim() * kv_heads; }
  // Parameters of one transformer layer (attention, MLP, norms).
  double LayerParameters() const;
  // Embedding (+ position table of `seq_len` when learned) and LM head (if untied).
  double EmbeddingParameters(int seq_len) const;
  double TotalParameters(int seq_len) const;
};

std::string ToString(Activation a);
std::string ToString(NormKind n);
std::string ToString(PositionKind p);

// Parses the trainsim model keys from a mapping (inline or a file); throws
// InputException naming `m.file()` and the line.
ModelSpec ParseModelKeys(YamlMap& m, const std::string& default_name);

// A model reference as written in a scenario: a YAML mapping (inline keys), a
// catalogue name or a path (.yaml trainsim keys, .json Hugging Face config).
// `scenario_file` anchors relative paths and error messages.
ModelSpec ResolveModel(const YAML::Node& ref, const std::string& scenario_file, const std::string& key);

// Loads a model file (trainsim YAML or Hugging Face config.json).
Expected<ModelSpec> LoadModelFile(const std::string& path);

}  // namespace trainsim
