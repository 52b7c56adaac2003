#include "sim/io/scenario_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>

#include "sim/core/split.h"
#include "sim/io/yaml_reader.h"
#include "sim/io/profile_loader.h"
#include "sim/io/model_loader.h"

namespace trainsim {

namespace {

// A copy of `n` whose nodes carry no mark (YAML::Clone keeps them).
YAML::Node WithoutMarks(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return YAML::Node(n.Scalar());
    case YAML::NodeType::Sequence: {
      YAML::Node out(YAML::NodeType::Sequence);
      for (const auto& v : n) out.push_back(WithoutMarks(v));
      return out;
    }
    case YAML::NodeType::Map: {
      YAML::Node out(YAML::NodeType::Map);
      for (auto it = n.begin(); it != n.end(); ++it) out[WithoutMarks(it->first)] = WithoutMarks(it->second);
      return out;
    }
    default: return YAML::Node(YAML::NodeType::Null);
  }
}

}  // namespace

void SetDottedKey(YAML::Node& root, const std::string& dotted, const std::string& value) {
  if (dotted.empty()) throw InputException(InputError{"--set", 0, "", "empty key in '=" + value + "'"});
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw InputException(InputError{"--set", 0, dotted, "cannot parse value '" + value + "': " + e.msg});
  }
  SetDottedKey(root, dotted, parsed);
}

void SetDottedKey(YAML::Node& root, const std::string& dotted, const YAML::Node& value) {
  if (dotted.empty()) throw InputException(InputError{"--set", 0, "", "empty key"});
  // A value from the command line carries no mark, so messages about it say
  // "--set" rather than a line of the value's own one-line document (a clone
  // of a list, map or null is rebuilt without them).
  YAML::Node parsed = WithoutMarks(value);
  const std::vector<std::string> parts = Split(dotted, '.');
  for (const std::string& part : parts) {
    if (part.empty()) throw InputException(InputError{"--set", 0, dotted, "empty path component"});
  }
  // A key of a catalogue model the scenario names (model: mixtral-8x7b):
  // the model's keys take its place, inline, and the --set changes one of
  // them. A model file is not rewritten: its keys are the file's to change.
  const YAML::Node& read = root;  // a const look-up adds no key
  // model.file names the model outright: it replaces a catalogue name or
  // inline keys (which a file's options form does not take), and keeps a
  // file form's options (moe, mtp_layers) as they are.
  if (parts.size() == 2 && parts[0] == "model" && parts[1] == "file" && read.IsMap() &&
      !(read["model"].IsMap() && read["model"]["file"].IsDefined())) {
    root["model"] = YAML::Node(YAML::NodeType::Map);
  }
  if (parts.size() > 1 && parts[0] == "model" && read.IsMap() && read["model"].IsScalar()) {
    const std::string name = read["model"].Scalar();
    YAML::Node keys = CatalogueModelKeys(name);
    if (keys.IsMap()) {
      root["model"] = WithoutMarks(keys);
    } else if (parts[1] == "moe" || parts[1] == "mtp_layers" || parts[1] == "accept_unknown_keys") {
      // A model file (a config.json) takes the run's choices in its options form.
      YAML::Node options(YAML::NodeType::Map);
      options["file"] = WithoutMarks(read["model"]);
      root["model"] = options;
    } else {
      throw InputException(InputError{"--set", 0, dotted,
                                      "model '" + name + "' is not a catalogue model: give its keys inline in the scenario to set one "
                                      "(a model file takes model.moe.capacity_factor, model.moe.pad_to_capacity, model.moe.forced_balance and model.mtp_layers)"});
    }
  }
  // yaml-cpp's operator[] on a non-const node rebinds references, so walk
  // with a copy of each child handle (they share the underlying memory).
  std::vector<YAML::Node> chain{root};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    if (!cur.IsMap() && !cur.IsNull() && cur.IsDefined()) {
      throw InputException(InputError{"--set", 0, dotted, "'" + parts[i - (i > 0)] + "' is not a mapping"});
    }
    YAML::Node next = cur[parts[i]];
    if (!next.IsDefined() || next.IsNull()) {
      cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = cur[parts[i]];
    } else if (!next.IsMap()) {
      throw InputException(InputError{"--set", 0, dotted, "'" + parts[i] + "' is not a mapping"});
    }
    chain.push_back(next);
  }
  YAML::Node parent = chain.back();
  parent[parts.back()] = parsed;
}

std::vector<Override> OverridesFrom(const std::string& flag, const std::vector<std::string>& assignments) {
  std::vector<Override> out;
  out.reserve(assignments.size());
  for (const std::string& a : assignments) out.push_back(Override{flag, a});
  return out;
}

namespace {

void ApplyFlaggedOverrides(YAML::Node& root, const std::vector<Override>& overrides) {
  if (overrides.empty()) return;
  if (!root.IsMap()) throw InputException(InputError{overrides.front().flag, 0, "", "the scenario is not a mapping of keys"});
  for (const auto& [flag, o] : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos) throw InputException(InputError{flag, 0, o, "expected KEY=VALUE"});
    // An empty value would read as null and drop the key: a slip, not a choice (=null says it).
    if (eq + 1 == o.size()) throw InputException(InputError{flag, 0, o.substr(0, eq), "no value after '=' (KEY=null removes the key)"});
    try {
      SetDottedKey(root, o.substr(0, eq), o.substr(eq + 1));
    } catch (const InputException& e) {
      InputError named = e.error();
      named.file = flag;
      throw InputException(named);
    }
  }
}

}  // namespace

