// The architecture of a transformer: everything the workload model needs to
// count operators, FLOPs, bytes and memory (a value type; sim/io/model_loader.h
// reads it from the catalogue, a file, a Hugging Face config.json or inline keys).
//
// A model is a stack of layers that need not all be alike: a mixture of
// experts may keep dense MLPs in its first layers or interleave MoE and dense
// layers; sliding-window or chunked attention may apply to every K-th layer.
// LayerAt(i) says what layer i is; everything that counts parameters, FLOPs
// or operators goes through it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/error.h"

namespace trainsim {

// gelu and squared-relu: two MLP matrices (up, down); swiglu and geglu: three (gate, up, down).
enum class Activation { kGelu, kSwiGlu, kGeGlu, kSquaredRelu };
enum class NormKind { kLayerNorm, kRmsNorm };
// learned: a position table added to the embeddings (GPT-2/3); rope: rotary
// embeddings applied to queries and keys; alibi: a per-head linear bias the
// attention kernel adds to its scores (MPT, BLOOM; flash-attn's alibi_slopes),
// no pass or table of its own.
enum class PositionKind { kLearned, kRope, kAlibi };
// mha: multi-head attention, grouped-query when kv_heads < heads;
// mla: DeepSeek-V2/V3 multi-head latent attention (low-rank q and kv).
enum class AttentionKind { kMha, kMla };

bool Gated(Activation a);  // three MLP matrices (SwiGLU, GeGLU)

// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434, §2.1).
struct MlaSpec {
  int q_lora_rank = 0;        // 0: queries projected directly (DeepSeek-V2-Lite)
  int kv_lora_rank = 512;
  int qk_head_dim = 128;      // the no-position part of a query/key head
  int qk_rope_head_dim = 64;  // the rotary part, shared by all heads for keys
  int v_head_dim = 128;
  int q_head_dim() const { return qk_head_dim + qk_rope_head_dim; }
};

// A mixture-of-experts MLP (model.moe). experts == 0: the model is dense.
struct MoeSpec {
  int experts = 0;
  int top_k = 1;
  int ffn_hidden = 0;       // per expert (moe_ffn_hidden)
  int shared_experts = 0;   // each of ffn_hidden, beside the routed ones
  int first_k_dense = 0;    // leading layers with a dense MLP of the model's ffn_hidden
  int layer_interval = 1;   // every layer_interval-th layer (after the dense ones) is MoE
  double capacity_factor = 0;  // >0: tokens beyond capacity_factor x the mean per expert are dropped; 0: dropless
  // With a capacity factor, whether each expert's input is padded up to the
  // capacity (Megatron-Core's moe_pad_expert_input_to_capacity). Unset:
  // padded, as the token-drop recipes of Megatron-Bridge and NeMo run;
  // false: tokens past the capacity dropped and the rest left unpadded,
  // Megatron-Core's own default (Scenario::pads_experts_to_capacity).
  std::optional<bool> pad_to_capacity;
  bool forced_balance = false;  // the run forced a balanced router (benchmarks do)
  // Each expert's linear layers carry a bias (GPT-OSS). Unset where the
  // model does not say: the scenario takes its framework recipe's
  // (FrameworkProfile::moe_expert_bias, Megatron-Core's add_bias_linear).
  std::optional<bool> expert_bias;
  bool enabled() const { return experts > 0; }
};

// What one layer of the stack is: its MLP and its attention span. Layers with
// the same LayerKind have the same operators and parameters.
struct LayerKind {
  bool moe = false;        // MoE MLP (else the dense ffn_hidden MLP)
  int attention_span = 0;  // keys a query sees at most (sliding window or chunk); 0: the whole causal prefix
  bool chunked = false;    // the span is a chunk (Llama 4: keys of the same chunk) rather than a sliding window
  bool rotary = true;      // the model's RoPE rotates its queries and keys (false: Llama 4's global NoPE layers)
  bool operator==(const LayerKind&) const = default;
  bool operator<(const LayerKind& o) const {
    return std::tie(moe, attention_span, chunked, rotary) < std::tie(o.moe, o.attention_span, o.chunked, o.rotary);
  }
};

// A norm on each query and key head before attention.
enum class QkNorm {
  kNone,
  kRms,  // RMSNorm with a learned scale per head dimension (Qwen3, OLMo 2, Gemma 3, GLM-4.5)
  kL2,   // Llama 4's: an L2 norm, nothing learned, on its RoPE layers only (transformers' Llama4TextL2Norm)
};

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int ffn_hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int vocab = 0;
  int max_positions = 0;  // learned position table size; 0: the training seq_len
  int head_dim_override = 0;  // model.head_dim; 0: hidden / heads
  Activation activation = Activation::kSwiGlu;
  NormKind norm = NormKind::kRmsNorm;
  PositionKind position = PositionKind::kRope;
  bool tied_embeddings = false;
  QkNorm qk_norm = QkNorm::kNone;
  // A norm on each block's output too, before its residual add (Gemma 2 and 3:
  // post_attention_layernorm and post_feedforward_layernorm): four a layer.
  bool output_norms = false;
  // Linear layers' bias vectors, one beside each matrix, counted as
  // parameters (each is added in its GEMM's epilogue): the query, key and
  // value projections' (Qwen2's and GLM-4.5's alone), the attention output
  // projection's, the dense MLP's. A trainsim model file's default is
  // GPT-style for a LayerNorm model (all three), none for an RMSNorm one.
  bool qkv_bias = false;
  bool proj_bias = false;
  bool mlp_bias = false;
  AttentionKind attention = AttentionKind::kMha;
  MlaSpec mla;
  int sliding_window = 0;        // tokens; 0: none
  int sliding_window_every = 1;  // layer i is windowed when i % sliding_window_every == 0 (GPT-OSS: 2, layer 0 windowed)
  // With sliding_window, the other pattern: layer i attends globally when i % K == K - 1, the rest are
  // windowed (Gemma 3: 6, five local layers to one global). 0: sliding_window_every's rule.
  int global_attention_every = 0;
  bool attention_sinks = false;  // a learned per-head sink logit (GPT-OSS); no extra work to speak of
  int attention_chunk = 0;       // chunked local attention (Llama 4); 0: none
  int nope_layer_interval = 0;   // with attention_chunk: every K-th layer (i % K == K-1) is global, without RoPE
  // DeepSeek-V3 multi-token-prediction modules after the last layer. Unset
  // where the model does not say: the scenario takes its recipe's
  // (FrameworkProfile::mtp_layers), as Megatron builds them from the recipe's
  // mtp_num_layers, not from the architecture.
  std::optional<int> mtp_layers;
  // A gated activation whose inputs are clamped to this magnitude (GPT-OSS's
  // swiglu_limit 7: the gate from above, the linear half both ways); 0: not
  // clamped. The same matrices; what clamping costs is the framework's
  // (FrameworkProfile::activation_clamp_pass). Unset where the model does not
  // say: the scenario takes its recipe's (FrameworkProfile::activation_clamp).
  std::optional<double> activation_clamp;
  MoeSpec moe;
  // config.json keys trainsim does not model that the scenario accepted on
  // purpose (model.accept_unknown_keys), as "FILE:LINE: KEY": read as changing
  // nothing, and said in a warning.
  std::vector<std::string> accepted_unknown_keys;
  // What of the model file the simulation does not take, said in the same
  // warning: a multimodal wrapper's vision tower (its language model is what
  // trains on text), a config.json's dropout (training.dropout's to say); ""
  // where nothing is left out.
  std::string left_out;
  // The context the checkpoint's positions were trained to (config.json's
  // max_position_embeddings); 0 where the model file does not say. Training
  // past it is allowed (a long-context stage does) and warned of.
  int max_position_embeddings = 0;

