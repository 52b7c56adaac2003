#include "sim/validate/validation.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

// The reference files ship in tests/reference (copies of ../shared/reference).
std::string ReferenceFile() { return std::string(TRAINSIM_SOURCE_DIR) + "/tests/reference/measured.yaml"; }

TEST(ValidationTest, DefaultReferenceShipsWithTheTree) {
  EXPECT_TRUE(std::filesystem::exists(DefaultReferenceFile())) << DefaultReferenceFile();
}

// The accuracy gate (design.md 4): a change that loses accuracy on the
// measured runs fails CI. Today 2.79% mean, 7.3% max: issue 15's targets
// (4% / 10%) are the gate.
TEST(ValidationTest, AccuracyGateOnMeasuredRuns) {
  auto rep = ValidateReference(ReferenceFile(), Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  EXPECT_EQ(rep->unpredicted, 0);
  EXPECT_GE(rep->predicted, 27);
  EXPECT_LE(rep->mean_abs_error, 0.04);
  EXPECT_LE(rep->max_abs_error, 0.10);
}

// published-2025.yaml: every case runs (dense, LoRA, MoE; H100, H200, B200,
// GB200). A gate on the count keeps it from slipping back (the accuracy
// targets there are not met yet: issues 13-16).
TEST(ValidationTest, PublishedRunsThatCanBeDescribedArePredicted) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/reference/published-2025.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  EXPECT_EQ(rep->predicted, 154);
  EXPECT_EQ(rep->unpredicted, 0);
  for (const auto& c : rep->cases) {
    if (!c.failure.empty()) {
      EXPECT_NE(c.failure.find(".yaml:"), std::string::npos) << c.id << ": " << c.failure;
    }
  }
  bool bf16 = false, fp8 = false;
  for (const auto& g : rep->groups) {
    bf16 |= g.by == "precision" && g.name == "bf16";
    fp8 |= g.by == "precision" && g.name == "fp8";
  }
  EXPECT_TRUE(bf16 && fp8);
  // Per kind of workload and per model: the reference's MoE models are inline
  // and unnamed, so their sizes name them (Mixtral 8x7B's two runs as one).
  std::map<std::string, int> workloads, models, kinds, bands;
  for (const auto& g : rep->groups) {
    if (g.by == "workload") workloads[g.name] = g.summary.cases;
    if (g.by == "model") models[g.name] = g.summary.cases;
    if (g.by == "kind") kinds[g.name] = g.summary.cases;
    if (g.by == "experts/GPU") bands[g.name] = g.summary.cases;
  }
  // Per band of routed experts per GPU, the MoE runs only (61): the one grouping a dense run is absent from.
  EXPECT_EQ(bands.size(), 4u);
  EXPECT_EQ(bands["1"] + bands["2-4"] + bands["5-15"] + bands["16+"], 61);
  EXPECT_EQ(bands["16+"], 21);
  // Per GPU and kind of workload, as the track record groups them: the MoE
  // runs on H100 (issue 13's 26) and on each Blackwell GPU (issue 14's).
  EXPECT_EQ(kinds["h100-sxm-80g MoE pre-training"], 26);
  EXPECT_EQ(kinds["b200-sxm-180g MoE pre-training"] + kinds["gb200 MoE pre-training"], 35);
  EXPECT_EQ(kinds["b200-sxm-180g dense pre-training"] + kinds["gb200 dense pre-training"], 32);
  EXPECT_EQ(workloads["dense LoRA"], 7);
  EXPECT_EQ(workloads["dense pre-training"] + workloads["MoE pre-training"] + workloads["dense LoRA"], 154);
  EXPECT_EQ(models["46.7B (12.9B active)"], 2);
  EXPECT_EQ(models["671B (37.6B active)"], 11);
  // 9.96% over all 154 (10.26% before the Blackwell MoE recipes of 25.11-26.08 and the non-interleaved
  // pipeline's exposed sends, 9.92% before DeepSeek-V3's rows took their recipe's pipeline layouts, which move
  // its Blackwell runs further from their measurements, and 10.83% before the 26.04.01 B200 row took its preset;
  // 11.56% before the Megatron-Bridge MoE recipes on H100 (Qwen3 235B, Qwen3 30B, DeepSeek-V3,
  // GPT-OSS) took their dispatcher, overlap and recompute modules, 11.66% before NeMo 25.04 ran fp8 in current scaling,
  // 11.65% before MLPerf's GPT-3 and NeMo 25.02/25.04's runs took their recipes' bf16
  // gradients, which moved the dense H100 runs toward their measurements and the Blackwell ones, already
  // fast, further from theirs; 11.98% before Hopper's fp8 backward GEMMs paid for their split accumulator, 12.84% before GEMMs paid for their partial last wave, 11.83% before the dgxc-benchmarking v25.02 recipes took their bf16 gradient
  // buffers, 12.21% before memory-bound kernels paid their fixed time, 12.68% before the
  // recipes of the benchmarks, 12.79% before the LoRA adapters' collectives and MLPerf's LoRA settings, 12.85% before
  // delayed fp8 scaling agreed on its amaxes per chunk pass, 12.55% before the Megatron-Bridge runs took their recipes' bf16 gradients and
  // fp8 current scaling, 14.58% before the sustained clocks were measured ones, 15.8% before
  // the Grok-1 cases ran with their NeMo 24.12 release's expert split and the host issued the
  // kernels); far from design.md's targets, but a change may not lose what is there.
  EXPECT_LE(rep->mean_abs_error, 0.11);
}

