#include "sim/core/model_spec.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "sim/io/data_paths.h"
#include "sim/io/model_loader.h"
#include "sim/io/yaml_reader.h"

namespace trainsim {
namespace {

TEST(ModelSpecTest, CatalogueParameterCountsMatchPublishedSizes) {
  struct Expect { const char* name; double params; };
  // Published parameter counts (model cards / papers).
  for (const Expect& e : {Expect{"llama2-7b", 6.74e9}, Expect{"llama2-13b", 13.0e9}, Expect{"llama2-70b", 68.98e9},
                          Expect{"llama3-8b", 8.03e9}, Expect{"llama3-70b", 70.6e9}, Expect{"llama3.1-405b", 405.9e9},
                          Expect{"gpt3-175b", 174.6e9}}) {
    auto m = LoadModelFile(DataDir() + "/models/catalogue/" + e.name + ".yaml");
    ASSERT_TRUE(m.ok()) << e.name << ": " << m.error().ToString();
    EXPECT_NEAR(m->TotalParameters(2048) / e.params, 1.0, 0.01) << e.name;
  }
}

TEST(ModelSpecTest, EveryCatalogueFileLoads) {
  const auto names = CatalogueNames("models/catalogue");
  EXPECT_GE(names.size(), 9u);
  for (const auto& n : names) {
    auto m = LoadModelFile(DataDir() + "/models/catalogue/" + n + ".yaml");
    EXPECT_TRUE(m.ok()) << n << ": " << m.error().ToString();
    EXPECT_EQ(m->name, n);
  }
}

TEST(ModelSpecTest, HuggingFaceConfigMatchesCatalogue) {
  auto hf = LoadModelFile(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/llama-2-7b-hf-config.json");
  auto cat = LoadModelFile(DataDir() + "/models/catalogue/llama2-7b.yaml");
  ASSERT_TRUE(hf.ok()) << hf.error().ToString();
  ASSERT_TRUE(cat.ok());
  EXPECT_DOUBLE_EQ(hf->TotalParameters(4096), cat->TotalParameters(4096));
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

std::string HfConfig(const std::string& model) {
  return std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf/" + model + "/config.json";
}

ModelSpec LoadOk(const std::string& path) {
  auto m = LoadModelFile(path);
  EXPECT_TRUE(m.ok()) << path << ": " << (m.ok() ? "" : m.error().ToString());
  return m.ok() ? *m : ModelSpec{};
}

// The mixture-of-experts catalogue: each entry is what its config.json
// says, and both count the published parameters. Published totals are
// matched within 1% (where published to one digit, the case says so).
// Active counts: ActiveParameters is the parameters a token passes through,
// both embedding matrices included; where a published figure counts
// otherwise or is given to two digits, the case says so.
TEST(ModelSpecTest, MoeCatalogueMatchesConfigJsonAndPublishedCounts) {
  // Which vocabulary matrices a published active count leaves out.
  enum class Left { kNone, kEmbedding, kEmbeddingAndHead };
  struct Expect {
    const char* name;
    const char* hf;  // tests/data/hf/<hf>/config.json; "" when none is published
    double total;
    double active;      // 0: none published
    double active_tol;  // relative
    Left left_out;      // the embedding table (a lookup, no GEMM), or both it and the output head
    double total_tol = 0.01;
  };
  const int seq = 4096;
  for (const Expect& e : {
           // Mistral AI, "Mixtral of experts" (arXiv 2401.04088): 46.7B total, 12.9B active.
           Expect{"mixtral-8x7b", "mixtral-8x7b", 46.7e9, 12.9e9, 0.01, Left::kNone},
           // mistral.ai/news/mixtral-8x22b: 141B total, 39B active.
           Expect{"mixtral-8x22b", "mixtral-8x22b", 141e9, 39e9, 0.01, Left::kNone},
           // deepseek-ai/DeepSeek-V3 README_WEIGHTS.md: main model 671B total (the 14B multi-token-prediction
           // module apart; the Hugging Face release's 685B has it), 36.7B activated. 36.7B is the active
           // parameters here (37.55B, = 671B less 248 idle experts in each of 58 MoE layers) less the 0.93B
           // input embedding table, although the README says it includes the embedding; the paper's rounded
           // "37B" is 1.5% below 37.55B. DeepSeek-V2's 21B and V2-Lite's 2.4B fit the same way (below).
           Expect{"deepseek-v3", "deepseek-v3", 671e9, 36.7e9, 0.01, Left::kEmbedding},
           // Qwen3 model cards: 30.5B total / 3.3B activated; 235B / 22B. 3.3B is two digits: 3.35B here (1.6%).
           Expect{"qwen3-30b-a3b", "qwen3-30b-a3b", 30.5e9, 3.3e9, 0.02, Left::kNone},
           Expect{"qwen3-235b-a22b", "qwen3-235b-a22b", 235e9, 22e9, 0.01, Left::kNone},
           // OpenAI gpt-oss model card Table 1: 116.83B total, 5.13B active, which counts the un-embedding
           // but not the embedding table.
           Expect{"gpt-oss-120b", "gpt-oss-120b", 116.83e9, 5.13e9, 0.01, Left::kEmbedding},
           // Meta Llama 4 model card: Maverick 400B total, 17B active (the language model; the vision encoder
           // is not modelled). 17B is two digits: 17.18B here (1.1%).
           Expect{"llama4-maverick", "llama4-maverick", 400e9, 17e9, 0.02, Left::kNone},
           // xai-org/grok-1 README: 314B parameters.
           Expect{"grok-1", "", 314e9, 0, 0, Left::kNone},
           // NVIDIA-NeMo/Megatron-Bridge docs/models/glm/glm45.md: GLM 4.5 355B total, 32B active; Air 106B,
           // 12B. Both active figures leave out the two vocabulary matrices (32.08B and 12.18B here; two
           // digits). The totals leave out the MTP module, as DeepSeek-V3's does.
           Expect{"glm-4.5", "glm-4.7", 355e9, 32e9, 0.01, Left::kEmbeddingAndHead},
           Expect{"glm-4.5-air", "glm-4.5-air", 106e9, 12e9, 0.02, Left::kEmbeddingAndHead},
           // moonshotai/Kimi-K2-Instruct model card: 1T total, 32B activated, both to one or two digits
           // (1.026T and 32.86B here, both vocabulary matrices counted).
           Expect{"kimi-k2", "kimi-k2", 1e12, 32e9, 0.03, Left::kNone, 0.03}}) {
    const ModelSpec cat = LoadOk(DataDir() + "/models/catalogue/" + e.name + ".yaml");
    EXPECT_TRUE(cat.moe.enabled()) << e.name;
    EXPECT_NEAR(cat.TotalParameters(seq) / e.total, 1.0, e.total_tol) << e.name << ": " << cat.TotalParameters(seq);
    if (e.active > 0) {
      const double tables = e.left_out == Left::kNone ? 0 : e.left_out == Left::kEmbedding ? 1 : 2;
      const double active = cat.ActiveParameters(seq) - tables * double(cat.vocab) * cat.hidden;
      EXPECT_NEAR(active / e.active, 1.0, e.active_tol) << e.name << ": " << active;
    }
    if (*e.hf) {
      const ModelSpec hf = LoadOk(HfConfig(e.hf));
      EXPECT_DOUBLE_EQ(hf.TotalParameters(seq), cat.TotalParameters(seq)) << e.name;
      EXPECT_DOUBLE_EQ(hf.ActiveParameters(seq), cat.ActiveParameters(seq)) << e.name;
      EXPECT_DOUBLE_EQ(hf.MtpParameters(), cat.MtpParameters()) << e.name;
      EXPECT_EQ(hf.head_dim(), cat.head_dim()) << e.name;
      EXPECT_EQ(hf.qk_norm, cat.qk_norm) << e.name;
      EXPECT_EQ(hf.attention_sinks, cat.attention_sinks) << e.name;
      for (int i = 0; i < cat.layers; ++i) EXPECT_EQ(hf.LayerAt(i), cat.LayerAt(i)) << e.name << " layer " << i;
    }
  }
  // DeepSeek-V3 README_WEIGHTS.md: the MTP module has 11.5B parameters besides the shared embedding and head.
  EXPECT_NEAR(LoadOk(DataDir() + "/models/catalogue/deepseek-v3.yaml").MtpParameters() / 11.5e9, 1.0, 0.01);
  // DeepSeek-V3 with its MTP module: the Hugging Face model card's 685B.
  const ModelSpec v3 = LoadOk(DataDir() + "/models/catalogue/deepseek-v3.yaml");
  EXPECT_NEAR((v3.TotalParameters(seq) + v3.MtpParameters()) / 685e9, 1.0, 0.01);
  // Active = total less the idle routed experts, exactly.
  EXPECT_DOUBLE_EQ(v3.ActiveParameters(seq),
                   v3.TotalParameters(seq) - v3.MoeLayers() * (v3.moe.experts - v3.moe.top_k) * v3.ExpertParameters());
}

// Other families of config.json against published counts.
TEST(ModelSpecTest, HuggingFaceConfigsCountPublishedParameters) {
  struct Expect { const char* hf; double total, active, active_tol; };
  for (const Expect& e : {
           // The safetensors of deepseek-ai/DeepSeek-V2-Lite-Chat hold 15,706,484,224 parameters (counted
           // exactly here). Its card's 2.4B activated, like DeepSeek-V2's 21B (arXiv 2405.04434: 236B total),
           // leaves out the input embedding table (see DeepSeek-V3 above); both are two digits.
           Expect{"deepseek-v2-lite", 15706484224.0, 2.4e9, 0.025}, Expect{"deepseek-v2", 236e9, 21e9, 0.01},
           // Qwen2 report (arXiv 2407.10671) Table 1: 57B total, 14B activated (two digits: 14.25B here).
           Expect{"qwen2-57b-a14b", 57e9, 0, 0},
           // Gemma report (arXiv 2403.08295) Table 2: 7B = 7,751M non-embedding + 786M embedding; Gemma 2
           // (arXiv 2408.00118) Table 1: 9B = 8,324M + 918M. Both tie the embeddings. Gemma 2 and 3 norm
           // each block's output too (four norms a layer: output_norms).
           Expect{"gemma-7b", 8.537e9, 0, 0}, Expect{"gemma-2-9b", 9.242e9, 0, 0},
           // Gemma 3 report (arXiv 2503.19786) Table 1: 1B = 698M non-embedding + 302M embedding (tied).
           Expect{"gemma-3-1b", 1.0e9, 0, 0},
           // Phi-4 technical report (arXiv 2412.08905): 14B; the model card's 14.7B (40 layers of GQA
           // attention with 10 KV heads and a 17,920-wide SwiGLU MLP; 100,352 untied embeddings).
           Expect{"phi-4", 14.7e9, 0, 0}}) {
    const ModelSpec m = LoadOk(HfConfig(e.hf));
    EXPECT_NEAR(m.TotalParameters(4096) / e.total, 1.0, 0.01) << e.hf << ": " << m.TotalParameters(4096);
    if (e.active > 0) {
      const double active = m.ActiveParameters(4096) - double(m.vocab) * m.hidden;
      EXPECT_NEAR(active / e.active, 1.0, e.active_tol) << e.hf << ": " << active;
    }
  }
  const ModelSpec lite = LoadOk(HfConfig("deepseek-v2-lite"));
  EXPECT_NEAR(lite.TotalParameters(4096), 15706484224.0, 1.0);
  const ModelSpec qwen2 = LoadOk(HfConfig("qwen2-57b-a14b"));
  EXPECT_NEAR(qwen2.ActiveParameters(4096) / 14e9, 1.0, 0.02) << qwen2.ActiveParameters(4096);
}

// What each family's config.json says beyond the Llama keys reaches the ModelSpec.
TEST(ModelSpecTest, HuggingFaceArchitectureKeysAreRead) {
  const ModelSpec v3 = LoadOk(HfConfig("deepseek-v3"));
  EXPECT_EQ(v3.attention, AttentionKind::kMla);
  EXPECT_EQ(v3.mla.q_lora_rank, 1536);
  EXPECT_EQ(v3.mla.kv_lora_rank, 512);
  EXPECT_EQ(v3.mla.qk_head_dim, 128);
  EXPECT_EQ(v3.mla.qk_rope_head_dim, 64);
  EXPECT_EQ(v3.mla.v_head_dim, 128);
  EXPECT_EQ(v3.moe.experts, 256);
  EXPECT_EQ(v3.moe.top_k, 8);
  EXPECT_EQ(v3.moe.ffn_hidden, 2048);
  EXPECT_EQ(v3.moe.shared_experts, 1);
  EXPECT_EQ(v3.moe.first_k_dense, 3);
  EXPECT_EQ(v3.MoeLayers(), 58);
  EXPECT_EQ(v3.mtp_layers, 1);
  EXPECT_FALSE(v3.tied_embeddings);
  // DeepSeek-V2-Lite: q_lora_rank null, queries projected directly.
  EXPECT_EQ(LoadOk(HfConfig("deepseek-v2-lite")).mla.q_lora_rank, 0);

  const ModelSpec qwen = LoadOk(HfConfig("qwen3-30b-a3b"));
  EXPECT_EQ(qwen.qk_norm, QkNorm::kRms);  // implied by model_type qwen3_moe
  EXPECT_EQ(qwen.head_dim(), 128);
  EXPECT_EQ(qwen.sliding_window, 0);  // use_sliding_window false
  EXPECT_EQ(qwen.MoeLayers(), 48);
  const ModelSpec qwen2 = LoadOk(HfConfig("qwen2-57b-a14b"));
  EXPECT_EQ(qwen2.moe.shared_experts, 8);  // 20480 = 8 x 2560
  EXPECT_EQ(qwen2.sliding_window, 0);  // 131072 written, use_sliding_window false
  EXPECT_EQ(qwen2.qk_norm, QkNorm::kNone);

  const ModelSpec oss = LoadOk(HfConfig("gpt-oss-120b"));
  EXPECT_EQ(oss.head_dim(), 64);
  EXPECT_EQ(oss.sliding_window, 128);
  EXPECT_EQ(oss.sliding_window_every, 2);
  EXPECT_EQ(oss.LayerAt(0).attention_span, 128);
  EXPECT_EQ(oss.LayerAt(1).attention_span, 0);
  EXPECT_TRUE(oss.attention_sinks);
  EXPECT_EQ(oss.moe.top_k, 4);
  EXPECT_EQ(oss.moe.expert_bias, std::optional<bool>(true));  // implied by model_type gpt_oss
  // Every bias counted (q, k, v and o by attention_bias; the router's and the experts'): the
  // safetensors' 116,829,156,672 parameters exactly (116.83B on the model card).
  EXPECT_TRUE(oss.qkv_bias && oss.proj_bias && !oss.mlp_bias);
  EXPECT_DOUBLE_EQ(oss.TotalParameters(4096), 116829156672.0);
  // GLM-4.5's attention_bias biases q, k and v, not o_proj; Qwen2's q, k and v are biased whatever the file says.
  const ModelSpec glm_air = LoadOk(HfConfig("glm-4.5-air"));
  EXPECT_TRUE(glm_air.qkv_bias && !glm_air.proj_bias);
  EXPECT_TRUE(qwen2.qkv_bias && !qwen2.proj_bias);
  EXPECT_EQ(qwen.moe.expert_bias, std::optional<bool>(false));  // a family without: said, not left to the framework
  EXPECT_EQ(oss.activation_clamp, std::optional<double>(7.0));  // swiglu_limit
  EXPECT_EQ(qwen.activation_clamp, std::optional<double>(0.0));  // no swiglu_limit: said, not left to the framework

  const ModelSpec l4 = LoadOk(HfConfig("llama4-maverick"));  // text_config
  EXPECT_EQ(l4.name, "llama4-maverick");
  EXPECT_EQ(l4.ffn_hidden, 16384);  // intermediate_size_mlp
  EXPECT_EQ(l4.moe.ffn_hidden, 8192);
  EXPECT_EQ(l4.moe.shared_experts, 1);
  EXPECT_EQ(l4.moe.layer_interval, 2);
  EXPECT_FALSE(l4.IsMoeLayer(0));
  EXPECT_TRUE(l4.IsMoeLayer(1));
  EXPECT_EQ(l4.attention_chunk, 8192);
  EXPECT_EQ(l4.nope_layer_interval, 4);
  EXPECT_TRUE(l4.LayerAt(0).chunked);
  EXPECT_EQ(l4.LayerAt(3).attention_span, 0);  // every 4th layer global
  EXPECT_EQ(l4.qk_norm, QkNorm::kNone);

  // Llama 4 Scout, in the newer form (moe_layers, no_rope_layers listed; use_qk_norm): MoE on every layer.
  const ModelSpec scout = LoadOk(HfConfig("llama4-scout"));
  EXPECT_EQ(scout.MoeLayers(), 48);
  EXPECT_EQ(scout.nope_layer_interval, 4);
  EXPECT_EQ(scout.qk_norm, QkNorm::kL2);
  EXPECT_FALSE(scout.tied_embeddings);  // the wrapper's tie_word_embeddings
  // Meta's model card: 109B total, 17B active. The 109B counts the vision encoder: 0.872B by the module
  // table printed beside this config (34 layers of 23.8M, adapter, projector, patch and position embeddings).
  EXPECT_NEAR((scout.TotalParameters(4096) + 0.872e9) / 109e9, 1.0, 0.01) << scout.TotalParameters(4096);
  EXPECT_NEAR(scout.ActiveParameters(4096) / 17e9, 1.0, 0.02) << scout.ActiveParameters(4096);

  const ModelSpec gemma = LoadOk(HfConfig("gemma-7b"));
  EXPECT_EQ(gemma.activation, Activation::kGeGlu);  // hidden_act gelu, a gated MLP
  EXPECT_EQ(gemma.head_dim(), 256);                 // not 3072 / 16
  EXPECT_TRUE(gemma.tied_embeddings);               // GemmaConfig's default
  const ModelSpec gemma2 = LoadOk(HfConfig("gemma-2-9b"));
  EXPECT_EQ(gemma2.activation, Activation::kGeGlu);  // hidden_activation gelu_pytorch_tanh
  EXPECT_EQ(gemma2.sliding_window, 4096);
  EXPECT_EQ(gemma2.sliding_window_every, 2);  // even layers windowed
  EXPECT_TRUE(gemma2.output_norms);           // implied by model_type gemma2 (and gemma3_text)
  EXPECT_FALSE(gemma.output_norms);
  // Four norms a layer: two more than a Llama-style layer's, hidden each (3,584 on 42 layers).
  ModelSpec two_norms = gemma2;
  two_norms.output_norms = false;
  EXPECT_DOUBLE_EQ(gemma2.TotalParameters(4096) - two_norms.TotalParameters(4096), 42.0 * 2 * 3584);
  // Gemma 3: sliding_window_pattern 6, five windowed layers to one global (layers 5, 11, 17, 23 of 26).
  const ModelSpec gemma3 = LoadOk(HfConfig("gemma-3-1b"));
  EXPECT_EQ(gemma3.global_attention_every, 6);
  EXPECT_EQ(gemma3.LayerAt(0).attention_span, 512);
  EXPECT_EQ(gemma3.LayerAt(4).attention_span, 512);
  EXPECT_EQ(gemma3.LayerAt(5).attention_span, 0);
  EXPECT_EQ(gemma3.LayerAt(23).attention_span, 0);
  EXPECT_EQ(gemma3.LayerAt(25).attention_span, 512);
  EXPECT_EQ(gemma3.qk_norm, QkNorm::kRms);
  EXPECT_EQ(gemma3.head_dim(), 256);

  // GLM-4.5/4.7 (glm4_moe): qk_norm by use_qk_norm, head_dim 128 (its 96 heads x 128 are not the hidden
  // 5120), the MTP module by num_nextn_predict_layers, RMSNorm.
  const ModelSpec glm = LoadOk(HfConfig("glm-4.7"));
  EXPECT_EQ(glm.qk_norm, QkNorm::kRms);
  EXPECT_EQ(glm.head_dim(), 128);
  EXPECT_EQ(glm.mtp_layers, 1);
  EXPECT_EQ(glm.moe.first_k_dense, 3);
  EXPECT_EQ(glm.norm, NormKind::kRmsNorm);
  EXPECT_EQ(LoadOk(HfConfig("glm-4.5-air")).qk_norm, QkNorm::kNone);
  // Kimi K2 (kimi_k2) is DeepSeek-V3's MLA; its copy writes no rms_norm_eps, which a known family does
  // not need, and no num_nextn_predict_layers: no MTP module.
  const ModelSpec kimi = LoadOk(HfConfig("kimi-k2"));
  EXPECT_EQ(kimi.attention, AttentionKind::kMla);
  EXPECT_EQ(kimi.heads, 64);
  EXPECT_EQ(kimi.moe.experts, 384);
  EXPECT_EQ(kimi.norm, NormKind::kRmsNorm);
  EXPECT_EQ(kimi.mtp_layers, 0);
}

// Llama's attention_bias and mlp_bias add a vector beside each matrix they
// name (q, k, v and o; gate, up and down), read, not passed over.
TEST(ModelSpecTest, LlamaBiasKeysCountTheirVectors) {
  auto load = [](const std::string& name, const std::string& extra) {
    const std::string path = ::testing::TempDir() + name + "_" + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 4,
             "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000, "rms_norm_eps": 1e-5)"
                        << extra << "}";
    return LoadOk(path);
  };
  const ModelSpec plain = load("llama_nobias", R"(, "attention_bias": false, "mlp_bias": false)");
  const ModelSpec attn = load("llama_attnbias", R"(, "attention_bias": true)");
  const ModelSpec mlp = load("llama_mlpbias", R"(, "mlp_bias": true)");
  EXPECT_DOUBLE_EQ(attn.TotalParameters(4096) - plain.TotalParameters(4096), 4.0 * (4096 + 2 * 1024 + 4096));
  EXPECT_DOUBLE_EQ(mlp.TotalParameters(4096) - plain.TotalParameters(4096), 4.0 * (2 * 14336 + 4096));
}

// A config.json of a mixture-of-experts model_type without its experts is
// exit 2 naming the family's key: transformers would build its default MoE
// (Glm4MoeConfig 128 experts, MixtralConfig 8), never a dense model.
TEST(ModelSpecTest, MoeFamilyWithoutExpertsIsAnError) {
  for (const auto& [model_type, key] : std::vector<std::pair<std::string, std::string>>{
           {"glm4_moe", "n_routed_experts"}, {"mixtral", "num_local_experts"}, {"qwen3_moe", "num_experts"}}) {
    const std::string path = ::testing::TempDir() + model_type + "_no_experts_" + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << R"({"model_type": ")" << model_type
                        << R"(", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 4,
             "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000, "rms_norm_eps": 1e-5})";
    auto m = LoadModelFile(path);
    ASSERT_FALSE(m.ok()) << model_type;
    EXPECT_EQ(m.error().key, key) << m.error().ToString();
    EXPECT_EQ(m.error().kind, ErrorKind::kBadInput);
  }
  // A dense family without experts is dense.
  const std::string path = ::testing::TempDir() + "llama_dense_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "vocab_size": 32000, "rms_norm_eps": 1e-5})";
  EXPECT_FALSE(LoadOk(path).moe.enabled());
}

// A model file's windowed layers: every K-th from layer 0 (sliding_window_every), or all but every K-th
// (global_attention_every, as the Gemma 3 config.json above); one rule per model.
TEST(ModelSpecTest, WindowPatternKeysOfAModelFile) {
  auto write = [](const std::string& name, const std::string& keys) {
    const std::string path = ::testing::TempDir() + name + "_" + std::to_string(::getpid()) + ".yaml";
    std::ofstream(path) << "layers: 12\nhidden: 1024\nffn_hidden: 4096\nheads: 8\nvocab: 32000\n" << keys;
    return path;
  };
  const ModelSpec g = LoadOk(write("window_global", "sliding_window: 1024\nglobal_attention_every: 4\n"));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(g.LayerAt(i).attention_span, i % 4 == 3 ? 0 : 1024) << i;
  auto both = LoadModelFile(write("window_both", "sliding_window: 1024\nsliding_window_every: 2\nglobal_attention_every: 4\n"));
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().key, "global_attention_every");
  EXPECT_GT(both.error().line, 0);
  auto no_window = LoadModelFile(write("window_none", "global_attention_every: 4\n"));
  ASSERT_FALSE(no_window.ok());
  EXPECT_EQ(no_window.error().key, "global_attention_every");
  EXPECT_TRUE(LoadOk(write("output_norms", "output_norms: true\n")).output_norms);  // Gemma 2/3's four norms a layer
  // A pattern without the window (or chunk) it places would change nothing: a slip, refused.
  for (const auto& [keys, key] : {std::pair{"sliding_window_every: 2\n", "sliding_window_every"}, std::pair{"nope_layer_interval: 4\n", "nope_layer_interval"}}) {
    auto alone = LoadModelFile(write("pattern_alone", keys));
    ASSERT_FALSE(alone.ok()) << keys;
    EXPECT_EQ(alone.error().key, key);
  }
}

// A config.json of a family trainsim does not read (OLMo 2: QK norm that no
// key states) is exit 2 at model_type, not a llama-like model without it;
// one without model_type too.
TEST(ModelSpecTest, HuggingFaceFamilyNotReadIsAnError) {
  const std::string keys = R"("hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 11008,
      "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32, "rms_norm_eps": 1e-06,
      "vocab_size": 100352)";
  for (const std::string& type : {std::string("\"model_type\": \"olmo2\", "), std::string()}) {
    const std::string path = ::testing::TempDir() + "family_" + std::to_string(type.size()) + "_" +
                             std::to_string(::getpid()) + "_config.json";
    std::ofstream(path) << "{" << type << keys << "}";
    auto m = LoadModelFile(path);
    ASSERT_FALSE(m.ok()) << type;
    EXPECT_EQ(m.error().kind, ErrorKind::kBadInput);
    EXPECT_EQ(m.error().key, "model_type") << m.error().ToString();
    EXPECT_NE(m.error().ToString().find(type.empty() ? "missing" : "'olmo2'"), std::string::npos) << m.error().ToString();
  }
}

// sliding_window in a family whose attention has no window in transformers
// (Llama) is exit 2; in Mistral's it is the window; null is no window.
TEST(ModelSpecTest, SlidingWindowOnlyWhereTheFamilyReadsIt) {
  auto write = [](const std::string& type, const std::string& window) {
    const std::string path = ::testing::TempDir() + "window_" + type + "_" + std::to_string(window.size()) + "_" +
                             std::to_string(::getpid()) + "_config.json";
    std::ofstream(path) << R"({"model_type": ")" << type << R"(", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
        "rms_norm_eps": 1e-5, "sliding_window": )" << window << "}";
    return path;
  };
  auto llama = LoadModelFile(write("llama", "4096"));
  ASSERT_FALSE(llama.ok());
  EXPECT_EQ(llama.error().key, "sliding_window");
  EXPECT_EQ(LoadOk(write("mistral", "4096")).LayerAt(0).attention_span, 4096);
  EXPECT_EQ(LoadOk(write("llama", "null")).LayerAt(0).attention_span, 0);
}

