#include "models/op_name.h"

#include <ostream>
#include <stdexcept>

namespace trainsim {

namespace {

// Walks the joined text of a name one character at a time, without joining it.
class Cursor {
 public:
  explicit Cursor(const std::array<const char*, OpName::kMaxPieces>& pieces) : pieces_(pieces) { Skip(); }
  bool done() const { return piece_ >= OpName::kMaxPieces || pieces_[size_t(piece_)] == nullptr; }
  char get() const { return pieces_[size_t(piece_)][pos_]; }
  void next() {
    ++pos_;
    Skip();
  }

 private:
  void Skip() {  // past the end of the current piece (and of empty ones)
    while (!done() && pieces_[size_t(piece_)][pos_] == 0) {
      ++piece_;
      pos_ = 0;
    }
  }
  const std::array<const char*, OpName::kMaxPieces>& pieces_;
  int piece_ = 0;
  size_t pos_ = 0;
};

}  // namespace

void OpName::TooLong(const OpName& more) const {
  throw std::length_error("operator name " + str() + more.str() + ": more than 4 pieces");
}

std::string OpName::str() const {
  std::string s;
  for (const char* p : pieces_) {
    if (p == nullptr) break;
    s += p;
  }
  return s;
}

bool OpName::starts_with(std::string_view prefix) const {
  Cursor c(pieces_);
  for (char ch : prefix) {
    if (c.done() || c.get() != ch) return false;
    c.next();
  }
  return true;
}

bool OpName::operator==(std::string_view text) const {
  Cursor c(pieces_);
  for (char ch : text) {
    if (c.done() || c.get() != ch) return false;
    c.next();
  }
  return c.done();
}

bool OpName::SameText(const OpName& other) const {
  if (pieces_ == other.pieces_) return true;  // the same pieces (pointers)
  // Walks both texts a character at a time across their pieces. Leading
  // pieces that are the same literal hold the same text ("attention proj" of
  // "attention proj dgrad" and "... wgrad"): skipped whole.
  size_t same = 0;
  while (same < kMaxPieces && pieces_[same] != nullptr && pieces_[same] == other.pieces_[same]) ++same;
  size_t ia = same, ib = same;
  const char* a = ia < kMaxPieces ? pieces_[ia] : nullptr;
  const char* b = ib < kMaxPieces ? other.pieces_[ib] : nullptr;
  for (;;) {
    while (a != nullptr && *a == 0) a = ++ia < kMaxPieces ? pieces_[ia] : nullptr;
    while (b != nullptr && *b == 0) b = ++ib < kMaxPieces ? other.pieces_[ib] : nullptr;
    if (a == nullptr || b == nullptr) return a == b;
    if (*a != *b) return false;
    ++a;
    ++b;
  }
}

std::ostream& operator<<(std::ostream& o, const OpName& n) {
  return o << n.str();
}

}  // namespace trainsim
