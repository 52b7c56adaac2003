// Result fields as people read them: the unit and scale of each quantity of
// the result-field table (sim/core/result_fields.h: ms/s/min/h/days, $, GiB,
// kWh, %), values and signed deltas in them. `trainsim compare` and the GUI's
// results table, deltas and headlines format through here, so a field has one
// label and one unit.
#pragma once

#include <string>
#include <vector>

#include "sim/core/result_fields.h"

namespace trainsim {

// The scale a value is shown in: value / divisor, then the suffix.
struct DisplayScale {
  double divisor = 1;
  std::string prefix;  // "$"
  std::string suffix;  // " h"
  int decimals = 2;
  bool thousands = false;  // digits grouped by commas past 9,999 ("262,144,000"); dollars always are
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
// (b - a) / a has no value from a == 0 to b != 0: NaN ("n/a", null in JSON).
double CleanRelative(double a, double b);

// A relative change as a signed percentage, "+4.2%"; "0.0%" for none (or one
// under 0.05%: never "+0.0%"), "n/a" where a side has no figure (NaN).
std::string FormatRelative(double relative);

}  // namespace trainsim
