#include "sim/core/error.h"

#include <algorithm>

namespace trainsim {

std::string ToString(ErrorKind k) {
  switch (k) {
    case ErrorKind::kBadInput: return "bad input";
    case ErrorKind::kDoesNotFit: return "does not fit";
    case ErrorKind::kCannotProgress: return "cannot make progress";
    case ErrorKind::kRefused: return "refused";
    case ErrorKind::kUnsupported: return "unsupported by the hardware";
    case ErrorKind::kInternal: return "internal error";
  }
  return "?";
}

int ExitStatus(ErrorKind k) { return k == ErrorKind::kBadInput ? 2 : 1; }

std::string InputError::ToString() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) s += ":" + std::to_string(line);
  s += ": ";
  if (!key.empty()) s += key + ": ";
  s += message;
  // One line whatever the input held (a block scalar quoted in a message, a
  // key with a tab): control characters are written as escapes.
  if (std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) return s;
  std::string one_line;
  for (const char c : s) {
    if (c == '\n') one_line += "\\n";
    else if (c == '\r') one_line += "\\r";
    else if (c == '\t') one_line += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) one_line += '?';
    else one_line += c;
  }
  return one_line;
}

InputException::InputException(InputError e) : std::runtime_error(e.ToString()), error_(std::move(e)) {}

}  // namespace trainsim
