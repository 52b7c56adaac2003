// Strict, typed reading of a YAML mapping with errors that name file, line
// and key. A YamlMap remembers which keys were read; Finish() rejects every
// key that was not, with a "did you mean" suggestion from the keys that were.
// A mapping with a key written twice is rejected when the YamlMap is made
// (and, for whole files, when they are loaded).
// All read functions throw InputException; loaders catch it at their boundary.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/error.h"

namespace trainsim {

// Location of a YAML node for messages: the file, or "--set" for nodes that
// came from a command-line override (they carry no mark).
struct YamlSource {
  std::string file;
};

// The mappings of a parsed document, indexed once by dotted path: their keys
// (in order, with their lines) and values, so that reading a key costs no
// yaml-cpp lookup. Throws, as YamlMap does, for a key written twice.
class YamlIndex {
 public:
  YamlIndex(const YAML::Node& root, const std::string& file);
  struct Key {
    std::string name;  // "?" for a key that is not a scalar (never found by name)
    bool scalar = true;
    int line = 0;  // of the key, 0 when it has no mark
    YAML::Node value;
  };
  struct Map {
    std::string path;
    YAML::Node node;
    std::vector<Key> keys;
  };
  // The mapping at `path`, when it is `node` (not one put there since).
  const Map* Find(const std::string& path, const YAML::Node& node) const;
  bool HasMap(const std::string& path) const;

 private:
  std::vector<Map> maps_;
};

// Values set over an indexed document without writing into it (a sweep
// point's axis values over the base scenario, which every point shares): a
// YamlMap made with the overlay reads a key's value from it where one is set,
// and from the document elsewhere, exactly as if SetDottedKey had written the
// values into the document (an existing key keeps its place, a new one comes
// after the map's own keys). Only the maps of the index take values from it.
struct YamlOverlay {
  const YamlIndex* index = nullptr;
  struct Entry {
    const std::string* parent;  // dotted path of the mapping
    const std::string* key;
    YAML::Node value;           // without marks, as SetDottedKey would store it
    bool read = false;          // set when a YamlMap reads it
  };
  mutable std::vector<Entry> entries;
  bool AllRead() const;
};

// The largest count a whole-number key takes (steps, nodes, layers): past it
// a value is a slip (a unit or an extra digit), not a plan.
constexpr double kMostWholeNumber = 1e9;

class YamlMap {
 public:
  // `prefix` is the dotted path of this map ("" at the top level).
  YamlMap(YAML::Node node, std::string file, std::string prefix = "", const YamlOverlay* overlay = nullptr);

  bool Has(std::string_view key);
  // Marks the key as known without reading it (for keys handled elsewhere).
  void Allow(std::string_view key);
  // Whether a read or Allow has asked for the key.
  bool Known(std::string_view key) const;
  // The keys asked for in the order a std::set held them (the hints of Finish depend on it).
  std::vector<std::string> KnownSorted() const;

  std::string String(std::string_view key);
  std::optional<std::string> OptString(std::string_view key);
  std::string Choice(std::string_view key, const std::vector<std::string>& choices,
                     const std::optional<std::string>& fallback = std::nullopt);
  int PositiveInt(std::string_view key, std::optional<int> fallback = std::nullopt);
  int NonNegativeInt(std::string_view key, std::optional<int> fallback = std::nullopt);
  double PositiveDouble(std::string_view key, std::optional<double> fallback = std::nullopt);
  double NonNegativeDouble(std::string_view key, std::optional<double> fallback = std::nullopt);
  double Fraction(std::string_view key, std::optional<double> fallback = std::nullopt);  // in (0, 1]
  // A number that `within` accepts, else the error "<key>: <must>, got <value>".
  double BoundedDouble(std::string_view key, std::optional<double> fallback, bool (*within)(double), const char* must);
  bool Bool(std::string_view key, std::optional<bool> fallback = std::nullopt);
  std::optional<YamlMap> OptMap(std::string_view key);
  YamlMap Map(std::string_view key);
  YAML::Node Raw(std::string_view key);  // marks the key known; may be undefined

  // Throws for the first key present in the map that no read asked for.
  void Finish();

