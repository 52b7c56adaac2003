#include "sim/io/yaml_reader.h"

// Boost.PropertyTree's JSON reader checks a config.json's grammar; the
// placeholders macro keeps its boost/bind.hpp include quiet.
#define BOOST_BIND_GLOBAL_PLACEHOLDERS
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <yaml-cpp/eventhandler.h>

#include <stdexcept>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/core/error.h"
#include "sim/io/json_text.h"

namespace trainsim {
namespace fs = std::filesystem;
namespace {

int LineOf(const YAML::Node& node) {
  // A null node still has a mark when it came from a file; an undefined one
  // (a missing key) has none.
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

std::string KeyText(const YAML::Node& key) { return key.IsScalar() ? key.Scalar() : "?"; }

// The keys of one mapping: the first key written twice, as an exception.
void CheckMapKeys(const YAML::Node& map, const std::string& file, const std::string& prefix) {
  std::map<std::string, int> first_line;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string k = it->first.Scalar();
    const int line = LineOf(it->first);
    auto [at, inserted] = first_line.emplace(k, line);
    if (inserted) continue;
    const std::string path = prefix.empty() ? k : prefix + "." + k;
    throw InputException(InputError{line > 0 ? file : std::string("--set"), line, path,
                                    "duplicate key (first at line " + std::to_string(at->second) + ")"});
  }
}

// Walks the document once. An alias shares its anchor's node (and mark), so
// a node seen at the same position is not walked again: a "billion laughs"
// document costs its size, not its expansion.
void WalkDuplicates(const YAML::Node& node, const std::string& file, const std::string& prefix,
                    std::set<int>& seen, int depth) {
  if (!node.IsMap() && !node.IsSequence()) return;
  const int pos = node.Mark().pos;
  if (pos >= 0 && !seen.insert(pos).second) return;
  if (depth > 200) {
    throw InputException(InputError{file, LineOf(node), prefix, "nested more than 200 levels deep"});
  }
  if (node.IsMap()) {
    CheckMapKeys(node, file, prefix);
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string k = KeyText(it->first);
      WalkDuplicates(it->second, file, prefix.empty() ? k : prefix + "." + k, seen, depth + 1);
    }
  } else {
    for (const auto& v : node) WalkDuplicates(v, file, prefix, seen, depth + 1);
  }
}

std::string Describe(const YAML::Node& n) {
  if (!n.IsDefined()) return "nothing";
  switch (n.Type()) {
    case YAML::NodeType::Null: return "null";
    case YAML::NodeType::Scalar: {
      // A long scalar (a file that is not YAML read as one) is cut: the message stays one short line.
      const std::string v = n.Scalar().size() > 80 ? n.Scalar().substr(0, 77) + "..." : n.Scalar();
      return n.Tag() == "!" ? "the string \"" + v + "\"" : "'" + v + "'";
    }
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "nothing";
  }
}

}  // namespace

YamlIndex::YamlIndex(const YAML::Node& root, const std::string& file) {
  // Depth first, every mapping under a key path (lists are not entered: no override reaches into them).
  struct Walk {
    const std::string& file;
    std::vector<Map>& maps;
    std::set<int> seen;  // an alias shares its anchor's node: indexed once, at its first path
    void operator()(const YAML::Node& node, const std::string& path, int depth) {
      if (!node.IsMap()) return;
      const int pos = node.Mark().pos;
      if (pos >= 0 && !seen.insert(pos).second) return;
      if (depth > 200) throw InputException(InputError{file, LineOf(node), path, "nested more than 200 levels deep"});
      CheckMapKeys(node, file, path);
      Map m{path, node, {}};
      for (auto it = node.begin(); it != node.end(); ++it) {
        const bool scalar = it->first.IsScalar();
        m.keys.push_back(Key{scalar ? it->first.Scalar() : "?", scalar, LineOf(it->first), it->second});
      }
      const size_t at = maps.size();
      maps.push_back(std::move(m));
      for (size_t i = 0; i < maps[at].keys.size(); ++i) {
        const Key k = maps[at].keys[i];
        if (k.scalar) (*this)(k.value, path.empty() ? k.name : path + "." + k.name, depth + 1);
      }
    }
  };
  Walk{file, maps_, {}}(root, "", 0);
}

const YamlIndex::Map* YamlIndex::Find(const std::string& path, const YAML::Node& node) const {
  for (const Map& m : maps_) {
    if (m.path == path && m.node.is(node)) return &m;
  }
  return nullptr;
}

