#include "sim/io/model_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "sim/io/data_paths.h"
#include "sim/io/file_cache.h"
#include "sim/io/yaml_reader.h"

namespace trainsim {

namespace {

// The file's own names for the heads and the KV heads: a model YAML's, or a
// config.json's (num_attention_heads, num_key_value_heads), so an error names
// the key and the line the user wrote.
struct HeadKeys {
  const char* heads = "heads";
  const char* kv_heads = "kv_heads";
};

void CheckShape(YamlMap& m, ModelSpec& s, HeadKeys keys = {}) {
  if (s.head_dim_override == 0 && s.attention == AttentionKind::kMha && s.hidden % s.heads != 0) {
    m.Fail(keys.heads, "hidden (" + std::to_string(s.hidden) + ") is not divisible by heads (" + std::to_string(s.heads) + "); give head_dim");
  }
  if (s.heads % s.kv_heads != 0) {
    m.Fail(m.Has(keys.kv_heads) ? keys.kv_heads : keys.heads,
           "heads (" + std::to_string(s.heads) + ") is not divisible by kv_heads (" + std::to_string(s.kv_heads) + ")");
  }
}

// Sizes past any published model's by orders of magnitude: a slip (1e9 for
// 1e3), which would otherwise run as quadrillions of parameters (exit 1 with
// absurd figures) or take seconds to lay out. Published maxima: head_dim 256
// (MLA's 192), 384 routed experts in production models (Kimi K2; research
// layers of tiny experts reach a million, PEER), 1 MTP module (DeepSeek-V3).
constexpr int kMaxHeadDim = 4096, kMaxExperts = 1 << 20, kMaxMtpLayers = 64;
// Far above any model's (Llama 3.1 405B has 126) and below what a per-layer
// workload of the step could hold in bounded memory (1e9 layers took 4 GB).
constexpr int kMaxLayers = 16384;

int AtMost(YamlMap& m, const std::string& key, int v, int max) {
  if (v > max) m.Fail(key, "implausibly large: " + std::to_string(v) + " (at most " + std::to_string(max) + ")");
  return v;
}

// The run's routing choices (capacity, padding) against the experts they
// route to: `m` is the model.moe map they were read from.
void CheckRoutingChoices(YamlMap& m, const MoeSpec& moe) {
  if (moe.pad_to_capacity && moe.capacity_factor == 0) {
    m.Fail("pad_to_capacity", "pads to a capacity: set capacity_factor (without one the run is dropless)");
  }
  // Megatron-Core's token drop keeps each expert's top-capacity tokens
  // (torch.topk over the tokens): a capacity past every token cannot be taken,
  // and drops nothing short of it.
  const double every_token = double(moe.experts) / moe.top_k;
  if (moe.capacity_factor > every_token) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "%g: each expert's capacity would be %g x top_k %d / %d experts = %g times the tokens, where it receives "
                  "each token at most once; at most %g (experts/top_k), or leave it out for a dropless run",
                  moe.capacity_factor, moe.capacity_factor, moe.top_k, moe.experts, moe.capacity_factor / every_token, every_token);
    m.Fail("capacity_factor", text);
  }
}

void CheckMoe(YamlMap& m, const ModelSpec& s) {
  if (!s.moe.enabled()) return;
  if (s.moe.top_k > s.moe.experts) {
    m.Fail("top_k", "top_k " + std::to_string(s.moe.top_k) + " is more than the " + std::to_string(s.moe.experts) + " experts");
  }
  if (s.moe.first_k_dense >= s.layers) {
    m.Fail("first_k_dense", "first_k_dense " + std::to_string(s.moe.first_k_dense) + " leaves no MoE layer of the " + std::to_string(s.layers));
  }
  if (s.MoeLayers() == 0) m.Fail("layer_interval", "no layer is a mixture of experts at this interval");
  CheckRoutingChoices(m, s.moe);
}

Activation ParseActivation(YamlMap& m, const std::string& key) {
  const std::string a = m.Choice(key, {"gelu", "swiglu", "geglu", "squared-relu"}, "swiglu");
  return a == "gelu" ? Activation::kGelu : a == "geglu" ? Activation::kGeGlu : a == "squared-relu" ? Activation::kSquaredRelu : Activation::kSwiGlu;
}

// Hugging Face config.json (transformers' configuration_*.py key names).
//
// Every key of a config.json is either read into the ModelSpec below, listed
// here as not changing the training step's work or memory, or exit 2 naming
// the key and the file: a key trainsim does not model must never leave a
// silently different model (a Mixtral config once ran as a dense 7B).
// Keys whose effect depends on their value (sliding_window: null, an empty
// mlp_only_layers, moe_layer_freq 1) are checked by value.
const std::set<std::string>& HuggingFaceKeysWithoutEffect() {
  static const std::set<std::string> keys = {
      // Token ids, initialisation, bookkeeping and the checkpoint's own loading code.
      "_name_or_path", "architectures", "auto_map", "bos_token_id", "eos_token_id", "pad_token_id", "initializer_range",
      "torch_dtype", "dtype", "transformers_version", "_attn_implementation_autoset", "for_llm_compressor",
      // Serving only: the KV cache and the expert-parallel size of the checkpoint's inference code
      // (a run's parallelism is the scenario's).
      "use_cache", "cache_implementation", "ep_size",
      // How the released weights are stored (DeepSeek-V3 fp8 blocks, GPT-OSS mxfp4 experts); a
      // training run's precision is the scenario's training.precision.
      "quantization_config",
      // Positions: RoPE bases and scaling and the longest context the checkpoint serves; rotary
      // embedding is elementwise and the training seq_len is the scenario's.
      "max_position_embeddings", "rope_scaling", "rope_theta", "rope_parameters", "rope_local_base_freq",
      "initial_context_length", "rope_interleave", "original_max_position_embeddings",
      // GLM-4.5's rotation of half of each head's dimensions: elementwise, the same tensors.
      "partial_rotary_factor",
      // Llama 2's tensor-parallel slicing of its pretraining run: the same matrices.
      "pretraining_tp",
      // More of the rotary embedding: Qwen2.5's multimodal RoPE switch, Phi-4-mini's position
      // interpolation, SmolLM2's rotary layout. Positions and elementwise rotations, the same tensors.
      "use_mrope", "interpolate_factor", "rope_interleaved",
      // SmolLM2's note that it is a Llama, and its settings for transformers.js (the JavaScript
      // runtime's dtypes and kv-cache): bookkeeping.
      "is_llama_config", "transformers.js_config",
      // Phi-4-mini's LM-head bias switch (false in its published files): a vocabulary-sized vector
      // beside the head's matrix, added in its GEMM's epilogue and not counted.
      "lm_head_bias",
      // Dropout: elementwise, no matrices.
      "attention_dropout", "hidden_dropout", "embd_pdrop", "resid_pdrop",
      // Elementwise on scores or logits: Gemma 2's softcapping and query scale, Llama 4's attention
      // temperature on its NoPE layers. (GPT-OSS's swiglu_limit is read: model.activation_clamp.)
      "attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar", "attn_scale",
      "attn_temperature_tuning", "floor_scale",
      // Router details that change no matrix: the auxiliary-loss coefficients, how top-k probabilities
      // are normalised, scored (softmax or sigmoid), grouped (DeepSeek's node-limited routing) and
      // scaled, and jitter noise. The router's GEMM (hidden x experts) is counted from the experts.
      "output_router_logits", "router_aux_loss_coef", "aux_loss_alpha", "seq_aux", "norm_topk_prob", "scoring_func",
      "topk_method", "n_group", "topk_group", "routed_scaling_factor", "router_jitter_noise",
      // transformers' PretrainedConfig attributes every config carries, which save_pretrained writes
      // out with their defaults in some releases: what a forward returns (output_*, return_dict,
      // torchscript), text generation's settings, a classification head's labels, the tokenizer's
      // and the checkpoint's bookkeeping. None builds or sizes a decoder's matrix.
      "return_dict", "output_hidden_states", "output_attentions", "torchscript", "use_bfloat16", "tf_legacy_loss",
      "is_decoder", "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups",
      "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty", "length_penalty",
      "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids", "num_return_sequences", "output_scores",
      "return_dict_in_generate", "forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values",
      "exponential_decay_length_penalty", "suppress_tokens", "begin_suppress_tokens", "finetuning_task", "id2label",
      "label2id", "num_labels", "tokenizer_class", "prefix", "sep_token_id", "decoder_start_token_id",
      "task_specific_params", "problem_type", "_commit_hash", "_attn_implementation", "generation_config"};
  return keys;
}

// PretrainedConfig attributes that change the model unless they hold their
// default (an encoder-decoder, cross-attention, pruned heads, a chunked feed
// forward): read at that value as leaving the step unchanged, else exit 2.
void AllowPretrainedConfigDefaults(YamlMap& m) {
  struct DefaultOnly {
    const char* key;
    bool (*is_default)(const YAML::Node&);
  };
  static const DefaultOnly keys[] = {
      {"is_encoder_decoder", [](const YAML::Node& n) { return n.IsScalar() && n.Scalar() == "false"; }},
      {"add_cross_attention", [](const YAML::Node& n) { return n.IsScalar() && n.Scalar() == "false"; }},
      {"tie_encoder_decoder", [](const YAML::Node& n) { return n.IsScalar() && n.Scalar() == "false"; }},
      {"chunk_size_feed_forward", [](const YAML::Node& n) { return n.IsScalar() && n.Scalar() == "0"; }},
      {"cross_attention_hidden_size", [](const YAML::Node& n) { return n.IsNull(); }},
      {"pruned_heads", [](const YAML::Node& n) { return n.IsMap() && n.size() == 0; }},
  };
  for (const DefaultOnly& k : keys) {
    const YAML::Node n = m.Raw(k.key);
    if (n.IsDefined() && !k.is_default(n)) {
      m.Fail(k.key, "a value other than transformers' default changes the architecture, which trainsim does not model");
    }
  }
}