  // Names every key this map may hold, for FailMissing: a present key that
  // is none of them and is near a missing required one is its misspelling,
  // even a truncation of it ("trainin"). Without it, a key that a missing one
  // extends or is extended by is taken for a key of its own not read yet.
  void DeclareKeys(std::vector<std::string> keys) { declared_ = std::move(keys); }
  // Throws for an absent required key: the unknown-key error of a present key
  // that is a misspelling of it ("paralelism", "global_bacth"), else `message`.
  [[noreturn]] void FailMissing(std::string_view key, const std::string& message) const;

  [[noreturn]] void Fail(std::string_view key, const std::string& message) const;
  [[noreturn]] static void FailAt(const YAML::Node& node, const std::string& file,
                                  const std::string& key, const std::string& message);
  // The error Fail / FailAt throw, as a value (for a loader that returns it:
  // a throw costs tens of microseconds, and most points of a sweep are invalid).
  InputError Error(std::string_view key, const std::string& message) const;
  static InputError ErrorAt(const YAML::Node& node, const std::string& file, const std::string& key, const std::string& message);

  const std::string& file() const { return file_; }
  std::string Path(std::string_view key) const { return prefix_.empty() ? std::string(key) : std::string(prefix_).append(1, '.').append(key); }
  const YAML::Node& node() const { return node_; }

 private:
  YAML::Node Get(std::string_view key);
  // The key's value, marked known, as Get but without making a node on an
  // indexed map: nullptr when absent there; `hold` keeps a looked-up node.
  const YAML::Node* Value(std::string_view key, std::optional<YAML::Node>& hold);
  // Value, when the key is set: nullptr when it is absent or null (a key
  // written without a value takes its default like an absent one).
  const YAML::Node* SetValue(std::string_view key, std::optional<YAML::Node>& hold);
  // What an unset key reads as: the fallback, else the missing-key error.
  template <typename T>
  T FallbackOrFail(std::string_view key, const std::optional<T>& fallback) const {
    if (!fallback) FailMissing(key, "missing required key");
    return *fallback;
  }
  // The key's value node (the overlay's, the index's or the node's own; undefined when absent).
  YAML::Node Lookup(std::string_view key) const;
  // On an indexed map, the key's value without making a node: nullptr when absent.
  const YAML::Node* IndexedValue(std::string_view key) const;
  void MarkKnown(std::string_view key);
  // The first key of the map itself (not the overlay's) that no read asked for
  // and that `pick` accepts: its name and line; none when every key was asked for.
  std::optional<std::pair<std::string, int>> FirstUnaskedOwnKey(const std::function<bool(const std::string&)>& pick) const;
  // Throws the unknown-key error for `key` at `line` (0: it came from --set), with a "did you mean" when `hint` is set.
  [[noreturn]] void FailUnknownKey(const std::string& key, int line, const std::string& hint) const;
  double Number(std::string_view key);
  double NumberOf(const YAML::Node& n, std::string_view key) const;  // n: the key's value
  // PositiveInt and NonNegativeInt: a whole number of at least `min` (1 or 0).
  int WholeNumber(std::string_view key, std::optional<int> fallback, int min);

  YAML::Node node_;
  std::string file_;
  std::string prefix_;
  std::string known_;  // keys asked for, one buffer (a map reads a few dozen: no string each), as MarkKnown writes them
  const YamlOverlay* overlay_ = nullptr;
  const YamlIndex::Map* indexed_ = nullptr;  // node_ as the overlay's index holds it
  uint64_t own_entries_ = 0;  // bit i: the overlay's entry i is a key of this map
  std::vector<std::string> declared_;  // DeclareKeys; empty: not declared
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
// yaml-cpp holds a few hundred bytes per node: 4 MiB of short list items
// parse into ~0.3 GiB, 16 MiB took more than 1 GiB.
inline constexpr std::size_t kMaxInputBytes = std::size_t{4} << 20;  // 4 MiB

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

// A JSON file (a Hugging Face config.json): ReadInputFile, then the text must
// be strict JSON (RFC 8259: no trailing commas, comments, single quotes, NaN,
// nothing after the value), else an InputException naming the file, the line
// and what the JSON grammar expected there; then ParseYamlText, as JSON is
// YAML and its nodes carry the lines every later error names.
YAML::Node LoadJsonFile(const std::string& path);

}  // namespace trainsim
