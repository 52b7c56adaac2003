// The include rule of the layers (sim/README.md): a file in a layer's folder
// includes only headers of its own layer or of the layers it builds on,
// directly or through them, and the layers form no cycle. The layer table is
// the one CMake writes (cmake/TrainsimLayer.cmake -> build/layers.txt), so the
// link graph and the include graph cannot drift apart. Tests (*_test.cc) are
// consumers of the library, not part of a layer, and may include any layer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace trainsim {
namespace {

namespace fs = std::filesystem;

struct Layer {
  std::string name;
  std::vector<std::string> dirs;
  std::vector<std::string> deps;
};

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::map<std::string, Layer> ParseLayers(const std::string& text) {
  std::map<std::string, Layer> layers;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto a = line.find('|'), b = line.find('|', a + 1);
    Layer l;
    l.name = Words(line.substr(0, a)).at(0);
    l.dirs = Words(line.substr(a + 1, b - a - 1));
    l.deps = Words(line.substr(b + 1));
    layers[l.name] = l;
  }
  return layers;
}

// Every violation as "FILE: includes HEADER (layer X may not include layer Y)",
// plus cycles and files in folders no layer owns.
std::vector<std::string> CheckTree(const fs::path& root, const std::map<std::string, Layer>& layers,
                                   const std::vector<std::string>& owned_roots) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> layer_of_dir;
  for (const auto& [name, l] : layers) {
    for (const auto& d : l.dirs) layer_of_dir[d] = name;
    for (const auto& d : l.deps) {
      if (!layers.count(d)) problems.push_back("layer " + name + " builds on unknown layer " + d);
    }
  }
  // Cycles (depth-first, three colours).
  std::map<std::string, int> colour;
  std::function<void(const std::string&, std::vector<std::string>&)> visit = [&](const std::string& n, std::vector<std::string>& path) {
    colour[n] = 1;
    path.push_back(n);
    for (const auto& d : layers.at(n).deps) {
      if (!layers.count(d)) continue;
      if (colour[d] == 1) {
        std::string c;
        for (const auto& p : path) c += p + " -> ";
        problems.push_back("cycle: " + c + d);
      } else if (colour[d] == 0) {
        visit(d, path);
      }
    }
    path.pop_back();
    colour[n] = 2;
  };
  for (const auto& [name, l] : layers) {
    std::vector<std::string> path;
    if (colour[name] == 0) visit(name, path);
  }
  // What each layer may include: its own folders and its dependencies', transitively.
  std::map<std::string, std::set<std::string>> allowed;
  std::function<void(const std::string&, std::set<std::string>&, std::set<std::string>&)> collect =
      [&](const std::string& n, std::set<std::string>& dirs, std::set<std::string>& seen) {
        if (!layers.count(n) || !seen.insert(n).second) return;
        for (const auto& d : layers.at(n).dirs) dirs.insert(d);
        for (const auto& d : layers.at(n).deps) collect(d, dirs, seen);
      };
  for (const auto& [name, l] : layers) {
    std::set<std::string> seen;
    collect(name, allowed[name], seen);
  }
  const std::regex include_re(R"(^\s*#\s*include\s+"([^"]+)\")");
  for (const auto& top : owned_roots) {
    if (!fs::exists(root / top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      if (!entry.is_regular_file()) continue;
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cc" && ext != ".cu" && ext != ".cuh") continue;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      const std::string dir = fs::path(rel).parent_path().generic_string();
      const auto owner = layer_of_dir.find(dir);
      if (owner == layer_of_dir.end()) {
        problems.push_back(rel + ": in folder " + dir + ", which no layer owns (add it to a trainsim_layer)");
        continue;
      }
      const std::string stem = entry.path().stem().string();
      if (stem.size() > 5 && stem.substr(stem.size() - 5) == "_test") continue;
      std::ifstream in(entry.path());
      int line_no = 0;
      for (std::string line; std::getline(in, line);) {
        ++line_no;
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const std::string header = m[1];
        const std::string hdir = fs::path(header).parent_path().generic_string();
        if (hdir.empty()) continue;  // generated files beside the source (moc)
        if (allowed[owner->second].count(hdir)) continue;
        const auto other = layer_of_dir.find(hdir);
        problems.push_back(rel + ":" + std::to_string(line_no) + ": includes " + header + " (layer " + owner->second +
                           " may not include " + (other == layer_of_dir.end() ? "folder " + hdir : "layer " + other->second) + ")");
      }
    }
  }
  return problems;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::vector<std::string> kOwnedRoots = {"sim", "models", "calib", "gui"};

TEST(LayeringTest, EveryIncludeFollowsTheLayers) {
  const auto layers = ParseLayers(ReadFile(fs::path(TRAINSIM_BINARY_DIR) / "layers.txt"));
  ASSERT_GE(layers.size(), 10u) << "build/layers.txt lists the layers";
  const auto problems = CheckTree(TRAINSIM_SOURCE_DIR, layers, kOwnedRoots);
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  EXPECT_TRUE(problems.empty()) << all;
}

TEST(LayeringTest, NoSourcesInTheSimRootFolder) {
  for (const auto& e : fs::directory_iterator(fs::path(TRAINSIM_SOURCE_DIR) / "sim")) {
    const std::string ext = e.path().extension().string();
    EXPECT_FALSE(e.is_regular_file() && (ext == ".h" || ext == ".cc")) << e.path() << ": sources belong in a layer's folder";
  }
}

// The checker itself: a tree that breaks each rule once.
TEST(LayeringTest, CheckerReportsUpwardIncludesCyclesAndUnownedFolders) {
  const fs::path root = fs::temp_directory_path() / ("trainsim-layering-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "sim/low");
  fs::create_directories(root / "sim/high");
  fs::create_directories(root / "sim/stray");
  std::ofstream(root / "sim/low/a.h") << "#include \"sim/high/b.h\"\n";   // upward
  std::ofstream(root / "sim/high/b.h") << "#include \"sim/low/a.h\"\n";   // fine
  std::ofstream(root / "sim/high/b_test.cc") << "#include \"sim/stray/x.h\"\n";  // tests may
  std::ofstream(root / "sim/stray/x.h") << "\n";                          // unowned folder
  const auto layers = ParseLayers("low | sim/low | \nhigh | sim/high | low\nloop1 | | loop2\nloop2 | | loop1\n");
  const auto problems = CheckTree(root, layers, {"sim"});
  fs::remove_all(root);
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  EXPECT_NE(all.find("sim/low/a.h:1: includes sim/high/b.h (layer low may not include layer high)"), std::string::npos) << all;
  EXPECT_NE(all.find("cycle: loop1 -> loop2 -> loop1"), std::string::npos) << all;
  EXPECT_NE(all.find("sim/stray/x.h: in folder sim/stray"), std::string::npos) << all;
  EXPECT_EQ(all.find("b_test.cc"), std::string::npos) << all;
  EXPECT_EQ(problems.size(), 3u) << all;
}

}  // namespace
}  // namespace trainsim
