// Parsed files kept while they stay as they were: sweeps, the planner and the
// GUI load the same handful of profiles and models for every point, and
// re-reading and re-parsing them was most of a sweep's time. An entry is
// reused only while every file its parse read (the file itself and those it
// referred to, e.g. a node's GPU profile) keeps its size and modification
// time; a parse that throws caches nothing, so errors are reported as before.
// Thread-safe.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainsim {

// What identifies a file's content cheaply: its size and modification time.
struct FileStamp {
  std::uintmax_t size = 0;
  std::filesystem::file_time_type mtime{};
  bool ok = false;
  bool operator==(const FileStamp&) const = default;
};
FileStamp StampOf(const std::string& path);

namespace file_cache_detail {
// The dependency lists of the parses running on this thread (nested: a node
// profile's parse reads its GPU profile); Record adds a file to each.
std::vector<std::vector<std::pair<std::string, FileStamp>>*>& Recorders();
void Record(const std::string& path, const FileStamp& stamp);
}  // namespace file_cache_detail

// The files the parses on this thread read while it lives, through any
// ParsedFileCache, from the cache or afresh (a model file, a profile given by
// path and the GPU profile it names): what a parse depends on beyond the text
// it was given. A sweep fingerprints them, so a resume notices an edited model.
class FileReadLog {
 public:
  FileReadLog();
  ~FileReadLog();
  FileReadLog(const FileReadLog&) = delete;
  FileReadLog& operator=(const FileReadLog&) = delete;
  // The regular files read (a catalogue folder's listing is not one), sorted, each once.
  std::vector<std::string> Files() const;

 private:
  std::vector<std::pair<std::string, FileStamp>> deps_;
};

template <class T>
class ParsedFileCache {
 public:
  // parse(path) -> T; throws on bad input.
  template <class Parse>
  T Get(const std::string& path, Parse&& parse) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = entries_.find(path);
      if (it != entries_.end() && Fresh(it->second.deps)) {
        for (const auto& d : it->second.deps) file_cache_detail::Record(d.first, d.second);
        return it->second.value;
      }
    }
    std::vector<std::pair<std::string, FileStamp>> deps;
    const FileStamp own = StampOf(path);
    deps.emplace_back(path, own);
    file_cache_detail::Recorders().push_back(&deps);  // nested Gets add what they read
    std::optional<T> parsed;
    try {
      parsed.emplace(parse(path));
    } catch (...) {
      file_cache_detail::Recorders().pop_back();
      throw;
    }
    file_cache_detail::Recorders().pop_back();
    T value = std::move(*parsed);
    for (const auto& d : deps) file_cache_detail::Record(d.first, d.second);  // an enclosing parse depends on them too
    if (own.ok) {
      std::lock_guard<std::mutex> lock(mutex_);
      entries_[path] = Entry{value, deps};
    }
    return value;
  }

 private:
  struct Entry {
    T value;
    std::vector<std::pair<std::string, FileStamp>> deps;
  };
  static bool Fresh(const std::vector<std::pair<std::string, FileStamp>>& deps) {
    for (const auto& [p, stamp] : deps) {
      if (!(StampOf(p) == stamp) || !stamp.ok) return false;
    }
    return true;
  }
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

}  // namespace trainsim
