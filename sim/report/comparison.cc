#include "sim/report/comparison.h"

#include <cstdio>
#include <sstream>

#include "sim/io/json_writer.h"

namespace trainsim {

std::vector<ComparisonRow> CompareResults(const SimulationResult& a, const SimulationResult& b) {
  auto row = [](const char* f, const char* u, double x, double y) { return ComparisonRow{f, u, x, y}; };
  return {
      row("gpus", "", a.gpus, b.gpus),
      row("step_time_s", "s", a.step_time_s, b.step_time_s),
      row("breakdown_s.compute", "s", a.breakdown.compute_s, b.breakdown.compute_s),
      row("breakdown_s.exposed_communication", "s", a.breakdown.exposed_communication_s, b.breakdown.exposed_communication_s),
      row("breakdown_s.pipeline_bubble", "s", a.breakdown.pipeline_bubble_s, b.breakdown.pipeline_bubble_s),
      row("breakdown_s.optimizer", "s", a.breakdown.optimizer_s, b.breakdown.optimizer_s),
      row("breakdown_s.data_stall", "s", a.breakdown.data_stall_s, b.breakdown.data_stall_s),
      row("tokens_per_s_per_gpu", "tok/s", a.tokens_per_s_per_gpu, b.tokens_per_s_per_gpu),
      row("mfu", "", a.mfu, b.mfu),
      row("memory.peak_gib_per_gpu", "GiB", a.memory.peak_gib_per_gpu, b.memory.peak_gib_per_gpu),
      row("run.checkpoint_write_s", "s", a.run.checkpoint_write_s, b.run.checkpoint_write_s),
      row("run.checkpoint_overhead_s", "s", a.run.checkpoint_overhead_s, b.run.checkpoint_overhead_s),
      row("run.goodput", "", a.run.goodput, b.run.goodput),
      row("run.time_to_train_s", "s", a.run.time_to_train_s, b.run.time_to_train_s),
      row("run.energy_kwh", "kWh", a.run.energy_kwh, b.run.energy_kwh),
      row("run.cost_usd", "USD", a.run.cost_usd, b.run.cost_usd),
      row("run.cost_per_billion_tokens_usd", "USD", a.run.cost_per_billion_tokens_usd, b.run.cost_per_billion_tokens_usd),
  };
}

std::string ComparisonTable(const SimulationResult& a, const SimulationResult& b) {
  std::ostringstream o;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-36s %16s %16s %14s %9s\n", "field", ("A: " + a.name).substr(0, 16).c_str(),
                ("B: " + b.name).substr(0, 16).c_str(), "B - A", "B vs A");
  o << buf;
  for (const auto& r : CompareResults(a, b)) {
    std::snprintf(buf, sizeof buf, "%-36s %16.4g %16.4g %+14.4g %+8.1f%%\n", (r.field + (r.unit.empty() ? "" : " [" + r.unit + "]")).c_str(),
                  r.a, r.b, r.delta(), 100 * r.relative());
    o << buf;
  }
  if (!a.error.empty()) o << "A: " << a.error << "\n";
  if (!b.error.empty()) o << "B: " << b.error << "\n";
  const double dt = b.run.time_to_train_s - a.run.time_to_train_s;
  const double dc = b.run.cost_usd - a.run.cost_usd;
  std::snprintf(buf, sizeof buf, "B %s the run %.1f%% %s (%+.2f h) and %s $%.0f (%+.1f%%).\n", dt <= 0 ? "finishes" : "takes",
                100 * std::abs(dt) / (a.run.time_to_train_s > 0 ? a.run.time_to_train_s : 1), dt <= 0 ? "sooner" : "longer",
                dt / 3600, dc <= 0 ? "saves" : "costs", std::abs(dc),
                100 * dc / (a.run.cost_usd > 0 ? a.run.cost_usd : 1));
  o << buf;
  return o.str();
}

std::string ComparisonJson(const SimulationResult& a, const SimulationResult& b) {
  JsonWriter w;
  w.BeginObject().Field("a", a.name).Field("b", b.name).BeginArray("fields");
  for (const auto& r : CompareResults(a, b)) {
    w.BeginObject().Field("field", r.field).Field("a", r.a).Field("b", r.b).Field("delta", r.delta()).Field("relative", r.relative()).EndObject();
  }
  w.EndArray().EndObject();
  return w.str() + "\n";
}

}  // namespace trainsim
