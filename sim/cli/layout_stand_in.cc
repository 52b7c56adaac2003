#include "sim/cli/layout_stand_in.h"

#include <yaml-cpp/yaml.h>

#include <limits>
#include <utility>

#include "sim/io/json_writer.h"
#include "sim/io/profile_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/yaml_reader.h"

namespace trainsim::cli {

namespace {

// The overrides after `sets` that give a scenario the stand-in layout TP x PP
// x CP: no expert or interleaved split, data parallel over the rest, micro
// batch 1, the scenario's own stage split and sharding group cleared.
std::vector<std::string> StandInSets(const std::vector<std::string>& sets, int tensor, int pipeline, int context = 1) {
  std::vector<std::string> out = sets;
  for (const std::string& kv : {"parallelism.tensor=" + std::to_string(tensor), "parallelism.pipeline=" + std::to_string(pipeline),
                                "parallelism.context=" + std::to_string(context), std::string("parallelism.virtual_stages=1"),
                                std::string("parallelism.data=auto"), std::string("parallelism.expert=1"),
                                std::string("parallelism.expert_tensor=1"), std::string("parallelism.pipeline_layout=null"),
                                std::string("parallelism.first_stage_layers=null"), std::string("parallelism.last_stage_layers=null"),
                                std::string("parallelism.sharding_group=null"), std::string("training.micro_batch=1")}) {
    out.push_back(kv);
  }
  return out;
}

// The scenario with a stand-in layout that loads on its cluster (data
// parallel over all it can, tensor and pipeline the fewest that let data
// divide the batch), for a scenario whose own layout does not: the planner
// replaces the layout anyway. Also the layout as the file and --set give it,
// for the report. nullopt when no stand-in loads (then the model, cluster or
// batch is the error, not the layout).
std::optional<std::pair<Scenario, PlanConfig>> WithStandInLayout(const std::string& file, const std::vector<std::string>& sets) {
  YAML::Node p, t;  // the file's parallelism and training, --set applied
  try {
    YAML::Node root = LoadYamlFile(file);
    ApplyOverrides(root, sets);
    p = root["parallelism"];
    t = root["training"];
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const auto value = [](const YAML::Node& m, const char* key, int fallback) {
    try {
      return m.IsMap() && m[key].IsScalar() ? m[key].as<int>() : fallback;
    } catch (const YAML::Exception&) {
      return fallback;
    }
  };
  // Context parallelism last: the batch a huge cluster cannot divide by
  // TP x PP alone (131,072 GPUs, 128 sequences) it can with CP (the planner's up to 8).
  for (int context : {1, 2, 4, 8}) {
    for (int pipeline = 1; pipeline <= 64; ++pipeline) {
      for (int tensor : {1, 2, 4, 8}) {
        Expected<Scenario> s = LoadScenario(file, StandInSets(sets, tensor, pipeline, context));
        if (!s.ok()) continue;
        // The file's own layout over the stand-in's settings, which are the file's
        // for the rest (recompute, sharding, dispatcher); its data size, where auto,
        // what the GPUs give (0: they do not divide), its micro batch 0 where auto,
        // and its sequence parallelism the file's or the parser's default.
        PlanConfig own = ConfigOf(*s);
        own.tensor = value(p, "tensor", 1);
        own.pipeline = value(p, "pipeline", 1);
        own.virtual_stages = value(p, "virtual_stages", 1);
        own.context = value(p, "context", 1);
        own.expert = value(p, "expert", 1);
        own.expert_tensor = value(p, "expert_tensor", 1);
        own.micro_batch = value(t, "micro_batch", 0);
        const long ranks = long(own.tensor) * own.pipeline * own.context;
        own.data = value(p, "data", 0);
        if (own.data <= 0) own.data = ranks > 0 && s->gpus() % ranks == 0 ? int(s->gpus() / ranks) : 0;
        bool sequence_parallel = own.tensor > 1;
        try {
          if (p.IsMap() && p["sequence_parallel"].IsScalar()) sequence_parallel = p["sequence_parallel"].as<bool>();
        } catch (const YAML::Exception&) {
        }
        own.sequence_parallel = sequence_parallel && own.tensor > 1;
        return std::pair{std::move(*s), own};
      }
    }
  }
  return std::nullopt;
}

// Why no layout can run when even a stand-in cannot divide the batch: the
// cluster's GPUs are too many for the global batch (1,048,576 GPUs, batch 128: TP 8 x PP 64 x CP 8 leaves 256 ranks).
// The input is valid and asks for something impossible: exit 1 with the
// reason, as `size` words it. Empty when the scenario loads with the stand-in
// at a batch its GPUs divide (data parallel over all of them, micro batch 1):
// then only the layout is wrong; else something else (model, cluster) is, and
// its error stands.
std::string NoLayoutReason(const std::string& file, const std::vector<std::string>& sets) {
  int nodes = 0;
  NodeProfile node;
  long global_batch = 0;
  try {
    YAML::Node root = LoadYamlFile(file);
    ApplyOverrides(root, sets);
    const YAML::Node cluster = root["cluster"];
    nodes = cluster["nodes"].as<int>();
    node = LoadNodeProfile(cluster["node"], file, "cluster.node");
    global_batch = root["training"]["global_batch"].as<long>();
  } catch (const std::exception&) {
    return "";
  }
  const long gpus = long(nodes) * node.gpus_per_node;
  if (nodes <= 0 || gpus <= 0 || gpus > std::numeric_limits<int>::max()) return "";
  std::vector<std::string> stand_in = StandInSets(sets, 1, 1);
  stand_in.push_back("training.global_batch=" + std::to_string(gpus));
  const Expected<Scenario> s = LoadScenario(file, stand_in);
  if (!s.ok()) return "";
  return "no TP x PP x CP x DP of the " + std::to_string(s->gpus()) + " GPUs divides both the global batch " +
         std::to_string(global_batch) + " and the " + std::to_string(s->model.layers) + " layers";
}

}  // namespace

LayoutSearchInput LoadForLayoutSearch(const std::string& file, const std::vector<std::string>& sets) {
  LayoutSearchInput in{LoadScenario(file, sets), std::nullopt, ""};
  if (in.scenario || !in.scenario.error().layout) return in;
  if (auto stand_in = WithStandInLayout(file, sets)) {
    in.own_layout_rejection = PlanRejection{stand_in->second, "divisibility", in.scenario.error().ToString()};
    in.scenario = std::move(stand_in->first);
  } else if (const std::string why = NoLayoutReason(file, sets); !why.empty()) {
    in.no_layout_reason = why + " (" + in.scenario.error().ToString() + ")";
  }
  return in;
}

std::string SearchRefusalJson(const std::string& error, ErrorKind kind) {
  JsonWriter w;
  w.BeginObject().BeginArray("candidates").EndArray().Field("error_kind", ToString(kind)).Field("error", error).EndObject();
  return w.str() + "\n";
}

}  // namespace trainsim::cli
