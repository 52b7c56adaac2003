// A short fingerprint of text (FNV-1a, 64 bits, as 16 hex digits): tells
// whether two files were written together or a file changed since, e.g. a
// sweep's rows and the sweep that produced them, a calibrated profile and its
// sidecar. Not a defence against forgery.
#pragma once

#include <string>

namespace trainsim {

std::string TextFingerprint(const std::string& text);

}  // namespace trainsim
