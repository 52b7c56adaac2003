// A small streaming JSON writer: keys in the order written, numbers printed
// with a fixed round-trip format so the same result is byte-identical JSON.
#pragma once

#include <string>
#include <vector>

namespace trainsim {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}

  JsonWriter& BeginObject(const std::string& key = "");
  JsonWriter& EndObject();
  JsonWriter& BeginArray(const std::string& key = "");
  JsonWriter& EndArray();
  JsonWriter& Field(const std::string& key, double v);
  JsonWriter& Field(const std::string& key, long long v);
  JsonWriter& Field(const std::string& key, int v) { return Field(key, static_cast<long long>(v)); }
  JsonWriter& Field(const std::string& key, bool v);
  JsonWriter& Field(const std::string& key, const std::string& v);
  JsonWriter& Field(const std::string& key, const char* v) { return Field(key, std::string(v)); }
  JsonWriter& Null(const std::string& key);
  // A value already formatted as JSON (e.g. a number in fixed notation).
  JsonWriter& Raw(const std::string& key, const std::string& json);
  // Array elements.
  JsonWriter& Value(double v) { return Field("", v); }
  JsonWriter& Value(const std::string& v) { return Field("", v); }
  JsonWriter& Value(const char* v) { return Field("", std::string(v)); }  // not the bool overload
  JsonWriter& Value(bool v) { return Field("", v); }

  const std::string& str() const { return out_; }

  static std::string Quote(const std::string& s);
  static std::string Number(double v);

 private:
  void Prefix(const std::string& key);
  bool pretty_;
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
};

}  // namespace trainsim
