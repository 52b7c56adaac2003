#include "sim/io/model_loader.h"

#include <yaml-cpp/yaml.h>

#include <set>

#include "sim/io/data_paths.h"
#include "sim/io/file_cache.h"
#include "sim/io/yaml_reader.h"

namespace trainsim {

namespace {

void CheckShape(YamlMap& m, ModelSpec& s) {
  if (s.head_dim_override == 0 && s.attention == AttentionKind::kMha && s.hidden % s.heads != 0) {
    m.Fail("heads", "hidden (" + std::to_string(s.hidden) + ") is not divisible by heads (" + std::to_string(s.heads) + "); give head_dim");
  }
  if (s.heads % s.kv_heads != 0) m.Fail("kv_heads", "heads (" + std::to_string(s.heads) + ") is not divisible by kv_heads (" + std::to_string(s.kv_heads) + ")");
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
}

Activation ParseActivation(YamlMap& m, const std::string& key) {
  const std::string a = m.Choice(key, {"gelu", "swiglu", "geglu", "squared-relu"}, "swiglu");
  return a == "gelu" ? Activation::kGelu : a == "geglu" ? Activation::kGeGlu : a == "squared-relu" ? Activation::kSquaredRelu : Activation::kSwiGlu;
}

// Hugging Face config.json keys that do not change the training step's work
// or memory (token ids, initialisation, serving and bookkeeping fields).
// Every other key is either read below or exit 2: a key trainsim does not
// model (num_local_experts, q_lora_rank, ...) must never leave a silently
// different model.
const std::set<std::string>& HuggingFaceKeysWithoutEffect() {
  static const std::set<std::string> keys = {
      "_name_or_path", "architectures", "auto_map", "bos_token_id", "eos_token_id", "pad_token_id", "initializer_range",
      "max_position_embeddings", "model_type", "pretraining_tp", "rope_scaling", "rope_theta", "torch_dtype",
      "transformers_version", "use_cache", "attention_bias", "mlp_bias", "attention_dropout", "hidden_dropout",
      "output_router_logits"};
  return keys;
}

// Hugging Face config.json (Llama, Mistral, Qwen and other dense
// decoder-only models with the same key names).
ModelSpec ParseHuggingFace(const YAML::Node& root, const std::string& file, const std::string& name) {
  YamlMap m(root, file);
  for (const auto& key : HuggingFaceKeysWithoutEffect()) m.Allow(key);
  // Present but null or equal to what is modelled: no effect.
  if (m.Has("sliding_window") && !m.Raw("sliding_window").IsNull()) {
    m.Fail("sliding_window", "sliding-window attention is not modelled yet; the model would be misread");
  }
  ModelSpec s;
  s.name = name;
  s.layers = m.PositiveInt("num_hidden_layers");
  s.hidden = m.PositiveInt("hidden_size");
  s.ffn_hidden = m.PositiveInt("intermediate_size");
  s.heads = m.PositiveInt("num_attention_heads");
  s.kv_heads = m.PositiveInt("num_key_value_heads", s.heads);
  s.vocab = m.PositiveInt("vocab_size");
  const std::string act = m.OptString("hidden_act").value_or("silu");
  if (act == "silu" || act == "swish" || act == "swiglu") {
    s.activation = Activation::kSwiGlu;
  } else if (act.rfind("gelu", 0) == 0) {
    s.activation = Activation::kGelu;
  } else {
    m.Fail("hidden_act", "unsupported activation '" + act + "' (silu or gelu)");
  }
  s.tied_embeddings = m.Bool("tie_word_embeddings", false);
  s.norm = m.Has("rms_norm_eps") ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  m.Allow("rms_norm_eps");
  s.position = PositionKind::kRope;
  if (m.Has("head_dim") && !m.Raw("head_dim").IsNull() && m.PositiveInt("head_dim") != s.hidden / s.heads) {
    m.Fail("head_dim", "a head_dim other than hidden_size / num_attention_heads is not modelled yet; the model would be misread");
  }
  CheckShape(m, s);
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (!m.Known(key)) {
      YamlMap::FailAt(it->first, file, key,
                      "config.json key trainsim does not model (mixture of experts, MLA and other variants are not modelled "
                      "yet); reading the rest would misread the model");
    }
  }
  return s;
}

}  // namespace

