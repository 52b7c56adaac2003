// The table of result fields as people read them: each field's result key
// (design.md section 3), its label, its quantity (which fixes the unit and
// the scale it is shown in: ms/s/min/h/days, $, GiB, kWh, %), and whether
// less is better. `trainsim compare` and the GUI's results table, deltas and
// headlines all read this one table, so a field has one label and one unit.
#pragma once

#include <string>
#include <vector>

#include "sim/core/result.h"

namespace trainsim {

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
};

struct ResultField {
  std::string key;    // "run.time_to_train_s" (the flat key of FlatResultKeys)
  std::string label;  // "Time to train"
  Quantity quantity = Quantity::kCount;
  bool lower_is_better = true;
  bool compared = true;  // a row of `trainsim compare`
  double (*get)(const SimulationResult&) = nullptr;
};

// Every numeric result field, in reading order (throughput and step, its
// breakdown, memory, run, checkpoints, failures, energy and cost).
const std::vector<ResultField>& ResultFields();
// nullptr when `key` is not in the table.
const ResultField* FindResultField(const std::string& key);

// The scale a value is shown in: value / divisor, then the suffix.
struct DisplayScale {
  double divisor = 1;
  std::string prefix;  // "$"
  std::string suffix;  // " h"
  int decimals = 2;
};
// The scale for values of this quantity around `magnitude` (in the field's
// own unit); a row shows A, B and B - A in one scale.
DisplayScale ScaleFor(Quantity q, double magnitude);
// "1.76 h", "$12,345", "41.3%"; with `sign`, a leading + or - (deltas).
std::string FormatScaled(const DisplayScale& d, double v, bool sign = false);
// A value in the scale of its own magnitude.
std::string FormatValue(const ResultField& f, double v);
// A delta b - a in the scale of max(|a|, |b|); fractions in percentage points.
std::string FormatDelta(const ResultField& f, double a, double b);

// b - a, and (b - a) / a, with changes below 1e-9 of the values read as
// exactly zero: an unchanged figure recomputed in another order differs in
// its last bits, and "-2.3e-13" reads as a change.
double CleanDelta(double a, double b);
double CleanRelative(double a, double b);

}  // namespace trainsim