// A config.json with `text` in the test's scratch directory, a new file each call.
std::string WriteConfigJson(const std::string& text) {
  static int n = 0;
  const std::string path = ::testing::TempDir() + "config_" + std::to_string(n++) + "_" + std::to_string(::getpid()) + "_config.json";
  std::ofstream(path) << text;
  return path;
}

// Another family's architecture key is exit 2 at that key: transformers
// builds the family's model without it, and reading it would build another
// (a Llama with num_local_experts once ran as a 47B mixture of experts).
TEST(ModelSpecTest, AnotherFamilysArchitectureKeyIsAnError) {
  const std::string llama = R"("model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "rms_norm_eps": 1e-5)";
  auto write = [](const std::string& body) { return WriteConfigJson("{" + body + "}"); };
  for (const std::string extra : {R"("num_local_experts": 8, "num_experts_per_tok": 2)", R"("attention_chunk_size": 8192)",
                                  R"("swiglu_limit": 7.0)", R"("num_nextn_predict_layers": 1)", R"("use_qk_norm": true)"}) {
    auto m = LoadModelFile(write(llama + ", " + extra));
    ASSERT_FALSE(m.ok()) << extra;
    EXPECT_EQ(m.error().kind, ErrorKind::kBadInput);
    EXPECT_NE(m.error().ToString().find("model_type 'llama' does not read this key"), std::string::npos) << m.error().ToString();
  }
  // Mixtral's file with Qwen's shared expert, DeepSeek's: not Mixtral's keys.
  const std::string mixtral = R"("model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
      "num_local_experts": 8, "num_experts_per_tok": 2)";
  for (const std::string extra : {R"("n_shared_experts": 2)", R"("shared_expert_intermediate_size": 14336)"}) {
    auto m = LoadModelFile(write(mixtral + ", " + extra));
    ASSERT_FALSE(m.ok()) << extra;
    EXPECT_NE(m.error().ToString().find("model_type 'mixtral' does not read this key"), std::string::npos) << m.error().ToString();
  }
  // A null is no key (Llama 4 Scout writes "attention_chunk_size": null in families that read it; here none reads it).
  EXPECT_EQ(LoadOk(write(llama + R"(, "num_local_experts": null)")).moe.experts, 0);
  EXPECT_EQ(LoadOk(write(mixtral)).moe.experts, 8);
}

