#include "sim/io/model_loader.h"

#include <yaml-cpp/yaml.h>

#include <set>

#include "sim/io/data_paths.h"
#include "sim/io/file_cache.h"
#include "sim/io/yaml_reader.h"

namespace trainsim {

namespace {

void CheckShape(YamlMap& m, ModelSpec& s) {
  if (s.hidden % s.heads != 0) m.Fail("heads", "hidden (" + std::to_string(s.hidden) + ") is not divisible by heads (" + std::to_string(s.heads) + ")");
  if (s.heads % s.kv_heads != 0) m.Fail("kv_heads", "heads (" + std::to_string(s.heads) + ") is not divisible by kv_heads (" + std::to_string(s.kv_heads) + ")");
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
  s.activation = m.Choice("activation", {"gelu", "swiglu"}, "swiglu") == "gelu" ? Activation::kGelu : Activation::kSwiGlu;
  s.norm = m.Choice("norm", {"layernorm", "rmsnorm"}, "rmsnorm") == "layernorm" ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  s.position = m.Choice("position", {"learned", "rope"}, "rope") == "learned" ? PositionKind::kLearned : PositionKind::kRope;
  s.tied_embeddings = m.Bool("tied_embeddings", false);
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