void ApplyOverrides(YAML::Node& root, const std::vector<std::string>& overrides) {
  ApplyFlaggedOverrides(root, OverridesFrom("--set", overrides));
}

struct ProfileMemo::Tables {
  std::map<std::string, NodeProfile> node;
  std::map<std::string, FabricProfile> fabric;
  std::map<std::string, FrameworkProfile> framework;
  std::map<std::string, StorageProfile> storage;
  std::map<std::string, SiteProfile> site;
  std::map<std::string, ModelSpec> model;
};

ProfileMemo::ProfileMemo() : tables_(std::make_unique<Tables>()) {}
ProfileMemo::~ProfileMemo() = default;

struct ProfileMemoAccess {
  // `load()` (a profile loader on `ref` read from `from`), or its earlier
  // result for the same reference. A map (an inline profile or model) is not
  // a reference: it is parsed each time, with its own lines in errors.
  template <class T, class Load>
  static T Get(ProfileMemo* memo, std::map<std::string, T> ProfileMemo::Tables::*table, const YAML::Node& ref,
               const std::string& from, Load&& load) {
    if (!memo || !ref.IsScalar()) return load();
    return GetNamed(memo, table, ref.Scalar(), from, load);
  }
  // The same for a reference by name (a profile's default), without a node for it.
  template <class T, class Load>
  static T GetNamed(ProfileMemo* memo, std::map<std::string, T> ProfileMemo::Tables::*table, const std::string& name,
                    const std::string& from, Load&& load) {
    if (!memo) return load();
    // The key in a reused buffer: every point of a sweep looks up five or six.
    thread_local std::string id;
    id.assign(from).append(1, '\n').append(name);
    {
      std::lock_guard<std::mutex> lock(memo->mu_);
      const auto& t = (*memo->tables_).*table;
      if (auto it = t.find(id); it != t.end()) return it->second;
    }
    const std::string key = id;  // a miss (once per profile): kept before load() may look up others
    T v = load();  // throws for a bad reference: nothing is kept
    std::lock_guard<std::mutex> lock(memo->mu_);
    ((*memo->tables_).*table).emplace(key, v);
    return v;
  }
};

