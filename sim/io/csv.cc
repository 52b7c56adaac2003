#include "sim/io/csv.h"

#include <algorithm>
#include <array>

namespace trainsim {

namespace {
// The characters that make a CSV field need rewriting: a comma, a quote, a line break.
constexpr std::array<bool, 256> kCsvSpecial = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : {',', '"', '\n', '\r'}) t[c] = true;
  return t;
}();
}  // namespace

std::string CsvLine(const std::vector<std::string>& fields) {
  // Fields are appended in place (a row has ~100 of them, most numbers):
  // only a field with a newline, a comma, a quote or an edge space is rewritten.
  size_t size = fields.size() + 1;
  for (const auto& f : fields) size += f.size();
  std::string out;
  out.reserve(size + 16);
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    const std::string& f = fields[i];
    bool special = !f.empty() && (f.front() == ' ' || f.back() == ' ');
    for (const char c : f) special |= kCsvSpecial[static_cast<unsigned char>(c)];  // a table look-up per character
    if (!special) {
      out += f;
      continue;
    }
    // Line breaks become spaces; a comma, a quote or an edge space quotes
    // the field, its quotes doubled. Written in place, run by run.
    auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r'; };
    const bool quote = space(f.front()) || space(f.back()) ||
                       std::any_of(f.begin(), f.end(), [](char c) { return c == ',' || c == '"'; });
    if (quote) out += '"';
    size_t run = 0;  // start of the characters not yet written
    for (size_t j = 0; j < f.size(); ++j) {
      const char c = f[j];
      if (!kCsvSpecial[static_cast<unsigned char>(c)] || c == ',') continue;
      out.append(f, run, j - run);
      out += c == '"' ? "\"\"" : " ";
      run = j + 1;
    }
    out.append(f, run, std::string::npos);
    if (quote) out += '"';
  }
  out += '\n';
  return out;
}

std::vector<std::string> ParseCsvLine(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace trainsim
