// Errors as values. An InputError locates a problem in user input
// (file, line, key) so every front end prints the same one-line message:
//   FILE:LINE: KEY: what is wrong
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace trainsim {

// What kind of failure an error is, so front ends choose the exit status and
// sweeps and the planner classify rows without reading messages.
enum class ErrorKind {
  kBadInput,        // the input is wrong: exit 2
  kDoesNotFit,      // the configuration needs more GPU memory than there is: exit 1
  kCannotProgress,  // failures outrun the checkpoints: exit 1
  kRefused,         // beyond what the DES bounds itself to: exit 1
  kUnsupported,     // the hardware cannot run it (a number format its tensor cores lack): exit 1
  kInternal,        // a bug: exit 1, reported as such
};
std::string ToString(ErrorKind k);
// 2 for bad input, 1 for a run that cannot happen.
int ExitStatus(ErrorKind k);

struct InputError {
  std::string file;     // path of the file, or "--set" for a command-line override
  int line = 0;         // 1-based; 0 when unknown
  std::string key;      // dotted key path, e.g. "parallelism.tensor"; may be empty
  std::string message;  // what is wrong, lower case, no trailing period
  ErrorKind kind = ErrorKind::kBadInput;
  // Well-formed layout values that do not fit this cluster, model or batch
  // (a tensor size that does not divide the heads or the GPUs): what `plan`
  // and `size` search anyway, so no reason for them to refuse the scenario.
  bool layout = false;

  std::string ToString() const;
};

// Thrown inside loaders; caught at the library boundary and turned into an
// Expected<T>. Never escapes a public function of the library.
class InputException : public std::runtime_error {
 public:
  explicit InputException(InputError e);
  const InputError& error() const { return error_; }

 private:
  InputError error_;
};

// A value or the InputError that prevented it.
template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(InputError error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const InputError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, InputError> v_;
};

}  // namespace trainsim
