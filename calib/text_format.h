// How the calibration files write numbers and strings (header-only: the
// standalone CUDA measuring program writes the same format without linking
// trainsim).
#pragma once

#include <cstdio>
#include <string>

namespace trainsim::calib {

// Six significant digits: enough for measured times, short enough to read.
inline std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A YAML double-quoted scalar.
inline std::string Quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

}  // namespace trainsim::calib
