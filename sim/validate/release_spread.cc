#include "sim/validate/release_spread.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace trainsim {

std::vector<ReleaseMeasurement> OtherReleasesInNote(const std::string& note) {
  static const std::string kMarker = "same config (tokens/s/GPU):";
  std::vector<ReleaseMeasurement> out;
  const size_t at = note.find(kMarker);
  if (at == std::string::npos) return out;
  size_t i = at + kMarker.size();
  auto skip_spaces = [&] {
    while (i < note.size() && std::isspace(static_cast<unsigned char>(note[i]))) ++i;
  };
  while (true) {
    skip_spaces();
    // NAME: a release's name runs to its ':' (digits and dots, or a word).
    const size_t colon = note.find(':', i);
    if (colon == std::string::npos || colon == i) break;
    std::string name = note.substr(i, colon - i);
    if (name.find_first_of(",;()") != std::string::npos) break;
    i = colon + 1;
    skip_spaces();
    const char* begin = note.c_str() + i;
    char* end = nullptr;
    const double tps = std::strtod(begin, &end);
    if (end == begin || !(tps > 0) || !std::isfinite(tps)) break;
    out.push_back({name, tps});
    i += size_t(end - begin);
    skip_spaces();
    if (i >= note.size() || note[i] != ',') break;
    ++i;
  }
  return out;
}

MeasuredRange RangeOverReleases(double step_s, double tokens_per_s_per_gpu, const std::vector<ReleaseMeasurement>& others) {
  MeasuredRange r{step_s, step_s, 1};
  if (!(tokens_per_s_per_gpu > 0)) return r;
  for (const ReleaseMeasurement& m : others) {
    const double other_step_s = step_s * tokens_per_s_per_gpu / m.tokens_per_s_per_gpu;
    r.min_step_time_s = std::min(r.min_step_time_s, other_step_s);
    r.max_step_time_s = std::max(r.max_step_time_s, other_step_s);
    ++r.releases;
  }
  return r;
}

}  // namespace trainsim
