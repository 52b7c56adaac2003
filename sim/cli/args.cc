#include "sim/cli/args.h"

namespace trainsim::cli {

std::optional<std::string> ParsedArgs::Value(const std::string& flag) const {
  auto it = values.find(flag);
  if (it == values.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

const std::vector<std::string>& ParsedArgs::All(const std::string& flag) const {
  static const std::vector<std::string> empty;
  auto it = values.find(flag);
  return it == values.end() ? empty : it->second;
}

std::string FidelityFlag(const ParsedArgs& a, Fidelity* fidelity) {
  const auto f = a.Value("--fidelity");
  if (!f) return "";
  if (*f == "des") *fidelity = Fidelity::kDes;
  else if (*f == "analytical") *fidelity = Fidelity::kAnalytical;
  else return "--fidelity: '" + *f + "' is not one of: des, analytical";
  return "";
}

std::string Parse(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs, ParsedArgs& out) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-' || a == "-") {
      out.positional.push_back(a);
      continue;
    }
    std::string name = a, inline_value;
    bool has_inline = false;
    if (const auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      name = a.substr(0, eq);
      inline_value = a.substr(eq + 1);
      has_inline = true;
    }
    const FlagSpec* spec = nullptr;
    for (const auto& s : specs) {
      if (s.name == name || (!s.short_name.empty() && s.short_name == name)) spec = &s;
    }
    if (!spec) return "unknown option '" + name + "' (see --help)";
    out.present.insert(spec->name);
    if (spec->takes_value) {
      // Overrides add up; any other value given twice is a slip (-o a.csv -o b.csv), not the last one silently.
      static const std::set<std::string> repeatable = {"--set", "--set-a", "--set-b", "--shape"};
      if (out.values.count(spec->name) && !repeatable.count(spec->name)) return "option '" + name + "' given twice";
      if (has_inline) {
        out.values[spec->name].push_back(inline_value);
      } else if (i + 1 < args.size()) {
        out.values[spec->name].push_back(args[++i]);
      } else {
        return "option '" + name + "' needs a value";
      }
    } else if (has_inline) {
      return "option '" + name + "' takes no value";
    }
  }
  return "";
}

}  // namespace trainsim::cli
