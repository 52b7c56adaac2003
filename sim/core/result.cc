#include "sim/core/result.h"

#include <cstdio>
#include <string>

namespace trainsim {

std::string ParameterCountText(double parameters) {
  const double b = parameters / 1e9;
  char buf[32];
  if (b >= 999.5) {
    std::snprintf(buf, sizeof buf, "%.2fT", b / 1e3);  // Kimi K2's 1.03T, not 1026B
  } else {
    std::snprintf(buf, sizeof buf, b >= 100 ? "%.0fB" : b >= 1 ? "%.1fB" : "%.2fB", b);
  }
  return buf;
}

std::string ModelSizeText(const ModelSummary& m, bool spelled_out) {
  std::string t = ParameterCountText(m.parameters) + (spelled_out ? " parameters" : "");
  if (m.active_parameters > 0 && m.active_parameters < m.parameters) {
    // Model cards differ on whether the input embedding counts (Mixtral's 12.9B does, GPT-OSS's 5.1B
    // does not): said, so that a card's smaller figure does not read as a misread file.
    t += " (" + ParameterCountText(m.active_parameters) + (spelled_out ? " active per token, both vocabulary matrices counted)" : " active)");
  }
  if (spelled_out && m.mtp_parameters > 0) {
    t += ", and " + ParameterCountText(m.mtp_parameters) + " in its MTP modules (trained, left out of the count as published totals do)";
  }
  return t;
}

std::string HotSparesCapitalText(const RunReport& run) {
  if (run.hot_spares <= 0 || run.capital_usd <= 0) return "";
  if (run.idle_rack_nodes <= 0) return " (not in the capital)";
  if (run.idle_rack_nodes >= run.hot_spares) return " (idle nodes of its racks)";
  return " (" + std::to_string(run.idle_rack_nodes) + (run.idle_rack_nodes == 1 ? " idle node" : " idle nodes") + " of its racks, " +
         std::to_string(run.hot_spares - run.idle_rack_nodes) + " not in the capital)";
}

}  // namespace trainsim
