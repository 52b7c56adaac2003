#include "sim/core/error.h"

namespace trainsim {

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
