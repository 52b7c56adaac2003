#include "sim/sweep/sweep_spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "sim/io/data_paths.h"
#include "sim/io/file_cache.h"
#include "sim/io/model_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/yaml_reader.h"

namespace trainsim {

// ---------------------------------------------------------------------------
// Filter expressions: comparisons of sums of products over axis keys, base
// scenario keys, numbers and quoted strings, joined by `and` / `or`.
//   parallelism.tensor * parallelism.pipeline <= cluster.nodes * 8
//   model == 'llama2-7b' or cluster.nodes >= 4

namespace {

struct Value {
  bool is_num = false;
  double num = 0;
  std::string str;
  static Value Of(const std::string& text) {
    Value v;
    v.str = text;
    try {
      size_t used = 0;
      v.num = std::stod(text, &used);
      v.is_num = used == text.size() && !text.empty();
    } catch (const std::exception&) {
      v.is_num = false;
    }
    return v;
  }
  static Value Num(double d) {
    Value v;
    v.is_num = true;
    v.num = d;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    v.str = buf;
    return v;
  }
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
struct Node {
  enum Kind { kNum, kStr, kKey, kBinary } kind = kNum;
  std::string text;  // number/string literal, key, or operator
  NodePtr lhs, rhs;
};

// A key lookup: the point's value for an axis key, else the base's scalar.
using Lookup = std::function<std::optional<std::string>(const std::string&)>;

class ExprParser {
 public:
  explicit ExprParser(const std::string& s) : s_(s) {}

  NodePtr Parse() {
    NodePtr n = Or();
    Skip();
    if (pos_ != s_.size()) Error("unexpected '" + s_.substr(pos_) + "'");
    return n;
  }

 private:
  [[noreturn]] void Error(const std::string& m) { throw std::runtime_error(m); }
  void Skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Eat(const std::string& tok) {
    Skip();
    if (s_.compare(pos_, tok.size(), tok) != 0) return false;
    // Word operators must end at a word boundary.
    if (std::isalpha(static_cast<unsigned char>(tok[0])) && pos_ + tok.size() < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[pos_ + tok.size()])) || s_[pos_ + tok.size()] == '_')) {
      return false;
    }
    pos_ += tok.size();
    return true;
  }
  // Bounds that keep the recursive parser and evaluator within the stack
  // (a filter is a line of arithmetic and comparisons, not a program).
  static constexpr int kMaxDepth = 64;
  static constexpr int kMaxTerms = 1000;
  NodePtr Bin(const std::string& op, NodePtr a, NodePtr b) {
    if (++terms_ > kMaxTerms) Error("more than " + std::to_string(kMaxTerms) + " operations");
    auto n = std::make_unique<Node>();
    n->kind = Node::kBinary;
    n->text = op;
    n->lhs = std::move(a);
    n->rhs = std::move(b);
    return n;
  }
  NodePtr Or() {
    NodePtr n = And();
    while (Eat("or") || Eat("||")) n = Bin("or", std::move(n), And());
    return n;
  }
  NodePtr And() {
    NodePtr n = Cmp();
    while (Eat("and") || Eat("&&")) n = Bin("and", std::move(n), Cmp());
    return n;
  }
  NodePtr Cmp() {
    NodePtr n = Sum();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (Eat(op)) return Bin(op, std::move(n), Sum());
    }
    return n;
  }
  NodePtr Sum() {
    NodePtr n = Prod();
    while (true) {
      if (Eat("+")) n = Bin("+", std::move(n), Prod());
      else if (Eat("-")) n = Bin("-", std::move(n), Prod());
      else return n;
    }
  }
  NodePtr Prod() {
    NodePtr n = Atom();
    while (true) {
      if (Eat("*")) n = Bin("*", std::move(n), Atom());
      else if (Eat("/")) n = Bin("/", std::move(n), Atom());
      else if (Eat("%")) n = Bin("%", std::move(n), Atom());
      else return n;
    }
  }
  NodePtr Atom() {
    Skip();
    if (pos_ >= s_.size()) Error("expression ends early");
    auto n = std::make_unique<Node>();
    const char c = s_[pos_];
    if (c == '(') {
      if (++depth_ > kMaxDepth) Error("parentheses nested more than " + std::to_string(kMaxDepth) + " deep");
      ++pos_;
      n = Or();
      if (!Eat(")")) Error("missing ')'");
      --depth_;
      return n;
    }
    if (c == '\'' || c == '"') {
      const size_t end = s_.find(c, pos_ + 1);
      if (end == std::string::npos) Error("unterminated string");
      n->kind = Node::kStr;
      n->text = s_.substr(pos_ + 1, end - pos_ - 1);
      pos_ = end + 1;
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t used = 0;
      try {
        (void)std::stod(s_.substr(pos_), &used);
      } catch (const std::exception&) {
        Error("bad number at '" + s_.substr(pos_) + "'");
      }
      n->kind = Node::kNum;
      n->text = s_.substr(pos_, used);
      pos_ += used;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = pos_;
      while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_' || s_[end] == '.')) ++end;
      n->kind = Node::kKey;
      n->text = s_.substr(pos_, end - pos_);
      pos_ = end;
      return n;
    }
    Error(std::string("unexpected '") + c + "'");
  }

  const std::string& s_;
  size_t pos_ = 0;
  int depth_ = 0;
  int terms_ = 0;
};