bool YamlIndex::HasMap(const std::string& path) const {
  return std::any_of(maps_.begin(), maps_.end(), [&](const Map& m) { return m.path == path; });
}

bool YamlOverlay::AllRead() const {
  return std::all_of(entries.begin(), entries.end(), [](const Entry& e) { return e.read; });
}

YamlMap::YamlMap(YAML::Node node, std::string file, std::string prefix, const YamlOverlay* overlay)
    : node_(std::move(node)), file_(std::move(file)), prefix_(std::move(prefix)), overlay_(overlay) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
    FailAt(node_, file_, prefix_, "expected a mapping of keys, got " + Describe(node_));
  }
  if (overlay_ && overlay_->index) indexed_ = overlay_->index->Find(prefix_, node_);
  if (indexed_) {
    // The overlay's values for this map (the first 64 entries as bits; more are scanned).
    for (size_t i = 0; i < overlay_->entries.size() && i < 64; ++i) {
      if (*overlay_->entries[i].parent == prefix_) own_entries_ |= uint64_t(1) << i;
    }
    return;  // its keys were checked when it was indexed
  }
  // Documents parsed in memory (the GUI's editor, sweep points) skip LoadYamlFile.
  if (node_.IsMap()) CheckMapKeys(node_, file_, prefix_);
}

const YAML::Node* YamlMap::IndexedValue(std::string_view key) const {
  for (uint64_t m = own_entries_; m; m &= m - 1) {
    YamlOverlay::Entry& e = overlay_->entries[size_t(__builtin_ctzll(m))];
    if (*e.key == key) {
      e.read = true;
      return &e.value;
    }
  }
  for (size_t i = 64; i < overlay_->entries.size(); ++i) {
    YamlOverlay::Entry& e = overlay_->entries[i];
    if (*e.key == key && *e.parent == prefix_) {
      e.read = true;
      return &e.value;
    }
  }
  for (const YamlIndex::Key& k : indexed_->keys) {
    if (k.scalar && k.name == key) return &k.value;
  }
  return nullptr;
}

