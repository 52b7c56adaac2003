// Strict, typed reading of a YAML mapping with errors that name file, line
// and key. A YamlMap remembers which keys were read; Finish() rejects every
// key that was not, with a "did you mean" suggestion from the keys that were.
// A mapping with a key written twice is rejected when the YamlMap is made
// (and, for whole files, when they are loaded).
// All read functions throw InputException; loaders catch it at their boundary.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/core/error.h"

namespace trainsim {

// Location of a YAML node for messages: the file, or "--set" for nodes that
// came from a command-line override (they carry no mark).
struct YamlSource {
  std::string file;
};

class YamlMap {
 public:
  // `prefix` is the dotted path of this map ("" at the top level).
  YamlMap(YAML::Node node, std::string file, std::string prefix = "");

  bool Has(const std::string& key);
  // Marks the key as known without reading it (for keys handled elsewhere).
  void Allow(const std::string& key);
  // Whether a read or Allow has asked for the key.
  bool Known(const std::string& key) const { return known_.count(key) > 0; }

  std::string String(const std::string& key);
  std::optional<std::string> OptString(const std::string& key);
  std::string Choice(const std::string& key, const std::vector<std::string>& choices,
                     const std::optional<std::string>& fallback = std::nullopt);
  int PositiveInt(const std::string& key, std::optional<int> fallback = std::nullopt);
  int NonNegativeInt(const std::string& key, std::optional<int> fallback = std::nullopt);
  double PositiveDouble(const std::string& key, std::optional<double> fallback = std::nullopt);
  double NonNegativeDouble(const std::string& key, std::optional<double> fallback = std::nullopt);
  double Fraction(const std::string& key, std::optional<double> fallback = std::nullopt);  // in (0, 1]
  bool Bool(const std::string& key, std::optional<bool> fallback = std::nullopt);
  std::optional<YamlMap> OptMap(const std::string& key);
  YamlMap Map(const std::string& key);
  YAML::Node Raw(const std::string& key);  // marks the key known; may be undefined

  // Throws for the first key present in the map that no read asked for.
  void Finish();

  [[noreturn]] void Fail(const std::string& key, const std::string& message) const;
  [[noreturn]] static void FailAt(const YAML::Node& node, const std::string& file,
                                  const std::string& key, const std::string& message);

  const std::string& file() const { return file_; }
  std::string Path(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }
  const YAML::Node& node() const { return node_; }

 private:
  YAML::Node Get(const std::string& key);
  double Number(const std::string& key);

  YAML::Node node_;
  std::string file_;
  std::string prefix_;
  std::set<std::string> known_;
};

// Levenshtein-closest candidate within a small distance, or "".
std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates);

// yaml-cpp's exception as the one-line error (file, the mark's line).
InputError MalformedYaml(const YAML::Exception& e, const std::string& file);

// Runs `parse` and turns what loaders throw (InputException, yaml-cpp's
// exceptions) into the error value: the one conversion for every loader.
template <class T, class F>
Expected<T> CatchInputErrors(const std::string& file, F&& parse) {
  try {
    return parse();
  } catch (const InputException& e) {
    return e.error();
  } catch (const YAML::Exception& e) {
    return MalformedYaml(e, file);
  }
}

// The most an input file (scenario, sweep, profile, model, measurements,
// reference) may hold: inputs are hand-written YAML of a few KiB, so anything
// near this is a mistake (`run /dev/zero`), not data to read until killed.
inline constexpr std::size_t kMaxInputBytes = std::size_t{16} << 20;  // 16 MiB

// The text of an input file: a regular file of at most kMaxInputBytes.
// Throws InputException naming the file: missing, a directory, not a regular
// file (a device, a pipe), too large, unreadable.
std::string ReadInputFile(const std::string& path);

// Throws InputException `FILE:LINE: KEY: duplicate key (first at line N)` for
// the first key that appears twice in one mapping anywhere under `node`
// (yaml-cpp keeps both pairs and lookups silently take the first).
void CheckDuplicateKeys(const YAML::Node& node, const std::string& file, const std::string& prefix = "");

// Parses YAML text read from `file`: a syntax error, a duplicate key, or an
// empty document (nothing but comments or whitespace) is an InputException
// naming the file and line.
YAML::Node ParseYamlText(const std::string& text, const std::string& file);

// ReadInputFile then ParseYamlText.
YAML::Node LoadYamlFile(const std::string& path);

}  // namespace trainsim