// Dense H100 runs of published-2025.yaml, bf16 and fp8 apart (issue 15): a
// bias in one precision's GEMM rate shows in its signed mean. Today bf16 2.0%
// mean, -2.0% signed, 3.5% max over 20 cases, within issue 15's targets (mean
// 4%, max 10%, signed within 2%); fp8 4.1%, +0.3%, 9.1% over 34, its mean
// 0.1 point over the target. All 54: 3.3% mean, 9.1% max. Before MLPerf's GPT-3 and NeMo 25.02's runs took their
// recipes' bf16 gradients: fp8 5.1/+1.8/13.9; before the fp8 backward GEMMs
// paid for their split accumulator: 5.6/-4.4/14.6; before GEMMs paid
// for their partial last wave: 5.1/-5.1/6.9 and 6.3/-4.8/14.8; before the
// dgxc-benchmarking v25.02 recipes took their bf16 gradient buffers (their
// wgrad GEMMs no longer accumulate into fp32): 2.7/-2.0/5.9 and 3.9/-1.2/8.1.
TEST(ValidationTest, DenseH100RunsPerPrecision) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/reference/published-2025.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  struct Gate {
    std::string precision;
    double mean, signed_mean, max;
  };
  for (const Gate& gate : {Gate{"bf16", 0.04, 0.025, 0.10}, Gate{"fp8", 0.045, 0.02, 0.10}}) {
    const std::string& precision = gate.precision;
    int n = 0;
    double abs_sum = 0, signed_sum = 0, worst = 0;
    for (const auto& c : rep->cases) {
      const bool dense = c.result.model.active_parameters == c.result.model.parameters;
      if (!c.failure.empty() || c.gpu != "h100-sxm-80g" || c.precision != precision || !dense) continue;
      if (c.id.find("-lora-") != std::string::npos) continue;
      ++n;
      abs_sum += std::fabs(c.error);
      signed_sum += c.error;
      worst = std::max(worst, std::fabs(c.error));
    }
    ASSERT_GT(n, 10) << precision;
    EXPECT_LE(abs_sum / n, gate.mean) << precision;
    EXPECT_LE(std::fabs(signed_sum / n), gate.signed_mean) << precision;
    EXPECT_LE(worst, gate.max) << precision;
  }
}