YAML::Node YamlMap::Lookup(std::string_view key) const {
  if (indexed_) {
    const YAML::Node* v = IndexedValue(key);
    return v ? *v : YAML::Node(YAML::NodeType::Undefined);
  }
  if (!node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  // yaml-cpp's non-const operator[], as before the overlay (a missing key reads as undefined).
  YAML::Node n = node_;
  return n[std::string(key)];
}

InputError YamlMap::ErrorAt(const YAML::Node& node, const std::string& file, const std::string& key, const std::string& message) {
  const int line = LineOf(node);
  // A value without a mark was created by a command-line override; a key that
  // is missing (an undefined node) is missing from the file.
  const bool from_set = line == 0 && node.IsDefined();
  return InputError{from_set ? std::string("--set") : file, line, key, message};
}

void YamlMap::FailAt(const YAML::Node& node, const std::string& file, const std::string& key,
                     const std::string& message) {
  throw InputException(ErrorAt(node, file, key, message));
}

InputError YamlMap::Error(std::string_view key, const std::string& message) const {
  // Initialised, never assigned: assigning one yaml-cpp node to another
  // rewrites the first node's value in the document (a sweep reuses it).
  const YAML::Node value = Lookup(key);
  const bool has = value.IsDefined();
  const YAML::Node at = has ? value : node_;
  const int line = LineOf(at);
  if (line == 0 && LineOf(node_) > 0 && !has) return InputError{file_, LineOf(node_), Path(key), message};
  return ErrorAt(at, file_, Path(key), message);
}

void YamlMap::Fail(std::string_view key, const std::string& message) const { throw InputException(Error(key, message)); }

// known_ holds each key asked for as two bytes of length (little end first) and its characters.
void YamlMap::MarkKnown(std::string_view key) {
  // Appended without looking for it first: most keys are asked for once, and
  // a key listed twice changes neither Known nor the hints of Finish.
  if (key.size() > 0xFFFF) throw std::length_error("YAML key of more than 65535 characters");
  if (known_.empty()) known_.reserve(512);
  known_.push_back(char(key.size() & 0xFF));
  known_.push_back(char(key.size() >> 8));
  known_.append(key);
}

namespace {

// Calls f(key) for each key of a YamlMap's known_ list until it returns true.
template <class F>
bool AnyKnown(const std::string& known, F&& f) {
  const char* p = known.data();
  const char* end = p + known.size();
  while (p < end) {
    const size_t n = size_t(static_cast<unsigned char>(p[0])) | size_t(static_cast<unsigned char>(p[1])) << 8;
    if (f(std::string_view(p + 2, n))) return true;
    p += 2 + n;
  }
  return false;
}

}  // namespace

bool YamlMap::Known(std::string_view key) const {
  return AnyKnown(known_, [&](std::string_view k) { return k == key; });
}

std::vector<std::string> YamlMap::KnownSorted() const {
  std::vector<std::string> k;
  AnyKnown(known_, [&](std::string_view key) {
    k.emplace_back(key);
    return false;
  });
  std::sort(k.begin(), k.end());
  k.erase(std::unique(k.begin(), k.end()), k.end());
  return k;
}

bool YamlMap::Has(std::string_view key) {
  MarkKnown(key);
  if (indexed_) {
    const YAML::Node* v = IndexedValue(key);
    return v && v->IsDefined() && !v->IsNull();
  }
  const YAML::Node n = Lookup(key);
  return n.IsDefined() && !n.IsNull();
}

void YamlMap::Allow(std::string_view key) { MarkKnown(key); }

const YAML::Node* YamlMap::Value(std::string_view key, std::optional<YAML::Node>& hold) {
  MarkKnown(key);
  if (indexed_) return IndexedValue(key);  // no node made for an absent key (most keys take their default)
  hold.emplace(Lookup(key));               // constructed, never assigned (assignment rewrites the document)
  return &*hold;
}

const YAML::Node* YamlMap::SetValue(std::string_view key, std::optional<YAML::Node>& hold) {
  const YAML::Node* v = Value(key, hold);
  return v && v->IsDefined() && !v->IsNull() ? v : nullptr;
}

YAML::Node YamlMap::Get(std::string_view key) {
  MarkKnown(key);
  return Lookup(key);
}

YAML::Node YamlMap::Raw(std::string_view key) { return Get(key); }

std::string YamlMap::String(std::string_view key) {
  auto v = OptString(key);
  if (!v) FailMissing(key, "missing required key");
  return *v;
}

std::optional<std::string> YamlMap::OptString(std::string_view key) {
  std::optional<YAML::Node> hold;
  const YAML::Node* n = SetValue(key, hold);
  if (!n) return std::nullopt;
  if (!n->IsScalar()) Fail(key, "expected a string, got " + Describe(*n));
  return n->Scalar();
}

std::string YamlMap::Choice(std::string_view key, const std::vector<std::string>& choices,
                            const std::optional<std::string>& fallback) {
  auto v = OptString(key);
  if (!v) return FallbackOrFail(key, fallback);
  if (std::find(choices.begin(), choices.end(), *v) == choices.end()) {
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    std::string hint = ClosestMatch(*v, choices);
    Fail(key, "'" + *v + "' is not one of: " + list + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  return *v;
}

double YamlMap::Number(std::string_view key) { return NumberOf(Get(key), key); }

double YamlMap::NumberOf(const YAML::Node& n, std::string_view key) const {
  if (!n.IsScalar()) Fail(key, "expected a number, got " + Describe(n));
  const std::string& s = n.Scalar();
  // A quoted scalar is a string in YAML and in JSON ("32" in a config.json),
  // whatever it spells.
  if (n.Tag() == "!") Fail(key, "expected a number, got the string \"" + s + "\"");
  // Most values are plain whole numbers: up to 15 digits are exact in a
  // double, as std::stod would read them (anything else goes through it).
  if (!s.empty() && s.size() <= 15 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    long long whole = 0;
    for (const char c : s) whole = whole * 10 + (c - '0');
    return double(whole);
  }
  double v = 0;
  try {
    size_t used = 0;
    v = std::stod(s, &used);
    if (used != s.size()) throw std::invalid_argument(s);
  } catch (const std::out_of_range&) {
    Fail(key, "'" + s + "' is out of a double's range (beyond 1.8e308, or nearer 0 than 2.2e-308)");
  } catch (const std::exception&) {
    Fail(key, "expected a number, got '" + s + "'");
  }
  if (!std::isfinite(v)) Fail(key, "expected a finite number, got '" + s + "'");
  return v;
}

int YamlMap::WholeNumber(std::string_view key, std::optional<int> fallback, int min) {
  std::optional<YAML::Node> hold;
  const YAML::Node* v = SetValue(key, hold);
  if (!v) return FallbackOrFail(key, fallback);
  const YAML::Node& n = *v;
  const double x = NumberOf(n, key);
  if (x != std::floor(x)) Fail(key, "expected a whole number, got " + n.Scalar());
  if (x < min) Fail(key, (min > 0 ? "must be positive, got " : "must not be negative, got ") + n.Scalar());
  if (x > kMostWholeNumber) Fail(key, "implausibly large: " + n.Scalar());
  return static_cast<int>(x);
}

int YamlMap::PositiveInt(std::string_view key, std::optional<int> fallback) { return WholeNumber(key, fallback, 1); }

int YamlMap::NonNegativeInt(std::string_view key, std::optional<int> fallback) { return WholeNumber(key, fallback, 0); }

double YamlMap::BoundedDouble(std::string_view key, std::optional<double> fallback, bool (*within)(double),
                              const char* must) {
  std::optional<YAML::Node> hold;
  const YAML::Node* v = SetValue(key, hold);
  if (!v) return FallbackOrFail(key, fallback);
  const double x = NumberOf(*v, key);
  if (!within(x)) Fail(key, std::string(must) + ", got " + v->Scalar());
  return x;
}

double YamlMap::PositiveDouble(std::string_view key, std::optional<double> fallback) {
  return BoundedDouble(key, fallback, [](double x) { return x > 0; }, "must be positive");
}

double YamlMap::NonNegativeDouble(std::string_view key, std::optional<double> fallback) {
  return BoundedDouble(key, fallback, [](double x) { return x >= 0; }, "must not be negative");
}

double YamlMap::Fraction(std::string_view key, std::optional<double> fallback) {
  return BoundedDouble(key, fallback, [](double x) { return x > 0 && x <= 1; }, "must be a fraction in (0, 1]");
}

bool YamlMap::Bool(std::string_view key, std::optional<bool> fallback) {
  std::optional<YAML::Node> hold;
  const YAML::Node* v = SetValue(key, hold);
  if (!v) return FallbackOrFail(key, fallback);
  const YAML::Node& n = *v;
  const std::string s = n.IsScalar() && n.Tag() != "!" ? n.Scalar() : "";
  if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "False" || s == "no" || s == "off") return false;
  Fail(key, "expected true or false, got " + Describe(n));
}

std::optional<YamlMap> YamlMap::OptMap(std::string_view key) {
  std::optional<YAML::Node> hold;
  const YAML::Node* n = SetValue(key, hold);
  if (!n) return std::nullopt;
  if (!n->IsMap()) Fail(key, "expected a mapping of keys, got " + Describe(*n));
  return YamlMap(*n, file_, Path(key), overlay_);
}

YamlMap YamlMap::Map(std::string_view key) {
  auto m = OptMap(key);
  if (m) return std::move(*m);
  FailMissing(key, "missing required section");
}

void YamlMap::FailMissing(std::string_view key, const std::string& message) const {
  // A misspelt key ("global_bacth") is the likelier mistake than a missing
  // one: name the key the user wrote, at its line, as Finish would. Not a
  // short key or one that extends the wanted one, or is extended by it: those
  // are keys of their own not read yet ("s" beside a missing "k", "node"
  // beside a missing "nodes").
  const std::vector<std::string> wanted = {std::string(key)};
  const auto typo = FirstUnaskedOwnKey([&](const std::string& k) {
    if (!declared_.empty()) return std::find(declared_.begin(), declared_.end(), k) == declared_.end() && ClosestMatch(k, wanted) == wanted[0];
    const bool related = k.rfind(wanted[0], 0) == 0 || wanted[0].rfind(k, 0) == 0;
    return k.size() >= 4 && !related && ClosestMatch(k, wanted) == wanted[0];
  });
  if (typo) FailUnknownKey(typo->first, typo->second, wanted[0]);
  Fail(key, message);
}

// An empty key ("": 5) is a key like any other: none asks for it.
std::optional<std::pair<std::string, int>> YamlMap::FirstUnaskedOwnKey(const std::function<bool(const std::string&)>& pick) const {
  if (!node_.IsMap()) return std::nullopt;
  if (indexed_) {
    for (const YamlIndex::Key& k : indexed_->keys) {
      if (!Known(k.name) && pick(k.name)) return std::pair{k.name, k.line};
    }
    return std::nullopt;
  }
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = it->first.IsScalar() ? it->first.Scalar() : "?";
    if (!Known(k) && pick(k)) return std::pair{k, LineOf(it->first)};
  }
  return std::nullopt;
}

void YamlMap::FailUnknownKey(const std::string& key, int line, const std::string& hint) const {
  throw InputException(InputError{line > 0 ? file_ : std::string("--set"), line, Path(key),
                                  "unknown key" + (hint.empty() ? std::string() : " (did you mean '" + hint + "'?)")});
}

void YamlMap::Finish() {
  if (!node_.IsMap()) return;
  if (const auto unasked = FirstUnaskedOwnKey([](const std::string&) { return true; })) {
    FailUnknownKey(unasked->first, unasked->second, ClosestMatch(unasked->first, KnownSorted()));
  }
  if (!indexed_) return;
  // Then the overlay's new keys (SetDottedKey appends them).
  for (const YamlOverlay::Entry& e : overlay_->entries) {
    if (*e.parent != prefix_ || Known(*e.key)) continue;
    const bool own = std::any_of(indexed_->keys.begin(), indexed_->keys.end(), [&](const YamlIndex::Key& k) { return k.scalar && k.name == *e.key; });
    if (!own) FailUnknownKey(*e.key, 0, ClosestMatch(*e.key, KnownSorted()));
  }
}

std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  // A truncated name ("xe9680" for "xe9680-h100") is the likeliest slip.
  for (const auto& c : candidates) {
    if (word.size() >= 3 && c.rfind(word, 0) == 0) return c;
  }
  for (const auto& c : candidates) {
    std::vector<size_t> prev(c.size() + 1), cur(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        const size_t sub = prev[j - 1] + (std::tolower(word[i - 1]) == std::tolower(c[j - 1]) ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      }
      std::swap(prev, cur);
    }
    // Of two as near, the one sharing the longer start: a name extended by a
    // version ("deepseek_v32") is likelier the one it extends than a sibling;
    // then the one as long as the word (a mistyped letter, "nodez" for
    // "nodes", is likelier than a letter too many).
    const auto shared = [&](const std::string& x) {
      return size_t(std::mismatch(word.begin(), word.begin() + std::min(word.size(), x.size()), x.begin()).first - word.begin());
    };
    const auto length_gap = [&](const std::string& x) { return x.size() > word.size() ? x.size() - word.size() : word.size() - x.size(); };
    const bool nearer_start = !best.empty() && (shared(c) > shared(best) || (shared(c) == shared(best) && length_gap(c) < length_gap(best)));
    if (prev[c.size()] < best_d || (prev[c.size()] == best_d && nearer_start)) {
      best_d = prev[c.size()];
      best = c;
    }
  }
  return best;
}

