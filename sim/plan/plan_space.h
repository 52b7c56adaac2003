// The planner's search space as data: one entry per searched setting, saying
// how it reads and writes a PlanConfig and a Scenario, how it is shown and
// written to JSON, and which values the search tries given the settings
// before it. Describe, ConfigOf, ApplyConfig, the plan table and the JSON all
// walk this one list, so a new dimension (EP, data sharding) is one entry.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/core/scenario.h"

namespace trainsim {

struct PlanConfig;
struct PlanOptions;

// What the values of a dimension may depend on.
struct SearchContext {
  const Scenario* base = nullptr;
  const PlanOptions* options = nullptr;
  int gpus = 1;
};

enum class PlanValueKind { kCount, kSwitch, kRecompute, kSharding, kDispatcher };

struct PlanDimension {
  std::string label;    // in Describe and the plan table: "TP", "mb", "SP"
  std::string section;  // scenario section: "parallelism" or "training"
  std::string key;      // key in the section: "tensor"
  PlanValueKind kind = PlanValueKind::kCount;
  int width = 3;        // column width in the plan table
  std::function<int(const PlanConfig&)> get;
  std::function<void(PlanConfig&, int)> set;
  std::function<int(const Scenario&)> read;
  std::function<void(Scenario&, int)> write;
  // The values to try given the dimensions before this one (already set in
  // `so_far`); empty function: derived, not searched (data parallelism).
  std::function<std::vector<int>(const PlanConfig& so_far, const SearchContext&)> values;
  // Only a mixture of experts has it (EP, ETP): left out of descriptions at 1
  // and out of dense models' tables and JSON.
  bool moe_only = false;
};

// The dimensions in search order: TP, PP, VP, CP, DP (derived), EP, ETP, the
// MoE dispatcher and its all-to-all overlap, micro batch, recompute, sequence
// parallel, data sharding.
const std::vector<PlanDimension>& PlanDimensions();

// A value as the plan table shows it ("on", "selective", "8") and as JSON. A
// count of 0 is one not derived (the data size of a layout its GPUs do not
// divide): "?" and null.
std::string ShowValue(const PlanDimension& d, int v);
std::string JsonValue(const PlanDimension& d, int v);

}  // namespace trainsim
