#include "sim/io/file_cache.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>
#include <vector>

#include <unistd.h>

namespace trainsim {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text << "\n"; }

// An entry is reused until a file its parse read changes, including a file
// a nested parse read (a node profile's GPU).
TEST(ParsedFileCacheTest, ReusesUntilTheFileOrWhatItReadChanges) {
  const std::string dir = ::testing::TempDir() + "/trainsim-cache-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string outer = dir + "/node.txt", inner = dir + "/gpu.txt";
  Write(outer, "node");
  Write(inner, "h100");
  ParsedFileCache<std::string> inner_cache, outer_cache;
  int parses = 0;
  auto parse_inner = [&](const std::string& p) { ++parses; return Read(p); };
  auto parse_outer = [&](const std::string& p) { ++parses; return Read(p) + "/" + inner_cache.Get(inner, parse_inner); };
  EXPECT_EQ(outer_cache.Get(outer, parse_outer), "node/h100");
  EXPECT_EQ(parses, 2);
  EXPECT_EQ(outer_cache.Get(outer, parse_outer), "node/h100");
  EXPECT_EQ(parses, 2);  // reused
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Write(inner, "h200-141g");  // a different size as well as a later time
  EXPECT_EQ(outer_cache.Get(outer, parse_outer), "node/h200-141g");
  EXPECT_EQ(parses, 4);
  std::filesystem::remove_all(dir);
}

// A log lists what was read while it lived, from the cache too (a sweep's
// fingerprint must cover files the process read before), nested reads included.
TEST(FileReadLogTest, ListsEveryFileReadWhileItLives) {
  const std::string dir = ::testing::TempDir() + "/trainsim-log-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string outer = dir + "/node.txt", inner = dir + "/gpu.txt", other = dir + "/other.txt";
  Write(outer, "node");
  Write(inner, "h100");
  Write(other, "x");
  ParsedFileCache<std::string> inner_cache, outer_cache, other_cache;
  auto parse_inner = [&](const std::string& p) { return Read(p); };
  auto parse_outer = [&](const std::string& p) { return Read(p) + "/" + inner_cache.Get(inner, parse_inner); };
  outer_cache.Get(outer, parse_outer);  // cached before the log
  {
    FileReadLog log;
    outer_cache.Get(outer, parse_outer);
    outer_cache.Get(outer, parse_outer);
    EXPECT_EQ(log.Files(), (std::vector<std::string>{inner, outer}));  // sorted, once each
  }
  FileReadLog later;
  other_cache.Get(other, parse_inner);
  EXPECT_EQ(later.Files(), std::vector<std::string>{other});  // the log before it is gone: not recorded there
  std::filesystem::remove_all(dir);
}

TEST(ParsedFileCacheTest, AParseThatThrowsCachesNothing) {
  ParsedFileCache<int> cache;
  int calls = 0;
  auto fail = [&](const std::string&) -> int {
    ++calls;
    throw std::runtime_error("bad");
  };
  EXPECT_THROW(cache.Get("/nonexistent/file", fail), std::runtime_error);
  EXPECT_THROW(cache.Get("/nonexistent/file", fail), std::runtime_error);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace trainsim