// Another family's key with a value that builds nothing, or what the family
// builds anyway, is what transformers builds without it (Qwen3-Coder's
// qwen3_moe files: use_qk_norm true, shared_expert_intermediate_size 0,
// qkv_bias false); a value that says otherwise is still exit 2.
TEST(ModelSpecTest, AnotherFamilysKeySayingWhatTheFamilyBuildsIsRead) {
  const std::string qwen = R"("model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936,
      "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768)";
  auto write = [](const std::string& body) { return WriteConfigJson("{" + body + "}"); };
  const ModelSpec coder = LoadOk(write(qwen + R"(, "use_qk_norm": true, "shared_expert_intermediate_size": 0, "qkv_bias": false)"));
  EXPECT_EQ(coder.qk_norm, QkNorm::kRms);
  EXPECT_EQ(coder.moe.shared_experts, 0);
  EXPECT_DOUBLE_EQ(coder.TotalParameters(4096), LoadOk(write(qwen)).TotalParameters(4096));
  for (const std::string extra : {R"("use_qk_norm": false)", R"("shared_expert_intermediate_size": 768)"}) {
    auto m = LoadModelFile(write(qwen + ", " + extra));
    ASSERT_FALSE(m.ok()) << extra;
    EXPECT_NE(m.error().ToString().find("model_type 'qwen3_moe' does not read this key"), std::string::npos) << m.error().ToString();
  }
}

