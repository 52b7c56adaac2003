#include "sim/core/fingerprint.h"

#include <cstdio>

namespace trainsim {

std::string TextFingerprint(const std::string& text) {
  unsigned long long h = 14695981039346656037ull;  // FNV-1a offset basis and prime (64-bit)
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", h);
  return buf;
}

}  // namespace trainsim