void CollectKeys(const Node& n, std::vector<std::string>& out) {
  if (n.kind == Node::kKey) out.push_back(n.text);
  if (n.lhs) CollectKeys(*n.lhs, out);
  if (n.rhs) CollectKeys(*n.rhs, out);
}

Value Eval(const Node& n, const Lookup& lookup) {
  switch (n.kind) {
    case Node::kNum: return Value::Of(n.text);
    case Node::kStr: {
      Value v;
      v.str = n.text;
      return v;
    }
    case Node::kKey: {
      auto v = lookup(n.text);
      if (!v) throw std::runtime_error("unknown key '" + n.text + "'");
      return Value::Of(*v);
    }
    case Node::kBinary: break;
  }
  const std::string& op = n.text;
  if (op == "and") return Value::Num(Eval(*n.lhs, lookup).num != 0 && Eval(*n.rhs, lookup).num != 0);
  if (op == "or") return Value::Num(Eval(*n.lhs, lookup).num != 0 || Eval(*n.rhs, lookup).num != 0);
  const Value a = Eval(*n.lhs, lookup), b = Eval(*n.rhs, lookup);
  if (op == "==" || op == "!=") {
    const bool eq = (a.is_num && b.is_num) ? a.num == b.num : a.str == b.str;
    return Value::Num(op == "==" ? eq : !eq);
  }
  if (!a.is_num || !b.is_num) {
    throw std::runtime_error("'" + (a.is_num ? b.str : a.str) + "' is not a number (for '" + op + "')");
  }
  if (op == "<") return Value::Num(a.num < b.num);
  if (op == "<=") return Value::Num(a.num <= b.num);
  if (op == ">") return Value::Num(a.num > b.num);
  if (op == ">=") return Value::Num(a.num >= b.num);
  if (op == "+") return Value::Num(a.num + b.num);
  if (op == "-") return Value::Num(a.num - b.num);
  if (op == "*") return Value::Num(a.num * b.num);
  if (b.num == 0) throw std::runtime_error("division by zero");
  if (op == "/") return Value::Num(a.num / b.num);
  return Value::Num(std::fmod(a.num, b.num));
}

}  // namespace

class SweepFilter {
 public:
  SweepFilter(std::string text, int line, NodePtr root) : text_(std::move(text)), line_(line), root_(std::move(root)) {}
  const std::string& text() const { return text_; }
  int line() const { return line_; }
  const Node& root() const { return *root_; }

 private:
  std::string text_;
  int line_;
  NodePtr root_;
};

// ---------------------------------------------------------------------------

