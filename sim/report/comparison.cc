#include "sim/report/comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/io/json_writer.h"

namespace trainsim {

std::vector<ComparisonRow> CompareResults(const SimulationResult& a, const SimulationResult& b) {
  std::vector<ComparisonRow> rows;
  for (const ResultField* f : DisplayFields()) {
    if (f->compared) rows.push_back({f->key, DisplayLabel(*f), f->quantity, f->get(a), f->get(b)});
  }
  return rows;
}

namespace {

// The step's parts, largest first, as "71% compute, 18% exposed communication".
std::string StepShares(const SimulationResult& r) {
  const double st = r.step_time_s > 0 ? r.step_time_s : 1;
  std::vector<std::pair<double, const char*>> parts = {{r.breakdown.compute_s, "compute"},
                                                       {r.breakdown.exposed_communication_s, "exposed communication"},
                                                       {r.breakdown.pipeline_bubble_s, "pipeline bubble"},
                                                       {r.breakdown.optimizer_s, "optimizer"},
                                                       {r.breakdown.data_stall_s, "data stall"}};
  std::stable_sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out;
  for (size_t i = 0; i < 2 && i < parts.size(); ++i) {
    if (parts[i].first <= 0) break;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f%% %s", 100 * parts[i].first / st, parts[i].second);
    out += (i ? ", " : "") + std::string(buf);
  }
  return out;
}

// A field's cell for a result: its value, or "cannot run" where the run
// cannot happen and the field is a figure of the run (not of the
// configuration: ResultField::kept_when_infeasible), as the GUI's table and
// the sweep's empty CSV cells have it.
// A configuration's fact known before simulating (its GPUs, its model's size) is shown where a side that was
// never simulated has it (run --json's, compare's nvfp4 on an H100).
bool Computed(const ResultField& f, const SimulationResult& r) {
  return f.HoldsFor(r) && (r.simulated || r.feasible() || (f.before_simulating && f.Present(r)));
}
// A figure the result holds (capital exists only where the hardware is priced).
bool Shown(const ResultField& f, const SimulationResult& r) { return Computed(f, r) && f.Present(r); }
// The cell where no figure is shown: the run cannot happen, or the result
// has no such figure, and why (ResultField::absent: "no prices", "not modelled").
const char* NoFigure(const ResultField& f, const SimulationResult& r) { return Computed(f, r) ? f.absent.c_str() : "cannot run"; }

// A value in its row's scale (the largest side's: the sides read in one unit),
// or in its own where that scale would print a nonzero value as zero (10 kWh
// beside 20,000: "0.0 MWh").
std::string Cell(const DisplayScale& row, Quantity q, double v) {
  const std::string text = FormatScaled(row, v);
  const bool reads_zero = text.find_first_of("123456789") == std::string::npos;
  return v != 0 && std::isfinite(v) && reads_zero ? FormatScaled(ScaleFor(q, std::fabs(v)), v) : text;
}

}  // namespace

std::string Headline(const SimulationResult& baseline, const SimulationResult& other) {
  if (!other.error.empty()) return other.name + ": cannot run: " + other.error;
  const ResultField& time = *FindResultField("run.time_to_train_s");
  const ResultField& cost = *FindResultField("run.cost_usd");
  // Against a baseline that cannot run there is no difference to state: its
  // figures are not a run's. The other side's own figures.
  if (!baseline.feasible()) {
    return other.name + ": " + FormatValue(time, other.run.time_to_train_s) + " to train, " + FormatValue(cost, other.run.cost_usd) +
           " per run; step " + StepShares(other) + " (the baseline cannot run: " + baseline.error + ")";
  }
  const ResultField& energy = *FindResultField("run.energy_kwh");
  const ResultField& capital = *FindResultField("run.capital_usd");
  const double ta = baseline.run.time_to_train_s, tb = other.run.time_to_train_s;
  const double ca = baseline.run.cost_usd, cb = other.run.cost_usd;
  const double ka = baseline.run.capital_usd, kb = other.run.capital_usd;
  std::string s = other.name + ": ";
  // Two models: the deltas are those of different work, which the reader should not take for a hardware choice's.
  if (baseline.model.parameters > 0 && other.model.parameters > 0 && baseline.model.parameters != other.model.parameters) {
    s += "another model (" + ParameterCountText(other.model.parameters) + " parameters against " +
         ParameterCountText(baseline.model.parameters) + "): ";
  }
  s += FormatRelative(CleanRelative(ta, tb)) + " time to train (" + FormatDelta(time, ta, tb) + "), ";
  s += FormatDelta(cost, ca, cb) + " per run (" + FormatRelative(CleanRelative(ca, cb)) + "), ";
  // What the cluster costs to buy, where its profiles price it (0: no figures).
  if (ka > 0 && kb > 0) s += FormatDelta(capital, ka, kb) + " capital (" + FormatRelative(CleanRelative(ka, kb)) + "), ";
  s += FormatDelta(energy, baseline.run.energy_kwh, other.run.energy_kwh);
  s += "; step " + StepShares(other);
  return s;
}

std::string ComparisonTable(const SimulationResult& a, const SimulationResult& b) {
  std::ostringstream o;
  o << "A: " << a.name << " (" << a.fidelity << ")\n";
  o << "B: " << b.name << " (" << b.fidelity << ")\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-28s %16s %16s %16s %9s\n", "field", "A", "B", "B - A", "B vs A");
  o << buf;
  for (const auto& r : CompareResults(a, b)) {
    const ResultField& f = *FindResultField(r.field);
    if (!f.Present(a) && !f.Present(b)) continue;  // a figure neither result holds (facility energy under rental)
    const bool shown_a = Shown(f, a), shown_b = Shown(f, b);
    const DisplayScale scale = ScaleFor(r.quantity, std::max(shown_a ? std::fabs(r.a) : 0.0, shown_b ? std::fabs(r.b) : 0.0));
    const bool both = shown_a && shown_b;
    std::snprintf(buf, sizeof buf, "%-28s %16s %16s %16s %9s\n", r.label.c_str(), shown_a ? Cell(scale, r.quantity, r.a).c_str() : NoFigure(f, a),
                  shown_b ? Cell(scale, r.quantity, r.b).c_str() : NoFigure(f, b), both ? FormatDelta(f, r.a, r.b).c_str() : "",
                  both ? FormatRelative(r.relative()).c_str() : "");
    o << buf;
  }
  // B's reason is its headline's ("B: cannot run: ..."): said once.
  if (!a.error.empty()) o << "A: " << a.error << "\n";
  o << Headline(a, b) << "\n";
  return o.str();
}

