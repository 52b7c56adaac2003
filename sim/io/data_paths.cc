#include "sim/io/data_paths.h"

#include "sim/core/fingerprint.h"
#include "sim/io/file_cache.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#ifndef TRAINSIM_DEFAULT_DATA_DIR
#define TRAINSIM_DEFAULT_DATA_DIR "."
#endif

namespace trainsim {
namespace fs = std::filesystem;

std::optional<std::string> InstalledDataDir(const std::string& exe_path) {
  std::error_code ec;
  const fs::path dir = (fs::path(exe_path).parent_path() / ".." / "share" / "trainsim").lexically_normal();
  if (fs::is_directory(dir / "hardware-profiles", ec)) return dir.string();
  return std::nullopt;
}

std::string DataDir() {
  if (const char* env = std::getenv("TRAINSIM_DATA_DIR"); env && *env) return env;
  // Looked up once: the executable does not move while it runs.
  static const std::string found = [] {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
      if (auto d = InstalledDataDir(exe.string())) return *d;
    }
    return std::string(TRAINSIM_DEFAULT_DATA_DIR);
  }();
  return found;
}

bool LooksLikePath(const std::string& ref) {
  auto ends = [&](const char* s) {
    const std::string suf(s);
    return ref.size() >= suf.size() && ref.compare(ref.size() - suf.size(), suf.size(), suf) == 0;
  };
  return ref.find('/') != std::string::npos || ends(".yaml") || ends(".yml") || ends(".json");
}

std::string DirName(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

std::optional<std::string> ResolvePath(const std::string& ref, const std::string& relative_to_file) {
  std::error_code ec;
  fs::path p(ref);
  if (p.is_absolute()) {
    if (fs::is_regular_file(p, ec)) return p.string();
    return std::nullopt;
  }
  if (!relative_to_file.empty()) {
    fs::path q = fs::path(DirName(relative_to_file)) / p;
    if (fs::is_regular_file(q, ec)) return q.lexically_normal().string();
  }
  if (fs::is_regular_file(p, ec)) return p.string();
  return std::nullopt;
}

std::string UnresolvedPathReason(const std::string& ref, const std::string& relative_to_file) {
  std::error_code ec;
  const fs::path p(ref);
  std::vector<fs::path> tried;
  if (!p.is_absolute() && !relative_to_file.empty()) tried.push_back(fs::path(DirName(relative_to_file)) / p);
  tried.push_back(p);
  for (const fs::path& q : tried) {
    if (fs::is_directory(q, ec)) return "is a directory, not a file";
    if (fs::exists(q, ec)) return "is not a regular file (a device, pipe or socket)";
  }
  if (tried.size() == 1) return "not found";
  return "not found (neither beside " + relative_to_file + " nor in the working directory)";
}

std::string DataFingerprint() {
  const fs::path root(DataDir());
  std::vector<fs::path> files;
  for (const char* dir : {"hardware-profiles", "models/catalogue"}) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root / dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  std::string all;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    all += fs::relative(f, root).generic_string() + '\n' + text.str() + '\n';
  }
  return TextFingerprint(all);
}

std::vector<std::string> CatalogueNames(const std::string& subdir) {
  // Listed once per directory while it stays unchanged (every profile
  // reference of every sweep point asks).
  static ParsedFileCache<std::vector<std::string>> cache;
  return cache.Get((fs::path(DataDir()) / subdir).string(), [](const std::string& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  });
}

std::string NotAFileToWrite(const std::string& path, OutputWrite how) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (path.empty() || ec || !fs::exists(st) || fs::is_regular_file(st)) return "";
  if (fs::is_directory(st)) return "'" + path + "' is a directory: write it to a file";
  if (fs::is_fifo(st) || fs::is_socket(st)) return "'" + path + "' is a pipe or socket, not a regular file: write it to a file";
  if (how == OutputWrite::kRenamedOver) return "'" + path + "' is not a regular file (a device): write it to a file";
  return "";
}

}  // namespace trainsim
