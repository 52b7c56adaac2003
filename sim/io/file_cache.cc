#include "sim/io/file_cache.h"

#include <algorithm>

namespace trainsim {

FileStamp StampOf(const std::string& path) {
  std::error_code ec;
  FileStamp s;
  s.mtime = std::filesystem::last_write_time(path, ec);
  if (ec) return s;
  s.size = std::filesystem::is_directory(path, ec) ? 0 : std::filesystem::file_size(path, ec);
  s.ok = !ec;
  return s;
}

namespace file_cache_detail {

std::vector<std::vector<std::pair<std::string, FileStamp>>*>& Recorders() {
  thread_local std::vector<std::vector<std::pair<std::string, FileStamp>>*> recorders;
  return recorders;
}

void Record(const std::string& path, const FileStamp& stamp) {
  for (auto* deps : Recorders()) deps->emplace_back(path, stamp);
}

}  // namespace file_cache_detail

FileReadLog::FileReadLog() { file_cache_detail::Recorders().push_back(&deps_); }

FileReadLog::~FileReadLog() {
  // Parses nest, so this log is the innermost recorder when it goes.
  auto& r = file_cache_detail::Recorders();
  r.erase(std::find(r.begin(), r.end(), &deps_));
}

std::vector<std::string> FileReadLog::Files() const {
  std::vector<std::string> files;
  for (const auto& [path, stamp] : deps_) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

}  // namespace trainsim