namespace {

// "A", "B", ... "Z", then "S27", ...: the column letters of the table.
std::string Letter(size_t i) { return i < 26 ? std::string(1, char('A' + i)) : "S" + std::to_string(i + 1); }

}  // namespace

std::string ComparisonTable(const std::vector<SimulationResult>& results) {
  if (results.size() == 2) return ComparisonTable(results[0], results[1]);
  std::ostringstream o;
  for (size_t i = 0; i < results.size(); ++i) o << Letter(i) << ": " << results[i].name << " (" << results[i].fidelity << ")\n";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%-28s", "field");
  o << buf;
  for (size_t i = 0; i < results.size(); ++i) {
    std::snprintf(buf, sizeof buf, " %14s", Letter(i).c_str());
    o << buf;
  }
  for (size_t i = 1; i < results.size(); ++i) {
    std::snprintf(buf, sizeof buf, " %9s", (Letter(i) + " vs A").c_str());
    o << buf;
  }
  o << "\n";
  for (const ResultField* f : DisplayFields()) {
    if (!f->compared) continue;
    if (std::none_of(results.begin(), results.end(), [&](const SimulationResult& r) { return f->Present(r); })) continue;
    std::vector<double> v;
    std::vector<bool> shown;
    double largest = 0;
    for (const auto& r : results) {
      v.push_back(f->get(r));
      shown.push_back(Shown(*f, r));
      if (shown.back()) largest = std::max(largest, std::fabs(v.back()));
    }
    const DisplayScale scale = ScaleFor(f->quantity, largest);
    std::snprintf(buf, sizeof buf, "%-28s", DisplayLabel(*f).c_str());
    o << buf;
    for (size_t i = 0; i < v.size(); ++i) {
      std::snprintf(buf, sizeof buf, " %14s", shown[i] ? Cell(scale, f->quantity, v[i]).c_str() : NoFigure(*f, results[i]));
      o << buf;
    }
    for (size_t i = 1; i < v.size(); ++i) {
      std::snprintf(buf, sizeof buf, " %9s", shown[0] && shown[i] ? FormatRelative(CleanRelative(v[0], v[i])).c_str() : "");
      o << buf;
    }
    o << "\n";
  }
  // The others' reasons are in their headlines.
  if (!results[0].error.empty()) o << Letter(0) << ": " << results[0].error << "\n";
  for (size_t i = 1; i < results.size(); ++i) o << Headline(results[0], results[i]) << "\n";
  return o.str();
}