  int head_dim() const { return head_dim_override > 0 ? head_dim_override : hidden / heads; }
  int kv_dim() const { return head_dim() * kv_heads; }
  // Width of the attention output (the proj GEMM's input): heads x value head dim.
  int attention_out_dim() const { return attention == AttentionKind::kMla ? heads * mla.v_head_dim : heads * head_dim(); }

  LayerKind LayerAt(int i) const;
  // Every layer is of one kind (LayerAt(0)): no MoE, no windowed or chunked attention.
  bool uniform() const { return !moe.enabled() && sliding_window == 0 && attention_chunk == 0; }
  bool IsMoeLayer(int i) const;
  int MoeLayers() const;

  // Parameters of layer i: attention, MLP (all experts and the router), norms.
  double LayerParameters(int i) const;
  // The same, one layer kind.
  double LayerParameters(const LayerKind& k) const;
  double AttentionParameters() const;
  double DenseMlpParameters() const;
  double ExpertParameters() const;  // one routed expert's MLP
  double MoeMlpParameters() const;  // all routed experts, the shared ones and the router
  // Parameters a token passes through in layer i (top_k routed experts, the shared ones).
  double ActiveLayerParameters(int i) const;
  // Embedding (+ position table of `seq_len` when learned) and LM head (if untied).
  double EmbeddingParameters(int seq_len) const;
  // The multi-token-prediction modules: each a layer (of the last layer's kind), an
  // embedding-concat projection 2h -> h and two norms (the embedding and head are shared).
  double MtpParameters() const;
  double TotalParameters(int seq_len) const;
  // Parameters that touch each token (design.md 3b "active_parameters"): for a
  // dense model the total.
  double ActiveParameters(int seq_len) const;
};

std::string ToString(Activation a);
std::string ToString(NormKind n);
std::string ToString(PositionKind p);
std::string ToString(AttentionKind a);

}  // namespace trainsim