namespace {

constexpr size_t kMaxPoints = 10'000'000;
// The most values one axis takes, as a list or a range: each costs its
// parsed override in every document the points reuse (about 1.5 KB), and
// no question needs more of one setting (a 1.9M-value list held 2.8 GB).
constexpr size_t kMaxAxisValues = 100'000;

// Every collection of `n` in flow style: a value written in block style keeps
// it in its nodes, which the emitter honours over its Flow setting.
void SetFlowStyle(YAML::Node n) {
  if (n.IsMap()) {
    n.SetStyle(YAML::EmitterStyle::Flow);
    for (auto it = n.begin(); it != n.end(); ++it) SetFlowStyle(it->second);
  } else if (n.IsSequence()) {
    n.SetStyle(YAML::EmitterStyle::Flow);
    for (auto it = n.begin(); it != n.end(); ++it) SetFlowStyle(*it);
  }
}

// `n` as one line of YAML flow text.
std::string FlowYaml(const YAML::Node& n) {
  YAML::Node copy = YAML::Clone(n);
  SetFlowStyle(copy);
  YAML::Emitter e;
  e << YAML::Flow << copy;
  return e.c_str();
}

// An axis value as its rows show it, on one line: a results file writes its
// settings one row a line, and --resume finds a finished point by them.
std::string DisplayValue(const YAML::Node& v) {
  if (!v.IsScalar()) return FlowYaml(v);
  std::string out;
  for (char c : v.Scalar()) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out;
}


int LineOf(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

[[noreturn]] void FailAt(const std::string& file, int line, const std::string& key, const std::string& msg) {
  throw InputException(InputError{file, line, key, msg});
}

// The base scenario's scalar at a dotted key, if any.
std::optional<std::string> DottedScalar(const YAML::Node& root, const std::string& dotted) {
  std::vector<YAML::Node> chain{root};
  size_t start = 0;
  while (true) {
    const size_t dot = dotted.find('.', start);
    const std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const YAML::Node cur = chain.back();
    if (!cur.IsMap()) return std::nullopt;
    const YAML::Node next = cur[part];
    if (!next.IsDefined()) return std::nullopt;
    chain.push_back(next);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!chain.back().IsScalar()) return std::nullopt;
  return chain.back().Scalar();
}

std::string FormatNumber(double v, bool integral) {
  char buf[48];
  if (integral) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

// How many values or points, in an error: a count past 1e15 (a range of
// from: 1, to: 1e47) as "about 1e+47", not as 48 digits.
std::string CountText(double n) {
  if (n < 1e15) return FormatNumber(n, true);
  if (!std::isfinite(n)) return "more than 1e+308";  // from 1 to 1e300 by 1e-300
  char buf[32];
  std::snprintf(buf, sizeof buf, "about %.2g", n);
  return buf;
}

// An axis value that is a finite number as a whole (YAML's plain decimal or
// exponent forms, e.g. "1e9", "1.0e9", "+4"), else nullopt (a name, a list).
std::optional<double> AxisNumber(const std::string& v) {
  if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-' || v[0] == '+' || v[0] == '.')) {
    return std::nullopt;
  }
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  // strtod also reads hex, "inf" and "nan": not what an axis spells as a number here.
  if (end != v.c_str() + v.size() || !std::isfinite(x) || v.find_first_of("xXnN") != std::string::npos) return std::nullopt;
  return x;
}

// A range {from, to, step} (arithmetic, inclusive) or {from, to, factor} (geometric).
void ParseRange(const YAML::Node& n, const std::string& file, const std::string& key, SweepAxis& axis) {
  YamlMap m(n, file, key);
  // Its keys are known before any is read: a misspelt one ("too") is named
  // as unknown first, not reported as the key it misspells being missing.
  for (const char* k : {"from", "to", "step", "factor"}) m.Allow(k);
  m.Finish();
  auto integral = [&](const char* k) {
    const YAML::Node v = m.node()[k];
    if (!v.IsDefined() || !v.IsScalar()) return true;
    const std::string& s = v.Scalar();
    return s.find_first_of(".eE") == std::string::npos;
  };
  YAML::Node fromn = m.node()["from"];
  if (!fromn.IsDefined()) m.Fail("from", "missing required key (a range is {from, to, step} or {from, to, factor})");
  // Numbers may be negative or zero in principle (e.g. a dropout range), so read them loosely.
  auto number = [&](const char* k) {
    YAML::Node v = m.Raw(k);
    double d = 0;
    try {
      size_t used = 0;
      d = std::stod(v.IsScalar() ? v.Scalar() : std::string("?"), &used);
      if (used != v.Scalar().size()) throw std::invalid_argument("x");
    } catch (const std::exception&) {
      m.Fail(k, "expected a number, got " + (v.IsScalar() ? "'" + v.Scalar() + "'" : std::string("a non-scalar")));
    }
    if (!std::isfinite(d)) m.Fail(k, "expected a finite number");
    return d;
  };
  const double from = number("from");
  if (!m.Has("to")) m.Fail("to", "missing required key");
  const double to = number("to");
  const bool has_step = m.Has("step"), has_factor = m.Has("factor");
  if (has_step == has_factor) m.Fail(has_step ? "factor" : "step", "a range takes exactly one of step or factor");
  m.Finish();
  const bool ints = integral("from") && integral("to") && (has_step ? integral("step") : true);
  std::vector<double> vals;
  if (has_step) {
    const double step = number("step");
    if (step <= 0) m.Fail("step", "must be positive");
    if (to < from) m.Fail("to", "must not be below from");
    const double count = std::floor((to - from) / step + 1e-9) + 1;
    if (count > double(kMaxAxisValues)) {
      m.Fail("step", "the range has " + CountText(count) + " values, more than an axis takes (" + FormatNumber(double(kMaxAxisValues), true) + ")");
    }
    for (long i = 0; i < long(count); ++i) vals.push_back(from + i * step);
  } else {
    const double factor = number("factor");
    if (factor <= 1) m.Fail("factor", "must be above 1");
    if (from <= 0) m.Fail("from", "a geometric range must start above 0");
    if (to < from) m.Fail("to", "must not be below from");
    const double count = std::floor((std::log(to) - std::log(from)) / std::log(factor) + 1e-9) + 1;
    if (count > double(kMaxAxisValues)) {
      m.Fail("factor", "the range has " + CountText(count) + " values, more than an axis takes (" + FormatNumber(double(kMaxAxisValues), true) + ")");
    }
    for (double v = from; v <= to * (1 + 1e-12); v *= factor) vals.push_back(v);
  }
  for (double v : vals) {
    const bool is_int = ints && v == std::floor(v);
    axis.values.push_back(FormatNumber(v, is_int));
    axis.yaml.push_back(axis.values.back());
  }
}

// A value's identity: numbers by value (1e9, 1.0e9 and 1000000000 are one
// point written three ways), anything else by its text.
std::string CanonicalValue(const std::string& v) {
  const std::optional<double> x = AxisNumber(v);
  if (!x) return v;
  char buf[48];
  std::snprintf(buf, sizeof buf, "#%.17g", *x);  // round-trips: two numbers are one point only when equal
  return buf;
}

// The axis whose values are maps that `key` is inside (parallelism for
// parallelism.tensor), or -1.
int MapAxisHolding(const std::vector<SweepAxis>& axes, const std::string& key) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (key.rfind(axes[i].key + ".", 0) == 0) return int(i);
  }
  return -1;
}

// The override an axis value becomes. A file it names by a relative path is
// found beside the sweep file that names it, as `base:` is, wherever the
// sweep runs from; where there is none, the path stays as written (beside
// the base scenario, then the working directory, as the base's own paths).
std::string OverrideYaml(const YAML::Node& v, const std::string& sweep_file) {
  if (v.IsScalar() && v.Tag() != "!" && LooksLikePath(v.Scalar()) && !std::filesystem::path(v.Scalar()).is_absolute()) {
    std::error_code ec;
    const std::filesystem::path beside = std::filesystem::path(DirName(sweep_file)) / v.Scalar();
    if (std::filesystem::is_regular_file(beside, ec)) {
      return FlowYaml(YAML::Node(std::filesystem::absolute(beside, ec).lexically_normal().string()));
    }
  }
  return FlowYaml(v);
}