// The MLPerf Training v4.1 Llama 2 70B LoRA cases (XE9680 H100 on 1-8 nodes,
// XE9680 H200, DGX H200, Azure ND H200 v5 on 64 nodes) all run, within the
// issue's targets (mean |error| <= 8%, max <= 15%): six within 4%, Azure's
// 64 nodes 12.9% fast; this gate keeps them there.
TEST(ValidationTest, LoraFineTuningRunsArePredicted) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/reference/published-2025.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  int n = 0;
  double sum = 0, worst = 0;
  for (const auto& c : rep->cases) {
    if (c.id.find("-lora-") == std::string::npos) continue;
    ASSERT_TRUE(c.failure.empty()) << c.id << ": " << c.failure;
    ++n;
    sum += std::fabs(c.error);
    worst = std::max(worst, std::fabs(c.error));
  }
  EXPECT_EQ(n, 7);
  // 4.1% mean, 12.9% max (6.1% / 15.6% before Hopper's fp8 backward GEMMs paid for their split accumulator, 6.7% / 16.1% before GEMMs paid for their partial last wave, 7.3% / 16.9% before memory-bound kernels paid their fixed time, 8.5% / 18.3%
  // before the MLPerf LoRA recipe, 10.8% / 22.6% before the adapters' collectives and MLPerf's LoRA
  // settings, 11.9% / 24.1% before the measured sustained clocks).
  EXPECT_LE(sum / n, 0.08);
  EXPECT_LE(worst, 0.135);
}

TEST(ValidationTest, EveryReferenceCaseIsLoadedAndPredicted) {
  auto rep = ValidateReference(ReferenceFile(), Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_FALSE(rep->cases.empty());
  for (const auto& c : rep->cases) {
    EXPECT_TRUE(c.failure.empty()) << c.id << ": " << c.failure;
    EXPECT_GT(c.predicted_step_time_s, 0) << c.id;
    EXPECT_TRUE(std::isfinite(c.error)) << c.id;
  }
  EXPECT_GT(rep->mean_abs_error, 0);
  EXPECT_LE(rep->mean_abs_error, rep->max_abs_error);
}

TEST(ValidationTest, ReportsDefaultedFields) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/reference-sample.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_EQ(rep->cases.size(), 2u);
  const auto& d = rep->cases[0].defaulted;
  // The micro batch the case did not give says which one ran and why.
  const auto mb = std::find_if(d.begin(), d.end(), [](const std::string& k) { return k.rfind("training.micro_batch=", 0) == 0; });
  ASSERT_NE(mb, d.end());
  EXPECT_NE(mb->find("(auto: the fastest (closed-form step) that fits of 1"), std::string::npos) << *mb;
  EXPECT_NE(ValidationTable(*rep).find("mean |error|"), std::string::npos);
  const std::string json = ValidationJson(*rep);
  EXPECT_NE(json.find("\"mean_abs_error\""), std::string::npos);
  // Each case says what it is, for a script's own grouping.
  EXPECT_NE(json.find("\"workload\": \"dense pre-training\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"model\": \"69.0B\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"source\": \"sc21\""), std::string::npos) << json;
}

// What a row's inline model leaves out and its recipe supplies, the case
// lists among its defaults: GPT-OSS's clamp (its recipe's 7; other models'
// recipes clamp nothing) and DeepSeek-V3's MTP module (its recipe's one; the
// 25.11 rows that say, "mtp0" and "mtp1", and other models list nothing).
TEST(ValidationTest, ModelKeysARecipeSuppliesAreReportedAsDefaulted) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/reference/published-2025.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  auto lists = [](const ValidationCase& c, const char* key) { return std::find(c.defaulted.begin(), c.defaulted.end(), key) != c.defaulted.end(); };
  int oss = 0, deepseek_unsaid = 0, deepseek_said = 0;
  for (const auto& c : rep->cases) {
    const bool gpt_oss = c.id.find("gpt-oss") != std::string::npos;
    const bool deepseek = c.id.find("deepseek-v3") != std::string::npos, says_mtp = c.id.find("-mtp") != std::string::npos;
    EXPECT_EQ(lists(c, "model.activation_clamp=7 (the framework's)"), gpt_oss) << c.id;
    EXPECT_EQ(lists(c, "model.mtp_layers=1 (the framework's)"), deepseek && !says_mtp) << c.id;
    oss += gpt_oss;
    (says_mtp ? deepseek_said : deepseek_unsaid) += deepseek;
  }
  EXPECT_EQ(oss, 8);
  EXPECT_EQ(deepseek_unsaid, 8);
  EXPECT_EQ(deepseek_said, 3);
}

