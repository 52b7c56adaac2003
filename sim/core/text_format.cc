#include "sim/core/text_format.h"

#include <cstdio>

namespace trainsim {

std::string Fmt(const char* format, double v) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, format, v);
  if (n < 0) return "";
  if (size_t(n) < sizeof buf) return buf;
  std::string out(size_t(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, v);
  out.resize(size_t(n));
  return out;
}

}  // namespace trainsim
