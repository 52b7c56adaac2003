#include "sim/core/error.h"

namespace trainsim {

std::string ToString(ErrorKind k) {
  switch (k) {
    case ErrorKind::kBadInput: return "bad input";
    case ErrorKind::kDoesNotFit: return "does not fit";
    case ErrorKind::kCannotProgress: return "cannot make progress";
    case ErrorKind::kRefused: return "refused";
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
  return s;
}

InputException::InputException(InputError e) : std::runtime_error(e.ToString()), error_(std::move(e)) {}

}  // namespace trainsim