// ... and such a key is never read where the family does not read it: its
// 0 does not unbuild what the family builds (DeepSeek-V3's shared expert
// under Qwen2-MoE's shared_expert_intermediate_size: 0, Llama 4's under
// n_shared_experts: 0, which its code never reads).
TEST(ModelSpecTest, AnotherFamilysZeroKeyLeavesTheFamilysSharedExpert) {
  const auto with = [](const std::string& model, const std::string& type, const std::string& extra) {
    std::ifstream in(HfConfig(model));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string key = "\"model_type\": \"" + type + "\"";
    EXPECT_NE(text.find(key), std::string::npos) << model;
    text.replace(text.find(key), key.size(), key + ", " + extra);
    const std::string path = ::testing::TempDir() + model + "_" + std::to_string(::getpid()) + "_extra_config.json";
    std::ofstream(path) << text;
    return LoadOk(path);
  };
  const ModelSpec v3 = LoadOk(HfConfig("deepseek-v3")), scout = LoadOk(HfConfig("llama4-scout"));
  ASSERT_EQ(v3.moe.shared_experts, 1);
  ASSERT_EQ(scout.moe.shared_experts, 1);
  for (const ModelSpec& m : {with("deepseek-v3", "deepseek_v3", R"("shared_expert_intermediate_size": 0)"),
                             with("deepseek-v3", "deepseek_v3", R"("use_qk_norm": false)")}) {
    EXPECT_EQ(m.moe.shared_experts, 1);
    EXPECT_DOUBLE_EQ(m.ActiveParameters(4096), v3.ActiveParameters(4096));
  }
  for (const ModelSpec& m : {with("llama4-scout", "llama4_text", R"("n_shared_experts": 0)"),
                             with("llama4-scout", "llama4_text", R"("shared_expert_intermediate_size": 0)")}) {
    EXPECT_EQ(m.moe.shared_experts, 1);
    EXPECT_DOUBLE_EQ(m.TotalParameters(4096), scout.TotalParameters(4096));
  }
}

