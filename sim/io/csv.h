// CSV as trainsim writes it (sweep results) and reads it (a sweep's finished
// rows on --resume, an Nsight Systems trace export): RFC 4180 fields, one
// record per line.
#pragma once

#include <string>
#include <vector>

namespace trainsim {

// One CSV line (RFC 4180: fields with commas, quotes, line breaks or outer
// spaces are quoted, quotes doubled), ending in "\n". Line breaks inside
// fields become spaces so that a row is one line.
std::string CsvLine(const std::vector<std::string>& fields);
// Splits one CSV line (without its "\n").
std::vector<std::string> ParseCsvLine(const std::string& line);

}  // namespace trainsim