void ParseAxisValues(const YAML::Node& n, const std::string& file, SweepAxis& axis, bool zipped) {
  if (n.IsSequence()) {
    if (n.size() == 0) FailAt(file, LineOf(n), axis.key, "an axis needs at least one value");
    if (n.size() > kMaxAxisValues) {
      FailAt(file, LineOf(n), axis.key, "a list of " + FormatNumber(double(n.size()), true) + " values, more than an axis takes (" +
                                            FormatNumber(double(kMaxAxisValues), true) + ")");
    }
    for (const auto& v : n) {
      axis.values.push_back(DisplayValue(v));
      axis.yaml.push_back(OverrideYaml(v, file));
    }
  } else if (n.IsMap() && !zipped) {
    ParseRange(n, file, axis.key, axis);
  } else if (n.IsScalar() && !zipped) {
    axis.values.push_back(DisplayValue(n));
    axis.yaml.push_back(OverrideYaml(n, file));
  } else {
    FailAt(file, LineOf(n), axis.key,
           zipped ? "a zipped axis needs a list of values" : "expected a list of values or a range {from, to, step|factor}");
  }
  // A zipped list may repeat a value: its points are the tuples (checked
  // once the group is read, in Parse). Numbers by value: 1e9, 1.0e9 and 1000000000 are one
  // point written three ways (three rows of the same run); anything else by
  // its text.
  if (zipped) return;
  std::map<std::string, std::string> seen;  // CanonicalValue -> the value as first written
  for (const auto& v : axis.values) {
    if (const auto [at, fresh] = seen.emplace(CanonicalValue(v), v); !fresh) {
      FailAt(file, LineOf(n), axis.key,
             at->second == v ? "lists the value '" + v + "' twice"
                             : "lists the value '" + v + "' twice (as '" + at->second + "' and '" + v + "')");
    }
  }
}

void CheckKeyText(const std::string& key, const std::string& file, int line, const std::string& where) {
  bool ok = !key.empty() && key.front() != '.' && key.back() != '.' && key.find("..") == std::string::npos;
  for (char c : key) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-');
  if (!ok) FailAt(file, line, where, "'" + key + "' is not a dotted scenario key (e.g. cluster.nodes)");
}

// Messages of scenario errors that mean the value itself is wrong for its key
// (a typo, a type error, a missing profile or model), not that the
// combination is infeasible.
bool IsValueError(const std::string& m) {
  for (const char* p : {"unknown ", "expected ", "cannot parse", "is not a mapping", "must be positive",
                        "must not be negative", "implausibly large", "empty path", "must be a fraction"}) {
    if (m.rfind(p, 0) == 0) return true;
  }
  return m.find("is not one of") != std::string::npos || m.find("' not found") != std::string::npos;
}

// An error with no file location came from an axis override: name the axis line of the sweep file.
InputError Relocate(InputError e, const SweepSpec& spec) {
  if (e.file != "--set") return e;
  const SweepAxis* best = nullptr;
  for (const auto& a : spec.axes) {
    if (a.key == e.key) {
      best = &a;
      break;
    }
    const bool prefix = e.key.rfind(a.key + ".", 0) == 0 || a.key.rfind(e.key + ".", 0) == 0 || e.key.empty();
    if (prefix && !best) best = &a;
  }
  e.file = spec.file;
  e.line = best ? best->line : 0;
  return e;
}

}  // namespace

// A point's document is the base document with the point's values set in
// place. yaml-cpp's Clone drops the line marks the messages need and parsing
// the text again is most of a point's cost, so each worker reuses a document
// it parsed once: every point sets every axis key, in the same order, so the
// document a point parses equals the base with that point's values (a
// lookup of a missing key leaves an undefined entry, which every read and
// iteration skips, as in a fresh parse). yaml-cpp frees no node of a document
// before the document, so a document is parsed afresh after kDocumentUses
// points (the memory a sweep holds does not grow with its points).
struct SweepParsed {
  static constexpr int kDocumentUses = 256;
  static constexpr int kOverlayDocumentUses = 4096;
  struct Document {
    YAML::Node root;
    int uses = 0;
    // With `overlay`: the base's maps and this document's own copies of the
    // axis values as SetDottedKey stores them; the points read them over the
    // document (YamlOverlay), which stays as parsed.
    std::shared_ptr<const YamlIndex> index;
    std::vector<std::vector<YAML::Node>> value;
  };
  std::vector<std::vector<YAML::Node>> value;  // per axis, per value: the parsed override
  // Whether the points read their values over the base document instead of
  // writing them into it: every axis key is a key of a mapping of the base
  // (two parts or more) and every value a scalar.
  bool overlay = false;
  std::vector<std::pair<std::string, std::string>> axis_path;  // per axis: the mapping's dotted path and the key
  mutable std::mutex mu;
  mutable std::vector<Document> idle;  // documents no point is using
  mutable ProfileMemo profiles;
};