// Bias keys are read by the families whose transformers code reads them
// (Llama: attention_bias and mlp_bias; Qwen3, Gemma, GPT-OSS, GLM-4.5,
// Llama 4: attention_bias; Qwen2-MoE: qkv_bias); elsewhere the biases are
// fixed in the modeling code, and a key saying otherwise is exit 2.
TEST(ModelSpecTest, BiasKeysAreReadWhereTheFamilyReadsThem) {
  auto write = [](const std::string& body) { return WriteConfigJson("{" + body + "}"); };
  const auto dense = [](const std::string& type) {
    return R"("model_type": ")" + type + R"(", "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 4,
      "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 32000, "sliding_window": null)";
  };
  const double plain = LoadOk(write(dense("llama"))).TotalParameters(4096);
  const ModelSpec llama = LoadOk(write(dense("llama") + R"(, "attention_bias": true, "mlp_bias": true)"));
  EXPECT_TRUE(llama.qkv_bias && llama.proj_bias && llama.mlp_bias);
  EXPECT_DOUBLE_EQ(llama.TotalParameters(4096) - plain, 4.0 * (3 * 1024 + 1024 + 2 * 4096 + 1024));
  const ModelSpec qwen3 = LoadOk(write(dense("qwen3") + R"(, "attention_bias": true)"));
  EXPECT_TRUE(qwen3.qkv_bias && qwen3.proj_bias);
  // Fixed in the modeling code: Qwen2's q/k/v biases, none in Phi-3's or Mistral's attention, no MLP bias but Llama's.
  for (const auto& [type, extra] : std::vector<std::pair<std::string, std::string>>{
           {"qwen2", R"("attention_bias": true)"}, {"qwen2", R"("qkv_bias": false)"}, {"phi3", R"("attention_bias": true)"},
           {"mistral", R"("attention_bias": true)"}, {"qwen3", R"("mlp_bias": true)"}, {"llama", R"("qkv_bias": true)"}}) {
    auto m = LoadModelFile(write(dense(type) + ", " + extra));
    ASSERT_FALSE(m.ok()) << type << " " << extra;
    EXPECT_NE(m.error().ToString().find("does not read this key"), std::string::npos) << m.error().ToString();
  }
  // Qwen2's refusal says what its code builds, not that it has no bias.
  EXPECT_NE(LoadModelFile(write(dense("qwen2") + R"(, "attention_bias": true)")).error().ToString().find("q, k and v biased"),
            std::string::npos);
  EXPECT_TRUE(LoadOk(write(dense("qwen2") + R"(, "attention_bias": false, "qkv_bias": true)")).qkv_bias);
  EXPECT_FALSE(LoadOk(write(dense("qwen2"))).proj_bias);
  // Qwen2-MoE's qkv_bias: false drops the q/k/v biases.
  const std::string qwen2_moe = dense("qwen2_moe") + R"(, "num_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 512, "shared_expert_intermediate_size": 1024)";
  EXPECT_TRUE(LoadOk(write(qwen2_moe)).qkv_bias);
  EXPECT_FALSE(LoadOk(write(qwen2_moe + R"(, "qkv_bias": false)")).qkv_bias);
  // DeepSeek's attention_bias biases MLA's q_a, kv_a and o projections: not modelled, so exit 2 rather than dropped.
  std::ifstream in(HfConfig("deepseek-v3"));
  std::string deepseek((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = deepseek.find(R"("attention_bias": false)");
  ASSERT_NE(at, std::string::npos);
  deepseek.replace(at, 23, R"("attention_bias": true )");
  auto biased = LoadModelFile(WriteConfigJson(deepseek));
  ASSERT_FALSE(biased.ok());
  EXPECT_NE(biased.error().ToString().find("attention_bias: biased MLA projections"), std::string::npos) << biased.error().ToString();
}

// A null is not the value a family's config class would fill in: a required
// key written null is exit 2 (transformers' getattr finds None), but for
// Mistral's window, whose null is no window.
TEST(ModelSpecTest, NullRequiredKeysAreErrorsButAMistralWindow) {
  auto write = [](const std::string& body) { return WriteConfigJson("{" + body + "}"); };
  const std::string qwen = R"("model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 151936,
      "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768)";
  auto m = LoadModelFile(write(qwen + R"(, "head_dim": null)"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().ToString().find("head_dim: null"), std::string::npos) << m.error().ToString();
  const ModelSpec mistral = LoadOk(write(R"("model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32768, "sliding_window": null)"));
  EXPECT_EQ(mistral.sliding_window, 0);
  // Gemma 3: a null window or a null period is no Gemma 3 transformers builds.
  const std::string gemma3 = R"("model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 12)";
  for (const std::string extra : {R"("sliding_window": null, "sliding_window_pattern": 6)", R"("sliding_window": 1024, "sliding_window_pattern": null)"}) {
    auto g = LoadModelFile(write(gemma3 + ", " + extra));
    ASSERT_FALSE(g.ok()) << extra;
    EXPECT_NE(g.error().ToString().find(": null"), std::string::npos) << g.error().ToString();
    EXPECT_EQ(g.error().ToString().find("did you mean"), std::string::npos) << g.error().ToString();
  }
  // Newer saves write the period as _sliding_window_pattern beside layer_types: read, and checked against them.
  std::string types;
  for (int i = 0; i < 12; ++i) types += std::string(i ? ", " : "") + ((i + 1) % 6 ? "\"sliding_attention\"" : "\"full_attention\"");
  const ModelSpec newer = LoadOk(write(gemma3 + R"(, "sliding_window": 1024, "_sliding_window_pattern": 6, "layer_types": [)" + types + "]"));
  EXPECT_EQ(newer.global_attention_every, 6);
  auto disagree = LoadModelFile(write(gemma3 + R"(, "sliding_window": 1024, "_sliding_window_pattern": 4, "layer_types": [)" + types + "]"));
  ASSERT_FALSE(disagree.ok());
  EXPECT_NE(disagree.error().ToString().find("_sliding_window_pattern: disagrees with layer_types"), std::string::npos)
      << disagree.error().ToString();
}

// What a config class defaults, a file may leave out: Gemma 3's text_config
// in the published 4B and 12B files writes no head_dim (256, not hidden /
// heads) and, in the 4B, no heads (8 query, 4 key-value).
TEST(ModelSpecTest, ConfigClassDefaultsFillWhatAFileLeavesOut) {
  auto write = [](const std::string& body) { return WriteConfigJson("{" + body + "}"); };
  const ModelSpec gemma_4b = LoadOk(write(R"("model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
      "num_hidden_layers": 34, "sliding_window": 1024)"));
  EXPECT_EQ(gemma_4b.heads, 8);
  EXPECT_EQ(gemma_4b.kv_heads, 4);
  EXPECT_EQ(gemma_4b.head_dim(), 256);
  // Gemma 3 4B: 3.88B in the language model (its report: 3,209M + 675M embedding).
  EXPECT_NEAR(gemma_4b.TotalParameters(4096) / 3.88e9, 1.0, 0.01);
  const ModelSpec gemma_12b = LoadOk(write(R"("model_type": "gemma3_text", "hidden_size": 3840, "intermediate_size": 15360,
      "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 8, "sliding_window": 1024)"));
  EXPECT_EQ(gemma_12b.head_dim(), 256);
  EXPECT_NEAR(gemma_12b.TotalParameters(4096) / 11.77e9, 1.0, 0.01);
  // A family whose class has no such default: hidden / heads.
  const ModelSpec llama = LoadOk(write(R"("model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256)"));
  EXPECT_EQ(llama.head_dim(), 128);
  // Phi-4-mini writes full_attn_mod 1 (every layer attends fully), which is what transformers builds.
  const std::string phi = R"("model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 4,
      "num_attention_heads": 24, "num_key_value_heads": 8, "vocab_size": 200064)";
  EXPECT_EQ(LoadOk(write(phi + R"(, "full_attn_mod": 1)")).layers, 4);
  auto every_other = LoadModelFile(write(phi + R"(, "full_attn_mod": 2)"));
  ASSERT_FALSE(every_other.ok());
  EXPECT_EQ(every_other.error().key, "full_attn_mod");
}

// A key the loader does not know that is one letter from one it reads is
// named as the likely slip: accepted as changing nothing, it would run a
// different model (num_key_value_head: every head its own KV).
TEST(ModelSpecTest, MisspeltConfigKeyIsNamed) {
  auto m = LoadModelFile(WriteConfigJson(R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_head": 8, "vocab_size": 128256})"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().key, "num_key_value_head");
  EXPECT_EQ(m.error().message.rfind("did you mean 'num_key_value_heads'?", 0), 0u) << m.error().ToString();
  // A required key misspelt is the misspelling's error at its line, not "missing" at the
  // file's first line: the reading stops at the required key before it meets the slip.
  auto moe = LoadModelFile(WriteConfigJson(R"({"model_type": "mixtral", "hidden_size": 4096,
      "intermediate_size": 14336, "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8,
      "vocab_size": 32000,
      "num_local_expert": 8, "num_experts_per_tok": 2})"));
  ASSERT_FALSE(moe.ok());
  EXPECT_EQ(moe.error().key, "num_local_expert");
  EXPECT_EQ(moe.error().line, 4);
  EXPECT_NE(moe.error().message.find("did you mean 'num_local_experts'?"), std::string::npos) << moe.error().ToString();
}

// Where a config.json leaves the windowed layers unsaid, transformers' config
// class decides: GPT-OSS alternates from a windowed layer 0, Gemma 3 windows
// all but every 6th; Gemma 3's vocabulary defaults to 262208.
TEST(ModelSpecTest, WindowPatternDefaultsAreTheFamilys) {
  auto write = [](const std::string& body) { return WriteConfigJson("{" + body + "}"); };
  const ModelSpec oss = LoadOk(write(R"("model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
      "num_hidden_layers": 24, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088,
      "num_local_experts": 32, "num_experts_per_tok": 4, "sliding_window": 128, "attention_bias": true)"));
  EXPECT_EQ(oss.LayerAt(0).attention_span, 128);
  EXPECT_EQ(oss.LayerAt(1).attention_span, 0);
  EXPECT_EQ(oss.LayerAt(2).attention_span, 128);
  const ModelSpec gemma = LoadOk(write(R"("model_type": "gemma3_text", "hidden_size": 5376, "intermediate_size": 21504,
      "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
      "hidden_activation": "gelu_pytorch_tanh", "sliding_window": 1024)"));
  EXPECT_EQ(gemma.vocab, 262208);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(gemma.LayerAt(i).attention_span, i % 6 == 5 ? 0 : 1024) << i;
}

// A key without effect on the step is still a number of its kind where it is
// one, and an activation is named: a malformed value is exit 2 at its key.
TEST(ModelSpecTest, KeysWithoutEffectAreStillWellFormed) {
  const std::string body = R"("model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256)";
  EXPECT_EQ(LoadOk(WriteConfigJson("{" + body + R"(, "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "max_position_embeddings": 131072,
      "attention_dropout": 0.0, "rope_scaling": null})")).layers, 4);
  for (const auto& [extra, key] : std::vector<std::pair<std::string, std::string>>{{R"("rms_norm_eps": "1e-5")", "rms_norm_eps"},
                                                                                   {R"("rms_norm_eps": -1)", "rms_norm_eps"},
                                                                                   {R"("rope_theta": "abc")", "rope_theta"},
                                                                                   {R"("max_position_embeddings": -1)", "max_position_embeddings"},
                                                                                   {R"("attention_dropout": 5)", "attention_dropout"},
                                                                                   {R"("hidden_act": null)", "hidden_act"},
                                                                                   {R"("rope_scaling": "llama3")", "rope_scaling"},
                                                                                   {R"("rope_scaling": [1, 2])", "rope_scaling"},
                                                                                   {R"("rope_scaling": {"rope_type": "frobnicate", "factor": 8.0})", "rope_scaling"},
                                                                                   {R"("rope_parameters": {"full_attention": {"rope_type": "x"}})", "rope_parameters"},
                                                                                   {R"("partial_rotary_factor": 2.0)", "partial_rotary_factor"},
                                                                                   {R"("partial_rotary_factor": "0.75")", "partial_rotary_factor"}}) {
    auto m = LoadModelFile(WriteConfigJson("{" + body + ", " + extra + "}"));
    ASSERT_FALSE(m.ok()) << extra;
    EXPECT_EQ(m.error().kind, ErrorKind::kBadInput) << extra;
    EXPECT_EQ(m.error().key, key) << m.error().ToString();
  }
}

// DeepSeek's router keys change no matrix, yet say a router transformers can
// build: groups that split the experts, chosen groups that hold top_k, a
// scoring function and top-k method it has.
TEST(ModelSpecTest, RouterGroupKeysAreChecked) {
  const std::string body = R"("model_type": "deepseek_v3", "hidden_size": 1024, "intermediate_size": 4096,
      "moe_intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8,
      "vocab_size": 32000, "n_routed_experts": 64, "num_experts_per_tok": 8, "n_shared_experts": 1,
      "first_k_dense_replace": 1, "q_lora_rank": 256, "kv_lora_rank": 128, "qk_rope_head_dim": 32,
      "qk_nope_head_dim": 64, "v_head_dim": 64)";
  EXPECT_EQ(LoadOk(WriteConfigJson("{" + body + R"(, "n_group": 8, "topk_group": 4, "scoring_func": "sigmoid", "topk_method": "noaux_tc"})"))
                .moe.experts,
            64);
  for (const auto& [extra, key] : std::vector<std::pair<std::string, std::string>>{{R"("n_group": 0)", "n_group"},
                                                                                   {R"("n_group": 7)", "n_group"},
                                                                                   {R"("n_group": 8, "topk_group": 9)", "topk_group"},
                                                                                   {R"("n_group": 64, "topk_group": 4)", "topk_group"},
                                                                                   {R"("scoring_func": "bogus")", "scoring_func"},
                                                                                   {R"("topk_method": "bogus")", "topk_method"}}) {
    auto m = LoadModelFile(WriteConfigJson("{" + body + ", " + extra + "}"));
    ASSERT_FALSE(m.ok()) << extra;
    EXPECT_EQ(m.error().kind, ErrorKind::kBadInput) << extra;
    EXPECT_EQ(m.error().key, key) << m.error().ToString();
  }
}

// A config.json is JSON: what only a YAML reader takes is exit 2 at its line,
// and a quoted number or boolean is a string, not the value it spells.
TEST(ModelSpecTest, ConfigJsonIsStrictJson) {
  const auto write = WriteConfigJson;
  const std::string body = R"("model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256)";
  EXPECT_EQ(LoadOk(write("{" + body + "}")).layers, 4);
  for (const std::string& bad : {"{" + body + "} xyz", "{" + body + "}{\"num_hidden_layers\": 80}", "{" + body + ",}",
                                "{" + body + ", 'rope_theta': 1}", "{" + body + ", \"rope_theta\": NaN}"}) {
    auto m = LoadModelFile(write(bad));
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.error().kind, ErrorKind::kBadInput);
    EXPECT_NE(m.error().ToString().find("malformed JSON"), std::string::npos) << m.error().ToString();
  }
  auto quoted = LoadModelFile(write(R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": "32", "num_attention_heads": 32, "vocab_size": 128256})"));
  ASSERT_FALSE(quoted.ok());
  EXPECT_NE(quoted.error().ToString().find(":2: num_hidden_layers: expected a number, got the string \"32\""), std::string::npos)
      << quoted.error().ToString();
  auto tied = LoadModelFile(write(R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 128256, "tie_word_embeddings": "false"})"));
  ASSERT_FALSE(tied.ok());
  EXPECT_NE(tied.error().ToString().find("tie_word_embeddings: expected true or false, got the string \"false\""), std::string::npos)
      << tied.error().ToString();
}

// Sizes past any published model's by orders of magnitude are exit 2 at
// their key, not a run of quadrillions of parameters.
TEST(ModelSpecTest, ImplausibleSizesAreBadInput) {
  const std::string llama = R"("model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256)";
  auto head = LoadModelFile(WriteConfigJson("{" + llama + R"(, "head_dim": 1000000000})"));
  ASSERT_FALSE(head.ok());
  EXPECT_EQ(head.error().key, "head_dim");
  EXPECT_NE(head.error().ToString().find("implausibly large"), std::string::npos) << head.error().ToString();
  const std::string mixtral = R"({"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
      "num_local_experts": 1000000000, "num_experts_per_tok": 2})";
  auto experts = LoadModelFile(WriteConfigJson(mixtral));
  ASSERT_FALSE(experts.ok());
  EXPECT_EQ(experts.error().key, "num_local_experts") << experts.error().ToString();
  // A billion layers held 4 GB of per-layer workload before it said it did not fit.
  std::string deep = llama;
  deep.replace(deep.find("\"num_hidden_layers\": 4"), 22, "\"num_hidden_layers\": 1000000000");
  auto layers = LoadModelFile(WriteConfigJson("{" + deep + "}"));
  ASSERT_FALSE(layers.ok());
  EXPECT_EQ(layers.error().key, "num_hidden_layers") << layers.error().ToString();
}