InputError MalformedYaml(const YAML::Exception& e, const std::string& file) {
  return InputError{file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "malformed YAML: " + e.msg};
}

std::string ReadInputFile(const std::string& path) {
  auto fail = [&](const std::string& what) { throw InputException(InputError{path, 0, "", what}); };
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) fail("cannot open file");
  if (fs::is_directory(st)) fail("is a directory, not a file");
  if (!fs::is_regular_file(st)) fail("not a regular file (a device, pipe or socket); inputs are read from files");
  const auto size = fs::file_size(path, ec);
  const std::string limit = std::to_string(kMaxInputBytes >> 20) + " MiB";
  if (!ec && size > kMaxInputBytes) fail("larger than the " + limit + " input limit");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open file");
  // Read in chunks and stop past the limit: the file may grow after the stat.
  std::string text;
  if (!ec) text.reserve(static_cast<size_t>(size));
  char chunk[1 << 16];
  while (in) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes) fail("larger than the " + limit + " input limit");
  }
  if (in.bad()) fail("cannot read file");
  return text;
}

void CheckDuplicateKeys(const YAML::Node& node, const std::string& file, const std::string& prefix) {
  std::set<int> seen;
  WalkDuplicates(node, file, prefix, seen, 0);
}

namespace {

// Where each document of a YAML stream starts and whether it holds anything:
// the parser's events, without building the nodes.
class DocumentScan : public YAML::EventHandler {
 public:
  struct Document {
    YAML::Mark start;
    int content_line = 0;  // 1-based line of its first value that is not null; 0: none
  };
  std::vector<Document> documents;

