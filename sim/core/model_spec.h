// The architecture of a transformer: everything the workload model needs to
// count operators, FLOPs, bytes and memory (a value type; sim/io/model_loader.h
// reads it from the catalogue, a file, a Hugging Face config.json or inline keys).
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/error.h"

namespace trainsim {

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
  // Parameters a token passes through: all of them for a dense model.
  double ActiveParameters(int seq_len) const;
};

std::string ToString(Activation a);
std::string ToString(NormKind n);
std::string ToString(PositionKind p);

}  // namespace trainsim