namespace {

std::string Str(long v) { return std::to_string(v); }

// The narrowest side of the projections LoRA adapts in `m`, and what it is:
// the hidden size, the attention's output width, a dense MLP's, the shared
// experts' or a routed expert's width (the MLPs the model has).
std::pair<long, std::string> NarrowestAdaptedWidth(const ModelSpec& m, const LoraTargets& t) {
  std::pair<long, std::string> narrowest{m.hidden, "the hidden size"};
  const auto take = [&](long width, const char* what) {
    if (width > 0 && width < narrowest.first) narrowest = {width, what};
  };
  if (t.proj) take(m.attention_out_dim(), "the attention's output width");
  if (t.qkv) take(long(m.heads) * m.head_dim() + 2L * m.kv_dim(), "the qkv projection's width");
  if (t.fc1 || t.fc2) {
    if (m.MoeLayers() < m.layers) take(m.ffn_hidden, "ffn_hidden");
    if (m.moe.enabled()) take(m.moe.ffn_hidden, "the experts' width moe_ffn_hidden");
    if (m.moe.enabled() && m.moe.shared_experts > 0) take(long(m.moe.shared_experts) * m.moe.ffn_hidden, "the shared experts' width");
  }
  return narrowest;
}

std::string Fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Bounds past any real value by orders of magnitude: a slip (1e30 for 30)
// would otherwise run, exit 0, as a step of 1e25 s or a run of $inf. Data: a
// token of a video or image stream is kilobytes, 1 MiB is not a token;
// failures: a century of hours; price: a million dollars a node-hour.
constexpr double kMaxBytesPerToken = 1 << 20, kMaxHours = 1e6, kMaxNodeHourUsd = 1e6;

double AtMostValue(YamlMap& m, const char* key, double v, double max) {
  if (v > max) m.Fail(key, "implausibly large: " + Fmt(v) + " (at most " + Fmt(max) + ")");
  return v;
}

// The values of the scenario's choice keys, made once (a sweep parses a scenario per point).
// training.attention: "auto" (the framework's kernel) or one of the kernels.
const std::vector<std::string>& AttentionChoices() {
  static const std::vector<std::string> choices = [] {
    std::vector<std::string> c = {"auto"};
    for (const auto& k : AttentionKernelNames()) c.push_back(k);
    return c;
  }();
  return choices;
}
const std::vector<std::string> kFinetuneChoices = {"full", "lora"};
const std::vector<std::string> kContentsChoices = {"full", "weights"};
const std::vector<std::string> kModeChoices = {"sync", "async"};
const std::vector<std::string> kCostChoices = {"rental", "ownership"};

// The common invalid settings (divisibility, sizes against the cluster) are
// returned rather than thrown: a sweep meets them at most of its points.
Expected<Scenario> Parse(const YAML::Node& root, const std::string& file, ProfileMemo* memo, const YamlOverlay* overlay) {
  using M = ProfileMemo::Tables;
  auto memoized = [memo](auto table, const YAML::Node& ref, const std::string& from, auto load) {
    return ProfileMemoAccess::Get(memo, table, ref, from, [&] { return load(ref, from); });
  };
  const char* kTopKeys = "a scenario must be a mapping of keys (name, cluster, model, parallelism, training)";
  if (!root.IsDefined() || root.IsNull()) throw InputException(InputError{file, 0, "", "empty scenario: " + std::string(kTopKeys)});
  if (!root.IsMap()) YamlMap::FailAt(root, file, "", kTopKeys);
  // A sweep file given where a scenario goes: say so, not "cluster: missing".
  if (root["axes"] && (root["base"] || root["zip"]) && !root["cluster"]) {
    YamlMap::FailAt(root["axes"], file, "axes",
                    "this is a sweep file (base and axes), not a scenario: run it with `trainsim sweep " + file +
                        " -o FILE.csv`, or give its base scenario");
  }
  YamlMap top(root, file, "", overlay);
  // Every section a scenario may have: "trainin" beside a missing training is its typo.
  top.DeclareKeys({"name", "cluster", "model", "training", "parallelism", "checkpoint", "data", "failures", "cost"});
  Scenario s;
  s.source_file = file;
  s.name = top.OptString("name").value_or("scenario");

  // cluster
  YamlMap c = top.Map("cluster");
  c.DeclareKeys({"node", "nodes", "nics_per_node", "nodes_per_nvlink_domain", "fabric", "storage", "storage_nodes"});
  // Missing keys are reported at their section's line in the file.
  if (!c.Has("node")) c.FailMissing("node", "missing required key (a node profile name or path)");
  s.node = memoized(&M::node, c.Raw("node"), file, [](const YAML::Node& r, const std::string& f) { return LoadNodeProfile(r, f, "cluster.node"); });
  s.nodes = c.PositiveInt("nodes");
  if (long(s.nodes) * s.node.gpus_per_node > kMaxGpus) {
    c.Fail("nodes", Str(s.nodes) + " nodes x " + Str(s.node.gpus_per_node) + " GPUs = " + Str(long(s.nodes) * s.node.gpus_per_node) +
                        " GPUs: more than the " + Str(kMaxGpus) + " GPUs trainsim simulates");
  }
  if (c.Has("nics_per_node")) {
    const int nics = c.PositiveInt("nics_per_node");
    if (!s.node.TakesNics(nics)) c.Fail("nics_per_node", s.node.TakesNicsText() + ", not " + Str(nics));
    s.node.nics_per_node = nics;
  }
  if (c.Has("nodes_per_nvlink_domain")) {
    const int domain_nodes = s.node.nvlink_domain_nodes();
    const int segment = c.PositiveInt("nodes_per_nvlink_domain");
    if (segment > domain_nodes) {
      c.Fail("nodes_per_nvlink_domain", "node '" + s.node.name + "' has " + Str(domain_nodes) + (domain_nodes == 1 ? " node" : " nodes") +
                                            " per NVLink domain, not " + Str(segment));
    }
    s.nodes_per_nvlink_domain = segment;
  }
  if (c.Has("fabric")) {
    s.fabric = memoized(&M::fabric, c.Raw("fabric"), file, [](const YAML::Node& r, const std::string& f) { return LoadFabricProfile(r, f, "cluster.fabric"); });
  } else if (!s.node.default_fabric.empty()) {
    s.fabric = memoized(&M::fabric, YAML::Node(s.node.default_fabric), s.node.source_file,
                        [](const YAML::Node& r, const std::string& f) { return LoadFabricProfile(r, f, "default_fabric"); });
  } else {
    c.FailMissing("fabric", "missing required key (a fabric profile name or path; node '" + s.node.name + "' has no default_fabric)");
  }
  if (c.Has("storage")) {
    s.storage = memoized(&M::storage, c.Raw("storage"), file, [](const YAML::Node& r, const std::string& f) { return LoadStorageProfile(r, f, "cluster.storage"); });
    // size --storage-nodes' bound: a storage cluster beyond any filer's scale is a typo.
    s.storage_nodes = static_cast<int>(AtMostValue(c, "storage_nodes", c.PositiveInt("storage_nodes", s.storage->default_nodes), 4096));
  } else if (c.Has("storage_nodes")) {
    c.Fail("storage_nodes", "set cluster.storage (a storage profile) to use storage nodes");
  }
  c.Finish();

  // model
  if (!top.Has("model")) top.FailMissing("model", "missing required key (a catalogue name, a file, or the model's keys)");
  const YAML::Node model_node = top.Raw("model");  // the point's own when a sweep overrides it
  s.model = memoized(&M::model, model_node, file, [](const YAML::Node& r, const std::string& f) { return ResolveModel(r, f, "model"); });
  if (model_node.IsMap()) s.model.name = s.model.name == "custom" ? s.name : s.model.name;

  // training (parsed before parallelism: data=auto and batch checks need it)
  YamlMap t = top.Map("training");
  s.training.seq_len = t.PositiveInt("seq_len");
  s.training.global_batch = t.PositiveInt("global_batch");
  // micro_batch: a number, or auto (also when not given): the fastest that
  // fits, chosen when the run is simulated (sim/run/micro_batch_choice.h).
  const YAML::Node micro_batch = t.Raw("micro_batch");
  s.training.micro_batch_auto = !micro_batch.IsDefined() || micro_batch.IsNull() || (micro_batch.IsScalar() && micro_batch.Scalar() == "auto");
  if (!s.training.micro_batch_auto && micro_batch.IsScalar() && !micro_batch.Scalar().empty() &&
      std::isalpha(static_cast<unsigned char>(micro_batch.Scalar().front()))) {
    t.Fail("micro_batch", "expected a positive whole number or auto, got '" + micro_batch.Scalar() + "'");
  }
  s.training.micro_batch = s.training.micro_batch_auto ? 1 : t.PositiveInt("micro_batch");
  s.training.steps = t.PositiveInt("steps", 1);
  if (t.Has("tokens")) {
    // Tokens to train decide the steps; steps given as well must agree.
    s.training.tokens = t.PositiveDouble("tokens");
    const double per_step = double(s.training.global_batch) * s.training.seq_len;
    const double steps = std::ceil(s.training.tokens / per_step);
    // As many steps as training.steps takes, no more.
    if (steps > kMostWholeNumber) {
      t.Fail("tokens", "implausibly large: " + Fmt(s.training.tokens) + " tokens at " + Fmt(per_step) + " per step are " + Fmt(steps) +
                           " steps (training.steps takes at most " + Fmt(kMostWholeNumber) + ")");
    }
    if (t.Has("steps") && s.training.steps != int(steps)) {
      t.Fail("steps", Str(s.training.steps) + " steps of " + Fmt(per_step) + " tokens disagree with training.tokens = " +
                          Fmt(s.training.tokens) + " (" + Str(long(steps)) + " steps); give one of them");
    }
    s.training.steps = int(steps);
  }
  {
    static const std::vector<std::string> kPrecisions = [] {
      int count = 0;
      const char* const* names = PrecisionNames(count);
      return std::vector<std::string>(names, names + count);
    }();
    if (const auto written = t.OptString("precision")) {
      if (const char* ours = PrecisionOfRecipeName(*written)) {
        t.Fail("precision", "'" + *written + "' is a framework's recipe name; trainsim's is " + ours);
      }
      // Edit distance would offer fp8 for it.
      if (*written == "fp4" || *written == "FP4") t.Fail("precision", "'" + *written + "': the 4-bit training format trainsim models is nvfp4");
    }
    const std::string prec = t.Choice("precision", kPrecisions, "bf16");
    ParsePrecision(prec, s.training.precision);
    if (!s.node.gpu.Supports(s.training.precision)) {
      // A precision the GPU has no tensor cores for is a run that cannot
      // happen (exit 1), not bad input: the same scenario runs on a newer node.
      try {
        t.Fail("precision", s.node.gpu.UnsupportedReason(s.training.precision));
      } catch (const InputException& e) {
        InputError err = e.error();
        err.kind = ErrorKind::kUnsupported;
        throw InputException(err);
      }
    }
  }
  {
    YAML::Node fw = t.Raw("framework");
    if (fw.IsDefined() && !fw.IsNull()) {
      s.framework = memoized(&M::framework, fw, file, [](const YAML::Node& r, const std::string& f) { return LoadFrameworkProfile(r, f, "training.framework"); });
      s.framework_given = true;
    } else {
      s.framework = ProfileMemoAccess::GetNamed(memo, &M::framework, s.node.framework, s.node.source_file,
                                                [&] { return LoadFrameworkProfile(YAML::Node(s.node.framework), s.node.source_file, "framework"); });
    }
    if (!s.framework.variants.of.empty()) {
      FrameworkProfile as_trained = s.framework.ForPrecision(s.training.precision);  // a copy: the variant lives in s.framework
      s.framework = std::move(as_trained);
    }
    const FrameworkProfile& f = s.framework;
    if (!s.model.moe.expert_bias) s.model.moe.expert_bias = f.moe_expert_bias;
    if (!s.model.activation_clamp) s.model.activation_clamp = Gated(s.model.activation) ? f.activation_clamp : 0.0;
    if (!s.model.mtp_layers) s.model.mtp_layers = f.mtp_layers;
    for (int sms : {f.nccl_overlap_sms, f.userbuffer_pipelined_sms, f.userbuffer_bulk_sms}) {
      if (sms >= s.node.gpu.sms) {
        t.Fail("framework", "framework '" + f.name + "' lets an overlapped collective hold " + std::to_string(sms) +
                                " SMs but " + s.node.gpu.name + " has " + std::to_string(s.node.gpu.sms));
      }
    }
  }
  s.training.recompute = RecomputeNamed(t.Choice("recompute", RecomputeNames(), ToString(s.framework.recompute)));
  if (YAML::Node mods = t.Raw("recompute_modules"); mods.IsDefined() && !mods.IsNull()) {
    if (s.training.recompute != Recompute::kSelective) t.Fail("recompute_modules", "needs recompute: selective (Megatron-Core's recompute_modules)");
    if (s.framework.selective_recompute_torchtitan_op) {
      t.Fail("recompute_modules", "framework " + s.framework.name +
                                      " recomputes by torchtitan's op policy (selective_recompute_policy), not Megatron-Core's modules");
    }
    s.training.recompute_modules = ParseRecomputeModules(mods, file, t.Path("recompute_modules"));
    // A module the model does not have would change nothing: asked for, it is a mistake.
    const unsigned moe_modules = kRecomputeMoe | kRecomputeMoeAct | kRecomputeSharedExperts;
    if ((s.training.recompute_modules & moe_modules) && !s.model.moe.enabled()) {
      t.Fail("recompute_modules", "moe, moe_act and shared_experts need a mixture-of-experts model (model.moe)");
    }
    if ((s.training.recompute_modules & kRecomputeMlaUpProj) && s.model.attention != AttentionKind::kMla) {
      t.Fail("recompute_modules", "mla_up_proj needs MLA attention (model.attention: mla)");
    }
    if ((s.training.recompute_modules & kRecomputeMlp) && s.model.MoeLayers() == s.model.layers) {
      t.Fail("recompute_modules", "mlp recomputes a dense layer's MLP, which this model has none of (every layer is MoE: moe, moe_act or shared_experts)");
    }
    if ((s.training.recompute_modules & kRecomputeSharedExperts) && s.model.moe.enabled() && s.model.moe.shared_experts == 0) {
      t.Fail("recompute_modules", "shared_experts needs shared experts (model.moe.shared_experts), which this model has none of");
    }
  } else if (s.training.recompute == Recompute::kSelective && s.framework.recompute_modules != 0) {
    s.training.recompute_modules = s.framework.recompute_modules;  // the recipe's selective recompute
  }
  if (t.Has("recompute_layers")) {
    // Absent means every layer; a written 0 would recompute none (Megatron's reading) yet say full.
    s.training.recompute_layers = t.PositiveInt("recompute_layers");
    if (s.training.recompute != Recompute::kFull) {
      t.Fail("recompute_layers", "needs recompute: full (Megatron-Core's recompute_num_layers with recompute_method block)");
    }
  } else if (s.training.recompute == Recompute::kFull) {
    s.training.recompute_layers = s.framework.recompute_layers;  // the recipe's
  }

  const bool offload_given = t.Has("activation_offload_layers");
  s.training.activation_offload_layers = t.NonNegativeInt("activation_offload_layers", 0);
  const std::string attn = t.Choice("attention", AttentionChoices(), "auto");
  s.training.attention = attn == "auto" ? s.framework.attention_kernel : AttentionKernelNamed(attn);
  if (s.training.attention == AttentionKernel::kFlash2 && s.node.gpu.attention_flash2_fwd_flops <= 0) {
    t.Fail("attention", "flash2 (the flash-attn 2 kernel) has no figures in GPU profile '" + s.node.gpu.name + "' (attention.flash2)" +
                            (attn == "auto" ? " and framework '" + s.framework.name + "' runs it" : ""));
  }
  s.training.dropout = t.Has("dropout") ? t.NonNegativeDouble("dropout") : s.framework.dropout;
  if (s.training.dropout >= 1) t.Fail("dropout", "must be below 1");
  if (auto ft = t.OptMap("finetune")) {
    Finetune& f = s.training.finetune;
    f.method = ft->Choice("method", kFinetuneChoices) == "lora" ? FinetuneMethod::kLora : FinetuneMethod::kFull;
    if (f.lora()) {
      f.rank = ft->PositiveInt("rank", Finetune{}.rank);
      f.alpha = ft->PositiveDouble("alpha", 2.0 * f.rank);
      YAML::Node targets = ft->Raw("target_modules");
      f.targets_from_framework = !targets.IsDefined() || targets.IsNull();
      f.targets = f.targets_from_framework ? s.framework.lora_targets : ParseLoraTargets(targets, file, ft->Path("target_modules"));
      // A rank beyond the narrower side of a projection is no low-rank update:
      // the product of the adapter's two matrices cannot reach it.
      const auto [width, what] = NarrowestAdaptedWidth(s.model, f.targets);
      if (f.rank > width) {
        ft->Fail("rank", "rank " + Str(f.rank) + " is more than " + what + " " + Str(width) +
                             ", the narrower side of a projection it adapts: no low-rank update reaches it");
      }
      f.dropout = ft->NonNegativeDouble("dropout", s.framework.lora_dropout);
      if (f.dropout >= 1) ft->Fail("dropout", "must be below 1");
    } else {
      for (const std::string& key : LoraOnlyKeys()) {
        if (ft->Has(key)) ft->Fail(key, "only method: lora takes " + key);
      }
    }
    ft->Finish();
  }

  // parallelism
  YamlMap p = top.Map("parallelism");
  Parallelism& par = s.parallelism;
  par.tensor = p.PositiveInt("tensor", 1);
  par.pipeline = p.PositiveInt("pipeline", 1);
  par.context = p.PositiveInt("context", 1);
  par.virtual_stages = p.PositiveInt("virtual_stages", 1);
  const long gpus = s.gpus();
  // Layout errors (InputError::layout): the values are well-formed but do not fit this cluster.
  const auto layout_error = [&](const char* key, const std::string& message) {
    InputError e = p.Error(key, message);
    e.layout = true;
    return e;
  };
  for (auto [key, v] : {std::pair{"tensor", par.tensor}, std::pair{"pipeline", par.pipeline}, std::pair{"context", par.context}}) {
    if (v > gpus) return layout_error(key, Str(v) + " is more than the cluster's " + Str(gpus) + " GPUs");
  }
  const long tpc = long(par.tensor) * par.pipeline * par.context;
  YAML::Node data = p.Raw("data");
  if (!data.IsDefined() || data.IsNull() || (data.IsScalar() && data.Scalar() == "auto")) {
    if (gpus % tpc != 0) {
      return layout_error(FactorNotDividing(par.tensor, par.pipeline, par.context, gpus), "tensor x pipeline x context = " + Str(tpc) + " does not divide the " + Str(gpus) + " GPUs");
    }
    par.data = int(gpus / tpc);
  } else {
    par.data = p.PositiveInt("data");
    if (tpc * par.data != gpus) {
      return layout_error("data", "tensor x pipeline x context x data = " + Str(tpc * par.data) + " but the cluster has " + Str(gpus) + " GPUs");
    }
  }
  const FrameworkProfile& fw = s.framework;
  par.expert = p.PositiveInt("expert", 1);
  par.expert_tensor = p.PositiveInt("expert_tensor", fw.expert_tensor_follows_tensor && s.model.moe.enabled() ? par.tensor : 1);
  par.sequence_parallel = p.Bool("sequence_parallel", fw.sequence_parallel && par.tensor > 1);
  par.distributed_optimizer = p.Bool("distributed_optimizer", fw.distributed_optimizer);
  // distributed_optimizer given alone means what it meant before data_sharding.
  par.data_sharding = p.Has("distributed_optimizer") ? (par.distributed_optimizer ? DataSharding::kOptimizer : DataSharding::kNone)
                                                     : fw.data_sharding;
  if (p.Has("data_sharding")) {
    // design.md 3b: given, it replaces distributed_optimizer; both given must agree.
    // The names users know the modes by say which value they mean.
    static const std::pair<const char*, const char*> kKnownAs[] = {{"fsdp", "full"},       {"zero3", "full"},      {"zero-3", "full"},
                                                                   {"zero2", "gradients"}, {"zero-2", "gradients"}, {"zero1", "optimizer"},
                                                                   {"zero-1", "optimizer"}, {"ddp", "none"}};
    if (const std::optional<std::string> given = p.OptString("data_sharding")) {
      std::string lower = *given;
      for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
      for (const auto& [alias, mode] : kKnownAs) {
        if (lower == alias) p.Fail("data_sharding", "'" + *given + "' is not one of: none, optimizer, gradients, full (" + *given + " is '" + mode + "')");
      }
    }
    const std::string ds = p.Choice("data_sharding", DataShardingNames());
    par.data_sharding = DataShardingNamed(ds);
    const bool sharded = par.data_sharding != DataSharding::kNone;
    if (p.Has("distributed_optimizer") && par.distributed_optimizer != sharded) {
      p.Fail("data_sharding", "data_sharding: " + ds + " disagrees with distributed_optimizer: " +
                                  (par.distributed_optimizer ? "true" : "false") + "; give one of them");
    }
    par.distributed_optimizer = sharded;
  }
  par.sharding_group = p.PositiveInt("sharding_group", 0);  // 0: the whole data x context group
  par.overlap_grad_reduce = p.Bool("overlap_grad_reduce", fw.overlap_grad_reduce);
  par.overlap_param_gather = p.Bool("overlap_param_gather", fw.overlap_param_gather);
  par.tp_comm_overlap = p.Bool("tp_comm_overlap", fw.tp_comm_overlap && par.tp_comm_overlappable());
  par.overlap_p2p = p.Bool("overlap_p2p", fw.overlap_p2p);
  par.moe_a2a_overlap = p.Bool("moe_a2a_overlap", fw.moe_a2a_overlap);
  par.moe_dispatcher = MoeDispatcherNamed(p.Choice("moe_dispatcher", MoeDispatcherNames(), ToString(fw.moe_dispatcher)));
  // A dense model has no tokens to dispatch: the key would change nothing.
  for (const char* key : {"moe_dispatcher", "moe_a2a_overlap"}) {
    if (p.Has(key) && !s.model.moe.enabled()) p.Fail(key, std::string(key) + " needs a mixture-of-experts model (model.moe)");
  }
  par.grad_reduce_bytes = fw.grad_reduce_bytes;
  // 0 stands for "not given": an explicit 0 would read as a stage without layers.
  par.first_stage_layers = p.PositiveInt("first_stage_layers", 0);
  par.last_stage_layers = p.PositiveInt("last_stage_layers", 0);
  par.embedding_in_pipeline_split = p.Bool("embedding_in_pipeline_split", false);
  par.loss_in_pipeline_split = p.Bool("loss_in_pipeline_split", false);
  par.pipeline_layout = p.OptString("pipeline_layout").value_or("");

  if (par.sequence_parallel && par.tensor == 1) par.sequence_parallel = false;  // nothing to split
  if (auto e = CheckParallelism(s)) {
    // Place the error at the key in the file (or at its section when the key
    // took a default), a key of a training subsection (training.finetune.x) in it.
    const std::string key = e->key.substr(e->key.find('.') + 1);
    const bool training = e->key.rfind("training.", 0) == 0;
    const size_t dot = key.find('.');
    const std::optional<YamlMap> section = training && dot != std::string::npos ? t.OptMap(key.substr(0, dot)) : std::nullopt;
    InputError placed = section ? section->Error(key.substr(dot + 1), e->message) : training ? t.Error(key, e->message) : p.Error(key, e->message);
    placed.kind = e->kind;  // a setting the software cannot run stays exit 1
    placed.layout = e->layout;
    return placed;
  }
  p.Finish();
  t.Finish();

  if (auto ck = top.OptMap("checkpoint")) {
    s.checkpoint.every_steps = ck->NonNegativeInt("every_steps", 0);
    s.checkpoint.contents = ck->Choice("contents", kContentsChoices, "full") == "weights" ? CheckpointContents::kWeights : CheckpointContents::kFull;
    s.checkpoint.mode = ck->Choice("mode", kModeChoices, "sync") == "async" ? CheckpointMode::kAsync : CheckpointMode::kSync;
    if (s.checkpoint.every_steps > 0 && !s.storage) ck->Fail("every_steps", "checkpoints need cluster.storage");
    ck->Finish();
  }
  if (auto d = top.OptMap("data")) {
    // The token loader reads from the storage: without one the data is taken as local and never
    // stalls a step, so the key would change nothing (as a checkpoint would write nowhere).
    if (d->Has("bytes_per_token") && !s.storage) d->Fail("bytes_per_token", "the token loader reads from cluster.storage, which this scenario has none of");
    s.data.bytes_per_token = AtMostValue(*d, "bytes_per_token", d->PositiveDouble("bytes_per_token", 4), kMaxBytesPerToken);
    d->Finish();
  }
  if (auto f = top.OptMap("failures")) {
    s.failures.node_mtbf_hours = AtMostValue(*f, "node_mtbf_hours", f->NonNegativeDouble("node_mtbf_hours", 0), kMaxHours);
    s.failures.restart_s = AtMostValue(*f, "restart_minutes", f->NonNegativeDouble("restart_minutes", 10), kMaxHours * 60) * 60;
    s.failures.repair_hours = AtMostValue(*f, "repair_hours", f->NonNegativeDouble("repair_hours", 24), kMaxHours);
    // Below 1: no number of spares is certain.
    s.failures.spare_probability = f->BoundedDouble("spare_probability", 0.99, [](double x) { return x > 0 && x < 1; },
                                                    "must be a fraction in (0, 1): no number of spares is certain");
    f->Finish();
  }
  if (auto co = top.OptMap("cost")) {
    s.cost.model = co->Choice("model", kCostChoices, "rental") == "ownership" ? CostBasis::kOwnership : CostBasis::kRental;
    if (s.cost.model == CostBasis::kOwnership) {
      // The site's PUE, energy price and write-off years; the default site is a profile too.
      YAML::Node site = co->Raw("site");
      const YAML::Node site_ref = site.IsDefined() && !site.IsNull() ? site : YAML::Node("us-colocation");
      s.cost.site = memoized(&M::site, site_ref, file, [](const YAML::Node& r, const std::string& f) { return LoadSiteProfile(r, f, "cost.site"); });
      std::string missing;
      if (s.node.capital_usd <= 0) missing = "node '" + s.node.name + "' has no ownership.capital_usd";
      else if (s.nodes > 1 && (s.fabric.switch_capital_usd <= 0 || s.fabric.link_capital_usd <= 0))
        missing = "fabric '" + s.fabric.name + "' has no ownership.switch_usd and link_usd";
      else if (s.storage && s.storage->capital_usd <= 0) missing = "storage '" + s.storage->name + "' has no ownership.capital_usd";
      if (!missing.empty()) co->Fail("model", "ownership needs purchase prices: " + missing);
    } else if (co->Has("site")) {
      co->Fail("site", "a site (PUE, energy price, write-off years) prices only cost.model: ownership");
    }
    if (co->Has("node_hour_usd")) {
      s.cost.node_hour_usd = AtMostValue(*co, "node_hour_usd", co->NonNegativeDouble("node_hour_usd"), kMaxNodeHourUsd);
    }
    if (co->Has("storage_node_hour_usd")) {
      s.cost.storage_node_hour_usd =
          AtMostValue(*co, "storage_node_hour_usd", co->NonNegativeDouble("storage_node_hour_usd"), kMaxNodeHourUsd);
    }
    co->Finish();
  }
  // The recipe's activation offload where its rules let this run take it.
  if (const int n = s.framework.activation_offload_layers;
      !offload_given && n > 0 && n < s.model.layers && par.pipeline == 1 && s.training.recompute == Recompute::kNone) {
    s.training.activation_offload_layers = n;
  }
  top.Finish();
  return s;
}

}  // namespace