// A family trainsim does not read is the error even where a key every read
// family has is missing (GPT-2's layers are n_layer), and a wrapper must
// name the text model it holds.
TEST(ModelSpecTest, UnreadFamilyAndWrapperMismatchAreNamed) {
  const auto write = WriteConfigJson;
  auto gpt2 = LoadModelFile(write(R"({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257})"));
  ASSERT_FALSE(gpt2.ok());
  EXPECT_EQ(gpt2.error().key, "model_type") << gpt2.error().ToString();
  EXPECT_NE(gpt2.error().ToString().find("'gpt2' is not a family trainsim reads"), std::string::npos) << gpt2.error().ToString();
  const std::string text = R"({"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
      "num_hidden_layers": 4, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048,
      "num_local_experts": 16, "num_experts_per_tok": 1, "intermediate_size_mlp": 16384, "attention_chunk_size": 8192,
      "use_qk_norm": true})";
  auto outer = LoadModelFile(write(R"({"model_type": "mixtral", "text_config": )" + text + "}"));
  ASSERT_FALSE(outer.ok());
  EXPECT_EQ(outer.error().key, "model_type") << outer.error().ToString();
  auto inner = LoadModelFile(write(R"({"model_type": "gemma3", "text_config": )" + text + "}"));
  ASSERT_FALSE(inner.ok());
  EXPECT_EQ(inner.error().key, "text_config.model_type") << inner.error().ToString();
  EXPECT_EQ(LoadOk(write(R"({"model_type": "llama4", "text_config": )" + text + "}")).moe.experts, 16);
  // The wrapper's type over the text model's keys: the missing text_config is named.
  std::string flat = text;
  flat.replace(flat.find("llama4_text"), 11, "llama4");
  auto no_text = LoadModelFile(write(flat));
  ASSERT_FALSE(no_text.ok());
  EXPECT_EQ(no_text.error().key, "model_type") << no_text.error().ToString();
  EXPECT_NE(no_text.error().ToString().find("lacks"), std::string::npos) << no_text.error().ToString();
  // The wrapper and its text model disagreeing on the tied head: exit 2, not one of them silently.
  std::string tied_inside = text;
  tied_inside.insert(1, R"("tie_word_embeddings": true, )");
  auto clash = LoadModelFile(write(R"({"model_type": "llama4", "tie_word_embeddings": false, "text_config": )" + tied_inside + "}"));
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.error().key, "text_config.tie_word_embeddings") << clash.error().ToString();
  EXPECT_FALSE(LoadOk(write(R"({"model_type": "llama4", "tie_word_embeddings": false, "text_config": )" + text + "}")).tied_embeddings);
}

// A config.json whose heads do not divide is exit 2 at the file's own key
// (num_attention_heads, num_key_value_heads) and its line, not trainsim's name.
TEST(ModelSpecTest, HuggingFaceShapeErrorsNameTheFileKeys) {
  const std::string path = ::testing::TempDir() + "shape_" + std::to_string(::getpid()) + "_config.json";
  std::ofstream(path) << "{\n\"model_type\": \"llama\",\n\"hidden_size\": 4096,\n\"intermediate_size\": 11008,\n"
                         "\"num_attention_heads\": 32,\n\"num_key_value_heads\": 3,\n\"num_hidden_layers\": 2,\n"
                         "\"rms_norm_eps\": 1e-6,\n\"vocab_size\": 32000\n}\n";
  auto m = LoadModelFile(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().key, "num_key_value_heads");
  EXPECT_EQ(m.error().line, 6);
}

// A model file's head_dim, when written, is a size: 0 is exit 2 at its line,
// not the hidden / heads that an absent head_dim means.
TEST(ModelSpecTest, ZeroHeadDimIsAnError) {
  const std::string path = ::testing::TempDir() + "head_dim_zero_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << "layers: 2\nhidden: 1024\nffn_hidden: 4096\nheads: 8\nvocab: 32000\nhead_dim: 0\n";
  auto m = LoadModelFile(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(m.error().key, "head_dim");
  EXPECT_EQ(m.error().line, 6);
}

// A config.json key trainsim does not model is exit 2 naming the key and
// the file, never a silently different model (Mixtral once read as a dense 7.2B).
// In a family trainsim does not read the family is the error, naming the keys
// it left unread: accepting them could not make the architecture readable
// (Qwen3-Next's Gated DeltaNet on 3 of every 4 layers; DeepSeek-V3.2's
// indexer beside DeepSeek-V3's keys).
TEST(ModelSpecTest, HuggingFaceKeyNotModelledIsAnError) {
  const std::string known = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/hf-accepted-key/config.json";  // llama + attn_output_gate
  auto m = LoadModelFile(known);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(m.error().key, "attn_output_gate") << m.error().ToString();
  EXPECT_NE(m.error().ToString().find("hf-accepted-key/config.json:"), std::string::npos) << m.error().ToString();
  EXPECT_GT(m.error().line, 0) << m.error().ToString();

  auto next = LoadModelFile(HfConfig("qwen3-next-80b-a3b"));
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(next.error().key, "model_type") << next.error().ToString();
  EXPECT_NE(next.error().ToString().find("'qwen3_next' is not a family trainsim reads"), std::string::npos) << next.error().ToString();
  EXPECT_NE(next.error().ToString().find("full_attention_interval (line "), std::string::npos) << next.error().ToString();

  const std::string v32 = ::testing::TempDir() + "deepseek_v32_" + std::to_string(::getpid()) + "_config.json";
  {
    std::ifstream in(HfConfig("deepseek-v3"));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string type = "\"model_type\": \"deepseek_v3\"";
    ASSERT_NE(text.find(type), std::string::npos);
    text.replace(text.find(type), type.size(), "\"model_type\": \"deepseek_v32\", \"index_topk\": 2048");
    std::ofstream(v32) << text;
  }
  auto ds = LoadModelFile(v32);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.error().key, "model_type") << ds.error().ToString();
  EXPECT_NE(ds.error().ToString().find("did you mean 'deepseek_v3'?"), std::string::npos) << ds.error().ToString();
  EXPECT_NE(ds.error().ToString().find("index_topk (line "), std::string::npos) << ds.error().ToString();
  // The real Llama 2 config (token ids, rope_scaling, transformers_version, ...) still loads.
  EXPECT_TRUE(LoadModelFile(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/llama-2-7b-hf-config.json").ok());
}

// A key a family's config class defaults to a value of its own (Mistral's 8
// key-value heads, DeepSeek-V3's 2,048-wide experts, Qwen3-MoE's head_dim 128)
// is never read with the generic default (heads, intermediate_size,
// hidden / heads), which would build another model: exit 2 naming it.
TEST(ModelSpecTest, FamilyOwnDefaultsAreNotGuessed) {
  // `name`'s config.json with `key`'s line (the key and its value, up to the comma) taken out.
  auto without = [](const std::string& name, const std::string& key) {
    std::ifstream in(HfConfig(name));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find("\"" + key + "\"");
    EXPECT_NE(at, std::string::npos) << name << " " << key;
    text.erase(at, text.find(',', at) + 1 - at);
    return LoadModelFile(WriteConfigJson(text));
  };
  for (const auto& [name, key] : std::vector<std::pair<std::string, std::string>>{
           {"deepseek-v3", "moe_intermediate_size"},
           {"deepseek-v3", "first_k_dense_replace"},
           {"deepseek-v3", "n_shared_experts"},
           {"qwen3-30b-a3b", "head_dim"},
           {"qwen3-30b-a3b", "num_key_value_heads"},
           {"qwen3-30b-a3b", "moe_intermediate_size"},
           {"mixtral-8x7b", "num_key_value_heads"},
           {"gpt-oss-120b", "head_dim"},
           {"qwen2-57b-a14b", "shared_expert_intermediate_size"}}) {
    auto m = without(name, key);
    ASSERT_FALSE(m.ok()) << name << " without " << key;
    EXPECT_EQ(m.error().key, key) << m.error().ToString();
    EXPECT_NE(m.error().message.find("a default of its own"), std::string::npos) << m.error().ToString();
  }
  const std::string mistral = R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000)";
  auto no_window_key = LoadModelFile(WriteConfigJson(mistral + "}"));
  ASSERT_FALSE(no_window_key.ok());
  EXPECT_EQ(no_window_key.error().key, "sliding_window");
  const ModelSpec unwindowed = LoadOk(WriteConfigJson(mistral + R"(, "sliding_window": null})"));
  EXPECT_EQ(unwindowed.sliding_window, 0);
  // Qwen2 applies its window only with use_sliding_window (false when absent).
  const ModelSpec qwen = LoadOk(WriteConfigJson(R"({"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
      "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
      "sliding_window": 4096})"));
  EXPECT_EQ(qwen.LayerAt(0).attention_span, 0);
}

// A config.json describes the model transformers builds: its head
// (architectures) and a wrapper's text model when text_config names none.
TEST(ModelSpecTest, ArchitecturesAndImpliedTextModel) {
  const std::string llama = R"("model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256)";
  EXPECT_TRUE(LoadModelFile(WriteConfigJson("{" + llama + R"(, "architectures": ["LlamaForCausalLM"]})")).ok());
  auto reward = LoadModelFile(WriteConfigJson("{" + llama + R"(, "architectures": ["LlamaForSequenceClassification"],
      "num_labels": 1})"));
  ASSERT_FALSE(reward.ok());
  EXPECT_EQ(reward.error().key, "architectures") << reward.error().ToString();
  EXPECT_NE(reward.error().message.find("LlamaForSequenceClassification"), std::string::npos) << reward.error().ToString();
  // GPT-2's class names its LM head the older way: it is refused for its family, not as another head.
  auto gpt2 = LoadModelFile(WriteConfigJson(R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 768,
      "n_layer": 12, "n_head": 12, "vocab_size": 50257})"));
  ASSERT_FALSE(gpt2.ok());
  EXPECT_EQ(gpt2.error().key, "model_type") << gpt2.error().ToString();
  // Gemma 3's wrapper holds a gemma3_text model whether or not text_config says so.
  const ModelSpec gemma = LoadOk(WriteConfigJson(R"({"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
      "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 34,
      "sliding_window": 1024}})"));
  EXPECT_EQ(gemma.qk_norm, QkNorm::kRms);
  EXPECT_EQ(gemma.vocab, 262208);
  // transformers builds model_type's model: a class of another says the file is not what it seems.
  for (const char* other : {"MambaForCausalLM", "Qwen2ForCausalLM", "Llama4ForConditionalGeneration"}) {
    auto mismatch = LoadModelFile(WriteConfigJson("{" + llama + R"(, "architectures": [")" + other + R"("]})"));
    ASSERT_FALSE(mismatch.ok()) << other;
    EXPECT_EQ(mismatch.error().key, "architectures") << mismatch.error().ToString();
    EXPECT_NE(mismatch.error().message.find("is not a class of model_type 'llama'"), std::string::npos) << mismatch.error().ToString();
  }
  // Kimi K2 is DeepSeek-V3's class under its own model_type; a qwen3_moe's class has no underscore.
  EXPECT_NE(LoadModelFile(WriteConfigJson(R"({"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"]})")).error().key,
            "architectures");
  EXPECT_NE(LoadModelFile(WriteConfigJson(R"({"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"]})")).error().key,
            "architectures");
  // Python's json writes Infinity and NaN; the error names the literal.
  auto inf = LoadModelFile(WriteConfigJson("{" + llama + ",\n\"time_step_limit\": [0.0, Infinity]}"));
  ASSERT_FALSE(inf.ok());
  EXPECT_EQ(inf.error().line, 3) << inf.error().ToString();
  EXPECT_NE(inf.error().message.find("'Infinity' is not a JSON value"), std::string::npos) << inf.error().ToString();
}

