#include "sim/report/result_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace trainsim {

namespace {

// Decimals for about 4 significant digits at `magnitude` (already scaled).
int DecimalsFor(double magnitude, int most) {
  if (!(magnitude > 0)) return std::min(most, 2);
  const int d = 3 - static_cast<int>(std::floor(std::log10(magnitude)));
  return std::max(0, std::min(most, d));
}

std::string WithThousands(const std::string& digits) {
  // digits: "12345.67" (no sign) -> "12,345.67"
  const auto dot = digits.find('.');
  std::string whole = digits.substr(0, dot), rest = dot == std::string::npos ? "" : digits.substr(dot);
  std::string out;
  for (size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) out += ',';
    out += whole[i];
  }
  return out + rest;
}

}  // namespace

DisplayScale ScaleFor(Quantity q, double magnitude) {
  const double m = std::fabs(magnitude);
  DisplayScale d;
  switch (q) {
    case Quantity::kCount:
      d.decimals = m >= 100 || m == std::floor(m) ? 0 : DecimalsFor(m, 4);
      d.thousands = true;
      break;
    case Quantity::kSeconds:
      if (m < 1) d = {1e-3, "", " ms", 0};
      else d = {1, "", " s", 0};
      d.decimals = DecimalsFor(m / d.divisor, 3);
      break;
    case Quantity::kDuration:
      if (m < 120) d = {1, "", " s", 0};
      else if (m < 5400) d = {60, "", " min", 0};
      else if (m < 3 * 86400) d = {3600, "", " h", 0};
      else d = {86400, "", " days", 0};
      d.decimals = DecimalsFor(m / d.divisor, 2);
      break;
    case Quantity::kUsd: d = {1, "$", "", m >= 100 ? 0 : 2}; break;
    case Quantity::kGib: d = {1, "", " GiB", 1}; break;
    case Quantity::kBytes: d = {1024.0 * 1024 * 1024, "", " GiB", 1}; break;
    case Quantity::kKwh:
      if (m >= 1e4) d = {1e3, "", " MWh", 1};
      else d = {1, "", " kWh", 0};
      d.decimals = DecimalsFor(m / d.divisor, 1);
      break;
    case Quantity::kFraction: d = {0.01, "", "%", 1}; break;
    case Quantity::kTokensPerSecond: d = {1, "", " tokens/s", 0}; break;
    case Quantity::kTflops: d = {1, "", " TFLOP/s", 1}; break;
    case Quantity::kBool:
    case Quantity::kText: d = {1, "", "", 0}; break;
  }
  return d;
}

std::string FormatScaled(const DisplayScale& d, double v, bool sign) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  const double x = v / d.divisor;
  std::snprintf(buf, sizeof buf, "%.*f", d.decimals, std::fabs(x));
  std::string digits = buf;
  const bool zero = digits.find_first_not_of("0.") == std::string::npos;
  // Dollars, and counts past four digits (tokens, parameters), in groups of three.
  if (d.prefix == "$" || (d.thousands && std::fabs(x) >= 1e4)) digits = WithThousands(digits);
  std::string s = zero ? "" : x < 0 ? "-" : sign ? "+" : "";
  if (zero && sign) s = "";
  return s + d.prefix + digits + d.suffix;
}

std::string FormatValue(const ResultField& f, double v) {
  if (f.quantity == Quantity::kBool) return v != 0 ? "yes" : "no";
  return FormatScaled(ScaleFor(f.quantity, v), v);
}

std::string FormatDelta(const ResultField& f, double a, double b) {
  const double d = CleanDelta(a, b);
  if (f.quantity == Quantity::kBool) return a == b ? "same" : "changed";
  DisplayScale s = ScaleFor(f.quantity, std::max(std::fabs(a), std::fabs(b)));
  if (f.quantity == Quantity::kFraction) s.suffix = " pp";
  return FormatScaled(s, d, true);
}

double CleanDelta(double a, double b) {
  const double d = b - a;
  return std::fabs(d) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)) ? 0.0 : d;
}

double CleanRelative(double a, double b) {
  // From 0 to anything else no ratio exists: NaN, which reads "n/a" and is null in JSON (it read 0.0%).
  if (a == 0) return b == 0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  const double r = (b - a) / a;
  return std::fabs(r) < 1e-9 ? 0.0 : r;
}

std::string FormatRelative(double relative) {
  if (!std::isfinite(relative)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * relative);
  return std::string(buf) == "+0.0%" || std::string(buf) == "-0.0%" ? "0.0%" : buf;
}

}  // namespace trainsim