ModelSpec ParseModelKeys(YamlMap& m, const std::string& default_name) {
  ModelSpec s;
  s.name = m.OptString("name").value_or(default_name);
  s.layers = m.PositiveInt("layers");
  s.hidden = m.PositiveInt("hidden");
  s.ffn_hidden = m.PositiveInt("ffn_hidden");
  s.heads = m.PositiveInt("heads");
  s.kv_heads = m.PositiveInt("kv_heads", s.heads);
  s.vocab = m.PositiveInt("vocab");
  s.max_positions = m.NonNegativeInt("max_positions", 0);
  s.activation = ParseActivation(m, "activation");
  s.norm = m.Choice("norm", {"layernorm", "rmsnorm"}, "rmsnorm") == "layernorm" ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  s.position = m.Choice("position", {"learned", "rope"}, "rope") == "learned" ? PositionKind::kLearned : PositionKind::kRope;
  s.tied_embeddings = m.Bool("tied_embeddings", false);
  s.head_dim_override = m.NonNegativeInt("head_dim", 0);
  s.qk_norm = m.Bool("qk_norm", false);
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
  s.attention_sinks = m.Bool("attention_sinks", false);
  s.attention_chunk = m.NonNegativeInt("attention_chunk", 0);
  s.nope_layer_interval = m.NonNegativeInt("nope_layer_interval", 0);
  s.mtp_layers = m.NonNegativeInt("mtp_layers", 0);
  if (auto moe = m.OptMap("moe")) {
    s.moe.experts = moe->PositiveInt("experts");
    s.moe.top_k = moe->PositiveInt("top_k");
    s.moe.ffn_hidden = moe->PositiveInt("moe_ffn_hidden");
    s.moe.shared_experts = moe->NonNegativeInt("shared_experts", 0);
    s.moe.first_k_dense = moe->NonNegativeInt("first_k_dense", 0);
    s.moe.layer_interval = moe->PositiveInt("layer_interval", 1);
    s.moe.capacity_factor = moe->Has("capacity_factor") ? moe->PositiveDouble("capacity_factor") : 0.0;
    s.moe.forced_balance = moe->Bool("forced_balance", false);
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

ModelSpec ParseModelFile(const std::string& path) {
  YAML::Node root = LoadYamlFile(path);  // yaml-cpp reads JSON too
  if (root.IsMap() && root["num_hidden_layers"].IsDefined()) {
    std::string name = Stem(path);
    if (name == "config") name = Stem(DirName(path));
    return ParseHuggingFace(root, path, name);
  }
  YamlMap m(root, path);
  return ParseModelKeys(m, Stem(path));
}

ModelSpec CachedModelFile(const std::string& path) {
  static ParsedFileCache<ModelSpec> cache;
  return cache.Get(path, ParseModelFile);
}

}  // namespace

ModelSpec ResolveModel(const YAML::Node& ref, const std::string& scenario_file, const std::string& key) {
  if (ref.IsMap()) {
    YamlMap m(ref, scenario_file, key);
    return ParseModelKeys(m, "custom");
  }
  if (!ref.IsDefined() || ref.IsNull()) {
    YamlMap::FailAt(ref, scenario_file, key, "missing required key");
  }
  if (!ref.IsScalar()) YamlMap::FailAt(ref, scenario_file, key, "expected a model name, a path or a mapping of model keys");
  const std::string name = ref.Scalar();
  if (LooksLikePath(name)) {
    auto path = ResolvePath(name, scenario_file);
    if (!path) YamlMap::FailAt(ref, scenario_file, key, "model file '" + name + "' not found");
    return CachedModelFile(*path);
  }
  const auto names = CatalogueNames("models/catalogue");
  for (const auto& n : names) {
    if (n == name) return CachedModelFile(DataDir() + "/models/catalogue/" + n + ".yaml");
  }
  const std::string hint = ClosestMatch(name, names);
  YamlMap::FailAt(ref, scenario_file, key,
                  "unknown model '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                      "; catalogue: models/catalogue/, or give a path");
}

Expected<ModelSpec> LoadModelFile(const std::string& path) {
  return CatchInputErrors<ModelSpec>(path, [&] { return ParseModelFile(path); });
}

}  // namespace trainsim
