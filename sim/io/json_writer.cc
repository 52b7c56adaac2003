#include "sim/io/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace trainsim {

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 if it is not one.
size_t Utf8SequenceLength(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xE1 && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::string JsonWriter::Quote(const std::string& s) {
  std::string o = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // JSON text is UTF-8 (RFC 8259): a byte that is not part of a valid
      // sequence (a Latin-1 file name, a corrupted scenario) becomes U+FFFD.
      const size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        o += "\\ufffd";
      } else {
        o.append(s, i, n);
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

std::string JsonWriter::Number(double v) {
  if (!std::isfinite(v)) return "null";
  // std::to_chars prints as printf's "%.0f" / "%.10g" in the C locale do (a
  // sweep writes dozens of numbers per row; snprintf was a tenth of it). Ten
  // figures: a run's time to train (10,345,657.1 s) keeps its tenths, so sums
  // and differences downstream stay exact to what the model resolves.
  char buf[32];
  // Whole numbers as integers up to 2^53, beyond which a double holds no longer every one.
  if (v == std::floor(v) && std::fabs(v) <= 9007199254740992.0) {
    if (v == 0) return std::signbit(v) ? "-0" : "0";
    const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
    return std::string(buf, r.ptr);
  }
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 10);
  return std::string(buf, r.ptr);
}

void JsonWriter::Prefix(const std::string& key) {
  if (!first_.empty()) {
    if (!first_.back()) out_ += ",";
    first_.back() = false;
    if (pretty_) out_ += "\n" + std::string(2 * first_.size(), ' ');
  }
  if (!key.empty()) out_ += Quote(key) + (pretty_ ? ": " : ":");
}

JsonWriter& JsonWriter::BeginObject(const std::string& key) {
  Prefix(key);
  out_ += "{";
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  const bool empty = first_.back();
  first_.pop_back();
  if (pretty_ && !empty) out_ += "\n" + std::string(2 * first_.size(), ' ');
  out_ += "}";
  return *this;
}

JsonWriter& JsonWriter::BeginArray(const std::string& key) {
  Prefix(key);
  out_ += "[";
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  const bool empty = first_.back();
  first_.pop_back();
  if (pretty_ && !empty) out_ += "\n" + std::string(2 * first_.size(), ' ');
  out_ += "]";
  return *this;
}

JsonWriter& JsonWriter::Raw(const std::string& key, const std::string& json) {
  Prefix(key);
  out_ += json;
  return *this;
}

JsonWriter& JsonWriter::Field(const std::string& key, double v) {
  Prefix(key);
  out_ += Number(v);
  return *this;
}

JsonWriter& JsonWriter::Field(const std::string& key, long long v) {
  Prefix(key);
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::Field(const std::string& key, bool v) {
  Prefix(key);
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Field(const std::string& key, const std::string& v) {
  Prefix(key);
  out_ += Quote(v);
  return *this;
}

JsonWriter& JsonWriter::Null(const std::string& key) {
  Prefix(key);
  out_ += "null";
  return *this;
}

}  // namespace trainsim