namespace {

YAML::Node LoadBaseNode(const SweepSpec& spec) {
  YAML::Node doc = YAML::Load(spec.base_text);
  if (!spec.base_inline) return doc;
  const YAML::Node& cdoc = doc;
  return cdoc["base"];
}

// A sweep's own key in a document read as a scenario (a sweep file named as
// a base): "axes" or "base", else nullptr.
const char* SweepKeyIn(const YAML::Node& doc) {
  for (const char* k : {"axes", "base"}) {
    if (doc[k].IsDefined()) return k;
  }
  return nullptr;
}

SweepSpec Parse(const std::string& text, const std::string& file) {
  const YAML::Node root = ParseYamlText(text, file);  // syntax, duplicate keys, empty file
  if (!root.IsMap()) YamlMap::FailAt(root, file, "", "a sweep file must be a mapping with keys base, axes (and zip, filter)");
  YamlMap top(root, file);
  for (const char* k : {"base", "axes", "zip", "filter"}) top.Allow(k);
  top.Finish();  // an unknown key first: a typo of "axes" should not read as "axes is missing"
  SweepSpec spec;
  spec.file = file;

  // base
  YAML::Node base = top.Raw("base");
  if (!base.IsDefined() || base.IsNull()) top.Fail("base", "missing required key (a scenario path or an inline scenario)");
  if (base.IsScalar()) {
    auto path = ResolvePath(base.Scalar(), file);
    if (!path) YamlMap::FailAt(base, file, "base", "no scenario file '" + base.Scalar() + "' (paths are relative to the sweep file)");
    spec.base_file = *path;
    spec.base_text = ReadInputFile(*path);  // errors name the base file
    const YAML::Node b = ParseYamlText(spec.base_text, *path);
    if (!b.IsMap()) FailAt(*path, LineOf(b), "", "a scenario must be a mapping of keys");
    if (const char* k = SweepKeyIn(b)) {
      YamlMap::FailAt(base, file, "base", "'" + base.Scalar() + "' is a sweep file (it has " + (std::string(k) == "axes" ? "axes" : "a base") +
                                              "), not a scenario");
    }
  } else if (base.IsMap()) {
    if (SweepKeyIn(base)) YamlMap::FailAt(base, file, "base", "an inline base is a scenario; it has a sweep's keys (base, axes)");
    spec.base_file = file;
    spec.base_text = text;
    spec.base_inline = true;
  } else {
    YamlMap::FailAt(base, file, "base", "expected a scenario path or an inline scenario mapping");
  }

  std::set<std::string> keys;
  auto add_axis = [&](const YAML::Node& k, const YAML::Node& v, int zip_group, const std::string& where) {
    SweepAxis a;
    a.key = k.IsScalar() ? k.Scalar() : "";
    a.line = LineOf(k);
    a.zip_group = zip_group;
    CheckKeyText(a.key, file, a.line, where);
    if (a.key == "name") FailAt(file, a.line, where + "." + a.key, "the scenario name cannot be swept (each point is named after its settings)");
    if (!keys.insert(a.key).second) FailAt(file, a.line, where + "." + a.key, "the key is swept twice");
    for (const std::string& other : keys) {
      // parallelism beside parallelism.tensor: the later would set what the earlier's rows say.
      if (other != a.key && (other.rfind(a.key + ".", 0) == 0 || a.key.rfind(other + ".", 0) == 0)) {
        FailAt(file, a.line, where + "." + a.key, "overlaps the axis '" + other + "' (one sets what the other does): sweep one of them");
      }
    }
    ParseAxisValues(v, file, a, zip_group >= 0);
    spec.axes.push_back(std::move(a));
  };

  // axes
  YAML::Node axes = top.Raw("axes");
  if (axes.IsDefined() && !axes.IsNull()) {
    if (!axes.IsMap()) YamlMap::FailAt(axes, file, "axes", "expected a mapping of dotted keys to value lists");
    for (auto it = axes.begin(); it != axes.end(); ++it) add_axis(it->first, it->second, -1, "axes");
  }
  // zip: one mapping, or a list of mappings
  YAML::Node zip = top.Raw("zip");
  if (zip.IsDefined() && !zip.IsNull()) {
    std::vector<YAML::Node> groups;
    if (zip.IsMap()) groups.push_back(zip);
    else if (zip.IsSequence()) for (const auto& g : zip) groups.push_back(g);
    else YamlMap::FailAt(zip, file, "zip", "expected a mapping of keys to equal-length lists (or a list of such mappings)");
    for (size_t g = 0; g < groups.size(); ++g) {
      if (!groups[g].IsMap() || groups[g].size() == 0) YamlMap::FailAt(groups[g], file, "zip", "expected a mapping of keys to equal-length lists");
      size_t len = 0;
      std::string first;
      for (auto it = groups[g].begin(); it != groups[g].end(); ++it) {
        add_axis(it->first, it->second, int(g), "zip");
        const SweepAxis& a = spec.axes.back();
        if (len == 0) {
          len = a.values.size();
          first = a.key;
        } else if (a.values.size() != len) {
          FailAt(file, a.line, "zip." + a.key,
                 "has " + std::to_string(a.values.size()) + " values but " + first + " has " + std::to_string(len) + " (zipped lists advance together)");
        }
      }
      // The group's points are its tuples: one listed twice is two rows of the same run.
      const size_t group_first = spec.axes.size() - groups[g].size();
      std::map<std::string, size_t> tuples;
      for (size_t i = 0; i < len; ++i) {
        std::string t;
        for (size_t ai = group_first; ai < spec.axes.size(); ++ai) t += CanonicalValue(spec.axes[ai].values[i]) + "\x1f";
        if (const auto [at, fresh] = tuples.emplace(t, i); !fresh) {
          YamlMap::FailAt(groups[g], file, "zip",
                          "values " + std::to_string(at->second + 1) + " and " + std::to_string(i + 1) + " of the zipped lists are the same point");
        }
      }
    }
  }
  if (spec.axes.empty()) top.Fail("axes", "missing required key (a sweep needs at least one axis)");

  // filter: one expression or a list
  YAML::Node filter = top.Raw("filter");
  const YAML::Node base_node = LoadBaseNode(spec);
  if (filter.IsDefined() && !filter.IsNull()) {
    std::vector<YAML::Node> exprs;
    if (filter.IsScalar()) exprs.push_back(filter);
    else if (filter.IsSequence()) for (const auto& f : filter) exprs.push_back(f);
    else YamlMap::FailAt(filter, file, "filter", "expected an expression or a list of expressions");
    for (const auto& f : exprs) {
      if (!f.IsScalar()) YamlMap::FailAt(f, file, "filter", "expected an expression such as 'parallelism.tensor <= 8'");
      NodePtr tree;
      try {
        tree = ExprParser(f.Scalar()).Parse();
      } catch (const std::runtime_error& e) {
        const std::string text = f.Scalar().size() > 120 ? f.Scalar().substr(0, 117) + "..." : f.Scalar();
        YamlMap::FailAt(f, file, "filter", std::string("cannot parse '") + text + "': " + e.what());
      }
      std::vector<std::string> used;
      CollectKeys(*tree, used);
      for (const auto& k : used) {
        if (MapAxisHolding(spec.axes, k) >= 0) continue;  // read from the point's map value
        if (!keys.count(k) && !DottedScalar(base_node, k)) {
          std::vector<std::string> cands(keys.begin(), keys.end());
          const std::string hint = ClosestMatch(k, cands);
          YamlMap::FailAt(f, file, "filter", "unknown key '" + k + "': neither an axis nor a value of the base scenario" +
                                                 (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
        }
      }
      spec.filters.push_back(std::make_shared<SweepFilter>(f.Scalar(), LineOf(f), std::move(tree)));
    }
  }
  top.Finish();

  // Enumerate: product axes (first outermost), then each zip group as one axis.
  struct Dim {
    std::vector<size_t> axes;  // axis indices advancing together
    size_t size = 0;
  };
  std::vector<Dim> dims;
  std::map<int, size_t> zip_dim;
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    const SweepAxis& a = spec.axes[i];
    if (a.zip_group < 0) {
      dims.push_back({{i}, a.values.size()});
    } else if (auto it = zip_dim.find(a.zip_group); it != zip_dim.end()) {
      dims[it->second].axes.push_back(i);
    } else {
      zip_dim[a.zip_group] = dims.size();
      dims.push_back({{i}, a.values.size()});
    }
  }
  double total = 1;
  for (const auto& d : dims) total *= double(d.size);
  if (total > double(kMaxPoints)) top.Fail("axes", "the sweep has " + CountText(total) + " points, more than the limit of 10 million");

  spec.axis_stride.assign(spec.axes.size(), 1);
  spec.axis_radix.assign(spec.axes.size(), 1);
  size_t stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {  // last dimension varies fastest
    for (size_t ai : dims[d].axes) {
      spec.axis_stride[ai] = stride;
      spec.axis_radix[ai] = dims[d].size;
    }
    stride *= dims[d].size;
  }
  // The values of the axes a filter reads inside (parallelism for
  // parallelism.tensor), parsed once, not once a point.
  std::vector<std::vector<YAML::Node>> map_values(spec.axes.size());
  for (const auto& f : spec.filters) {
    std::vector<std::string> used;
    CollectKeys(f->root(), used);
    for (const auto& k : used) {
      const int i = MapAxisHolding(spec.axes, k);
      if (i < 0 || !map_values[size_t(i)].empty()) continue;
      for (const auto& y : spec.axes[size_t(i)].yaml) map_values[size_t(i)].push_back(YAML::Load(y));
    }
  }
  for (size_t n = 0; n < size_t(total); ++n) {
    SweepPoint p;
    p.index = spec.points.size();
    p.grid = n;
    bool keep = true;
    for (const auto& f : spec.filters) {
      Lookup lookup = [&](const std::string& k) -> std::optional<std::string> {
        for (size_t i = 0; i < spec.axes.size(); ++i) {
          if (spec.axes[i].key == k) return spec.axes[i].values[spec.ValueIndex(p, i)];
        }
        // A key inside a map-valued axis: the point's map sets it (or leaves it to the scenario's default).
        if (const int i = MapAxisHolding(spec.axes, k); i >= 0) {
          const SweepAxis& a = spec.axes[size_t(i)];
          const std::optional<std::string> v = DottedScalar(map_values[size_t(i)][spec.ValueIndex(p, size_t(i))], k.substr(a.key.size() + 1));
          if (!v) throw std::runtime_error("'" + k + "' is not set by the map-valued axis '" + a.key + "' at this point");
          return v;
        }
        return DottedScalar(base_node, k);
      };
      try {
        keep = Eval(f->root(), lookup).num != 0;
      } catch (const std::runtime_error& e) {
        FailAt(file, f->line(), "filter", std::string(e.what()) + " in '" + f->text() + "'");
      }
      if (!keep) break;
    }
    if (keep) spec.points.push_back(p);
    else ++spec.filtered_out;
  }
  if (spec.points.empty()) top.Fail("filter", "the filters leave no point to run");

  spec.base_definition = spec.base_inline ? YAML::Dump(base_node) : spec.base_text;
  for (const auto& a : spec.axes) {
    spec.axes_definition += (a.zip_group < 0 ? "axis " : "zip " + std::to_string(a.zip_group) + " ") + a.key + ":";
    for (const auto& v : a.yaml) spec.axes_definition += " " + v + "\x1f";
    spec.axes_definition += "\n";
  }
  for (const auto& f : spec.filters) spec.axes_definition += "filter: " + f->text() + "\n";
  return spec;
}

// Adds the scenario's warnings (ScenarioWarnings) to the spec's, once each.
void CollectWarning(const Scenario& s, SweepSpec& spec) {
  for (const std::string& w : ScenarioWarnings(s)) {
    if (std::find(spec.warnings.begin(), spec.warnings.end(), w) == spec.warnings.end()) spec.warnings.push_back(w);
  }
}

// Each axis value applied alone to the base: a value that is wrong for its
// key (unknown key, wrong type, not a choice) makes the file bad, rather than
// filling every row with the same error. The base and each of these collect
// the warnings.
void CheckAxisValues(SweepSpec& spec) {
  if (auto base = ParseScenario(LoadBaseNode(spec), spec.base_file); base.ok()) {
    CollectWarning(*base, spec);
  } else if (const InputError& e = base.error();
             e.file == spec.base_file && (e.message.rfind("unknown key", 0) == 0 || e.message.rfind("missing required", 0) == 0 ||
                                          IsValueError(e.message))) {
    // A misspelt, missing or wrong key of the base (an unknown node, a
    // negative step count), unless an axis sets it, a key above it or one
    // inside it: no point's values can mend it, so every row would carry it.
    const bool swept = std::any_of(spec.axes.begin(), spec.axes.end(), [&](const SweepAxis& a) {
      return e.key == a.key || e.key.rfind(a.key + ".", 0) == 0 || a.key.rfind(e.key + ".", 0) == 0;
    });
    if (!swept) throw InputException(e);
  }
  for (const auto& a : spec.axes) {
    // A long numeric axis (a range) is checked at its ends and its first
    // fraction: what makes a number wrong for its key (its sign, its size,
    // not being whole) shows there, and a scenario parse per value of a
    // 100,000-value range would take most of a minute.
    std::vector<size_t> check;
    std::vector<double> numbers;
    for (size_t v = 0; v < a.values.size() && a.values.size() > 16; ++v) {
      const std::optional<double> x = AxisNumber(a.values[v]);
      if (!x) break;
      numbers.push_back(*x);
    }
    if (!numbers.empty() && numbers.size() == a.values.size()) {
      const size_t lo = size_t(std::min_element(numbers.begin(), numbers.end()) - numbers.begin());
      const size_t hi = size_t(std::max_element(numbers.begin(), numbers.end()) - numbers.begin());
      check = {lo, hi};
      const auto fraction = std::find_if(numbers.begin(), numbers.end(), [](double x) { return x != std::floor(x); });
      if (fraction != numbers.end()) check.push_back(size_t(fraction - numbers.begin()));
    } else {
      for (size_t v = 0; v < a.values.size(); ++v) check.push_back(v);
    }
    for (size_t v : check) {
      InputError err;
      try {
        YAML::Node root = LoadBaseNode(spec);
        ApplyOverrides(root, {a.key + "=" + a.yaml[v]});
        auto s = ParseScenario(root, spec.base_file);
        if (s.ok()) {
          CollectWarning(*s, spec);
          continue;
        }
        err = s.error();
      } catch (const InputException& e) {
        err = e.error();
      }
      if (err.file == "--set" && IsValueError(err.message)) {
        throw InputException(Relocate(err, spec));
      }
      // An error inside a file the value names (a malformed model file or
      // profile, a config.json key): bad input of that file, which no point
      // can mend, not a row per point.
      if (!err.file.empty() && err.file != "--set" && err.file != spec.base_file && err.file != spec.file) throw InputException(err);
    }
  }
}

}  // namespace

std::vector<std::string> SweepSpec::Keys() const {
  std::vector<std::string> k;
  for (const auto& a : axes) k.push_back(a.key);
  return k;
}

std::vector<std::string> SweepSpec::Values(const SweepPoint& p) const {
  std::vector<std::string> v;
  v.reserve(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) v.push_back(axes[i].values[ValueIndex(p, i)]);
  return v;
}

std::string SweepSpec::PointId(const std::vector<std::string>& values) {
  std::string id;
  for (const auto& v : values) id += v + '\x1f';
  return id;
}

namespace {

// A parsed base document for a worker: indexed, with its own value nodes, on the overlay path.
SweepParsed::Document MakeDocument(const SweepSpec& spec, const SweepParsed& parsed) {
  SweepParsed::Document doc;
  doc.root = LoadBaseNode(spec);
  if (!parsed.overlay) return doc;
  try {
    doc.index = std::make_shared<const YamlIndex>(doc.root, spec.base_file);
  } catch (const InputException&) {
    return doc;  // the document path reports what is wrong with the base
  }
  for (const auto& axis : parsed.value) {
    doc.value.emplace_back();
    for (const YAML::Node& v : axis) doc.value.back().push_back(YAML::Node(v.Scalar()));  // SetDottedKey's copy of a scalar
  }
  return doc;
}

}  // namespace

Expected<Scenario> SweepSpec::PointScenario(const SweepPoint& p) const {
  // A document of the worker's own for the parsed path, returned when the point is done.
  struct Lease {
    const SweepParsed* owner = nullptr;
    SweepParsed::Document doc;
    ~Lease() {
      // Read over (never written), a document grows only by the entries
      // lookups of missing keys leave in a map an axis value brings: it serves more points.
      const int uses = doc.index ? SweepParsed::kOverlayDocumentUses : SweepParsed::kDocumentUses;
      if (!owner || ++doc.uses >= uses) return;
      std::lock_guard<std::mutex> lock(owner->mu);
      owner->idle.push_back(std::move(doc));
    }
  } lease;
  try {
    std::string suffix;  // " tensor=4 pipeline=2 ...", appended in place (no temporaries per axis)
    for (size_t i = 0; i < axes.size(); ++i) {
      const std::string& k = axes[i].key;
      const size_t dot = k.rfind('.');
      suffix.append(1, ' ').append(k, dot == std::string::npos ? 0 : dot + 1).append(1, '=').append(axes[i].values[ValueIndex(p, i)]);
    }
    YAML::Node root;
    if (parsed) {
      bool reused = false;
      {
        std::lock_guard<std::mutex> lock(parsed->mu);
        if (!parsed->idle.empty()) {
          lease.doc = std::move(parsed->idle.back());
          parsed->idle.pop_back();
          reused = true;
        }
      }
      if (!reused) lease.doc = MakeDocument(*this, *parsed);
      lease.owner = parsed.get();
      root = lease.doc.root;
      if (!root.IsMap()) throw InputException(InputError{"--set", 0, "", "the scenario is not a mapping of keys"});
      if (lease.doc.index) {
        YamlOverlay overlay;
        overlay.index = lease.doc.index.get();
        overlay.entries.reserve(axes.size());
        for (size_t i = 0; i < axes.size(); ++i) {
          overlay.entries.push_back({&parsed->axis_path[i].first, &parsed->axis_path[i].second, lease.doc.value[i][ValueIndex(p, i)]});
        }
        Expected<Scenario> s = ParseScenario(root, base_file, &parsed->profiles, &overlay);
        if (!s.ok()) return Relocate(s.error(), *this);
        if (overlay.AllRead()) {
          s->name += suffix;
          return s;
        }
        // A value the loader did not read through its maps (a key it reads
        // elsewhere): the point's own document, written.
        root = LoadBaseNode(*this);
        lease.owner = nullptr;  // this document stays as parsed: it may serve the next point
        {
          std::lock_guard<std::mutex> lock(parsed->mu);
          parsed->idle.push_back(std::move(lease.doc));
        }
      }
      for (size_t i = 0; i < axes.size(); ++i) SetDottedKey(root, axes[i].key, parsed->value[i][ValueIndex(p, i)]);
    } else {
      root = LoadBaseNode(*this);
      std::vector<std::string> sets;
      for (size_t i = 0; i < axes.size(); ++i) sets.push_back(axes[i].key + "=" + axes[i].yaml[ValueIndex(p, i)]);
      ApplyOverrides(root, sets);
    }
    Expected<Scenario> s = ParseScenario(root, base_file, parsed ? &parsed->profiles : nullptr);
    if (!s.ok()) return Relocate(s.error(), *this);
    s->name += suffix;
    return s;
  } catch (const InputException& e) {
    return Relocate(e.error(), *this);
  } catch (const YAML::Exception& e) {
    return MalformedYaml(e, file);
  }
}

Expected<SweepSpec> ParseSweepSpec(const std::string& text, const std::string& file) {
  return CatchInputErrors<SweepSpec>(file, [&] {
    SweepSpec spec = Parse(text, file);
    {
      // Every file a point can read is read here: by the base, or by an axis value applied to it.
      FileReadLog read;
      CheckAxisValues(spec);
      // The bundled profiles and catalogue have a fingerprint of their own (DataFingerprint).
      std::error_code ec;
      const std::string data = std::filesystem::weakly_canonical(DataDir(), ec).string() + "/";
      for (const std::string& f : read.Files()) {
        if (std::filesystem::weakly_canonical(f, ec).string().rfind(data, 0) != 0) spec.input_files.push_back(f);
      }
    }
    // Parsed once here for every point: each axis value was just parsed (by
    // CheckAxisValues, through ApplyOverrides) without error.
    try {
      auto parsed = std::make_shared<SweepParsed>();
      for (const auto& a : spec.axes) {
        parsed->value.emplace_back();
        for (const auto& y : a.yaml) parsed->value.back().push_back(YAML::Load(y));
      }
      // The overlay path: keys of mappings the base has, scalar values.
      try {
        const YAML::Node base = LoadBaseNode(spec);
        const YamlIndex index(base, spec.base_file);
        parsed->overlay = base.IsMap();
        for (size_t i = 0; i < spec.axes.size(); ++i) {
          const std::string& k = spec.axes[i].key;
          const size_t dot = k.rfind('.');
          const std::string parent = dot == std::string::npos ? "" : k.substr(0, dot);
          parsed->axis_path.emplace_back(parent, dot == std::string::npos ? k : k.substr(dot + 1));
          if (parent.empty() || !index.HasMap(parent)) parsed->overlay = false;
          for (const YAML::Node& v : parsed->value[i]) parsed->overlay = parsed->overlay && v.IsScalar();
        }
      } catch (const InputException&) {
        parsed->overlay = false;
      }
      spec.parsed = std::move(parsed);
    } catch (const YAML::Exception&) {
      // Not expected (the values came from this YAML file); the points then parse
      // their text, which reports what is wrong.
    }
    return spec;
  });
}

Expected<SweepSpec> LoadSweepSpec(const std::string& file) {
  std::string text;
  try {
    text = ReadInputFile(file);
  } catch (const InputException& e) {
    return e.error();
  }
  return ParseSweepSpec(text, file);
}

}  // namespace trainsim