Expected<Scenario> ParseScenario(const YAML::Node& root, const std::string& file, ProfileMemo* memo, const YamlOverlay* overlay) {
  return CatchInputErrors<Scenario>(file, [&] { return Parse(root, file, memo, overlay); });
}

Expected<Scenario> LoadScenarioWithFlags(const std::string& file, const std::vector<Override>& overrides) {
  Expected<Scenario> r = CatchInputErrors<Scenario>(file, [&]() -> Expected<Scenario> {
    YAML::Node root = LoadYamlFile(file);
    ApplyFlaggedOverrides(root, overrides);
    return ParseScenario(root, file);
  });
  if (r.ok() || overrides.empty()) return r;
  InputError e = r.error();
  // Whether `o` set e.key, itself or a map holding it.
  const auto sets = [&](const Override& o) {
    const std::string key = o.assignment.substr(0, o.assignment.find('='));
    return !key.empty() && (e.key == key || e.key.rfind(key + ".", 0) == 0);
  };
  // A value an override wrote has no line: the parse names it "--set", which
  // is the flag of the last override of that key (the one that stuck).
  if (e.file == "--set") {
    const auto last = std::find_if(overrides.rbegin(), overrides.rend(), sets);
    if (last == overrides.rend() || last->flag == e.file) return r;
    e.file = last->flag;
    return e;
  }
  // A check across keys (divisibility, the stage split: CheckParallelism)
  // fails at one parallelism or training key of the file, which an override
  // may have made wrong without touching it: the message says which
  // overrides it was checked with.
  if (e.file != file) return r;
  if (e.key.rfind("parallelism.", 0) != 0 && e.key.rfind("training.", 0) != 0) return r;
  if (std::any_of(overrides.begin(), overrides.end(), sets)) return r;  // the key itself was set: placed at its flag already
  std::string given;
  for (const auto& [flag, o] : overrides) given += (given.empty() ? "" : " ") + flag + " " + o;
  if (given.size() > 160) given = given.substr(0, 157) + "...";
  e.message += " (with " + given + ")";
  return e;
}

