#include "sim/io/result_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cctype>
#include <cstdlib>
#include <map>
#include <sstream>

#include "sim/core/text_format.h"
#include "sim/io/json_writer.h"

namespace trainsim {

std::string ToJson(const SimulationResult& r, bool pretty) {
  // The table's order, an object per key prefix ("run.steps" sits in "run");
  // every key always there, null where the result has no figure
  // (ResultField::HasFigure), so that a script reads one shape.
  JsonWriter w(pretty);
  w.BeginObject();
  std::string open;  // the object being written; empty: the top level
  for (const ResultField& f : ResultFields()) {
    const std::string group = f.Group();
    if (group != open) {
      if (!open.empty()) w.EndObject();
      if (!group.empty()) w.BeginObject(group);
      open = group;
    }
    if (f.list) {
      w.BeginArray(f.Name());
      for (const std::string& x : f.list(r)) w.Value(x);
      w.EndArray();
    } else if (!f.HasFigure(r)) {
      w.Null(f.Name());
    } else if (f.is_text()) w.Field(f.Name(), f.text(r));
    else if (f.quantity == Quantity::kBool) w.Field(f.Name(), f.get(r) != 0);
    else w.Field(f.Name(), f.get(r));
  }
  if (!open.empty()) w.EndObject();
  w.EndObject();
  return w.str() + "\n";
}

std::vector<std::string> FlatResultKeys() {
  std::vector<std::string> keys;
  for (const ResultField& f : ResultFields()) {
    if (!f.status) keys.push_back(f.key);
  }
  return keys;
}

std::string FlatResultValue(const ResultField& f, const SimulationResult& r) {
  if (!f.HasFigure(r)) return "";
  if (f.is_text()) return f.text(r);
  if (f.quantity == Quantity::kBool) return f.get(r) != 0 ? "true" : "false";
  const double v = f.get(r);
  // No value (NaN: not applicable, or a run that cannot make progress) is an empty cell, as JSON's null.
  return std::isfinite(v) ? JsonWriter::Number(v) : std::string();
}

std::vector<std::string> FlatResultValues(const SimulationResult& r) {
  std::vector<std::string> values;
  for (const ResultField& f : ResultFields()) {
    if (!f.status) values.push_back(FlatResultValue(f, r));
  }
  return values;
}

std::string ToJsonOfUnsimulated(const std::string& name, ErrorKind kind, const std::string& error,
                                const UnsimulatedFacts& known) {
  SimulationResult r;
  r.simulated = false;
  r.name = name;
  r.gpus = known.gpus;
  r.fidelity = known.fidelity;
  r.model.parameters = known.parameters;
  r.model.active_parameters = known.active_parameters;
  r.error = error;
  r.error_kind = kind;
  return ToJson(r, true);
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

std::string Duration(double s) {
  if (!std::isfinite(s)) return "unbounded";  // a run that cannot make progress
  if (s < 120) return Fmt("%.3f s", s);
  if (s < 7200) return Fmt("%.1f min", s / 60);
  if (s < 3 * 86400) return Fmt("%.2f h", s / 3600);
  if (s < 1e6 * 86400) return Fmt("%.2f days", s / 86400);
  return Fmt("%.3g days", s / 86400);  // a near-infinite MTBF's interval: figures, not 60 digits
}

}  // namespace

std::string ToSummary(const SimulationResult& r) {
  // A layout over the result-field table: every figure is read through the
  // table by its key (a key the table lacks throws), the lines and their
  // formats are the summary's own.
  auto v = [&](const char* key) { return ResultFieldOf(key).get(r); };
  auto t = [&](const char* key) { return ResultFieldOf(key).text(r); };
  auto count = [&](const char* key) { return std::to_string(static_cast<long long>(v(key))); };
  std::ostringstream o;
  o << t("name") << " (" << count("gpus") << (v("gpus") == 1 ? " GPU, " : " GPUs, ") << t("fidelity") << ")\n";
  if (v("feasible") == 0) o << "  ERROR: " << t("error") << "\n";
  // The figures below of a run that cannot happen are what it would take: said
  // here, since JSON, CSV and compare leave them null (ResultField::HoldsFor).
  if (v("feasible") == 0 && r.simulated && r.error_kind != ErrorKind::kCannotProgress) {
    o << "  (the time, rate, energy and cost below are what it would take if it could run; --json has them null)\n";
  }
  // What the model file was read as, so a misread config.json shows at once.
  const ModelSummary model{v("model.parameters"), v("model.active_parameters"), r.model.mtp_parameters};
  if (model.parameters > 0) o << "  model                " << ModelSizeText(model, /*spelled_out=*/true) << "\n";
  // The software stack whose defaults and kernels ran: a node's default changes with the node.
  if (FindResultField("framework.name")->Present(r)) {
    o << "  framework            " << t("framework.name") << " (" << t("framework.rule") << ")\n";
  }
  // What ran, data: auto and micro_batch: auto resolved, as plan names a configuration.
  if (FindResultField("parallelism")->Present(r)) o << "  parallelism          " << t("parallelism") << "\n";
  const double step = v("step_time_s");
  const double st = step > 0 ? step : 1;
  o << "  step time            " << Fmt("%.4f s", step) << "\n";
  // The breakdown's lines, labelled as the summary has always labelled them.
  const std::pair<const char*, const char*> parts[] = {{"breakdown_s.compute", "compute           "},
                                                       {"breakdown_s.exposed_communication", "exposed comm      "},
                                                       {"breakdown_s.pipeline_bubble", "pipeline bubble   "},
                                                       {"breakdown_s.optimizer", "optimizer         "},
                                                       {"breakdown_s.data_stall", "data stall        "}};
  for (const auto& [key, label] : parts) {
    o << "    " << label << " " << Fmt("%.4f s", v(key)) << "  " << Fmt("%5.1f%%", 100 * v(key) / st) << "\n";
  }
  const std::string split = FindResultField("pipeline.split")->Present(r) ? t("pipeline.split") : "";
  // Which stage the breakdown is of: it can change with the hardware, and
  // its compute with it.
  if (FindResultField("pipeline.slowest_stage")->Present(r)) {
    o << "  pipeline stages      " << t("pipeline.layers") << " layers per stage (" << split << "); breakdown of stage "
      << count("pipeline.slowest_stage") << ", the slowest\n";
  } else if (split != "even" && !split.empty()) {
    o << "  pipeline stages      " << t("pipeline.layers") << " layers per stage (" << split << ")\n";
  }
  if (FindResultField("placement.nvlink_domains")->Present(r)) o << "  NVLink domains       " << t("placement.nvlink_domains") << "\n";
  // The micro batch only where the simulator chose it: a given one is in the scenario.
  if (FindResultField("pipeline.micro_batch_rule")->Present(r) && t("pipeline.micro_batch_rule").rfind("auto", 0) == 0) {
    o << "  micro batch          " << count("pipeline.micro_batch") << " (" << t("pipeline.micro_batch_rule") << ")\n";
  }
  o << "  throughput           " << Fmt("%.0f tokens/s/GPU", v("tokens_per_s_per_gpu")) << ", "
    << Fmt("%.1f model TFLOP/s/GPU", v("model_tflops_per_gpu")) << ", MFU " << Fmt("%.1f%%", 100 * v("mfu"))
    << (FindResultField("precision")->Present(r) ? " of the " + t("precision") + " peak" : std::string()) << "\n";
  // The peak is the four parts on the next line; the reserved memory is
  // already off the usable capacity it is measured against.
  o << "  memory per GPU       " << Fmt("%.1f GiB", v("memory.peak_gib_per_gpu")) << " of "
    << Fmt("%.1f GiB", v("memory.capacity_gib")) << " usable" << (v("memory.fits") != 0 ? "" : "  DOES NOT FIT") << "\n";
  o << "    weights " << Fmt("%.1f", v("memory.weights_gib")) << ", gradients " << Fmt("%.1f", v("memory.gradients_gib"))
    << ", optimizer " << Fmt("%.1f", v("memory.optimizer_gib")) << ", activations " << Fmt("%.1f", v("memory.activations_gib"))
    << " GiB (+" << Fmt("%.1f", v("memory.workspace_gib")) << " reserved: CUDA context, NCCL, workspaces)\n";
  if (FindResultField("memory.offloaded_activations_gib")->Present(r)) {
    o << "    activations offloaded to host memory " << Fmt("%.1f", v("memory.offloaded_activations_gib")) << " GiB\n";
  }
  if (FindResultField("memory.reason")->Present(r)) o << "    " << t("memory.reason") << "\n";
  // One step is the length of a scenario that gives neither training.steps nor training.tokens.
  const bool one_step = v("run.steps") == 1;
  o << "  run                  " << count("run.steps") << (one_step ? " step" : " steps") << ", " << Fmt("%.3g", v("run.tokens"))
    << " tokens, " << Duration(v("run.time_to_train_s")) << (one_step ? " (training.steps or training.tokens sets the run's length)" : "")
    << "\n";
  if (v("run.checkpoint_bytes") > 0) {
    o << "  checkpoint           " << Fmt("%.1f GiB", v("run.checkpoint_bytes") / (1024.0 * 1024 * 1024)) << ", write "
      << Duration(v("run.checkpoint_write_s"));
    if (v("run.checkpoints") == 0) {
      o << ", none in the run (checkpoint.every_steps)\n";
    } else {
      o << ", stall " << Duration(v("run.checkpoint_stall_s")) << " per checkpoint, " << count("run.checkpoints") << " in the run, overhead "
        << Duration(v("run.checkpoint_overhead_s")) << "\n";
      // A write longer than the training between checkpoints: the storage is
      // busy all the time and each checkpoint waits for the last one's write.
      if (const double interval = v("run.chosen_checkpoint_interval_s"); interval > 0 && v("run.checkpoint_write_s") > interval) {
        o << "                       each write outlasts the " << Duration(interval) << " of training between checkpoints: the storage "
          << "writes all the time and the run waits on it (a longer checkpoint.every_steps, more storage nodes, or checkpoint.contents: weights)\n";
      }
    }
  }
  if (v("run.expected_failures") > 0) {
    const double spares = v("run.hot_spares");
    o << "  failures             " << Fmt("%.3g expected", v("run.expected_failures")) << ", goodput "
      << Fmt("%.1f%%", 100 * v("run.goodput"));
    // The interval only where there is storage to checkpoint to.
    if (v("run.best_checkpoint_interval_s") > 0) {
      o << ", best checkpoint interval " << Duration(v("run.best_checkpoint_interval_s"))
        << (v("run.checkpoints") > 0 ? " (chosen " + Duration(v("run.chosen_checkpoint_interval_s")) + ")"
                                      : std::string(" (none chosen: each failure restarts from step 0)"));
    } else if (v("run.checkpoints") == 0) {
      // Why the goodput can be tiny: nothing to restart from.
      o << ", each restarting from step 0 (no checkpoint storage: cluster.storage)";
    }
    o << ", " << count("run.hot_spares") << " hot spare"
      << (spares == 1 ? "" : "s") << HotSparesCapitalText(r.run) << "\n";
  } else if (!r.run.failures_modelled && v("run.time_to_train_s") > 0) {
    // A long run's goodput read as 100% is an assumption, not a finding: say which.
    o << "  failures             not modelled (failures.node_mtbf_hours): goodput " << Fmt("%.1f%%", 100 * v("run.goodput"))
      << " counts checkpoint stalls only\n";
  }
  // Whole units where they are many; three figures for a short run's fraction of one.
  const auto amount = [](const char* unit_before, double x, const char* unit_after) {
    if (!std::isfinite(x)) return std::string("unbounded");
    return std::string(unit_before) + Fmt(x >= 100 || x == 0 ? "%.0f" : "%.3g", x) + unit_after;
  };
  // IT energy (the nodes and storage); the site's facility figure beside it where one prices the run.
  const bool facility = FindResultField("run.facility_energy_kwh")->Present(r);  // > 0: finite
  o << "  energy, cost         "
    << (std::isfinite(v("run.energy_kwh"))
            ? amount("", v("run.energy_kwh"), " kWh IT at rated load") +
                  (facility ? " (" + amount("", v("run.facility_energy_kwh"), " kWh facility") + ")" : std::string()) + ", " +
                  amount("$", v("run.cost_usd"), "")
            : std::string("unbounded (the run never finishes)"));
  if (v("run.cost_per_billion_tokens_usd") > 0) {
    o << " (" << Fmt("$%.0f", v("run.cost_per_billion_tokens_usd")) << " per billion tokens)";
  }
  o << ", " << t("run.cost_model");
  if (v("run.capital_usd") > 0) o << "; capital " << Fmt("$%.0f", v("run.capital_usd"));
  o << "\n";
  return o.str();
}

}  // namespace trainsim