// Keys that matter only with some values are checked by value; a stray MoE
// key in a dense config is unknown.
TEST(ModelSpecTest, HuggingFaceKeysCheckedByValue) {
  const std::string dir = ::testing::TempDir();
  int n = 0;
  auto load = [&](const std::string& model_type, const std::string& extra) {
    const std::string path = dir + "hf_by_value_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".json";
    std::ofstream(path) << R"({"model_type": ")" << model_type << R"(", "hidden_size": 4096, "intermediate_size": 11008,
        "num_attention_heads": 32, "num_hidden_layers": 32, "vocab_size": 32000, "rms_norm_eps": 1e-5)"
                        << extra << "}";
    return LoadModelFile(path);
  };
  auto key = [](const Expected<ModelSpec>& m) { return m.ok() ? std::string("(loaded)") : m.error().key; };
  ASSERT_TRUE(load("llama", "").ok());
  auto no_window = load("llama", R"(, "sliding_window": null)");
  ASSERT_TRUE(no_window.ok());
  EXPECT_EQ(no_window->sliding_window, 0);
  auto mistral = load("mistral", R"(, "sliding_window": 4096, "num_key_value_heads": 8)");  // Mistral 7B v0.1: every layer
  ASSERT_TRUE(mistral.ok());
  EXPECT_EQ(mistral->LayerAt(1).attention_span, 4096);
  EXPECT_EQ(key(load("llama", R"(, "num_experts_per_tok": 2)")), "num_experts_per_tok");
  const std::string moe = R"(, "num_experts": 64, "num_experts_per_tok": 6, "moe_intermediate_size": 1408)";
  // DeepSeek's MoE layer frequency: 1 (every layer) is modelled, another is not.
  const std::string mla = R"(, "n_routed_experts": 64, "num_experts_per_tok": 6, "moe_intermediate_size": 1408,
      "q_lora_rank": null, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
      "n_shared_experts": 2, "first_k_dense_replace": 1)";
  EXPECT_TRUE(load("deepseek_v2", mla + R"(, "moe_layer_freq": 1)").ok());
  EXPECT_EQ(key(load("deepseek_v2", mla + R"(, "moe_layer_freq": 2)")), "moe_layer_freq");
  // Another family's key: Qwen2-MoE does not read moe_layer_freq.
  EXPECT_EQ(key(load("qwen2_moe", moe + R"(, "moe_layer_freq": 1)")), "moe_layer_freq");
  auto leading = load("qwen2_moe", moe + R"(, "mlp_only_layers": [0, 1], "num_key_value_heads": 16,
      "shared_expert_intermediate_size": 5632)");
  ASSERT_TRUE(leading.ok());
  EXPECT_EQ(leading->moe.first_k_dense, 2);
  EXPECT_EQ(key(load("qwen2_moe", moe + R"(, "mlp_only_layers": [3])")), "mlp_only_layers");
  EXPECT_EQ(key(load("qwen2_moe", moe + R"(, "shared_expert_intermediate_size": 1000)")),
            "shared_expert_intermediate_size");
  EXPECT_EQ(key(load("qwen2_moe", R"(, "num_experts": 4, "num_experts_per_tok": 6, "moe_intermediate_size": 1408)")),
            "num_experts_per_tok");
  EXPECT_EQ(key(load("deepseek_v3", R"(, "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 1408,
      "first_k_dense_replace": 32, "q_lora_rank": null, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
      "qk_rope_head_dim": 64, "v_head_dim": 128)")),
            "first_k_dense_replace");
  EXPECT_TRUE(load("qwen3", R"(, "num_key_value_heads": 8, "use_sliding_window": false, "layer_types": [)" + [] {
                std::string l;
                for (int i = 0; i < 32; ++i) l += std::string(i ? ", " : "") + "\"full_attention\"";
                return l + "]";
              }()).ok());
  EXPECT_EQ(key(load("qwen2", R"(, "use_sliding_window": true, "sliding_window": 4096)")), "use_sliding_window");
  EXPECT_EQ(key(load("gpt_oss", R"(, "sliding_window": 128, "layer_types": ["sliding_attention"])")), "layer_types");
  // An activation whose gating depends on an architecture trainsim does not know: the family is the error.
  EXPECT_EQ(key(load("phi", R"(, "hidden_act": "gelu_new")")), "model_type");
  // Llama 4's newer keys: the listed MoE and NoPE layers must be the interleave's.
  const std::string l4 = R"(, "intermediate_size_mlp": 16384, "num_local_experts": 16, "num_experts_per_tok": 1,
      "interleave_moe_layer_step": 2, "attention_chunk_size": 8192, "num_key_value_heads": 8, "head_dim": 128,
      "use_qk_norm": true)";
  std::string every_other = ", \"moe_layers\": [";
  std::string nope = ", \"no_rope_layers\": [";
  for (int i = 0; i < 32; ++i) {
    if (i % 2 == 1) every_other += std::to_string(i) + (i < 31 ? ", " : "]");
    nope += std::string((i + 1) % 4 != 0 ? "1" : "0") + (i < 31 ? ", " : "]");
  }
  auto scout = load("llama4_text", l4 + every_other + nope);
  ASSERT_TRUE(scout.ok()) << scout.error().ToString();
  EXPECT_EQ(scout->nope_layer_interval, 4);
  EXPECT_EQ(scout->MoeLayers(), 16);
  EXPECT_EQ(key(load("llama4_text", l4 + R"(, "moe_layers": [1, 3])")), "moe_layers");
  EXPECT_EQ(key(load("llama4_text", l4 + R"(, "no_rope_layers": [1, 0])")), "no_rope_layers");
  // Every layer with RoPE (all 1): every layer chunked, none global.
  std::string all_rope = ", \"no_rope_layers\": [";
  for (int i = 0; i < 32; ++i) all_rope += std::string("1") + (i < 31 ? ", " : "]");
  auto chunked = load("llama4_text", l4 + every_other + all_rope);
  ASSERT_TRUE(chunked.ok()) << chunked.error().ToString();
  EXPECT_EQ(chunked->nope_layer_interval, 0);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A config.json key trainsim does not model loads only where the scenario