Expected<Scenario> LoadScenario(const std::string& file, const std::vector<std::string>& overrides) {
  return LoadScenarioWithFlags(file, OverridesFrom("--set", overrides));
}

std::string ScenarioName(const std::string& file, const std::vector<std::string>& overrides) {
  try {
    YAML::Node root = YAML::LoadFile(file);
    ApplyOverrides(root, overrides);
    if (root.IsMap() && root["name"].IsScalar()) return root["name"].Scalar();
  } catch (const std::exception&) {
  }
  return "scenario";
}

std::string FrameworkPrecisionWarning(const Scenario& s) {
  const std::vector<std::string>& has = s.framework.precisions;
  const std::string precision = ToString(s.training.precision);
  if (has.empty() || std::find(has.begin(), has.end(), precision) != has.end()) return "";
  std::string list;
  for (const std::string& p : has) list += (list.empty() ? "" : ", ") + p;
  return "warning: framework " + s.framework.name + (s.framework_given ? "" : " (" + s.node.name + "'s default)") + " has no " +
         precision + " recipe (its precisions: " + list + "); the run takes that stack's kernels, casts and overlaps in " + precision +
         ": name one that trains in it (training.framework)";
}

std::vector<std::string> WarningTexts(const std::vector<std::string>& warnings) {
  std::vector<std::string> texts;
  for (const std::string& w : warnings) texts.push_back(std::string_view(w).starts_with("warning: ") ? w.substr(9) : w);
  return texts;
}