std::string ComparisonJson(const std::vector<SimulationResult>& results, const std::vector<std::string>& comparison_warnings) {
  if (results.size() == 2) return ComparisonJson(results[0], results[1], comparison_warnings);
  JsonWriter w;
  w.BeginObject().BeginArray("scenarios");
  for (const auto& r : results) w.Value(r.name);
  w.EndArray().BeginArray("feasible");
  for (const auto& r : results) w.Value(r.feasible());
  w.EndArray().BeginArray("errors");  // null for a side that ran, as run --json's error
  for (const auto& r : results) r.error.empty() ? w.Null("") : w.Value(r.error);
  w.EndArray().BeginArray("warnings");  // a list per side
  for (const auto& r : results) {
    w.BeginArray();
    for (const std::string& x : r.warnings) w.Value(x);
    w.EndArray();
  }
  w.EndArray().BeginArray("fields");
  for (const ResultField* f : DisplayFields()) {
    if (!f->compared) continue;
    // A side that cannot run has no figure where the table says "cannot run", and no delta against it.
    // The label as the table has it, without the text table's indent: a part names its whole.
    w.BeginObject().Field("field", f->key).Field("label", f->label);
    if (!f->part_of.empty()) w.Field("part_of", f->part_of);
    w.BeginArray("values");
    for (const auto& r : results) Shown(*f, r) ? w.Value(f->get(r)) : w.Null("");
    w.EndArray().BeginArray("relative");
    for (size_t i = 1; i < results.size(); ++i) {
      Shown(*f, results[0]) && Shown(*f, results[i]) ? w.Value(CleanRelative(f->get(results[0]), f->get(results[i]))) : w.Null("");
    }
    w.EndArray().EndObject();
  }
  w.EndArray().BeginArray("headlines");
  for (size_t i = 1; i < results.size(); ++i) w.Value(Headline(results[0], results[i]));
  w.EndArray().BeginArray("comparison_warnings");
  for (const std::string& x : comparison_warnings) w.Value(x);
  w.EndArray().EndObject();
  return w.str() + "\n";
}

std::string ComparisonJson(const SimulationResult& a, const SimulationResult& b, const std::vector<std::string>& comparison_warnings) {
  JsonWriter w;
  // Whether each side can run, and why not: a reader should not have to parse the headline.
  w.BeginObject().Field("a", a.name).Field("b", b.name);
  w.Field("a_feasible", a.feasible());
  a.error.empty() ? w.Null("a_error") : w.Field("a_error", a.error);
  w.Field("b_feasible", b.feasible());
  b.error.empty() ? w.Null("b_error") : w.Field("b_error", b.error);
  for (const auto& [key, side] : {std::pair{"a_warnings", &a}, std::pair{"b_warnings", &b}}) {
    w.BeginArray(key);
    for (const std::string& x : side->warnings) w.Value(x);
    w.EndArray();
  }
  w.BeginArray("fields");
  for (const auto& r : CompareResults(a, b)) {
    const ResultField& f = *FindResultField(r.field);
    const bool shown_a = Shown(f, a), shown_b = Shown(f, b);
    w.BeginObject().Field("field", r.field).Field("label", f.label);
    if (!f.part_of.empty()) w.Field("part_of", f.part_of);
    shown_a ? w.Field("a", r.a) : w.Null("a");
    shown_b ? w.Field("b", r.b) : w.Null("b");
    if (shown_a && shown_b) {
      w.Field("delta", r.delta()).Field("relative", r.relative());
    } else {
      w.Null("delta").Null("relative");
    }
    w.EndObject();
  }
  w.EndArray().Field("headline", Headline(a, b)).BeginArray("comparison_warnings");
  for (const std::string& x : comparison_warnings) w.Value(x);
  w.EndArray().EndObject();
  return w.str() + "\n";
}

}  // namespace trainsim
