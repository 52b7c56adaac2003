#include "sim/io/result_writer.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "sim/io/json_writer.h"

namespace trainsim {

std::string ToJson(const SimulationResult& r, bool pretty) {
  JsonWriter w(pretty);
  w.BeginObject();
  w.Field("name", r.name).Field("gpus", r.gpus).Field("fidelity", r.fidelity);
  w.Field("feasible", r.feasible());
  if (!r.error.empty()) w.Field("error", r.error).Field("error_kind", ToString(r.error_kind));
  w.Field("step_time_s", r.step_time_s)
      .Field("tokens_per_s_per_gpu", r.tokens_per_s_per_gpu)
      .Field("model_tflops_per_gpu", r.model_tflops_per_gpu)
      .Field("mfu", r.mfu);
  w.BeginObject("breakdown_s")
      .Field("compute", r.breakdown.compute_s)
      .Field("exposed_communication", r.breakdown.exposed_communication_s)
      .Field("pipeline_bubble", r.breakdown.pipeline_bubble_s)
      .Field("optimizer", r.breakdown.optimizer_s)
      .Field("data_stall", r.breakdown.data_stall_s)
      .EndObject();
  w.BeginObject("memory")
      .Field("fits", r.memory.fits)
      .Field("peak_gib_per_gpu", r.memory.peak_gib_per_gpu)
      .Field("weights_gib", r.memory.weights_gib)
      .Field("gradients_gib", r.memory.gradients_gib)
      .Field("optimizer_gib", r.memory.optimizer_gib)
      .Field("activations_gib", r.memory.activations_gib)
      .Field("workspace_gib", r.memory.workspace_gib)
      .Field("capacity_gib", r.memory.capacity_gib);
  if (!r.memory.reason.empty()) w.Field("reason", r.memory.reason);
  w.EndObject();
  w.BeginObject("run")
      .Field("steps", r.run.steps)
      .Field("time_to_train_s", r.run.time_to_train_s)
      .Field("checkpoint_bytes", r.run.checkpoint_bytes)
      .Field("checkpoint_write_s", r.run.checkpoint_write_s)
      .Field("checkpoint_overhead_s", r.run.checkpoint_overhead_s)
      .Field("expected_failures", r.run.expected_failures)
      .Field("goodput", r.run.goodput)
      .Field("best_checkpoint_interval_s", r.run.best_checkpoint_interval_s)
      .Field("energy_kwh", r.run.energy_kwh)
      .Field("cost_usd", r.run.cost_usd)
      .Field("tokens", r.run.tokens)
      .Field("checkpoints", r.run.checkpoints)
      .Field("checkpoint_stall_s", r.run.checkpoint_stall_s)
      .Field("chosen_checkpoint_interval_s", r.run.chosen_checkpoint_interval_s)
      .Field("restore_s", r.run.restore_s)
      .Field("lost_work_s", r.run.lost_work_s)
      .Field("cost_per_billion_tokens_usd", r.run.cost_per_billion_tokens_usd)
      .Field("cost_model", r.run.cost_model)
      .Field("capital_usd", r.run.capital_usd)
      .Field("hot_spares", r.run.hot_spares)
      .EndObject();
  if (!r.pipeline_layers.empty()) {
    w.BeginObject("pipeline").Field("layers", r.pipeline_layers).Field("split", r.pipeline_split).EndObject();
  }
  w.EndObject();
  return w.str() + "\n";
}

std::vector<std::string> FlatResultKeys() {
  return {"name", "gpus", "fidelity", "step_time_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu",
          "breakdown_s.compute", "breakdown_s.exposed_communication", "breakdown_s.pipeline_bubble",
          "breakdown_s.optimizer", "breakdown_s.data_stall", "memory.fits", "memory.peak_gib_per_gpu",
          "memory.weights_gib", "memory.gradients_gib", "memory.optimizer_gib", "memory.activations_gib",
          "run.steps", "run.time_to_train_s", "run.checkpoint_bytes", "run.checkpoint_write_s",
          "run.checkpoint_overhead_s", "run.expected_failures", "run.goodput", "run.best_checkpoint_interval_s",
          "run.energy_kwh", "run.cost_usd", "run.cost_per_billion_tokens_usd"};
}

std::vector<std::string> FlatResultValues(const SimulationResult& r) {
  auto n = [](double v) { return JsonWriter::Number(v); };
  return {r.name, std::to_string(r.gpus), r.fidelity, n(r.step_time_s), n(r.tokens_per_s_per_gpu),
          n(r.model_tflops_per_gpu), n(r.mfu), n(r.breakdown.compute_s), n(r.breakdown.exposed_communication_s),
          n(r.breakdown.pipeline_bubble_s), n(r.breakdown.optimizer_s), n(r.breakdown.data_stall_s),
          r.memory.fits ? "true" : "false", n(r.memory.peak_gib_per_gpu), n(r.memory.weights_gib),
          n(r.memory.gradients_gib), n(r.memory.optimizer_gib), n(r.memory.activations_gib),
          std::to_string(r.run.steps), n(r.run.time_to_train_s), n(r.run.checkpoint_bytes),
          n(r.run.checkpoint_write_s), n(r.run.checkpoint_overhead_s), n(r.run.expected_failures),
          n(r.run.goodput), n(r.run.best_checkpoint_interval_s), n(r.run.energy_kwh), n(r.run.cost_usd),
          n(r.run.cost_per_billion_tokens_usd)};
}

std::string ToChromeTrace(const SimulationResult& r) {
  // One "thread" per track, in order of first appearance; times in microseconds.
  std::map<std::string, int> tid;
  std::vector<std::string> order;
  for (const auto& e : r.timeline) {
    if (!tid.count(e.track)) {
      tid[e.track] = static_cast<int>(order.size()) + 1;
      order.push_back(e.track);
    }
  }
  JsonWriter w(false);
  w.BeginObject().BeginArray("traceEvents");
  for (const auto& t : order) {
    w.BeginObject().Field("name", "thread_name").Field("ph", "M").Field("pid", 1).Field("tid", tid[t]);
    w.BeginObject("args").Field("name", t).EndObject().EndObject();
  }
  for (const auto& e : r.timeline) {
    w.BeginObject()
        .Field("name", e.name)
        .Field("ph", "X")
        .Field("pid", 1)
        .Field("tid", tid[e.track])
        .Field("ts", e.start_s * 1e6)
        .Field("dur", e.duration_s * 1e6)
        .EndObject();
  }
  w.EndArray().Field("displayTimeUnit", "ms").EndObject();
  return w.str() + "\n";
}

namespace {

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string Duration(double s) {
  if (s < 120) return Fmt("%.3f s", s);
  if (s < 7200) return Fmt("%.1f min", s / 60);
  if (s < 3 * 86400) return Fmt("%.2f h", s / 3600);
  return Fmt("%.2f days", s / 86400);
}

}  // namespace

std::string ToSummary(const SimulationResult& r) {
  std::ostringstream o;
  o << r.name << " (" << r.gpus << " GPUs, " << r.fidelity << ")\n";
  if (!r.error.empty()) o << "  ERROR: " << r.error << "\n";
  const double st = r.step_time_s > 0 ? r.step_time_s : 1;
  auto pct = [&](double v) { return Fmt("%5.1f%%", 100 * v / st); };
  o << "  step time            " << Fmt("%.4f s", r.step_time_s) << "\n";
  o << "    compute            " << Fmt("%.4f s", r.breakdown.compute_s) << "  " << pct(r.breakdown.compute_s) << "\n";
  o << "    exposed comm       " << Fmt("%.4f s", r.breakdown.exposed_communication_s) << "  " << pct(r.breakdown.exposed_communication_s) << "\n";
  o << "    pipeline bubble    " << Fmt("%.4f s", r.breakdown.pipeline_bubble_s) << "  " << pct(r.breakdown.pipeline_bubble_s) << "\n";
  o << "    optimizer          " << Fmt("%.4f s", r.breakdown.optimizer_s) << "  " << pct(r.breakdown.optimizer_s) << "\n";
  o << "    data stall         " << Fmt("%.4f s", r.breakdown.data_stall_s) << "  " << pct(r.breakdown.data_stall_s) << "\n";
  if (r.pipeline_split != "even" && !r.pipeline_split.empty()) {
    o << "  pipeline stages      " << r.pipeline_layers << " layers per stage (" << r.pipeline_split << ")\n";
  }
  o << "  throughput           " << Fmt("%.0f tokens/s/GPU", r.tokens_per_s_per_gpu) << ", "
    << Fmt("%.1f model TFLOP/s/GPU", r.model_tflops_per_gpu) << ", MFU " << Fmt("%.1f%%", 100 * r.mfu) << "\n";
  o << "  memory per GPU       " << Fmt("%.1f GiB", r.memory.peak_gib_per_gpu) << " of " << Fmt("%.1f GiB", r.memory.capacity_gib)
    << (r.memory.fits ? "" : "  DOES NOT FIT") << "\n";
  o << "    weights " << Fmt("%.1f", r.memory.weights_gib) << ", gradients " << Fmt("%.1f", r.memory.gradients_gib)
    << ", optimizer " << Fmt("%.1f", r.memory.optimizer_gib) << ", activations " << Fmt("%.1f", r.memory.activations_gib)
    << ", workspace " << Fmt("%.1f", r.memory.workspace_gib) << " GiB\n";
  if (!r.memory.reason.empty()) o << "    " << r.memory.reason << "\n";
  o << "  run                  " << r.run.steps << " steps, " << Fmt("%.3g", r.run.tokens) << " tokens, "
    << Duration(r.run.time_to_train_s) << "\n";
  if (r.run.checkpoint_bytes > 0) {
    o << "  checkpoint           " << Fmt("%.1f GiB", r.run.checkpoint_bytes / (1024.0 * 1024 * 1024)) << ", write "
      << Duration(r.run.checkpoint_write_s) << ", stall " << Duration(r.run.checkpoint_stall_s) << " each, "
      << r.run.checkpoints << " in the run, overhead " << Duration(r.run.checkpoint_overhead_s) << "\n";
  }
  if (r.run.expected_failures > 0) {
    o << "  failures             " << Fmt("%.3g expected", r.run.expected_failures) << ", goodput "
      << Fmt("%.1f%%", 100 * r.run.goodput) << ", best checkpoint interval " << Duration(r.run.best_checkpoint_interval_s)
      << " (chosen " << Duration(r.run.chosen_checkpoint_interval_s) << "), " << r.run.hot_spares
      << " hot spare" << (r.run.hot_spares == 1 ? "" : "s") << "\n";
  }
  o << "  energy, cost         " << Fmt("%.0f kWh", r.run.energy_kwh) << ", " << Fmt("$%.0f", r.run.cost_usd);
  if (r.run.cost_per_billion_tokens_usd > 0) o << " (" << Fmt("$%.0f", r.run.cost_per_billion_tokens_usd) << " per billion tokens)";
  o << ", " << r.run.cost_model;
  if (r.run.capital_usd > 0) o << "; capital " << Fmt("$%.0f", r.run.capital_usd);
  o << "\n";
  return o.str();
}

}  // namespace trainsim
