// One number printed into a string with a printf format, for the messages
// and tables the library writes: Fmt("%.1f GiB", bytes / kGiB).
#pragma once

#include <string>

namespace trainsim {

// `format` holds exactly one floating-point conversion (%f, %g, %e and
// their flags); the result is as long as it needs to be.
std::string Fmt(const char* format, double v);

}  // namespace trainsim