std::vector<std::string> ScenarioWarnings(const Scenario& s) {
  std::vector<std::string> all;
  for (std::string w : {ModelFileWarning(s.model), FrameworkPrecisionWarning(s)}) {
    if (!w.empty()) all.push_back(std::move(w));
  }
  // The default fill of rack-scale NVLink domains (equal segments, as
  // Megatron-Bridge's Slurm --segment) can split tensor-parallel groups over
  // the NICs where filling the domains in turn keeps them on NVLink.
  if (const int domain = s.node.nvlink_domain_nodes(); domain > 1 && s.nodes_per_nvlink_domain == 0 &&
                                                       s.parallelism.tensor > 1 && !s.layout().Span(CommGroup::kTensor).on_nvlink()) {
    Scenario filled = s;
    filled.nodes_per_nvlink_domain = std::min(domain, s.nodes);
    if (filled.layout().Span(CommGroup::kTensor).on_nvlink()) {
      all.push_back("warning: NVLink domains " + s.nvlink_domains_text() + ": the tensor-parallel groups cross them over the NICs; "
                    "cluster.nodes_per_nvlink_domain: " + std::to_string(filled.nodes_per_nvlink_domain) +
                    " fills the domains in turn and keeps them on NVLink");
    }
  }
  // NICs slower than the fabric's links run the links at their own rate: the
  // faster switches and links are paid for (ownership capital) and unused.
  if (s.nodes > 1 && s.fabric.link_bytes_per_s > 0 && s.node.nic_bytes_per_s < 0.99 * s.fabric.link_bytes_per_s) {
    all.push_back("warning: node " + s.node.name + "'s NICs (" + Fmt(s.node.nic_bytes_per_s * 8 / 1e9) + " Gb/s) are slower than fabric " +
                  s.fabric.name + "'s links (" + Fmt(s.fabric.link_bytes_per_s * 8 / 1e9) +
                  " Gb/s): the links run at the NICs' rate, and the capital counts the faster switches and links");
  }
  // And the other way: 800G ConnectX-8 on a 400G fabric run at the fabric's rate, their price paid and unused.
  if (s.nodes > 1 && s.fabric.link_bytes_per_s > 0 && s.fabric.link_bytes_per_s < 0.99 * s.node.nic_bytes_per_s) {
    all.push_back("warning: node " + s.node.name + "'s NICs (" + Fmt(s.node.nic_bytes_per_s * 8 / 1e9) + " Gb/s) are faster than fabric " +
                  s.fabric.name + "'s links (" + Fmt(s.fabric.link_bytes_per_s * 8 / 1e9) +
                  " Gb/s): they run at the fabric's rate (a faster fabric: cluster.fabric)");
  }
  // Positions past the checkpoint's trained context: a long-context stage
  // trains there on purpose, a typo in seq_len does not.
  if (const int trained = s.model.max_position_embeddings; trained > 0 && s.training.seq_len > trained) {
    all.push_back("warning: training.seq_len " + std::to_string(s.training.seq_len) + " is past model " + s.model.name +
                  "'s max_position_embeddings " + std::to_string(trained) +
                  " (its config.json): simulated as given; its positions beyond that were not trained (a long-context stage "
                  "extends them with RoPE scaling)");
  }
  // A capacity below one token copy per expert slot drops routed tokens on
  // purpose: a cheaper step that trains on less than the tokens it counts.
  if (const double cf = s.model.moe.capacity_factor; s.model.moe.enabled() && cf > 0 && cf < 1) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f%%", 100 * (1 - cf));
    all.push_back("warning: model.moe.capacity_factor " + Fmt(cf) + " drops at least " + pct +
                  " of the routed token copies: the step does that much less expert work than a dropless run of the same tokens");
  }
  // Rental prices an owned cluster's cost leaves out: said, not silently dropped.
  if (s.cost.model == CostBasis::kOwnership && (s.cost.node_hour_usd >= 0 || s.cost.storage_node_hour_usd >= 0)) {
    all.push_back(std::string("warning: cost.") + (s.cost.node_hour_usd >= 0 ? "node_hour_usd" : "storage_node_hour_usd") +
                  " is a rental price; cost.model: ownership prices the purchase and the energy (cost.site) and leaves it out");
  }
  // A pre-training run that restarts from weights alone restarts its
  // optimizer (Adam's moments, fp32 master copy): goodput is then counted for
  // a run that usually cannot go on as if nothing happened.
  if (s.checkpoint.every_steps > 0 && s.checkpoint.contents == CheckpointContents::kWeights &&
      s.training.finetune.method == FinetuneMethod::kNone && s.failures.node_mtbf_hours > 0) {
    all.push_back("warning: checkpoint.contents: weights in pre-training: each restart after a failure loads no optimizer state "
                  "(fp32 master weights, Adam moments), which a pre-training run usually cannot do without a loss spike; "
                  "the goodput assumes it can (contents: full saves and restores them)");
  }
  return all;
}

}  // namespace trainsim