// names it in model.accept_unknown_keys: read as changing nothing, and kept
// for the warning. A key named there that the file does not leave unread (a
// typo, a key trainsim reads, a trainsim model file) is exit 2.
TEST(ModelSpecTest, UnmodelledConfigKeysAcceptedOnPurpose) {
  const std::string dir = ::testing::TempDir() + "accept_" + std::to_string(::getpid()) + "_";
  const std::string keys = "{\n\"model_type\": \"llama\",\n\"hidden_size\": 4096,\n\"intermediate_size\": 11008,\n"
                           "\"num_attention_heads\": 32,\n\"num_hidden_layers\": 32,\n\"vocab_size\": 32000,\n"
                           "\"rms_norm_eps\": 1e-5";
  std::ofstream(dir + "plain.json") << keys << "\n}\n";
  std::ofstream(dir + "gated.json") << keys << ",\n\"attn_output_gate\": true\n}\n";
  const std::string gated = dir + "gated.json";
  auto resolve = [&](const std::string& ref) {
    const YAML::Node node = YAML::Load(ref);
    return CatchInputErrors<ModelSpec>(dir + "s.yaml", [&] { return ResolveModel(node, dir + "s.yaml", "model"); });
  };
  for (const std::string& ref : {gated, "{file: " + gated + "}"}) {
    auto m = resolve(ref);
    ASSERT_FALSE(m.ok()) << ref;
    EXPECT_EQ(m.error().key, "attn_output_gate");
    EXPECT_EQ(m.error().line, 9);
    EXPECT_NE(m.error().message.find("accept_unknown_keys: [attn_output_gate]"), std::string::npos) << m.error().message;
  }
  auto accepted = resolve("{file: " + gated + ", accept_unknown_keys: [attn_output_gate]}");
  ASSERT_TRUE(accepted.ok()) << accepted.error().ToString();
  EXPECT_EQ(accepted->accepted_unknown_keys, std::vector<std::string>{gated + ":9: attn_output_gate"});
  EXPECT_EQ(accepted->TotalParameters(4096), LoadOk(dir + "plain.json").TotalParameters(4096));
  EXPECT_NE(ModelFileWarning(*accepted).find(gated + ":9: attn_output_gate"), std::string::npos);
  EXPECT_EQ(ModelFileWarning(LoadOk(dir + "plain.json")), "");
  // A multimodal wrapper's vision tower is said to be left out.
  EXPECT_NE(ModelFileWarning(LoadOk(HfConfig("llama4-scout"))).find("llama4 wrapper's vision tower"), std::string::npos)
      << ModelFileWarning(LoadOk(HfConfig("llama4-scout")));

  auto typo = resolve("{file: " + gated + ", accept_unknown_keys: [attn_output_gat]}");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().key, "model.accept_unknown_keys");
  EXPECT_NE(typo.error().message.find("did you mean 'attn_output_gate'"), std::string::npos) << typo.error().message;
  auto read = resolve("{file: " + gated + ", accept_unknown_keys: [attn_output_gate, hidden_size]}");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().key, "model.accept_unknown_keys");
  auto yaml = resolve("{file: llama2-7b, accept_unknown_keys: [attn_output_gate]}");
  ASSERT_FALSE(yaml.ok());
  EXPECT_NE(yaml.error().message.find("trainsim model file"), std::string::npos) << yaml.error().message;
  EXPECT_FALSE(resolve("{file: " + gated + ", accept_unknown_keys: attn_output_gate}").ok());
}

// transformers' save_pretrained may write every PretrainedConfig attribute
// out at its default (generation settings, output flags, labels): those read
// as leaving the step unchanged, but not at a value that changes the model;
// the keys left unread are named together, so that one edit accepts them all;
// DeepSeek's absent q_lora_rank is its config class's 1536, not null's none.
TEST(ModelSpecTest, PretrainedConfigDefaultsAndEveryUnreadKeyAtOnce) {
  const std::string dir = ::testing::TempDir() + "pretrained_" + std::to_string(::getpid()) + "_";
  const std::string llama = "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"intermediate_size\": 11008,\n"
                            "\"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"vocab_size\": 32000";
  std::ofstream(dir + "plain.json") << llama << "}\n";
  std::ofstream(dir + "saved.json") << llama << ",\n\"return_dict\": true, \"output_hidden_states\": false, \"temperature\": 1.0,\n"
                                    << "\"id2label\": {\"0\": \"LABEL_0\"}, \"pruned_heads\": {}, \"is_encoder_decoder\": false,\n"
                                    << "\"chunk_size_feed_forward\": 0, \"cross_attention_hidden_size\": null}\n";
  EXPECT_EQ(LoadOk(dir + "saved.json").TotalParameters(4096), LoadOk(dir + "plain.json").TotalParameters(4096));
  for (const std::string key : {"\"is_encoder_decoder\": true", "\"pruned_heads\": {\"0\": [1]}", "\"chunk_size_feed_forward\": 1",
                                 "\"add_cross_attention\": true"}) {
    std::ofstream(dir + "changed.json") << llama << ",\n" << key << "}\n";
    auto m = LoadModelFile(dir + "changed.json");
    ASSERT_FALSE(m.ok()) << key;
    EXPECT_EQ(m.error().kind, ErrorKind::kBadInput) << key;
    EXPECT_NE(key.find(m.error().key), std::string::npos) << key << ": " << m.error().ToString();
  }
  std::ofstream(dir + "three.json") << llama << ",\n\"attn_output_gate\": true,\n\"foo_gate\": 1,\n\"bar_norm\": 2}\n";
  const std::string three = dir + "three.json";
  const YAML::Node ref = YAML::Load("{file: " + three + "}");
  auto m = CatchInputErrors<ModelSpec>(dir + "s.yaml", [&] { return ResolveModel(ref, dir + "s.yaml", "model"); });
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().key, "attn_output_gate");
  EXPECT_NE(m.error().message.find("2 more left unread: foo_gate, bar_norm"), std::string::npos) << m.error().message;
  EXPECT_NE(m.error().message.find("accept_unknown_keys: [attn_output_gate, foo_gate, bar_norm]"), std::string::npos) << m.error().message;

  std::ifstream in(HfConfig("deepseek-v3"));
  std::string v3((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = v3.find("\"q_lora_rank\": 1536,");
  ASSERT_NE(at, std::string::npos);
  std::ofstream(dir + "v3.json") << v3.erase(at, v3.find('\n', at) - at);
  EXPECT_EQ(LoadOk(dir + "v3.json").mla.q_lora_rank, 1536);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Mistral's attention windows every layer whatever a layer_types list says
// (transformers only warns); Gemma 3's reads it.
TEST(ModelSpecTest, LayerTypesOnlyWhereTheFamilyReadsThem) {
  std::string types;
  for (int i = 0; i < 4; ++i) types += std::string(types.empty() ? "" : ", ") + (i % 2 ? "\"full_attention\"" : "\"sliding_attention\"");
  const std::string mistral = R"("model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000, "sliding_window": 4096)";
  auto mixed = LoadModelFile(WriteConfigJson("{" + mistral + ", \"layer_types\": [" + types + "]}"));
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.error().key, "layer_types") << mixed.error().ToString();
  // Every layer windowed is what Mistral builds.
  const ModelSpec all = LoadOk(WriteConfigJson("{" + mistral +
                                               R"(, "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention"]})"));
  EXPECT_EQ(all.sliding_window, 4096);
  EXPECT_EQ(all.sliding_window_every, 1);
  const ModelSpec gemma = LoadOk(WriteConfigJson(R"({"model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216,
      "num_hidden_layers": 4, "vocab_size": 256000, "sliding_window": 4096, "layer_types": [)" + types + "]}"));
  EXPECT_EQ(gemma.sliding_window_every, 2);
}

// Gemma's and Qwen3's attention take head_dim as written: null builds nothing
// in transformers, where Llama's derives hidden / heads.
TEST(ModelSpecTest, NullHeadDimIsAnErrorWhereTheFamilyHasADefault) {
  auto qwen3 = LoadModelFile(WriteConfigJson(R"({"model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072,
      "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 8, "vocab_size": 151936, "head_dim": null})"));
  ASSERT_FALSE(qwen3.ok());
  EXPECT_EQ(qwen3.error().key, "head_dim") << qwen3.error().ToString();
  const ModelSpec llama = LoadOk(WriteConfigJson(R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "head_dim": null})"));
  EXPECT_EQ(llama.head_dim(), 128);
}

// A file's dropout is the scenario's to set: read, and said in the warning.
TEST(ModelSpecTest, ConfigDropoutIsSaidNotDropped) {
  const ModelSpec m = LoadOk(WriteConfigJson(R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "attention_dropout": 0.1})"));
  EXPECT_NE(ModelFileWarning(m).find("attention_dropout 0.1"), std::string::npos) << ModelFileWarning(m);
  EXPECT_NE(ModelFileWarning(m).find("training.dropout"), std::string::npos);
}

// Gemma 2's cap on attention scores is no work of its own but not what the
// fused kernel priced does: said in the warning.
TEST(ModelSpecTest, AttentionSoftcapIsSaid) {
  const std::string gemma2 = R"("model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 4,
      "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 256000, "sliding_window": 4096)";
  EXPECT_NE(ModelFileWarning(LoadOk(WriteConfigJson("{" + gemma2 + R"(, "attn_logit_softcapping": 50.0})"))).find("attn_logit_softcapping 50"),
            std::string::npos);
  EXPECT_EQ(ModelFileWarning(LoadOk(WriteConfigJson("{" + gemma2 + R"(, "attn_logit_softcapping": null})"))), "");
  EXPECT_NE(ModelFileWarning(LoadOk(WriteConfigJson("{" + gemma2 + R"(, "final_logit_softcapping": 30.0})"))).find("final_logit_softcapping 30"),
            std::string::npos);
}

// A Hugging Face snapshot directory stands for its config.json.
TEST(ModelSpecTest, SnapshotDirectoryReadsItsConfigJson) {
  const std::string dir = ::testing::TempDir() + "/trainsim-snapshot-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(HfConfig("mixtral-8x7b"), dir + "/config.json", std::filesystem::copy_options::overwrite_existing);
  const ModelSpec m = ResolveModel(YAML::Node(dir), "", "model");
  EXPECT_EQ(m.layers, 32);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainsim
