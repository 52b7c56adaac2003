#include "sim/io/json_writer.h"

#include <cmath>
#include <cstdio>

namespace trainsim {

std::string JsonWriter::Quote(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
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
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
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