// Marks read, in a config.json's map (a wrapper's or its text_config), the
// keys that leave the training step unchanged: those at any value and those
// at their default.
void AllowKeysWithoutEffect(YamlMap& m) {
  for (const auto& key : HuggingFaceKeysWithoutEffect()) m.Allow(key);
  AllowPretrainedConfigDefaults(m);
  // Their scalars are still numbers of their kind: "rope_theta": "abc" or a
  // negative epsilon says the file is not the config it claims to be.
  const auto given = [&](const char* key) { return m.node()[key].IsDefined() && !m.node()[key].IsNull(); };
  for (const char* key : {"rms_norm_eps", "rope_theta"}) {
    if (given(key)) m.PositiveDouble(key);
  }
  if (given("initializer_range")) m.NonNegativeDouble("initializer_range");
  for (const char* key : {"max_position_embeddings", "original_max_position_embeddings", "initial_context_length"}) {
    if (given(key)) m.PositiveInt(key);
  }
  for (const char* key : {"attention_dropout", "hidden_dropout", "embd_pdrop", "resid_pdrop"}) {
    if (given(key) && m.NonNegativeDouble(key) > 1) m.Fail(key, "a dropout probability, at most 1");
  }
  if (given("partial_rotary_factor")) m.Fraction("partial_rotary_factor");
  // RoPE scaling leaves the step's work unchanged, but a value transformers
  // cannot build from (a string, a list, a kind it has no rotary embedding
  // for) says the file is not the config it claims to be.
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    const YAML::Node n = m.node()[key];
    if (!n.IsDefined() || n.IsNull()) continue;
    if (!n.IsMap()) m.Fail(key, "expected a mapping (rope_type and its parameters) or null");
    // transformers 5's rope_parameters may hold one such mapping per attention kind (Gemma 3's).
    std::vector<YAML::Node> scalings = {n};
    for (const auto& kv : n) {
      if (kv.second.IsMap()) scalings.push_back(kv.second);
    }
    for (const YAML::Node& r : scalings) {
      for (const char* kind_key : {"rope_type", "type"}) {
        const YAML::Node kind = r[kind_key];
        if (!kind.IsDefined() || kind.IsNull()) continue;
        static const std::set<std::string> kinds = {"default", "linear", "dynamic", "yarn", "longrope", "llama3", "su", "mrope"};
        if (!kind.IsScalar() || !kinds.count(kind.Scalar())) {
          m.Fail(key, std::string(kind_key) + " '" + (kind.IsScalar() ? kind.Scalar() : "?") +
                          "' is not a rotary embedding transformers builds (default, linear, dynamic, yarn, longrope, llama3)");
        }
      }
    }
  }
}

// A config.json key that trainsim neither reads nor lists as leaving the step
// unchanged: an error unless the scenario accepts it (model.accept_unknown_keys).
struct UnmodelledKey {
  std::string key;  // as an error names it: "text_config.KEY" inside a wrapper
  int line = 0;
  std::string hint;  // a key trainsim reads or lists that it may be a misspelling of ("num_key_value_head")
};

// A parsed model file and the config.json keys it left unread.
struct ModelFile {
  ModelSpec spec;
  bool config_json = false;  // a Hugging Face config.json (else a trainsim model YAML, every key read)
  std::vector<UnmodelledKey> unmodelled_keys;
};

// The error for the first unmodelled key the scenario did not accept, `u`,
// naming the others (`more`) too, so that one edit can accept them all.
InputException UnmodelledKeyError(const std::string& file, const UnmodelledKey& u, const std::vector<std::string>& more) {
  // A misspelling of a key it reads would, accepted, run without what the key says.
  const std::string typo = u.hint.empty() ? "" : "did you mean '" + u.hint + "'? otherwise a ";
  std::string keys = u.key, others;
  for (const std::string& k : more) {
    keys += ", " + k;
    others += (others.empty() ? "" : ", ") + k;
  }
  const std::string also = more.empty() ? "" : "; " + std::to_string(more.size()) + " more left unread: " + others;
  return InputException(InputError{
      file, u.line, u.key,
      typo + "config.json key trainsim does not model (neither read nor known to leave the training step unchanged); reading "
      "the rest would misread the model" + also + " (to take " + (more.empty() ? "it" : "them") + " as changing nothing, on purpose: model: {file: ..., "
      "accept_unknown_keys: [" + keys + "]})"});
}

// Collects the keys of `m` that no read asked for.
void CollectUnmodelledKeys(const YamlMap& m, std::vector<UnmodelledKey>& out) {
  for (auto it = m.node().begin(); it != m.node().end(); ++it) {
    const std::string key = it->first.Scalar();
    if (!m.Known(key)) out.push_back({m.Path(key), it->first.Mark().line + 1, ClosestMatch(key, m.KnownSorted())});
  }
}

// What a model_type implies that its config.json does not say.
struct HfFamily {
  bool known = false;          // a decoder whose MLP trainsim knows to be gated (a row of Families())
  bool tied_default = false;   // tie_word_embeddings when absent (transformers' config class default)
  bool qk_norm = false;        // RMSNorm on each query and key head (Qwen3, Gemma 3)
  QkNorm use_qk_norm = QkNorm::kRms;  // what use_qk_norm: true builds (GLM-4.5's RMSNorm, Llama 4's L2 norm)
  bool output_norms = false;   // Gemma 2 and 3: each block's output normed before its residual add
  bool qkv_bias = false;       // Qwen2: q/k/v projections biased whatever the file says (no key for it)
  // What attention_bias: true biases: q, k, v and the output projection (Llama, GPT-OSS), or q, k
  // and v alone (GLM-4.5's Glm4MoeAttention builds o_proj without).
  bool attention_bias_on_output = true;
  bool attention_sinks = false;  // GPT-OSS
  bool expert_bias = false;      // GPT-OSS: its experts' gate_up_proj and down_proj carry biases (no config key says so)
  bool shared_expert = false;  // Llama 4: one shared expert of intermediate_size beside the routed ones
  bool mla = false;            // DeepSeek-V2/V3 multi-head latent attention
  // Its config class reads layer_types (Gemma 2 and 3, GPT-OSS). Mistral's, Mixtral's and Phi-3's
  // window every layer whatever such a list says (transformers' Mistral only warns about it).
  bool layer_types = false;
  // Without layer_types or sliding_window_pattern, which layers transformers windows: Gemma 2's
  // and GPT-OSS's even layers (alternating), Gemma 3's all but every 6th (window_pattern 6).
  bool alternating_window = false;
  int window_pattern = 0;
  int vocab_default = 0;  // vocab_size when absent (Gemma 3's text config class: 262208); 0: required
  // What the config class builds when the file leaves these out (0: hidden / heads, and the
  // required key, and num_attention_heads): Gemma's head_dim 256, Qwen3's 128; Gemma 2's and 3's
  // 8 query and 4 key-value heads (the published Gemma 3 4B text_config writes none of the three).
  int head_dim_default = 0;
  int heads_default = 0;
  int kv_heads_default = 0;
  // Its attention reads sliding_window (transformers' Mistral, Mixtral, Qwen2/3, Gemma 2/3, GPT-OSS).
  // Llama's, DeepSeek's, GLM's do not: there the key is an edit transformers ignores and its writer
  // may have meant, so it is exit 2 rather than either guess.
  bool windowed = false;
  // Qwen2/3 (dense and MoE): sliding_window applies only with use_sliding_window: true, whose
  // default is false (configuration_qwen2.py and kin), so a file that writes a window but not the
  // switch attends over the whole sequence.
  bool window_switch = false;
  // A mixture-of-experts architecture: transformers' config class defaults its experts, so a file
  // without this key is still MoE there. nullptr: a dense family.
  const char* experts_key = nullptr;
  // Of ArchitectureKeys(), those this family's transformers code reads. Another family's key in
  // its file (a Llama with num_local_experts, a Mixtral with n_shared_experts) changes nothing in
  // transformers and is exit 2: building it would misread the model, ignoring it might drop what
  // its writer meant.
  std::vector<std::string> reads = {};
  // Keys this family's config class fills with a default of its own when the file leaves them out
  // (Mistral's 8 key-value heads and 4,096-token window, DeepSeek-V3's moe_intermediate_size 2,048
  // and 3 leading dense layers, GPT-OSS's head_dim 64), where the generic reading (key-value heads
  // = heads, head_dim = hidden / heads, the experts as wide as intermediate_size, no shared expert,
  // no window) would build another model. trainsim does not carry those defaults (they change
  // between transformers releases): a file without one of these keys is exit 2 naming it.
  std::vector<std::string> required = {};
};

// The config.json keys that shape the model in some families and not in
// others (each family's row in Families() says which it reads).
const std::vector<std::string>& ArchitectureKeys() {
  static const std::vector<std::string> keys = {
      "num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok", "experts_per_token",
      "moe_intermediate_size", "intermediate_size_mlp", "n_shared_experts", "shared_expert_intermediate_size",
      "first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step", "mlp_only_layers", "interleave_moe_layer_step",
      "moe_layers", "attention_chunk_size", "no_rope_layers", "no_rope_layer_interval", "use_qk_norm", "swiglu_limit",
      "num_nextn_predict_layers", "sliding_window_pattern", "_sliding_window_pattern",
      // Linear-layer biases: transformers' Llama reads attention_bias and mlp_bias, Qwen3 and Gemma
      // attention_bias alone, Qwen2-MoE qkv_bias, while Mistral's, Mixtral's, Phi-3's and Qwen2's
      // biases are fixed in their modeling code whatever the file says.
      "attention_bias", "qkv_bias", "mlp_bias"};
  return keys;
}

