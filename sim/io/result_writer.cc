#include "sim/io/result_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cctype>
#include <cstdlib>
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

std::vector<TimelineEvent> TimelinePart(const std::vector<TimelineEvent>& timeline, TracePart part) {
  double t0 = 0, t1 = -1;
  for (const auto& e : timeline) {
    if (e.category == "step") {
      t0 = e.start_s;
      t1 = e.start_s + e.duration_s;
      break;
    }
  }
  const bool has_step = t1 >= t0;
  std::vector<TimelineEvent> out;
  auto in_step = [&](const TimelineEvent& e) {
    if (!has_step) return true;
    return e.start_s < t1 && (e.start_s + e.duration_s > t0 || e.start_s >= t0);
  };
  if (part == TracePart::kStep) {
    for (const auto& e : timeline) {
      if (!in_step(e)) continue;
      TimelineEvent c = e;
      const double end = std::min(e.start_s + e.duration_s, t1 >= t0 ? t1 : e.start_s + e.duration_s);
      c.start_s = has_step ? std::max(e.start_s, t0) : e.start_s;
      c.duration_s = end - c.start_s;
      if (c.start_s != e.start_s || c.duration_s != e.duration_s) c.args.emplace_back("clipped", "true");
      c.start_s -= t0;
      out.push_back(std::move(c));
    }
    return out;
  }
  double origin = 1e300;
  // After the traced step; what ended before it (the step's token prefetch) belongs to neither part.
  for (const auto& e : timeline) {
    if (!in_step(e) && e.start_s >= t1) {
      out.push_back(e);
      origin = std::min(origin, e.start_s);
    }
  }
  for (auto& e : out) e.start_s -= origin;
  return out;
}

std::vector<int> TimelineLanes(const std::vector<TimelineEvent>& events) {
  // Greedy interval partitioning in start order: the first lane free by the
  // event's start (lanes per track, each remembering its last end).
  std::vector<size_t> order(events.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return events[a].start_s < events[b].start_s; });
  std::map<std::string, std::vector<double>> lane_end;
  std::vector<int> lane(events.size(), 0);
  for (size_t i : order) {
    const TimelineEvent& e = events[i];
    auto& ends = lane_end[e.track];
    size_t l = 0;
    while (l < ends.size() && ends[l] > e.start_s) ++l;
    if (l == ends.size()) ends.push_back(0);
    ends[l] = e.start_s + e.duration_s;
    lane[i] = static_cast<int>(l);
  }
  return lane;
}

namespace {

// Seconds as microseconds in fixed notation to the nanosecond ("12.345678").
// Slices are written as rounded start and rounded end, so abutting slices
// still abut after rounding.
long long Nanoseconds(double s) { return std::llround(s * 1e9); }
std::string Microseconds(long long ns) {
  char buf[48];
  const long long a = ns < 0 ? -ns : ns;
  std::snprintf(buf, sizeof buf, "%s%lld.%03lld", ns < 0 ? "-" : "", a / 1000, a % 1000);
  return buf;
}

bool LooksNumeric(const std::string& v) {
  if (v.empty() || v.find_first_not_of("0123456789.-+eE") != std::string::npos) return false;
  if (!std::isdigit(static_cast<unsigned char>(v[0])) && v[0] != '-') return false;
  char* end = nullptr;
  std::strtod(v.c_str(), &end);
  return end == v.c_str() + v.size();
}

// A track's process ("stage N" or the run-wide group) and thread ("compute", ...).
struct TrackPlace {
  std::string process;
  int process_sort = 0;
  std::string thread;
  int thread_sort = 0;
};

TrackPlace PlaceTrack(const std::string& track) {
  TrackPlace p;
  if (track.rfind("stage ", 0) == 0) {
    size_t used = 0;
    int stage = 0;
    try {
      stage = std::stoi(track.substr(6), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used > 0) {
      p.process = "stage " + std::to_string(stage);
      p.process_sort = 1 + stage;
      p.thread = track.size() > 6 + used + 1 ? track.substr(6 + used + 1) : "compute";
      static const char* kinds[] = {"compute", "comm", "dp", "cp"};
      p.thread_sort = 4;
      for (int k = 0; k < 4; ++k) {
        if (p.thread == kinds[k]) p.thread_sort = k;
      }
      return p;
    }
  }
  if (track == "steps") return {"run", 0, track, 0};
  return {"storage", 1 << 20, track, track == "storage" ? 0 : 1};
}

}  // namespace

std::string ToChromeTrace(const SimulationResult& r, TracePart part) {
  const std::vector<TimelineEvent> events = TimelinePart(r.timeline, part);
  const std::vector<int> lanes = TimelineLanes(events);
  // pid per process, tid per (track, lane), in order of first appearance.
  std::map<std::string, int> pid;
  std::map<std::pair<std::string, int>, int> tid;
  JsonWriter w(false);
  w.BeginObject().BeginArray("traceEvents");
  auto meta = [&](const char* what, int p, int t, const char* key, const std::string& value, int sort) {
    w.BeginObject().Field("name", what).Field("ph", "M").Field("pid", p).Field("tid", t);
    w.BeginObject("args").Field(key, value).EndObject().EndObject();
    w.BeginObject()
        .Field("name", std::string(what) == "process_name" ? "process_sort_index" : "thread_sort_index")
        .Field("ph", "M")
        .Field("pid", p)
        .Field("tid", t);
    w.BeginObject("args").Field("sort_index", sort).EndObject().EndObject();
  };
  std::vector<std::pair<int, int>> ids(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    const TrackPlace place = PlaceTrack(events[i].track);
    if (!pid.count(place.process)) {
      const int p = static_cast<int>(pid.size()) + 1;
      pid[place.process] = p;
      meta("process_name", p, 0, "name", place.process, place.process_sort);
    }
    const auto key = std::make_pair(events[i].track, lanes[i]);
    if (!tid.count(key)) {
      const int t = static_cast<int>(tid.size()) + 1;
      tid[key] = t;
      const std::string name = place.thread + (lanes[i] > 0 ? " (" + std::to_string(lanes[i] + 1) + ")" : "");
      meta("thread_name", pid[place.process], t, "name", name, place.thread_sort * 1000 + lanes[i]);
    }
    ids[i] = {pid[place.process], tid[key]};
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const TimelineEvent& e = events[i];
    const long long ts = Nanoseconds(e.start_s), end = Nanoseconds(e.start_s + e.duration_s);
    w.BeginObject()
        .Field("name", e.name)
        .Field("cat", e.category.empty() ? std::string("other") : e.category)
        .Field("ph", "X")
        .Field("pid", ids[i].first)
        .Field("tid", ids[i].second)
        .Raw("ts", Microseconds(ts))
        .Raw("dur", Microseconds(end - ts));
    w.BeginObject("args");
    for (const auto& [k, v] : e.args) {
      if (LooksNumeric(v)) w.Raw(k, v);
      else w.Field(k, v);
    }
    w.EndObject().EndObject();
  }
  w.EndArray().Field("displayTimeUnit", "ms");
  w.BeginObject("otherData")
      .Field("scenario", r.name)
      .Field("fidelity", r.fidelity)
      .Field("part", part == TracePart::kStep ? "steady step" : "first checkpoint")
      .Field("time_origin", part == TracePart::kStep ? "start of the traced step" : "start of the first checkpoint event")
      .EndObject();
  w.EndObject();
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