// A mixture of experts' band is its routed experts per GPU, experts / EP:
// up to TE's 4 grouped-GEMM streams, more, and 16 or more.
TEST(ValidationTest, ExpertsPerGpuBandIsExpertsOverEp) {
  const auto band = [](const std::vector<std::string>& sets) {
    auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/moe/mixtral-8x7b-8n-8nic.yaml", sets);
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    return ExpertsPerGpuBand(*s);
  };
  EXPECT_EQ(band({}), "1");  // 8 experts, EP 8
  EXPECT_EQ(band({"parallelism.expert=2"}), "2-4");
  EXPECT_EQ(band({"parallelism.expert=1"}), "5-15");
  EXPECT_EQ(band({"model.moe.experts=128", "model.moe.top_k=8", "parallelism.expert=8"}), "16+");
  EXPECT_EQ(band({"model.moe.experts=120", "model.moe.top_k=8", "parallelism.expert=8"}), "5-15");  // 15
  auto dense = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-7b-1n-8nic.yaml");
  ASSERT_TRUE(dense.ok());
  EXPECT_EQ(ExpertsPerGpuBand(*dense), "");
}

TEST(ValidationTest, SummarizesPerGpu) {
  // The sample has one A100 and one H100 case: a summary line each, and the
  // per-GPU figures are those of their single case.
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/reference-sample.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_EQ(rep->by_gpu.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rep->by_gpu[i].first, rep->cases[i].gpu);
    EXPECT_EQ(rep->by_gpu[i].second.cases, 1);
    EXPECT_DOUBLE_EQ(rep->by_gpu[i].second.mean_abs_error, std::fabs(rep->cases[i].error));
  }
  EXPECT_NE(ValidationTable(*rep).find("  " + rep->cases[1].gpu), std::string::npos);
}

// What-if: one override in every case's scenario moves each prediction as a
// run with that override would; --cases selects by id.
TEST(ValidationTest, WhatIfOverridesEveryCaseAndSelectsById) {
  const std::string sample = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/reference-sample.yaml";
  auto base = ValidateReference(sample, Fidelity::kAnalytical);
  ASSERT_TRUE(base.ok()) << base.error().ToString();
  ValidationWhatIf slower;
  slower.overrides = {"training.seq_len=8192"};  // longer than either case's: every step longer
  auto moved = ValidateReference(sample, Fidelity::kAnalytical, {}, slower);
  ASSERT_TRUE(moved.ok()) << moved.error().ToString();
  ASSERT_EQ(moved->cases.size(), base->cases.size());
  for (size_t i = 0; i < base->cases.size(); ++i) {
    EXPECT_GT(moved->cases[i].predicted_step_time_s, base->cases[i].predicted_step_time_s) << base->cases[i].id;
  }
  ValidationWhatIf one;
  one.cases_containing = "llama2-70b";
  auto sel = ValidateReference(sample, Fidelity::kAnalytical, {}, one);
  ASSERT_TRUE(sel.ok());
  ASSERT_EQ(sel->cases.size(), 1u);
  EXPECT_EQ(sel->cases[0].id, "nemo2407-fp8-llama2-70b");
  EXPECT_DOUBLE_EQ(sel->cases[0].predicted_step_time_s, base->cases[1].predicted_step_time_s);
  // An override no case accepts is bad input that names --set and the key.
  ValidationWhatIf typo;
  typo.overrides = {"parallelism.moe_dispatchr=deepep"};
  auto bad = ValidateReference(sample, Fidelity::kAnalytical, {}, typo);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(bad.error().ToString().find("--set"), std::string::npos) << bad.error().ToString();
  EXPECT_NE(bad.error().ToString().find("moe_dispatcher"), std::string::npos) << bad.error().ToString();
}