// Every family trainsim reads, one row each.
const std::map<std::string, HfFamily>& Families() {
  // The keys of ArchitectureKeys() each reads (transformers' configuration_*.py and modeling_*.py).
  static const std::vector<std::string> deepseek = {"n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                                             "n_shared_experts", "first_k_dense_replace", "moe_layer_freq", "attention_bias"};
  static const std::vector<std::string> deepseek_mtp = [] {
    std::vector<std::string> k = deepseek;
    k.push_back("num_nextn_predict_layers");
    return k;
  }();
  static const std::vector<std::string> deepseek_required = {"moe_intermediate_size", "n_shared_experts", "first_k_dense_replace"};
  static const std::vector<std::string> qwen_moe = {"num_experts", "num_experts_per_tok", "moe_intermediate_size", "decoder_sparse_step",
                                             "mlp_only_layers"};
  static const std::vector<std::string> qwen2_moe = [] {
    std::vector<std::string> k = qwen_moe;
    k.push_back("shared_expert_intermediate_size");
    k.push_back("qkv_bias");  // Qwen2MoeConfig's, default true (q, k and v biased; o never)
    return k;
  }();
  static const std::vector<std::string> qwen3_moe = [] {
    std::vector<std::string> k = qwen_moe;
    k.push_back("attention_bias");
    return k;
  }();
  static const std::vector<std::string> attention_bias = {"attention_bias"};
  static const std::map<std::string, HfFamily> families = {
      {"llama", {.reads = {"attention_bias", "mlp_bias"}}},
      // Phi-3 and Phi-4 (Phi3ForCausalLM): Llama's matrices, with q/k/v and gate/up each stored as one.
      {"phi3", {.windowed = true}},
      {"mistral", {.windowed = true, .required = {"num_key_value_heads", "sliding_window"}}},
      {"mixtral", {.windowed = true, .experts_key = "num_local_experts", .reads = {"num_local_experts", "num_experts_per_tok"},
                   .required = {"num_key_value_heads"}}},
      {"qwen2", {.qkv_bias = true, .windowed = true, .window_switch = true, .required = {"num_key_value_heads"}}},
      {"qwen2_moe", {.qkv_bias = true, .windowed = true, .window_switch = true, .experts_key = "num_experts", .reads = qwen2_moe,
                     .required = {"num_key_value_heads", "moe_intermediate_size", "shared_expert_intermediate_size"}}},
      {"qwen3", {.qk_norm = true, .head_dim_default = 128, .windowed = true, .window_switch = true, .reads = attention_bias,
                 .required = {"num_key_value_heads"}}},
      {"qwen3_moe", {.qk_norm = true, .windowed = true, .window_switch = true, .experts_key = "num_experts", .reads = qwen3_moe,
                     .required = {"num_key_value_heads", "head_dim", "moe_intermediate_size"}}},
      {"deepseek_v2", {.mla = true, .experts_key = "n_routed_experts", .reads = deepseek, .required = deepseek_required}},
      {"deepseek_v3", {.mla = true, .experts_key = "n_routed_experts", .reads = deepseek_mtp, .required = deepseek_required}},
      // Moonshot's Kimi K2: DeepSeek-V3's architecture (DeepseekV3ForCausalLM) under its own model_type.
      {"kimi_k2", {.mla = true, .experts_key = "n_routed_experts", .reads = deepseek_mtp, .required = deepseek_required}},
      // GLM-4.5, -4.6, -4.7 and -4.5-Air (Glm4MoeForCausalLM).
      {"glm4_moe", {.attention_bias_on_output = false, .experts_key = "n_routed_experts", .reads = {"n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                                                                 "n_shared_experts", "first_k_dense_replace",
                                                                 "num_nextn_predict_layers", "use_qk_norm", "attention_bias"},
                    .required = {"num_key_value_heads", "head_dim", "moe_intermediate_size", "n_shared_experts", "first_k_dense_replace"}}},
      // GPT-OSS: layer_types, when absent, alternates from a windowed layer 0 (configuration_gpt_oss.py).
      {"gpt_oss", {.attention_sinks = true, .expert_bias = true, .layer_types = true, .alternating_window = true, .windowed = true,
                   .experts_key = "num_local_experts",
                   .reads = {"num_local_experts", "num_experts_per_tok", "experts_per_token", "swiglu_limit", "attention_bias"},
                   .required = {"num_key_value_heads", "head_dim", "sliding_window", "attention_bias"}}},
      {"llama4_text", {.use_qk_norm = QkNorm::kL2, .shared_expert = true, .experts_key = "num_local_experts",
                       .reads = {"num_local_experts", "num_experts_per_tok", "intermediate_size_mlp", "interleave_moe_layer_step",
                                 "moe_layers", "attention_chunk_size", "no_rope_layers", "no_rope_layer_interval", "use_qk_norm",
                                 "attention_bias"},
                       .required = {"num_key_value_heads", "head_dim", "intermediate_size_mlp", "attention_chunk_size", "use_qk_norm"}}},
      // Gemma: hidden_activation, a GeGLU MLP, tied embeddings.
      {"gemma", {.tied_default = true, .head_dim_default = 256, .heads_default = 16, .kv_heads_default = 16, .reads = attention_bias}},
      {"gemma2", {.tied_default = true, .output_norms = true, .layer_types = true, .alternating_window = true, .head_dim_default = 256, .heads_default = 8,
                  .kv_heads_default = 4, .windowed = true, .reads = attention_bias, .required = {"sliding_window"}}},
      // Gemma 3's text config class defaults sliding_window_pattern to 6 and vocab_size to 262208;
      // the published multimodal configs (4B, 12B, 27B) write neither in text_config.
      {"gemma3_text", {.tied_default = true, .qk_norm = true, .output_norms = true, .layer_types = true, .window_pattern = 6, .vocab_default = 262208,
                       .head_dim_default = 256, .heads_default = 8, .kv_heads_default = 4, .windowed = true,
                       .reads = {"sliding_window_pattern", "_sliding_window_pattern", "attention_bias"}, .required = {"sliding_window"}}},
  };
  return families;
}

HfFamily FamilyOf(const std::string& model_type) {
  const auto it = Families().find(model_type);
  HfFamily f = it == Families().end() ? HfFamily{} : it->second;
  f.known = it != Families().end();
  return f;
}

// The smallest K from `from` up with flags[i] == rule(i, K) for every layer i;
// 0 when no K does.
template <class Rule>
int SmallestPeriod(const std::vector<bool>& flags, int from, Rule rule) {
  const int n = static_cast<int>(flags.size());
  for (int k = from; k <= n; ++k) {
    bool match = true;
    for (int i = 0; i < n && match; ++i) match = flags[i] == rule(i, k);
    if (match) return k;
  }
  return 0;
}

// Layer i is the last of its group of K: the global layers of Gemma 3's and
// Llama 4's patterns.
bool LastOfEachK(int i, int k) { return i % k == k - 1; }

std::vector<YAML::Node> ListOf(YamlMap& m, const std::string& key) {
  YAML::Node n = m.Raw(key);
  if (!n.IsDefined() || n.IsNull()) return {};
  if (!n.IsSequence()) m.Fail(key, "expected a list");
  std::vector<YAML::Node> out;
  for (const auto& e : n) out.push_back(e);
  return out;
}

int IntElement(YamlMap& m, const std::string& key, const YAML::Node& e) {
  try {
    return e.as<int>();
  } catch (const YAML::Exception&) {
    m.Fail(key, "expected a list of whole numbers");
  }
}

// Which layers use a sliding window. trainsim models "layer i is windowed
// when i % K == 0" (sliding_window_every K) and "layer i is global when
// i % K == K - 1, the others windowed" (global_attention_every K); another
// pattern is exit 2. Sets one of the two in s, or s.sliding_window to 0 when
// no layer is windowed.
void ReadWindowPattern(YamlMap& m, ModelSpec& s, const HfFamily& family) {
  std::vector<bool> windowed(s.layers, true);  // Mistral: every layer
  std::string pattern_key = "sliding_window";
  // Gemma 3's period of windowed and global layers: sliding_window_pattern, or
  // _sliding_window_pattern as newer transformers save it beside layer_types.
  std::string pattern;
  for (const char* key : {"sliding_window_pattern", "_sliding_window_pattern"}) {
    if (!m.Raw(key).IsDefined()) continue;
    if (m.Raw(key).IsNull()) m.Fail(key, "null: the period of windowed and global layers is needed (Gemma 3's is 6)");
    if (!pattern.empty()) m.Fail(key, "written beside " + pattern + ": the pattern must be said once");
    pattern = key;
  }
  if (m.Has("layer_types") && family.known && !family.layer_types) {
    for (const auto& t : ListOf(m, "layer_types")) {
      if (!t.IsScalar() || t.Scalar() != "sliding_attention") {
        m.Fail("layer_types", "this model_type windows every layer in transformers, which does not read this key; "
                              "reading it would misread the model (remove the key, or write the model as a trainsim model YAML)");
      }
    }
  } else if (m.Has("layer_types")) {
    pattern_key = "layer_types";
    const auto types = ListOf(m, "layer_types");
    if (static_cast<int>(types.size()) != s.layers) {
      m.Fail("layer_types", std::to_string(types.size()) + " entries for " + std::to_string(s.layers) + " layers");
    }
    for (int i = 0; i < s.layers; ++i) {
      const std::string t = types[i].IsScalar() ? types[i].Scalar() : "";
      if (t != "sliding_attention" && t != "full_attention") {
        m.Fail("layer_types", "layer type '" + t + "' is not modelled (sliding_attention or full_attention)");
      }
      windowed[i] = t == "sliding_attention";
    }
    if (!pattern.empty()) {
      const int p = m.PositiveInt(pattern);
      for (int i = 0; i < s.layers; ++i) {
        if (windowed[i] != ((i + 1) % p != 0)) m.Fail(pattern, "disagrees with layer_types at layer " + std::to_string(i));
      }
    }
  } else if (!pattern.empty()) {
    // Gemma 3: layer i is global when (i + 1) % pattern == 0, the others windowed.
    pattern_key = pattern;
    const int p = m.PositiveInt(pattern);
    for (int i = 0; i < s.layers; ++i) windowed[i] = (i + 1) % p != 0;
  } else if (family.alternating_window) {
    // Gemma 2 and GPT-OSS (their config classes' default layer_types): even layers windowed, odd global.
    for (int i = 0; i < s.layers; ++i) windowed[i] = i % 2 == 0;
  } else if (family.window_pattern > 0) {
    // Gemma 3's default sliding_window_pattern.
    for (int i = 0; i < s.layers; ++i) windowed[i] = (i + 1) % family.window_pattern != 0;
  }
  if (std::none_of(windowed.begin(), windowed.end(), [](bool w) { return w; })) {
    s.sliding_window = 0;
    return;
  }
  if (const int k = SmallestPeriod(windowed, 1, [](int i, int k) { return i % k == 0; })) {
    s.sliding_window_every = k;
    return;
  }
  if (const int k = SmallestPeriod(windowed, 2, [](int i, int k) { return !LastOfEachK(i, k); })) {
    s.global_attention_every = k;
    return;
  }
  m.Fail(pattern_key, "this pattern of windowed and global layers is not modelled (trainsim windows every K-th layer "
                      "from layer 0, sliding_window_every, or all but every K-th, global_attention_every); the model "
                      "would be misread");
}

// Llama 4's chunked local attention: no_rope_layers[i] == 0 marks a global
// NoPE layer; the default is every 4th (configuration_llama4.py
// no_rope_layer_interval). trainsim models "i % K == K - 1 is global".
int NopeLayerInterval(YamlMap& m, const ModelSpec& s) {
  const int interval = m.PositiveInt("no_rope_layer_interval", 4);
  const auto flags = ListOf(m, "no_rope_layers");
  if (flags.empty()) return interval;
  if (static_cast<int>(flags.size()) != s.layers) {
    m.Fail("no_rope_layers", std::to_string(flags.size()) + " entries for " + std::to_string(s.layers) + " layers");
  }
  std::vector<bool> global(s.layers);
  for (int i = 0; i < s.layers; ++i) global[i] = IntElement(m, "no_rope_layers", flags[i]) == 0;
  // No global layer: every layer chunked, with RoPE (nope_layer_interval 0).
  if (std::none_of(global.begin(), global.end(), [](bool g) { return g; })) return 0;
  if (const int k = SmallestPeriod(global, 1, LastOfEachK)) return k;
  m.Fail("no_rope_layers", "this pattern of RoPE and NoPE layers is not modelled (every K-th layer global: "
                           "nope_layer_interval); the model would be misread");
}

// The first of `keys` present (all present ones must agree); 0 when none is.
int OneOf(YamlMap& m, const std::vector<std::string>& keys) {
  int value = 0;
  std::string first;
  for (const auto& k : keys) {
    if (!m.Has(k)) continue;
    const int v = m.PositiveInt(k);
    if (first.empty()) {
      value = v;
      first = k;
    } else if (v != value) {
      m.Fail(k, k + " " + std::to_string(v) + " disagrees with " + first + " " + std::to_string(value));
    }
  }
  return value;
}

// Whether the file has `key` and the family's transformers code reads it. A
// key of ArchitectureKeys() the family does not read got past ReadHfDecoder's
// check only saying what the family builds anyway (SaysWhatFamilyBuilds): it
// is never read, or its 0 would unbuild what the family builds (DeepSeek's
// shared experts under a Qwen2-MoE shared_expert_intermediate_size: 0).
bool FamilyReads(const HfFamily& family, YamlMap& m, const char* key) {
  return family.known && std::find(family.reads.begin(), family.reads.end(), key) != family.reads.end() && m.Has(key);
}

// The router keys that change no matrix (AllowKeysWithoutEffect) still say
// a router transformers can build: DeepSeek's groups split the experts
// evenly (its group scores view them as n_group x experts/n_group) and the
// chosen groups hold top_k experts; the methods are among those it has.
void CheckHfRouting(YamlMap& m, const MoeSpec& moe) {
  const auto given = [&](const char* key) { return m.node()[key].IsDefined() && !m.node()[key].IsNull(); };
  int groups = 0;
  if (given("n_group")) {
    groups = m.PositiveInt("n_group");
    if (moe.experts % groups != 0) {
      m.Fail("n_group", std::to_string(groups) + " groups do not split the " + std::to_string(moe.experts) + " routed experts evenly");
    }
  }
  if (given("topk_group")) {
    const int chosen = m.PositiveInt("topk_group");
    if (groups > 0 && chosen > groups) m.Fail("topk_group", std::to_string(chosen) + " of " + std::to_string(groups) + " groups (n_group)");
    if (groups > 0 && long(chosen) * (moe.experts / groups) < moe.top_k) {
      m.Fail("topk_group", std::to_string(chosen) + " groups of " + std::to_string(moe.experts / groups) + " experts hold fewer than the " +
                               std::to_string(moe.top_k) + " experts per token");
    }
  }
  if (given("scoring_func")) m.Choice("scoring_func", {"softmax", "sigmoid"});
  if (given("topk_method")) m.Choice("topk_method", {"greedy", "group_limited_greedy", "noaux_tc"});
}

// The mixture of experts (Mixtral, Qwen2/3-MoE, DeepSeek-V2/V3, GPT-OSS,
// Llama 4). Keys of a dense config are left unread, so a stray MoE key in
// one is exit 2.
void ParseHfMoe(YamlMap& m, ModelSpec& s, const HfFamily& family) {
  s.moe.experts = OneOf(m, {"num_local_experts", "num_experts", "n_routed_experts"});
  for (const char* k : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (m.Has(k)) AtMost(m, k, s.moe.experts, kMaxExperts);
  }
  if (s.moe.experts == 0 && family.experts_key) {
    m.Fail(family.experts_key, "missing: transformers reads this model_type as a mixture of experts of its default "
                               "size even so; write the experts, and the experts per token and their width");
  }
  if (s.moe.experts == 0) return;
  s.moe.top_k = OneOf(m, {"num_experts_per_tok", "experts_per_token"});
  if (s.moe.top_k == 0) m.Fail("num_experts_per_tok", "missing required key (experts per token)");
  // Mixtral, GPT-OSS, Llama 4: intermediate_size is the expert's; Qwen and DeepSeek name it apart.
  s.moe.ffn_hidden = m.Has("moe_intermediate_size") ? m.PositiveInt("moe_intermediate_size") : s.ffn_hidden;
  // Llama 4: the dense layers' MLP.
  if (m.Has("intermediate_size_mlp")) s.ffn_hidden = m.PositiveInt("intermediate_size_mlp");
  s.moe.shared_experts = family.shared_expert ? 1 : 0;
  if (FamilyReads(family, m, "n_shared_experts")) s.moe.shared_experts = m.NonNegativeInt("n_shared_experts");
  s.moe.expert_bias = family.expert_bias;
  if (FamilyReads(family, m, "shared_expert_intermediate_size")) {
    // Qwen2-MoE: one shared MLP of this width (with a sigmoid gate, hidden x 1); as
    // shared_experts of moe_intermediate_size it has the same matrices' work.
    const int w = m.NonNegativeInt("shared_expert_intermediate_size");
    if (w % s.moe.ffn_hidden != 0) {
      m.Fail("shared_expert_intermediate_size", "a shared expert of " + std::to_string(w) +
                                                   " is not a whole number of experts of moe_intermediate_size " +
                                                   std::to_string(s.moe.ffn_hidden) + "; not modelled");
    }
    s.moe.shared_experts = w / s.moe.ffn_hidden;
  }
  s.moe.first_k_dense = m.NonNegativeInt("first_k_dense_replace", 0);
  // DeepSeek: layer i >= first_k_dense_replace is MoE when i % moe_layer_freq == 0.
  if (m.Has("moe_layer_freq") && m.PositiveInt("moe_layer_freq") != 1) {
    m.Fail("moe_layer_freq", "a moe_layer_freq other than 1 is not modelled; the model would be misread");
  }
  // Qwen decoder_sparse_step / Llama 4 interleave_moe_layer_step: the K-th, 2K-th, ... layer is MoE.
  s.moe.layer_interval = OneOf(m, {"decoder_sparse_step", "interleave_moe_layer_step"});
  if (s.moe.layer_interval == 0) s.moe.layer_interval = 1;
  // Qwen mlp_only_layers: dense layers by index; modelled when they are the leading ones.
  const auto dense = ListOf(m, "mlp_only_layers");
  for (size_t i = 0; i < dense.size(); ++i) {
    if (IntElement(m, "mlp_only_layers", dense[i]) != static_cast<int>(i) || s.moe.layer_interval != 1) {
      m.Fail("mlp_only_layers", "dense layers other than the leading ones are not modelled; the model would be misread");
    }
  }
  if (!dense.empty()) s.moe.first_k_dense = static_cast<int>(dense.size());
  // Llama 4 (newer configs): the MoE layers listed; they must be the interleave's.
  const auto listed = ListOf(m, "moe_layers");
  if (m.Raw("moe_layers").IsDefined() && !m.Raw("moe_layers").IsNull()) {
    std::vector<int> expect;
    for (int i = 0; i < s.layers; ++i) {
      if (s.IsMoeLayer(i)) expect.push_back(i);
    }
    std::vector<int> got;
    for (const auto& e : listed) got.push_back(IntElement(m, "moe_layers", e));
    if (got != expect) {
      m.Fail("moe_layers", "MoE layers other than every interleave_moe_layer_step-th are not modelled");
    }
  }
  // CheckMoe's checks, naming the config.json's keys.
  if (s.moe.top_k > s.moe.experts) {
    m.Fail("num_experts_per_tok", std::to_string(s.moe.top_k) + " experts per token of " + std::to_string(s.moe.experts));
  }
  if (s.moe.first_k_dense >= s.layers) {
    m.Fail(dense.empty() ? "first_k_dense_replace" : "mlp_only_layers", "no layer is left a mixture of experts");
  }
  if (s.MoeLayers() == 0) m.Fail("num_hidden_layers", "no layer is a mixture of experts at this MoE layer step");
  CheckHfRouting(m, s.moe);
}

// DeepSeek-V2/V3 multi-head latent attention.
void ParseHfMla(YamlMap& m, ModelSpec& s) {
  s.attention = AttentionKind::kMla;
  // null: DeepSeek-V2-Lite projects queries directly; absent: the config
  // classes' default (transformers' DeepseekV2Config and DeepseekV3Config: 1536).
  constexpr int kDeepSeekQLoraRankDefault = 1536;
  s.mla.q_lora_rank = !m.Raw("q_lora_rank").IsDefined() ? kDeepSeekQLoraRankDefault : m.NonNegativeInt("q_lora_rank", 0);
  s.mla.kv_lora_rank = m.PositiveInt("kv_lora_rank");
  s.mla.qk_head_dim = m.PositiveInt("qk_nope_head_dim");
  s.mla.qk_rope_head_dim = m.PositiveInt("qk_rope_head_dim");
  s.mla.v_head_dim = m.PositiveInt("v_head_dim");
  // transformers 5 also writes the sum.
  if (m.Has("qk_head_dim") && m.PositiveInt("qk_head_dim") != s.mla.q_head_dim()) {
    m.Fail("qk_head_dim", "is not qk_nope_head_dim + qk_rope_head_dim");
  }
  // MLA has one latent KV for all heads: num_key_value_heads (= heads) and head_dim
  // (transformers 5 writes qk_rope_head_dim there) size nothing.
  s.kv_heads = s.heads;
  m.Allow("head_dim");
}

// The family is the error: accepting the keys it left unread could not make
// it readable (DeepSeek-V3.2's kv_lora_rank is DeepSeek-V3's key, its indexer
// is not), so they are named here rather than one by one.
[[noreturn]] void FailUnknownFamily(const YamlMap& m, const std::string& model_type, const std::vector<UnmodelledKey>& unmodelled) {
  std::vector<std::string> types;
  std::string families;
  for (const auto& [type, f] : Families()) {
    types.push_back(type);
    families += (families.empty() ? "" : ", ") + type;
  }
  const std::string hint = model_type.empty() ? "" : ClosestMatch(model_type, types);
  std::string unread;
  for (size_t i = 0; i < unmodelled.size() && i < 4; ++i) {
    unread += (i ? ", " : "") + unmodelled[i].key + " (line " + std::to_string(unmodelled[i].line) + ")";
  }
  if (unmodelled.size() > 4) unread += " and " + std::to_string(unmodelled.size() - 4) + " more";
  m.Fail("model_type", (model_type.empty() ? std::string("missing: not one of the families trainsim reads (")
                                           : "'" + model_type + "' is not a family trainsim reads (" +
                                                 (hint.empty() ? "" : "did you mean '" + hint + "'?; it reads ")) +
                           families + "): its architecture may imply what config.json does not say" +
                           (unread.empty() ? "" : " (keys left unread: " + unread + ")") +
                           "; write the model as a trainsim model YAML (models/catalogue/README.md)");
}

// Another family's key whose value builds what this family builds without it:
// none of it (0, false, an empty list), or use_qk_norm equal to the family's
// own QK norm. Qwen3-Coder's qwen3_moe files write use_qk_norm: true and
// shared_expert_intermediate_size: 0; transformers ignores both, and so may trainsim.
bool SaysWhatFamilyBuilds(const std::string& key, const YAML::Node& v, const HfFamily& family) {
  if (v.IsSequence()) return v.size() == 0;
  if (!v.IsScalar() || v.Tag() == "!") return false;
  const std::string& x = v.Scalar();
  if (key == "use_qk_norm") return x == (family.qk_norm ? "true" : "false");
  if (key == "qkv_bias") return x == (family.qkv_bias ? "true" : "false");
  return x == "0" || x == "0.0" || x == "false";
}

// The decoder's keys: the whole file, or text_config of a multimodal wrapper.
// `implied_type`: the model_type a wrapper's text_config holds when it writes none.
ModelSpec ReadHfDecoder(YamlMap& m, const std::string& name, std::optional<bool> outer_tied, const std::string& implied_type,
                        std::vector<UnmodelledKey>& unmodelled) {
  const std::string model_type = m.OptString("model_type").value_or(implied_type);
  const HfFamily family = FamilyOf(model_type);
  if (family.known) {
    for (const std::string& key : ArchitectureKeys()) {
      const YAML::Node v = m.node()[key];
      if (!v.IsDefined() || v.IsNull() || std::find(family.reads.begin(), family.reads.end(), key) != family.reads.end()) continue;
      if (SaysWhatFamilyBuilds(key, v, family)) {
        m.Allow(key);
        continue;
      }
      m.Fail(key, "model_type '" + model_type + "' does not read this key in transformers, which builds its architecture "
                  "whatever the key says" +
                  (key == "attention_bias" && family.qkv_bias ? std::string(" (q, k and v biased, the output projection not)") : "") +
                  "; reading it would misread the model (remove the key, or write the model as a trainsim model YAML)");
    }
  }
  ModelSpec s;
  s.name = name;
  s.layers = AtMost(m, "num_hidden_layers", m.PositiveInt("num_hidden_layers"), kMaxLayers);
  s.hidden = m.PositiveInt("hidden_size");
  s.ffn_hidden = m.PositiveInt("intermediate_size");
  s.heads = family.heads_default > 0 ? m.PositiveInt("num_attention_heads", family.heads_default)
                                     : m.PositiveInt("num_attention_heads");
  s.kv_heads = m.PositiveInt("num_key_value_heads", family.kv_heads_default > 0 ? family.kv_heads_default : s.heads);
  s.vocab = family.vocab_default > 0 ? m.PositiveInt("vocab_size", family.vocab_default) : m.PositiveInt("vocab_size");
  // Gemma 2/3 name the MLP's activation hidden_activation (hidden_act too, in Gemma 2).
  const std::string act_key = m.Has("hidden_activation") ? "hidden_activation" : "hidden_act";
  m.Allow("hidden_act");
  if (m.node()[act_key].IsDefined() && m.node()[act_key].IsNull()) m.Fail(act_key, "null: name the activation (silu, gelu, ...)");
  const std::string act = m.OptString(act_key).value_or("silu");
  if (act == "silu" || act == "swish" || act == "swiglu") {
    s.activation = Activation::kSwiGlu;
  } else if (act.rfind("gelu", 0) == 0 && family.known) {
    // Gemma's MLP is gated (gate, up, down): GeGLU. The tanh approximation is the same work.
    // (Whether another family's gelu MLP is gated depends on its architecture: its
    // model_type is the error, ParseHfDecoder.)
    s.activation = Activation::kGeGlu;
  } else {
    m.Fail(act_key, "unsupported activation '" + act + "' (silu or gelu)");
  }
  s.tied_embeddings = outer_tied.value_or(m.Bool("tie_word_embeddings", family.tied_default));
  if (outer_tied && m.Has("tie_word_embeddings") && m.Bool("tie_word_embeddings") != *outer_tied) {
    m.Fail("tie_word_embeddings", std::string("disagrees with the wrapper's tie_word_embeddings ") + (*outer_tied ? "true" : "false") +
                                      ": which one ties the head differs between transformers releases; make them agree");
  }
  m.Allow("tie_word_embeddings");
  // Every family trainsim knows normalises with RMSNorm (its config class defaults rms_norm_eps, so a
  // file may leave it out); another model_type says RMSNorm by writing rms_norm_eps.
  s.norm = family.known || m.Has("rms_norm_eps") ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  m.Allow("rms_norm_eps");
  s.position = PositionKind::kRope;
  s.qk_norm = family.qk_norm ? QkNorm::kRms : QkNorm::kNone;
  s.output_norms = family.output_norms;
  // Linear-layer biases: a vector per matrix, counted, and added in the GEMMs' epilogues (except
  // fc2's of biased experts, a pass of its own in Megatron-Core: model.moe.expert_bias, which
  // model_type gpt_oss implies). A bias key the family does not read got past the check above
  // only saying what the family builds anyway.
  const auto reads = [&](const char* key) { return FamilyReads(family, m, key); };
  s.qkv_bias = family.qkv_bias;
  if (reads("attention_bias") && m.Bool("attention_bias")) {
    // DeepSeek's attention_bias biases q_a, kv_a and o, not projections trainsim's MLA counts.
    if (family.mla) m.Fail("attention_bias", "biased MLA projections (q_a_proj, kv_a_proj_with_mqa, o_proj) are not modelled");
    s.qkv_bias = true;
    s.proj_bias = family.attention_bias_on_output;
  }
  if (reads("qkv_bias")) s.qkv_bias = m.Bool("qkv_bias");
  if (reads("mlp_bias")) s.mlp_bias = m.Bool("mlp_bias");
  // GLM-4.5's use_qk_norm is an RMSNorm; Llama 4's an L2 norm (no weights) on its RoPE layers.
  if (reads("use_qk_norm")) s.qk_norm = m.Bool("use_qk_norm") ? family.use_qk_norm : QkNorm::kNone;
  s.attention_sinks = family.attention_sinks;
  // GPT-OSS clamps its gated activation's inputs; a file without the key says no clamp.
  s.activation_clamp = m.Has("swiglu_limit") ? m.NonNegativeDouble("swiglu_limit") : 0.0;
  if (family.mla) {
    ParseHfMla(m, s);
  } else if (m.Has("head_dim")) {
    s.head_dim_override = AtMost(m, "head_dim", m.PositiveInt("head_dim"), kMaxHeadDim);
  } else if (family.head_dim_default > 0) {
    // Gemma's and Qwen3's attention takes head_dim as given: null builds nothing in transformers
    // (Llama's and Mistral's configs derive hidden / heads from null, as trainsim does).
    if (m.Raw("head_dim").IsDefined()) m.Fail("head_dim", "null: this model_type's attention takes head_dim as written; give it, or leave the key out for the default");
    s.head_dim_override = family.head_dim_default;
  }
  // Multi-token prediction modules (DeepSeek-V3, GLM-4.5): trained beside the model, not counted in
  // its published total.
  s.mtp_layers = AtMost(m, "num_nextn_predict_layers", m.NonNegativeInt("num_nextn_predict_layers", 0), kMaxMtpLayers);
  // Sliding windows. Qwen2/3 write a window but apply it only with use_sliding_window (then
  // from layer max_window_layers on).
  if (m.Has("use_sliding_window") && m.Bool("use_sliding_window")) {
    m.Fail("use_sliding_window", "Qwen's sliding window from layer max_window_layers on is not modelled");
  }
  const bool qwen_window_off = family.window_switch || m.Has("use_sliding_window");
  // Phi-4-mini's full_attn_mod: every K-th layer attends over the whole sequence. transformers'
  // Phi3 does not read it; 1 (every layer, as its file writes) is what it builds.
  if (m.Has("full_attn_mod") && m.PositiveInt("full_attn_mod") != 1) {
    m.Fail("full_attn_mod", "full attention on every K-th layer only is not modelled (transformers' Phi3 reads no such "
                            "key); the model would be misread");
  }
  m.Allow("max_window_layers");
  // Gemma 2 writes the window twice.
  if (m.Has("sliding_window_size") && m.Has("sliding_window") &&
      m.PositiveInt("sliding_window_size") != m.PositiveInt("sliding_window")) {
    m.Fail("sliding_window_size", "disagrees with sliding_window");
  }
  m.Allow("sliding_window_size");
  if (!qwen_window_off && m.Has("sliding_window")) {
    if (family.known && !family.windowed) {
      m.Fail("sliding_window", "model_type '" + model_type + "' attends over the whole sequence in transformers, which "
                               "does not read this key; a window here would misread the model (remove the key, or "
                               "write the model as a trainsim model YAML)");
    }
    s.sliding_window = m.PositiveInt("sliding_window");
    ReadWindowPattern(m, s, family);
  } else {
    m.Allow("sliding_window");
    // Newer Qwen configs list the layers' kinds too; with the window off they are all full.
    for (const auto& t : ListOf(m, "layer_types")) {
      if (!t.IsScalar() || t.Scalar() != "full_attention") {
        m.Fail("layer_types", "windowed layers are listed but no sliding_window applies; the model would be misread");
      }
    }
  }
  // Llama 4 chunked local attention (NoPE global layers).
  if (m.Has("attention_chunk_size")) {
    s.attention_chunk = m.PositiveInt("attention_chunk_size");
    s.nope_layer_interval = NopeLayerInterval(m, s);
  }
  ParseHfMoe(m, s, family);
  // Read with the generic defaults above, a key the family defaults otherwise is an error (after
  // the errors of the keys the file has, which its writer would meet next).
  for (const std::string& key : family.required) {
    // Mistral's null window is no window (MistralConfig's own default is 4,096 tokens).
    const YAML::Node v = m.Raw(key);
    const bool null_says_none = key == "sliding_window" && !family.alternating_window && family.window_pattern == 0;
    if (!v.IsDefined() || (v.IsNull() && !null_says_none)) {
      m.Fail(key, std::string(v.IsDefined() ? "null" : "missing") + ": model_type '" + model_type +
                      "' builds it with a default of its own in transformers (its config class), which trainsim does "
                      "not assume; write the key as the model has it");
    }
  }
  CheckShape(m, s, {"num_attention_heads", "num_key_value_heads"});
  // Dropout is a training setting, the scenario's (training.dropout); a file that trains with it
  // hears so, rather than have its value dropped silently.
  std::string dropout;
  for (const char* key : {"attention_dropout", "hidden_dropout", "embd_pdrop", "resid_pdrop"}) {
    const YAML::Node v = m.node()[key];
    if (v.IsDefined() && !v.IsNull() && m.NonNegativeDouble(key) > 0) dropout += (dropout.empty() ? "" : ", ") + std::string(key) + " " + v.Scalar();
  }
  if (!dropout.empty()) s.left_out = "the file's " + dropout + " (dropout is the scenario's training.dropout, default its framework's)";
  // Gemma 2 caps its attention scores with a tanh inside the softmax: cuDNN's
  // and Transformer Engine's fused attention have no such cap, so a framework
  // runs FlashAttention 2.6+ (which has) or an unfused attention, slower.
  const YAML::Node softcap = m.node()["attn_logit_softcapping"];
  if (softcap.IsDefined() && !softcap.IsNull() && m.NonNegativeDouble("attn_logit_softcapping") > 0) {
    s.left_out += (s.left_out.empty() ? "" : "; ") + std::string("attn_logit_softcapping ") + softcap.Scalar() +
                  " (attention is priced as the fused flash kernel; cuDNN's has no score cap, and a framework that "
                  "falls back to unfused attention for it is slower)";
  }
  // Its cap on the logits is one more elementwise pass over them, not priced.
  const YAML::Node final_cap = m.node()["final_logit_softcapping"];
  if (final_cap.IsDefined() && !final_cap.IsNull() && m.NonNegativeDouble("final_logit_softcapping") > 0) {
    s.left_out += (s.left_out.empty() ? "" : "; ") + std::string("final_logit_softcapping ") + final_cap.Scalar() +
                  " (a tanh over the logits before the loss, one more pass over them, not priced)";
  }
  if (const YAML::Node v = m.node()["max_position_embeddings"]; v.IsDefined() && !v.IsNull()) {
    s.max_position_embeddings = m.PositiveInt("max_position_embeddings");
  }
  CollectUnmodelledKeys(m, unmodelled);
  // Every key read, the family is still a fact of its own: what a model_type
  // implies without a key (Qwen3's and OLMo 2's QK norm, GPT-OSS's sinks and
  // expert biases) is known for the families above only.
  if (!family.known) FailUnknownFamily(m, model_type, unmodelled);
  return s;
}

// ReadHfDecoder, whose errors in a family trainsim does not read are that
// family's: a GPT-2 config has no num_hidden_layers (its key is n_layer), and
// "missing num_hidden_layers" would send its writer looking for the wrong fix.
ModelSpec ParseHfDecoder(YamlMap& m, const std::string& name, std::optional<bool> outer_tied, const std::string& implied_type,
                         std::vector<UnmodelledKey>& unmodelled) {
  try {
    return ReadHfDecoder(m, name, outer_tied, implied_type, unmodelled);
  } catch (const InputException& e) {
    const std::string model_type = m.OptString("model_type").value_or(implied_type);
    if (FamilyOf(model_type).known) {
      // A key reported missing that the file has misspelt ("num_local_expert" for
      // num_local_experts) is the misspelling's error, at its line: the reading
      // stopped before it could reach the misspelt key as unmodelled.
      const std::string& missing = e.error().key;
      const std::string prefix = m.Path("");
      if (missing.rfind(prefix, 0) == 0 && !m.Raw(missing.substr(prefix.size())).IsDefined()) {
        std::vector<UnmodelledKey> unread;
        CollectUnmodelledKeys(m, unread);
        for (const UnmodelledKey& u : unread) {
          if (u.hint != missing.substr(prefix.size())) continue;
          throw InputException(InputError{m.file(), u.line, u.key,
                                          "unknown key (did you mean '" + u.hint + "'? the file has no " + u.hint +
                                              ", which this model_type needs)"});
        }
      }
      throw;
    }
    unmodelled.clear();
    CollectUnmodelledKeys(m, unmodelled);
    FailUnknownFamily(m, model_type, unmodelled);
  }
}

// `architectures` names the head on the decoder: trainsim simulates a causal
// language model (…ForCausalLM, or a multimodal wrapper's
// …ForConditionalGeneration) with its LM head. A classification or reward
// head (…ForSequenceClassification: hidden x num_labels, not the vocabulary)
// or a bare decoder (…Model) is another parameter count and another loss.
void CheckArchitectures(YamlMap& m, const std::string& model_type) {
  const YAML::Node list = m.Raw("architectures");
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) m.Fail("architectures", "expected a list of class names");
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& e : list) {
    const std::string c = e.IsScalar() ? e.Scalar() : "";
    // GPT-2's class names its LM head the older way (GPT2LMHeadModel).
    if (!ends_with(c, "ForCausalLM") && !ends_with(c, "ForConditionalGeneration") && !ends_with(c, "LMHeadModel")) {
      m.Fail("architectures", "'" + c + "' is not a causal language model with its LM head (…ForCausalLM): trainsim "
                              "simulates pre-training and fine-tuning of one, and another head (a classifier's or reward "
                              "model's hidden x num_labels) or none would misread the model");
    }
    // transformers builds model_type's model, so a class of another model (a Llama file naming
    // Mamba or Qwen2) says the file is not the config it seems. Its class is model_type's name
    // without underscores or "_text" (Qwen3MoeForCausalLM, Gemma3ForCausalLM), Kimi K2's DeepSeek-V3's.
    if (!FamilyOf(model_type).known && model_type != "llama4" && model_type != "gemma3") continue;
    std::string stem = model_type == "kimi_k2" ? "deepseek_v3" : model_type;
    if (ends_with(stem, "_text")) stem.resize(stem.size() - 5);
    std::erase(stem, '_');
    std::string named = c.substr(0, c.find("For"));
    std::transform(named.begin(), named.end(), named.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (named != stem) {
      m.Fail("architectures", "'" + c + "' is not a class of model_type '" + model_type + "', which transformers builds "
                              "whatever the class says: the file contradicts itself; make them agree");
    }
  }
}

