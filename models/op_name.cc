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

OpName OpName::operator+(const OpName& more) const {
  OpName r = *this;
  int n = 0;
  while (n < kMaxPieces && r.pieces_[size_t(n)] != nullptr) ++n;
  for (const char* p : more.pieces_) {
    if (p == nullptr) break;
    if (n == kMaxPieces) throw std::length_error("operator name " + str() + more.str() + ": more than 4 pieces");
    r.pieces_[size_t(n++)] = p;
  }
  return r;
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
  Cursor a(pieces_), b(other.pieces_);
  for (; !a.done() && !b.done(); a.next(), b.next()) {
    if (a.get() != b.get()) return false;
  }
  return a.done() && b.done();
}

std::ostream& operator<<(std::ostream& o, const OpName& n) {
  return o << n.str();
}

}  // namespace trainsim
