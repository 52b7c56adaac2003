#include "sim/core/result.h"

#include <cstdio>

namespace trainsim {

std::string BillionsText(double parameters) {
  const double b = parameters / 1e9;
  char buf[32];
  std::snprintf(buf, sizeof buf, b >= 100 ? "%.0fB" : b >= 1 ? "%.1fB" : "%.2fB", b);
  return buf;
}

std::string ModelSizeText(const ModelSummary& m, bool spelled_out) {
  std::string t = BillionsText(m.parameters) + (spelled_out ? " parameters" : "");
  if (m.active_parameters > 0 && m.active_parameters < m.parameters) {
    t += " (" + BillionsText(m.active_parameters) + (spelled_out ? " active per token)" : " active)");
  }
  return t;
}

}  // namespace trainsim