// A multimodal wrapper (Llama 4, Gemma 3): the language model is text_config.
// trainsim simulates training the language model on text: the vision tower
// (vision_config; Llama 4's is under 1B parameters) is not modelled.
ModelFile ParseHuggingFace(const YAML::Node& root, const std::string& file, const std::string& name) {
  ModelFile f;
  f.config_json = true;
  // The wrapper names the text model it holds (transformers' Llama4Config, Gemma3Config).
  static const std::map<std::string, std::string> text_model_of = {{"llama4", "llama4_text"}, {"gemma3", "gemma3_text"}};
  if (!root["text_config"].IsDefined()) {
    YamlMap m(root, file);
    // A wrapper's type with the text model's keys at the top: say what is missing, not "no such family".
    if (const YAML::Node type = root["model_type"]; type.IsDefined() && type.IsScalar() && text_model_of.count(type.Scalar())) {
      m.Fail("model_type", "'" + type.Scalar() + "' is the multimodal wrapper, whose language model is its text_config, which this "
                           "file lacks: nest the text model's keys under text_config, or give model_type '" +
                               text_model_of.at(type.Scalar()) + "' for a text model alone");
    }
    AllowKeysWithoutEffect(m);
    CheckArchitectures(m, m.OptString("model_type").value_or(""));
    f.spec = ParseHfDecoder(m, name, std::nullopt, "", f.unmodelled_keys);
    return f;
  }
  YamlMap outer(root, file);
  AllowKeysWithoutEffect(outer);
  // Image-token ids and the image tokens per picture: the vision side.
  for (const char* key : {"model_type", "boi_token_index", "eoi_token_index", "image_token_index", "image_token_id",
                          "mm_tokens_per_image", "vision_config", "text_config"}) {
    outer.Allow(key);
  }
  const std::string wrapper = outer.OptString("model_type").value_or("");
  const auto holds = text_model_of.find(wrapper);
  if (holds == text_model_of.end()) {
    outer.Fail("model_type", (wrapper.empty() ? std::string("missing") : "'" + wrapper + "'") +
                                 ": a config.json with text_config is read as the multimodal wrapper llama4 or gemma3 only");
  }
  if (!root["text_config"].IsMap()) outer.Fail("text_config", "expected a mapping of the text model's keys");
  const YAML::Node inner_type = root["text_config"]["model_type"];
  if (inner_type.IsDefined() && inner_type.IsScalar() && inner_type.Scalar() != holds->second) {
    YamlMap::FailAt(inner_type, file, "text_config.model_type",
                    "'" + inner_type.Scalar() + "' inside a " + wrapper + " wrapper, which holds " + holds->second);
  }
  std::optional<bool> tied;
  if (outer.Has("tie_word_embeddings")) tied = outer.Bool("tie_word_embeddings");
  CollectUnmodelledKeys(outer, f.unmodelled_keys);
  YamlMap text(root["text_config"], file, "text_config");
  AllowKeysWithoutEffect(text);
  CheckArchitectures(outer, wrapper);
  CheckArchitectures(text, holds->second);
  // transformers builds the text config the wrapper holds whether or not text_config names it.
  f.spec = ParseHfDecoder(text, name, tied, holds->second, f.unmodelled_keys);
  if (root["vision_config"].IsDefined()) {
    f.spec.left_out = (f.spec.left_out.empty() ? "" : f.spec.left_out + "; ") + "the " + wrapper +
                      " wrapper's vision tower (vision_config); its language model is simulated, trained on text";
  }
  return f;
}

}  // namespace

