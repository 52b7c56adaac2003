// The result fields, listed once. Every writer of a SimulationResult walks
// this table: the result object (`--json`, nested at the dots of a key, in
// the table's order), the CSV columns of sweeps and of the GUI's export, the
// text summary (its values), `trainsim compare` and the GUI's results table,
// deltas and headlines (labels, quantities). A new result field is a member
// of SimulationResult (result.h) and one entry in result_fields.cc.
//
// The order is the result object's: design.md section 3's fields first, the
// later additions after them, so the JSON of the contract reads as written.
#pragma once

#include <string>
#include <vector>

#include "sim/core/result.h"

namespace trainsim {

// What a value measures, which fixes the unit and the scale it is shown in
// (sim/report/result_format.h: ms/s/min/h/days, $, GiB, kWh, %).
enum class Quantity {
  kCount,            // plain number (GPUs, steps)
  kSeconds,          // a short time: ms or s
  kDuration,         // a long time: s, min, h or days
  kUsd,              // dollars
  kGib,              // GiB
  kBytes,            // bytes, shown in GiB
  kKwh,              // kilowatt-hours
  kFraction,         // 0..1, shown as a percentage (deltas in percentage points)
  kTokensPerSecond,  // tokens/s
  kTflops,           // TFLOP/s
  kBool,             // yes / no
  kText,             // a string (name, fidelity, error)
};

struct ResultField {
  using Result = const SimulationResult&;
  std::string key;    // "run.time_to_train_s": the CSV column; the JSON nests at the dot
  std::string label;  // "Time to train"
  Quantity quantity = Quantity::kCount;
  bool lower_is_better = true;
  bool compared = false;  // a row of `trainsim compare`
  // What the configuration is (its size, memory, checkpoint size, price)
  // rather than what a run of it takes: kept where a run cannot happen,
  // while run figures are left empty in sweep CSVs and read "cannot run" in the GUI.
  bool kept_when_infeasible = false;
  // Known from the scenario before anything is simulated (its name, size,
  // model): kept also for a run refused before simulating (a format its GPU lacks).
  bool before_simulating = false;
  // feasible, error_kind, error: the state of the run, which the sweep CSV
  // places itself (feasible after the axes, error last) and fills for points
  // that have no result at all.
  bool status = false;
  // A part of another field (the step's breakdown, memory's components):
  // shown right after it, its label indented.
  std::string part_of = "";
  // A table's cell (compare, the GUI) where the field is not present: what
  // its absence means ("not modelled" where no failure model runs).
  std::string absent = "-";
  // Null: always present. Otherwise the field is null in the JSON (and
  // empty in CSV) when this says no: `error` of a run that ran.
  bool (*present)(Result) = nullptr;
  double (*get)(Result) = nullptr;         // numbers and booleans (1 / 0); null for text
  std::string (*text)(Result) = nullptr;   // text fields
  // A list of texts (warnings): a JSON array, [] for none; `text` joins it
  // by " | " for a CSV cell and the human output.
  std::vector<std::string> (*list)(Result) = nullptr;

  bool is_text() const { return quantity == Quantity::kText; }
  bool Present(Result r) const { return present == nullptr || present(r); }
  // The field has a figure in this result: it is present, and where the run
  // cannot happen it is a fact of the configuration (kept_when_infeasible)
  // or of the run's state (status), not a figure of a run that will not
  // take place. A run that cannot make progress (failures outrun its
  // checkpoints) keeps its step's figures: the step ran and fits; its run
  // totals are NaN, so null all the same. Where a field has no figure, JSON
  // writes null, a CSV an empty cell: one rule for every writer, so a script
  // never sums the cost of a configuration that does not fit.
  bool HasFigure(Result r) const { return Present(r) && HoldsFor(r); }
  // HasFigure's part that depends on whether the run can happen, not on the field's presence.
  bool HoldsFor(Result r) const {
    if (!r.simulated) return status || before_simulating;
    return status || kept_when_infeasible || r.feasible() || r.error_kind == ErrorKind::kCannotProgress;
  }
  // The JSON object it sits in ("run"; empty at the top level) and its name there.
  std::string Group() const;
  std::string Name() const;
};

// Every result field, in the result object's order.
const std::vector<ResultField>& ResultFields();
// nullptr when `key` is not in the table.
const ResultField* FindResultField(const std::string& key);
// The field of `key`; throws std::logic_error when there is none (a writer
// asking for a field the table does not have is a bug).
const ResultField& ResultFieldOf(const std::string& key);

// The fields in reading order for people (compare, the GUI): the table's
// order with each field's parts right after it.
std::vector<const ResultField*> DisplayFields();
// The label as a row shows it: a part indented under its whole.
std::string DisplayLabel(const ResultField& f);

}  // namespace trainsim