// A case that does not name its framework runs with the release profile
// whose container its source names, and says so; one that names it keeps it.
TEST(ValidationTest, CaseRunsWithTheReleaseItsSourceNames) {
  YAML::Node ref = YAML::LoadFile(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/reference-sample.yaml");
  ref["cases"][0]["source"] = "dgxc-benchmarking v25.02; NeMo container nvcr.io/nvidia/nemo:24.12";
  ref["cases"][1]["source"] = "the same container, nvcr.io/nvidia/nemo:24.12";
  ref["cases"][1]["scenario"]["training"]["framework"] = "megatron-core-2024";
  YAML::Node later = YAML::Clone(ref["cases"][0]);
  later["id"] = "later-build";
  later["source"] = "a later build, nvcr.io/nvidia/nemo:24.12.01";
  ref["cases"].push_back(later);
  const std::string file = (std::filesystem::temp_directory_path() / "trainsim_release_cases.yaml").string();
  std::ofstream(file) << YAML::Dump(ref);
  auto rep = ValidateReference(file, Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_EQ(rep->cases.size(), 3u);
  const auto& named = rep->cases[0].defaulted;
  EXPECT_NE(std::find(named.begin(), named.end(), "training.framework=nemo-24.12 (the source's container)"), named.end());
  EXPECT_EQ(std::find(named.begin(), named.end(), "training.framework"), named.end());
  const auto& kept = rep->cases[1].defaulted;
  EXPECT_EQ(std::find_if(kept.begin(), kept.end(), [](const std::string& d) { return d.rfind("training.framework", 0) == 0; }), kept.end());
  const auto& other = rep->cases[2].defaulted;
  EXPECT_NE(std::find(other.begin(), other.end(), "training.framework"), other.end());  // not nemo-24.12's container
}

// A case whose note lists other releases' runs of its configuration carries
// their span of step times; its error stays against its own measurement,
// and the report says where the predictions fall among the releases.
TEST(ValidationTest, OtherReleasesOfACaseSpanItsMeasuredStep) {
  YAML::Node ref = YAML::LoadFile(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/reference-sample.yaml");
  YAML::Node m = ref["cases"][1]["measured"];
  const double step_s = m["step_time_s"].as<double>();
  m["tokens_per_s_per_gpu"] = 1000;
  // One release 1000x faster, one 1000x slower: any prediction falls within.
  ref["cases"][1]["note"] = "older containers, same config (tokens/s/GPU): 24.09: 1000000, 24.05: 1; a note goes on";
  const std::string file = (std::filesystem::temp_directory_path() / "trainsim_release_spread.yaml").string();
  std::ofstream(file) << YAML::Dump(ref);
  auto rep = ValidateReference(file, Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_EQ(rep->cases.size(), 2u);
  EXPECT_EQ(rep->cases[0].measured_range.releases, 1);
  const ValidationCase& c = rep->cases[1];
  EXPECT_EQ(c.measured_range.releases, 3);
  EXPECT_NEAR(c.measured_range.min_step_time_s, step_s / 1000, 1e-12);
  EXPECT_NEAR(c.measured_range.max_step_time_s, step_s * 1000, 1e-9);
  EXPECT_NEAR(c.error, (c.predicted_step_time_s - step_s) / step_s, 1e-12);
  EXPECT_EQ(rep->release_spread.cases, 1);
  EXPECT_EQ(rep->release_spread.within, 1);
  EXPECT_EQ(rep->release_spread.faster + rep->release_spread.slower, 0);
  EXPECT_NE(ValidationTable(*rep).find("1 case records other releases' runs of the same configuration"), std::string::npos);
  EXPECT_NE(ValidationJson(*rep).find("\"measured_max_step_time_s\""), std::string::npos);
}

// published-2025.yaml records 29 configurations on other releases; each note reads.
TEST(ValidationTest, PublishedRunsOtherReleasesAreRead) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/reference/published-2025.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  EXPECT_EQ(rep->release_spread.cases, 29);
  EXPECT_EQ(rep->release_spread.faster + rep->release_spread.within + rep->release_spread.slower, 29);
  EXPECT_GT(rep->release_spread.max_spread, rep->release_spread.median_spread);
}

// A source that names no container but a repository whose published results
// one profile describes runs with that profile; a longer name is not it.
TEST(ValidationTest, CaseRunsWithTheProfileOfTheRepositoryItsSourceNames) {
  YAML::Node ref = YAML::LoadFile(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/reference-sample.yaml");
  ref["cases"][0]["source"] = "NVIDIA-NeMo/Megatron-Bridge commit 067f987df docs/performance-summary.md";
  ref["cases"][1]["source"] = "a fork, NVIDIA-NeMo/Megatron-Bridge-fork docs/performance-summary.md";
  YAML::Node mlperf = YAML::Clone(ref["cases"][0]);
  mlperf["id"] = "mlperf";
  mlperf["source"] = "mlcommons/training_results_v4.1 commit b87b9e3 NVIDIA/results/eos_n32_ngc24.09_nemo/gpt3/result_*.txt";
  ref["cases"].push_back(mlperf);
  // The same repository's LoRA benchmark has a recipe of its own, taken before the repository's.
  YAML::Node lora = YAML::Clone(mlperf);
  lora["id"] = "mlperf-lora";
  lora["source"] = "mlcommons/training_results_v4.1 commit b87b9e3 Dell/results/XE9680x8H100-SXM-80GB/llama2_70b_lora/result_*.txt";
  ref["cases"].push_back(lora);
  // A benchmark's recipe before the container its source also names.
  YAML::Node grok = YAML::Clone(mlperf);
  grok["id"] = "dgxc-grok";
  grok["source"] = "NVIDIA/dgxc-benchmarking tag v25.02 (commit 8f5cbb3799) grok1/README_314b.md; NeMo container nvcr.io/nvidia/nemo:24.12";
  ref["cases"].push_back(grok);
  // One release's recipe of a model before the model's recipe of every release (the longer benchmark name first).
  const std::string summary = "NVIDIA-NeMo/Megatron-Bridge commit 067f987df docs/performance-summary-archive.md, section ";
  YAML::Node ds_2509 = YAML::Clone(mlperf), ds_2511 = YAML::Clone(mlperf);
  ds_2509["id"] = "ds-25.09";
  ds_2509["source"] = summary + "'25.09 NeMo Container', system DGX-H100, model row 'DeepSeekV3 (dropless)'";
  ds_2511["id"] = "ds-25.11";
  ds_2511["source"] = summary + "'25.11 NeMo Container', system DGX-H100, model row 'DeepSeekV3 (w/ MTP)'";
  ref["cases"].push_back(ds_2509);
  ref["cases"].push_back(ds_2511);
  const std::string file = (std::filesystem::temp_directory_path() / "trainsim_repository_cases.yaml").string();
  std::ofstream(file) << YAML::Dump(ref);
  auto rep = ValidateReference(file, Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_EQ(rep->cases.size(), 7u);
  const auto& release_recipe = rep->cases[5].defaulted;
  EXPECT_NE(std::find(release_recipe.begin(), release_recipe.end(), "training.framework=megatron-bridge-25.09-deepseek-v3-h100 (the source's benchmark)"),
            release_recipe.end());
  const auto& model_recipe = rep->cases[6].defaulted;
  EXPECT_NE(std::find(model_recipe.begin(), model_recipe.end(), "training.framework=megatron-bridge-deepseek-v3 (the source's benchmark)"),
            model_recipe.end());
  const auto& named = rep->cases[0].defaulted;
  EXPECT_NE(std::find(named.begin(), named.end(), "training.framework=megatron-bridge-perf (the source's repository)"), named.end());
  const auto& fork = rep->cases[1].defaulted;
  EXPECT_NE(std::find(fork.begin(), fork.end(), "training.framework"), fork.end());
  const auto& grok_named = rep->cases[4].defaulted;
  EXPECT_NE(std::find(grok_named.begin(), grok_named.end(), "training.framework=dgxc-25.02-grok1 (the source's benchmark)"), grok_named.end());
  const auto& mlperf_named = rep->cases[2].defaulted;
  EXPECT_NE(std::find(mlperf_named.begin(), mlperf_named.end(), "training.framework=mlperf-training-4.1-nemo (the source's repository)"),
            mlperf_named.end());
  const auto& lora_named = rep->cases[3].defaulted;
  EXPECT_NE(std::find(lora_named.begin(), lora_named.end(), "training.framework=mlperf-training-4.1-nemo-lora (the source's benchmark)"),
            lora_named.end());
}

TEST(ValidationTest, MalformedReferenceIsAnInputError) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/malformed.yaml", Fidelity::kAnalytical);
  ASSERT_FALSE(rep.ok());
  EXPECT_NE(rep.error().ToString().find("malformed YAML"), std::string::npos);
}

// A reference file's own mistakes are input errors at their line: an empty
// list, a case id given twice (it would weigh twice in every mean), an empty
// id, a key under `measured` that is not one of the file format's. A file
// none of whose cases can be predicted has no mean: null in JSON.
TEST(ValidationTest, ReferenceFileMistakesAreInputErrors) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/reference-sample.yaml");
  const std::string sample((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string dir = ::testing::TempDir();
  auto validate = [&](const std::string& name, const std::string& text) {
    const std::string path = dir + "reference_" + name + ".yaml";
    std::ofstream(path) << text;
    return ValidateReference(path, Fidelity::kAnalytical);
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = sample;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  auto empty = validate("empty", "cases: []\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().key, "cases");
  const size_t second = sample.find("- id: ", sample.find("- id: ") + 1);
  ASSERT_NE(second, std::string::npos);
  const std::string first_id = sample.substr(sample.find("- id: ") + 6, sample.find('\n', sample.find("- id: ")) - sample.find("- id: ") - 6);
  std::string twice = sample;
  twice.replace(second + 6, twice.find('\n', second) - second - 6, first_id);
  auto duplicate = validate("duplicate", twice);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().key, "cases.id");
  EXPECT_NE(duplicate.error().message.find("line 3"), std::string::npos) << duplicate.error().ToString();
  auto typo = validate("typo", with("    step_time_s:", "    tokens_per_s: 1\n    step_time_s:"));
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().key, "cases.measured.tokens_per_s");
  // Measured figures past any GPU, or not numbers, are a mistyped case.
  for (const auto& [from, to, key] : std::vector<std::array<std::string, 3>>{
           {"model_tflops_per_gpu: 137", "model_tflops_per_gpu: .nan", "cases.measured.model_tflops_per_gpu"},
           {"tokens_per_s_per_gpu: 1728", "tokens_per_s_per_gpu: 1e300", "cases.measured.tokens_per_s_per_gpu"}}) {
    auto implausible = validate("implausible", with(from, to));
    ASSERT_FALSE(implausible.ok()) << to;
    EXPECT_EQ(implausible.error().key, key) << implausible.error().ToString();
  }
  std::string unknown_node = sample;
  for (size_t at = unknown_node.find("node: dgx-"); at != std::string::npos; at = unknown_node.find("node: dgx-", at + 1)) {
    unknown_node.replace(at, 10, "node: dgz-");
  }
  auto none = validate("none", unknown_node);
  ASSERT_TRUE(none.ok()) << none.error().ToString();
  EXPECT_EQ(none->predicted, 0);
  EXPECT_NE(ValidationJson(*none).find("\"mean_abs_error\": null"), std::string::npos) << ValidationJson(*none);
  EXPECT_NE(ValidationTable(*none).find("no case predicted"), std::string::npos) << ValidationTable(*none);
}

// The out-of-sample file: GB300 and B300 runs that no profile number came
// from. Every case runs, and none is off by half: a profile or model change
// that breaks what carries to unseen hardware shows here. At this writing
// 17.6% mean, 42.0% max (GB300 +20.4% signed: its profile keeps B200's
// power-limited sustained clock; B300 -6.1%).
TEST(ValidationTest, OutOfSampleGb300AndB300RunsArePredicted) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/reference/holdout-gb300-b300.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_EQ(rep->cases.size(), 13u);
  for (const auto& c : rep->cases) {
    ASSERT_TRUE(c.failure.empty()) << c.id << ": " << c.failure;
    EXPECT_TRUE(c.gpu == "gb300" || c.gpu == "b300-sxm-288g") << c.id;
    EXPECT_LT(std::fabs(c.error), 0.5) << c.id;
  }
}

// The out-of-sample file across releases: 138 pre-training rows of the
// Megatron-Bridge summaries that neither reference file holds, each run with
// the framework profile its source names. Every case runs, none is off by
// more than 60% (some rows print layouts their release's preset does not
// run), and the mean stays under 15%: at this writing 12.2% mean, 52.8% max,
// from 19.9% before the releases' own recipes were described (the 26.06-26.08
// GB200/GB300 MoE rows had fallen back to megatron-bridge-perf).
TEST(ValidationTest, OutOfSampleReleasesArePredictedWithTheirOwnRecipes) {
  auto rep = ValidateReference(std::string(TRAINSIM_SOURCE_DIR) + "/tests/reference/holdout-releases.yaml", Fidelity::kAnalytical);
  ASSERT_TRUE(rep.ok()) << rep.error().ToString();
  ASSERT_EQ(rep->cases.size(), 138u);
  double sum = 0;
  for (const auto& c : rep->cases) {
    ASSERT_TRUE(c.failure.empty()) << c.id << ": " << c.failure;
    EXPECT_LT(std::fabs(c.error), 0.6) << c.id;
    sum += std::fabs(c.error);
  }
  EXPECT_LT(sum / rep->cases.size(), 0.15);
  // A release's row takes the profile that describes that release's preset,
  // not the repository's generic one.
  auto framework_of = [&](const std::string& id) {
    for (const auto& c : rep->cases) {
      if (c.id != id) continue;
      const std::string key = "training.framework=";  // "training.framework=NAME (the source's ...)"
      for (const auto& d : c.defaulted) {
        if (d.rfind(key, 0) == 0) return d.substr(key.size(), d.find(' ') - key.size());
      }
    }
    return std::string("(none)");
  };
  EXPECT_EQ(framework_of("arch-26.06-qwen3-30b-mxfp8-gb200-8-gbs512-mb4"), "megatron-bridge-26.08-qwen3-gb200-mxfp8");
  EXPECT_EQ(framework_of("arch-26.08-qwen3-235b-mxfp8-gb300-256-gbs8192-mb2"), "megatron-bridge-26.08-qwen3-gb300-mxfp8");
  EXPECT_EQ(framework_of("arch-26.04-qwen3-30b-mxfp8-gb200-8-gbs512-mb4"), "megatron-bridge-qwen3-30b-gb200-hybridep");
  EXPECT_EQ(framework_of("arch-26.02-deepseek-v3-mxfp8-gb300-256-gbs4096-mb2"), "megatron-bridge-26.02-deepseek-v3-gb300");
  EXPECT_EQ(framework_of("arch-26.04-gpt-oss-120b-bf16-gb200-64-gbs1280-mb4"), "megatron-bridge-26.04-gpt-oss-120b-gb200");
}

}  // namespace
}  // namespace trainsim