ModelSpec ParseModelKeys(YamlMap& m, const std::string& default_name) {
  ModelSpec s;
  s.name = m.OptString("name").value_or(default_name);
  s.layers = AtMost(m, "layers", m.PositiveInt("layers"), kMaxLayers);
  s.hidden = m.PositiveInt("hidden");
  s.ffn_hidden = m.PositiveInt("ffn_hidden");
  s.heads = m.PositiveInt("heads");
  s.kv_heads = m.PositiveInt("kv_heads", s.heads);
  s.vocab = m.PositiveInt("vocab");
  s.max_positions = m.NonNegativeInt("max_positions", 0);
  s.activation = ParseActivation(m, "activation");
  s.norm = m.Choice("norm", {"layernorm", "rmsnorm"}, "rmsnorm") == "layernorm" ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  const std::string position = m.Choice("position", {"learned", "rope", "alibi"}, "rope");
  s.position = position == "learned" ? PositionKind::kLearned : position == "alibi" ? PositionKind::kAlibi : PositionKind::kRope;
  s.tied_embeddings = m.Bool("tied_embeddings", false);
  // Absent means hidden / heads; a written 0 is a mistake, not that default.
  s.head_dim_override = m.Has("head_dim") ? AtMost(m, "head_dim", m.PositiveInt("head_dim"), kMaxHeadDim) : 0;
  {
    const std::string qk = m.Choice("qk_norm", {"false", "true", "l2"}, "false");
    s.qk_norm = qk == "true" ? QkNorm::kRms : qk == "l2" ? QkNorm::kL2 : QkNorm::kNone;
  }
  s.output_norms = m.Bool("output_norms", false);
  const bool gpt_style = s.norm == NormKind::kLayerNorm;  // GPT-style layers carry biases; Llama-style do not
  s.qkv_bias = m.Bool("qkv_bias", gpt_style);
  s.proj_bias = m.Bool("proj_bias", gpt_style);
  s.mlp_bias = m.Bool("mlp_bias", gpt_style);
  s.attention = m.Choice("attention", {"mha", "mla"}, "mha") == "mla" ? AttentionKind::kMla : AttentionKind::kMha;
  if (auto mla = m.OptMap("mla")) {
    if (s.attention != AttentionKind::kMla) m.Fail("mla", "mla keys given but attention is not 'mla'");
    s.mla.q_lora_rank = mla->NonNegativeInt("q_lora_rank", 0);
    s.mla.kv_lora_rank = mla->PositiveInt("kv_lora_rank");
    s.mla.qk_head_dim = mla->PositiveInt("qk_head_dim");
    s.mla.qk_rope_head_dim = mla->PositiveInt("qk_rope_head_dim");
    s.mla.v_head_dim = mla->PositiveInt("v_head_dim");
    mla->Finish();
  } else if (s.attention == AttentionKind::kMla) {
    m.Fail("attention", "attention 'mla' needs the mla keys (q_lora_rank, kv_lora_rank, qk_head_dim, qk_rope_head_dim, v_head_dim)");
  }
  s.sliding_window = m.NonNegativeInt("sliding_window", 0);
  s.sliding_window_every = m.PositiveInt("sliding_window_every", 1);
  s.global_attention_every = m.NonNegativeInt("global_attention_every", 0);
  if (s.global_attention_every > 0 && m.Has("sliding_window_every")) {
    m.Fail("global_attention_every", "give sliding_window_every (windowed layers i % K == 0) or global_attention_every "
                                     "(global layers i % K == K - 1), not both");
  }
  if (s.global_attention_every > 0 && s.sliding_window == 0) {
    m.Fail("global_attention_every", "needs sliding_window (the window of the other layers)");
  }
  if (m.Has("sliding_window_every") && s.sliding_window == 0) {
    m.Fail("sliding_window_every", "needs sliding_window (the window of the layers it picks)");
  }
  s.attention_sinks = m.Bool("attention_sinks", false);
  s.attention_chunk = m.NonNegativeInt("attention_chunk", 0);
  s.nope_layer_interval = m.NonNegativeInt("nope_layer_interval", 0);
  if (s.nope_layer_interval > 0 && s.attention_chunk == 0) {
    m.Fail("nope_layer_interval", "needs attention_chunk (the chunk of the other layers)");
  }
  if (m.Has("mtp_layers")) s.mtp_layers = AtMost(m, "mtp_layers", m.NonNegativeInt("mtp_layers"), kMaxMtpLayers);
  if (m.Has("activation_clamp")) {
    s.activation_clamp = m.NonNegativeDouble("activation_clamp");
    if (*s.activation_clamp > 0 && !Gated(s.activation)) {
      m.Fail("activation_clamp", "clamps a gated activation's inputs (swiglu, geglu); this model's activation is not gated");
    }
  }
  if (auto moe = m.OptMap("moe")) {
    s.moe.experts = AtMost(*moe, "experts", moe->PositiveInt("experts"), kMaxExperts);
    s.moe.top_k = moe->PositiveInt("top_k");
    s.moe.ffn_hidden = moe->PositiveInt("moe_ffn_hidden");
    s.moe.shared_experts = moe->NonNegativeInt("shared_experts", 0);
    s.moe.first_k_dense = moe->NonNegativeInt("first_k_dense", 0);
    s.moe.layer_interval = moe->PositiveInt("layer_interval", 1);
    s.moe.capacity_factor = moe->Has("capacity_factor") ? moe->PositiveDouble("capacity_factor") : 0.0;
    if (moe->Has("pad_to_capacity")) s.moe.pad_to_capacity = moe->Bool("pad_to_capacity");
    s.moe.forced_balance = moe->Bool("forced_balance", false);
    if (moe->Has("expert_bias")) s.moe.expert_bias = moe->Bool("expert_bias");
    CheckMoe(*moe, s);
    moe->Finish();
  }
  m.Allow("source");  // where the architecture was published
  CheckShape(m, s);
  m.Finish();
  return s;
}

namespace {

std::string Stem(const std::string& path) {
  const auto slash = path.find_last_of('/');
  std::string f = slash == std::string::npos ? path : path.substr(slash + 1);
  const auto dot = f.find_last_of('.');
  if (dot != std::string::npos) f = f.substr(0, dot);
  return f;
}

ModelFile ParseModelFile(const std::string& path) {
  // A .json file is a Hugging Face config.json, held to JSON's grammar (yaml-cpp
  // reads JSON and more); a YAML file with its keys is read as one too.
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  YAML::Node root = json ? LoadJsonFile(path) : LoadYamlFile(path);
  if (root.IsMap() && (json || root["num_hidden_layers"].IsDefined() || root["text_config"].IsMap())) {
    std::string name = Stem(path);
    if (name == "config") name = Stem(DirName(path));
    return ParseHuggingFace(root, path, name);
  }
  YamlMap m(root, path);
  return {ParseModelKeys(m, Stem(path)), false, {}};
}

// models/catalogue/NAME.yaml in the data directory, if the catalogue has NAME.
std::optional<std::string> CatalogueModelPath(const std::string& name) {
  for (const auto& n : CatalogueNames("models/catalogue")) {
    if (n == name) return DataDir() + "/models/catalogue/" + n + ".yaml";
  }
  return std::nullopt;
}

ModelFile CachedModelFile(const std::string& path) {
  static ParsedFileCache<ModelFile> cache;
  return cache.Get(path, ParseModelFile);
}

// The model of `f` (read from `path`) if every key it left unread is one the
// scenario accepts on purpose (`accepted`, read from `accept_node`); those go
// to ModelSpec::accepted_unknown_keys for the warning. Throws for the first
// other one, and for an accepted key that is not an unread key of the file (a
// typo would otherwise accept nothing, silently).
ModelSpec AdmitModelFile(ModelFile f, const std::string& path, const std::vector<std::string>& accepted,
                         const YAML::Node& accept_node, const std::string& scenario_file, const std::string& accept_key) {
  std::vector<std::string> unread;
  for (const auto& u : f.unmodelled_keys) unread.push_back(u.key);
  for (size_t i = 0; i < accepted.size(); ++i) {
    if (std::find(unread.begin(), unread.end(), accepted[i]) != unread.end()) continue;
    const std::string hint = ClosestMatch(accepted[i], unread);
    YamlMap::FailAt(accept_node[i], scenario_file, accept_key,
                    "'" + accepted[i] + "' is not a key of " + path + " that trainsim leaves unread: nothing to accept" +
                        (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  const UnmodelledKey* first = nullptr;
  std::vector<std::string> more;
  for (const auto& u : f.unmodelled_keys) {
    if (std::find(accepted.begin(), accepted.end(), u.key) == accepted.end()) {
      if (first) more.push_back(u.key);
      else first = &u;
      continue;
    }
    f.spec.accepted_unknown_keys.push_back(path + ":" + std::to_string(u.line) + ": " + u.key);
  }
  if (first) throw UnmodelledKeyError(path, *first, more);
  return std::move(f.spec);
}

// The file a model name or path refers to; throws naming `ref` when there is none.
std::string ModelFilePath(const YAML::Node& ref, const std::string& scenario_file, const std::string& key) {
  if (!ref.IsDefined() || ref.IsNull()) {
    YamlMap::FailAt(ref, scenario_file, key, "missing required key");
  }
  if (!ref.IsScalar()) YamlMap::FailAt(ref, scenario_file, key, "expected a model name, a path or a mapping of model keys");
  const std::string name = ref.Scalar();
  if (LooksLikePath(name)) {
    auto path = ResolvePath(name, scenario_file);
    // A Hugging Face snapshot directory (what huggingface-cli download writes): its config.json.
    if (!path) path = ResolvePath((std::filesystem::path(name) / "config.json").string(), scenario_file);
    if (!path) {
      const std::string reason = UnresolvedPathReason(name, scenario_file);
      const bool directory = reason.find("is a directory") != std::string::npos;
      YamlMap::FailAt(ref, scenario_file, key, "model file '" + name + "' " + reason + (directory ? " (and holds no readable config.json)" : ""));
    }
    return *path;
  }
  if (auto path = CatalogueModelPath(name)) return *path;
  const std::string hint = ClosestMatch(name, CatalogueNames("models/catalogue"));
  YamlMap::FailAt(ref, scenario_file, key,
                  "unknown model '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                      "; catalogue: models/catalogue/, or give a path");
}

}  // namespace

ModelSpec ResolveModel(const YAML::Node& ref, const std::string& scenario_file, const std::string& key) {
  if (ref.IsMap() && ref["file"].IsDefined()) {
    // A model file with options: which of its config.json keys to accept unread.
    YamlMap m(ref, scenario_file, key);
    const YAML::Node file = m.Raw("file");
    const std::string path = ModelFilePath(file, scenario_file, m.Path("file"));
    std::vector<std::string> accepted;
    const YAML::Node accept = m.Raw("accept_unknown_keys");
    if (accept.IsDefined() && !accept.IsNull()) {
      if (!accept.IsSequence()) m.Fail("accept_unknown_keys", "expected a list of config.json keys");
      for (const auto& k : accept) {
        if (!k.IsScalar()) m.Fail("accept_unknown_keys", "expected a list of config.json keys");
        accepted.push_back(k.Scalar());
      }
    }
    // The training run's choices beside the file's architecture (Megatron's
    // moe_expert_capacity_factor, moe_router_force_load_balancing,
    // mtp_num_layers): not a config.json's to say, so set here.
    std::optional<double> capacity_factor;
    std::optional<bool> pad_to_capacity;
    std::optional<bool> forced_balance;
    std::optional<int> mtp_layers;
    std::optional<YamlMap> routing = m.OptMap("moe");
    if (routing) {
      if (routing->Has("capacity_factor")) capacity_factor = routing->PositiveDouble("capacity_factor");
      if (routing->Has("pad_to_capacity")) pad_to_capacity = routing->Bool("pad_to_capacity");
      if (routing->Has("forced_balance")) forced_balance = routing->Bool("forced_balance");
      routing->Finish();
    }
    if (m.Has("mtp_layers")) mtp_layers = AtMost(m, "mtp_layers", m.NonNegativeInt("mtp_layers"), kMaxMtpLayers);
    m.Finish();
    ModelFile f = CachedModelFile(path);
    if (!accepted.empty() && !f.config_json) {
      m.Fail("accept_unknown_keys", "applies to a Hugging Face config.json; " + path + " is a trainsim model file, "
                                    "whose keys are all read");
    }
    ModelSpec spec = AdmitModelFile(std::move(f), path, accepted, accept, scenario_file, m.Path("accept_unknown_keys"));
    if (routing && !spec.moe.enabled()) m.Fail("moe", "routing settings for a model without experts (" + path + ")");
    if (capacity_factor) spec.moe.capacity_factor = *capacity_factor;
    if (pad_to_capacity) spec.moe.pad_to_capacity = *pad_to_capacity;
    if (routing) CheckRoutingChoices(*routing, spec.moe);
    if (forced_balance) spec.moe.forced_balance = *forced_balance;
    if (mtp_layers) spec.mtp_layers = *mtp_layers;
    return spec;
  }
  if (ref.IsMap()) {
    YamlMap m(ref, scenario_file, key);
    return ParseModelKeys(m, "custom");
  }
  const std::string path = ModelFilePath(ref, scenario_file, key);
  return AdmitModelFile(CachedModelFile(path), path, {}, YAML::Node(), scenario_file, key);
}

YAML::Node CatalogueModelKeys(const std::string& name) {
  const auto path = CatalogueModelPath(name);
  if (!path) return YAML::Node(YAML::NodeType::Null);
  // Parsed once per file state (a sweep sets a model key at every point); each caller gets its own copy.
  static ParsedFileCache<YAML::Node> cache;
  return YAML::Clone(cache.Get(*path, LoadYamlFile));
}

Expected<ModelSpec> LoadModelFile(const std::string& path) {
  return CatchInputErrors<ModelSpec>(path, [&] { return AdmitModelFile(ParseModelFile(path), path, {}, YAML::Node(), path, ""); });
}

std::string ModelFileWarning(const ModelSpec& m) {
  std::string w;
  if (!m.accepted_unknown_keys.empty()) {
    std::string keys;
    for (const auto& k : m.accepted_unknown_keys) keys += (keys.empty() ? "" : "; ") + k;
    w = "config.json keys trainsim does not model, accepted unread (model.accept_unknown_keys): " + keys +
        ". The prediction leaves out whatever they change.";
  }
  if (!m.left_out.empty()) w += (w.empty() ? "" : " ") + std::string("Not simulated: ") + m.left_out + ".";
  return w.empty() ? "" : "warning: " + w;
}

}  // namespace trainsim
