#include "sim/io/file_cache.h"

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

}  // namespace trainsim
