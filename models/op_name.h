// The name of a workload operator or collective ("attention proj dgrad",
// "shared fc1 all-gather"): up to four pieces of static text, joined only
// when someone reads it as a string. Building a workload then allocates no
// string per operator: the planner and sweeps build one per configuration,
// and per-operator std::string names were most of that work.
// A piece is a string literal (the consteval constructor refuses anything
// else), so the pieces outlive every name made of them.
#pragma once

#include <array>
#include <iosfwd>
#include <string>
#include <string_view>

namespace trainsim {

class OpName {
 public:
  static constexpr int kMaxPieces = 4;

  constexpr OpName() = default;
  // A string literal ("" is the empty name).
  consteval OpName(const char* literal) {
    if (*literal != 0) pieces_[0] = literal;
  }

  // This name followed by `more`'s pieces; throws std::length_error past kMaxPieces.
  // Inline: a workload joins a name or two per operator.
  OpName operator+(const OpName& more) const {
    OpName r = *this;
    size_t n = 0;
    while (n < kMaxPieces && r.pieces_[n] != nullptr) ++n;
    for (const char* p : more.pieces_) {
      if (p == nullptr) break;
      if (n == kMaxPieces) TooLong(more);
      r.pieces_[n++] = p;
    }
    return r;
  }
  OpName& operator+=(const OpName& more) { return *this = *this + more; }

  bool empty() const { return pieces_[0] == nullptr; }
  std::string str() const;
  bool starts_with(std::string_view prefix) const;

  // By the joined text (the same name from different pieces compares equal).
  bool operator==(const OpName& other) const {
    // Stored pieces are never empty: the first characters decide most comparisons at once.
    const char* a = pieces_[0];
    const char* b = other.pieces_[0];
    if (a == nullptr || b == nullptr) return a == b;
    return *a == *b && SameText(other);
  }
  bool operator==(std::string_view text) const;
  bool operator==(const std::string& text) const { return *this == std::string_view(text); }
  bool operator==(const char* text) const { return *this == std::string_view(text); }

 private:
  bool SameText(const OpName& other) const;
  [[noreturn]] void TooLong(const OpName& more) const;
  std::array<const char*, kMaxPieces> pieces_{};  // the used ones (never an empty one) first, then nullptr
};

std::ostream& operator<<(std::ostream& o, const OpName& n);

}  // namespace trainsim
