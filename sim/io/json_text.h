// JSON text read for its structure without parsing it: the braces and
// brackets outside strings. For what must know a document's nesting before a
// parser sees it (its depth: Boost's JSON reader recurses once per level, with
// no limit of its own) or where one object ends (a sweep's JSON-lines row,
// whose leading settings are all a resume reads).
#pragma once

#include <cstddef>
#include <string_view>

namespace trainsim {

// Calls visit(c, offset) for each '{', '}', '[' and ']' of `text` from offset
// `from` on that is outside a string, in order, until visit returns false.
// Precondition: `from` is outside a string.
template <class Visit>
void ForEachJsonBracket(std::string_view text, size_t from, Visit&& visit) {
  bool in_string = false, escaped = false;
  for (size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if ((c == '{' || c == '}' || c == '[' || c == ']') && !visit(c, i)) {
      return;
    }
  }
}

}  // namespace trainsim
