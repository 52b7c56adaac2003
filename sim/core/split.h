// Splitting text at a separator: a dotted scenario key ("parallelism.tensor")
// into its path, a list flag ("4,8") into its items. Every piece is kept,
// empty ones included ("a..b" gives "a", "", "b"; "" gives one empty piece),
// so a caller can reject them with the text it was given.
#pragma once

#include <string>
#include <vector>

namespace trainsim {

std::vector<std::string> Split(const std::string& text, char separator);

}  // namespace trainsim