  void OnDocumentStart(const YAML::Mark& mark) override { documents.push_back({mark, 0}); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Content(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { Content(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { Content(mark); }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { Content(mark); }
  void OnMapEnd() override {}

 private:
  void Content(const YAML::Mark& mark) {
    if (!documents.empty() && documents.back().content_line == 0) documents.back().content_line = mark.line + 1;
  }
};

}  // namespace

YAML::Node ParseYamlText(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    // A second document (after "---") would be dropped without a word: what
    // its writer meant to change would not be simulated. The documents are
    // scanned one at a time rather than by YAML::LoadAll, which loops without
    // end, a document per pass, on a stream the parser cannot get past (a
    // top-level ',': yaml-cpp 0.7, jbeder/yaml-cpp#1040): a document that
    // starts where the one before it did is that.
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentScan scan;
    while (parser.HandleNextDocument(scan)) {
      const auto& d = scan.documents;
      if (d.size() >= 2 && d[d.size() - 1].start.pos == d[d.size() - 2].start.pos) {
        throw InputException(InputError{file, d.back().start.line + 1, "",
                                        "malformed YAML: the parser cannot read on from here (a ',' or other flow indicator "
                                        "outside a [list] or {mapping}?)"});
      }
      if (d.size() >= 2 && d.back().content_line > 0) {
        throw InputException(InputError{file, d.back().content_line, "",
                                        "a second YAML document (after '---'): a scenario or profile is one document"});
      }
    }
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputException(MalformedYaml(e, file));
  }
  if (!root.IsDefined() || root.IsNull()) {
    // A document that is only "null" or "~" is not an empty file: say what it holds.
    const bool written_null = root.IsDefined() && root.Mark().line >= 0;
    throw InputException(InputError{file, written_null ? LineOf(root) : 0, "",
                                    written_null ? "the document is null; expected a mapping of keys"
                                                 : "the file is empty (nothing but comments or blank lines); expected a mapping of keys"});
  }
  CheckDuplicateKeys(root, file);
  return root;
}

YAML::Node LoadYamlFile(const std::string& path) { return ParseYamlText(ReadInputFile(path), path); }

namespace {

// The first NaN, Infinity or -Infinity outside a string on line `line` (1-based)
// of `text`: values Python's json module writes and reads that JSON has not.
// Empty when the line has none.
std::string PythonOnlyJsonLiteral(const std::string& text, int line) {
  size_t at = 0;
  for (int l = 1; l < line && at != std::string::npos; ++l) {
    at = text.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  if (at == std::string::npos) return "";
  const size_t end = std::min(text.size(), text.find('\n', at));
  bool in_string = false;
  for (size_t i = at; i < end; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c))) continue;
    size_t j = i;
    while (j < end && std::isalnum(static_cast<unsigned char>(text[j]))) ++j;
    const std::string word = text.substr(i, j - i);
    if (word == "NaN" || word == "Infinity") return (word == "Infinity" && i > at && text[i - 1] == '-') ? "-Infinity" : word;
    i = j - 1;
  }
  return "";
}

}  // namespace

YAML::Node LoadJsonFile(const std::string& path) {
  const std::string text = ReadInputFile(path);
  // YAML reads JSON and much that is not: text after the object, a second
  // object, 'quotes', trailing commas, aliases. A config.json that only a
  // YAML reader takes is not the file transformers reads.
  // Boost's reader recurses once per level and has no limit of its own: a
  // file nested a hundred thousand deep would overflow the stack. The limit
  // is the YAML reader's.
  int depth = 0;
  ForEachJsonBracket(text, 0, [&](char c, size_t at) {
    depth += c == '{' || c == '[' ? 1 : -1;
    if (depth <= 200) return true;
    const int line = 1 + int(std::count(text.begin(), text.begin() + long(at), '\n'));
    throw InputException(InputError{path, line, "", "nested more than 200 levels deep"});
  });
  std::istringstream in(text);
  boost::property_tree::ptree unused;
  try {
    boost::property_tree::read_json(in, unused);
  } catch (const boost::property_tree::json_parser_error& e) {
    const int line = static_cast<int>(e.line());
    const std::string literal = PythonOnlyJsonLiteral(text, line);
    throw InputException(InputError{
        path, line, "",
        literal.empty() ? "malformed JSON: " + e.message()
                        : "malformed JSON: '" + literal + "' is not a JSON value (Python's json module writes it for a float that "
                          "is not finite and reads it back; JSON and trainsim do not): write a number or null"});
  }
  return ParseYamlText(text, path);
}

}  // namespace trainsim
