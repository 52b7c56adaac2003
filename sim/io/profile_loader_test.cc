#include "sim/core/hardware_profile.h"

#include <gtest/gtest.h>

#include <map>
#include <yaml-cpp/yaml.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <unistd.h>

#include "sim/io/data_paths.h"
#include "sim/io/model_loader.h"
#include "sim/io/profile_loader.h"
#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

// A profile file written for one test, in a scratch directory.
fs::path WriteProfile(const std::string& file_name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "trainsim_profile_test";
  fs::create_directories(dir);
  const fs::path f = dir / file_name;
  std::ofstream(f) << text;
  return f;
}

// The one-line error a load gives, or "" when it loads.
template <class Load>
std::string LoadError(Load&& load) {
  try {
    load();
  } catch (const InputException& e) {
    return e.error().ToString();
  }
  return "";
}

// Every number in hardware-profiles/ says where it comes from: a line that
// carries a numeric value must carry a comment (datasheet, benchmark,
// derived, estimate or calibrated).
TEST(HardwareProfileTest, EveryNumberHasASourceComment) {
  const std::regex numeric_value(R"(^\s*[A-Za-z0-9_]+:\s*\[?-?[0-9.][0-9.eE+\-, ]*\]?\s*(#.*)?$)");
  int checked = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(DataDir()) / "hardware-profiles")) {
    if (e.path().extension() != ".yaml") continue;
    std::ifstream in(e.path());
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (!std::regex_match(line, numeric_value)) continue;
      ++checked;
      const auto hash = line.find('#');
      ASSERT_NE(hash, std::string::npos) << e.path() << ":" << n << ": a number without a source: " << line;
      EXPECT_GT(line.size() - hash, 8u) << e.path() << ":" << n << ": source comment too short: " << line;
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(HardwareProfileTest, EveryProfileLoads) {
  for (const std::string kind : {"gpus", "nodes", "fabrics", "storage", "frameworks", "sites"}) {
    for (const auto& name : CatalogueNames("hardware-profiles/" + kind)) {
      YAML::Node ref(name);
      EXPECT_NO_THROW({
        if (kind == "gpus") LoadGpuProfile(ref, "", "gpu");
        if (kind == "nodes") LoadNodeProfile(ref, "", "node");
        if (kind == "fabrics") LoadFabricProfile(ref, "", "fabric");
        if (kind == "storage") LoadStorageProfile(ref, "", "storage");
        if (kind == "frameworks") LoadFrameworkProfile(ref, "", "framework");
        if (kind == "sites") LoadSiteProfile(ref, "", "site");
      }) << kind << "/" << name;
    }
  }
}

// A site's figures stay inside what real sites have: a PUE of 20, a price
// in cents or a write-off of hours is an error at its key, not a cost.
TEST(HardwareProfileTest, ImplausibleSiteFiguresAreBadInput) {
  const std::string path = ::testing::TempDir() + "site-bounds-" + std::to_string(::getpid()) + ".yaml";
  auto load = [&](const std::string& pue, const std::string& price, const std::string& years) {
    std::ofstream(path) << "name: s\npue: " << pue << "\nelectricity_usd_per_kwh: " << price << "\namortization_years: " << years << "\n";
    return LoadSiteProfile(YAML::Node(path), "", "cost.site");
  };
  EXPECT_NO_THROW(load("1.58", "0.0806", "4"));
  for (const auto& [pue, price, years, key] : std::vector<std::array<std::string, 4>>{
           {"20", "0.08", "4", "pue"}, {"0.9", "0.08", "4", "pue"}, {"1.5", "80.6", "4", "electricity_usd_per_kwh"},
           {"1.5", "1e300", "4", "electricity_usd_per_kwh"}, {"1.5", "0.08", "1e-300", "amortization_years"},
           {"1.5", "0.08", "48", "amortization_years"}}) {
    try {
      load(pue, price, years);
      ADD_FAILURE() << pue << " " << price << " " << years << " loaded";
    } catch (const InputException& e) {
      EXPECT_EQ(e.error().key, key) << e.error().ToString();
    }
  }
  std::filesystem::remove(path);
}

// A number past anything its unit measures (1e308 once gave a DES step of
// 0 s, or an abort) is bad input at its line, in every kind of profile.
TEST(HardwareProfileTest, NumbersPastTheirUnitsBoundAreBadInput) {
  struct Case {
    const char* profile;  // under hardware-profiles/
    const char* line;     // the line's start, replaced
    const char* key;
    std::function<void(const std::string&)> load;
  };
  const std::vector<Case> cases = {
      {"gpus/h100-sxm-80g.yaml", "  bf16: 989", "peak_tflops.bf16",
       [](const std::string& p) { (void)LoadGpuProfile(YAML::Node(p), "", "gpu"); }},
      {"fabrics/ndr-rail-optimized.yaml", "spine_oversubscription: 1.0", "spine_oversubscription",
       [](const std::string& p) { (void)LoadFabricProfile(YAML::Node(p), "", "fabric"); }},
      {"nodes/xe9680-h100.yaml", "  latency_us: 13", "intra_node.latency_us",
       [](const std::string& p) { (void)LoadNodeProfile(YAML::Node(p), "", "node"); }},
      {"nodes/xe9680-h100.yaml", "  load: 10200", "power_w.load",
       [](const std::string& p) { (void)LoadNodeProfile(YAML::Node(p), "", "node"); }},
  };
  for (const Case& c : cases) {
    std::ifstream in(DataDir() + "/hardware-profiles/" + c.profile);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find(std::string("\n") + c.line);
    ASSERT_NE(at, std::string::npos) << c.profile << ": " << c.line;
    const std::string value = std::string(c.line).substr(0, std::string(c.line).find(':') + 1) + " 1e308";
    text.replace(at + 1, std::string(c.line).size(), value);
    const std::string path = ::testing::TempDir() + "bound-" + std::to_string(::getpid()) + ".yaml";
    std::ofstream(path) << text;
    try {
      c.load(path);
      ADD_FAILURE() << c.key << " 1e308 loaded";
    } catch (const InputException& e) {
      EXPECT_EQ(e.error().key, c.key) << e.error().ToString();
      EXPECT_NE(e.error().message.find("implausibly large: 1e308"), std::string::npos) << e.error().ToString();
      EXPECT_GT(e.error().line, 0);
    }
    std::filesystem::remove(path);
  }
}

TEST(HardwareProfileTest, DesignBriefProfilesExist) {
  for (const char* p : {"gpus/h100-sxm-80g", "gpus/a100-sxm-80g", "gpus/h200-sxm-141g", "nodes/xe9680-h100", "nodes/dgx-h100",
                        "nodes/dgx-a100", "fabrics/ndr-rail-optimized", "fabrics/hdr-fat-tree", "fabrics/roce-400g",
                        "fabrics/roce-100g", "storage/powerscale-f710",
                        // design.md 3c: Blackwell and 800 Gb/s fabrics
                        "gpus/b200-sxm-180g", "gpus/gb200", "gpus/b300-sxm-288g", "nodes/dgx-b200", "nodes/xe9680l-b200",
                        "nodes/gb200-nvl72", "nodes/xe9712-gb200", "nodes/xe9780-b300", "fabrics/xdr-rail-optimized",
                        "fabrics/spectrum-x-800g"}) {
    EXPECT_TRUE(fs::exists(fs::path(DataDir()) / "hardware-profiles" / (std::string(p) + ".yaml"))) << p;
  }
}

// A node profile that contradicts itself, or leaves out its price, is bad
// input at the key: a missing price would cost every run $0 unseen.
TEST(HardwareProfileTest, NodeProfileContradictionsAndMissingPriceAreBadInput) {
  std::ifstream in(fs::path(DataDir()) / "hardware-profiles/nodes/xe9680-h100.yaml");
  std::string base((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto edited = [&](const std::string& from, const std::string& to) {
    std::string t = std::regex_replace(base, std::regex(from), to);
    EXPECT_NE(t, base) << from;
    return WriteProfile("edited-node.yaml", t).string();
  };
  const auto error_of = [](const std::string& path) { return LoadError([&] { LoadNodeProfile(YAML::Node(path), "", "node"); }); };
  EXPECT_NE(error_of(edited("\nnode_hour_usd:[^\n]*", "")).find("node_hour_usd: missing required key"), std::string::npos);
  EXPECT_NE(error_of(edited("\nnics_allowed:[^\n]*", "\nnics_allowed: [2, 4]")).find("nics_allowed: does not hold the profile's own nics_per_node 8"),
            std::string::npos);
  EXPECT_NE(error_of(edited("\n  idle:[^\n]*", "\n  idle: 20000")).find("idle: idle power above the load power"), std::string::npos);
  // NVLink written in TB/s is below the NCCL rates measured over it.
  const std::string tb = error_of(edited("\nnvlink_gb_per_s: 450", "\nnvlink_gb_per_s: 0.45"));
  EXPECT_NE(tb.find("ring_bus_gb_per_s: 370 GB/s is more than the NVLink it runs over carries (nvlink_gb_per_s 0.45)"), std::string::npos) << tb;
  const std::string nvls = error_of(edited("\n  allreduce_bus_gb_per_s: 480", "\n  allreduce_bus_gb_per_s: 4800"));
  EXPECT_NE(nvls.find("allreduce_bus_gb_per_s: 4800 GB/s is more than twice the NVLink"), std::string::npos) << nvls;
  // The framework the node names is this file's, at its line (not "--set").
  const std::string framework = error_of(edited("\nframework: megatron-core-2024", "\nframework: megatron-core-2042"));
  EXPECT_NE(framework.find("edited-node.yaml:"), std::string::npos) << framework;
  EXPECT_NE(framework.find("framework: unknown framework profile 'megatron-core-2042'"), std::string::npos) << framework;
  // A price of 0 is a price: a cluster that is not rented.
  EXPECT_EQ(error_of(edited("\nnode_hour_usd:[^\n]*", "\nnode_hour_usd: 0  # test")), "");
  // A CPU's calibrated profile (measured_on: cpu) is no node's GPU; it loads as a profile of its own.
  std::ifstream gpu_in(fs::path(DataDir()) / "hardware-profiles/gpus/h100-sxm-80g.yaml");
  const std::string gpu((std::istreambuf_iterator<char>(gpu_in)), std::istreambuf_iterator<char>());
  const std::string cpu = WriteProfile("cpu-stand-in.yaml", gpu + "measured_on: cpu  # test\n").string();
  EXPECT_TRUE(LoadGpuProfile(YAML::Node(cpu), "", "gpu").cpu_stand_in);
  const std::string on_cpu = error_of(edited("\ngpu:[^\n]*", "\ngpu: " + cpu));
  EXPECT_NE(on_cpu.find("gpu: 'h100-sxm-80g' is a profile of a CPU"), std::string::npos) << on_cpu;
}

// A node file written for one GPU and naming another (a B300 chassis with an
// H100) declares NVLink or power its GPU cannot have: bad input at that line.
TEST(HardwareProfileTest, NodeWiredForAnotherGpuIsBadInput) {
  std::ifstream in(fs::path(DataDir()) / "hardware-profiles/nodes/xe9780-b300.yaml");
  const std::string b300((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto error_of = [](const std::string& text) {
    const std::string path = WriteProfile("rewired-node.yaml", text).string();
    return LoadError([&] { LoadNodeProfile(YAML::Node(path), "", "node"); });
  };
  const std::string h100 = std::regex_replace(b300, std::regex("\ngpu: b300-sxm-288g"), "\ngpu: h100-sxm-80g");
  ASSERT_NE(h100, b300);
  const std::string nvlink = error_of(h100);
  EXPECT_NE(nvlink.find("rewired-node.yaml:11: nvlink_gb_per_s: 900 GB/s per direction is more than h100-sxm-80g's NVLink carries (450)"),
            std::string::npos)
      << nvlink;
  // With NVLink4's figures the power still fits an H100; a B200 in a DGX A100 does not fit its power.
  std::string nvlink4 = std::regex_replace(h100, std::regex("\nnvlink_gb_per_s: 900"), "\nnvlink_gb_per_s: 450");
  nvlink4 = std::regex_replace(nvlink4, std::regex("ring_bus_gb_per_s: 722"), "ring_bus_gb_per_s: 370");
  nvlink4 = std::regex_replace(nvlink4, std::regex("allreduce_bus_gb_per_s: 830"), "allreduce_bus_gb_per_s: 480");
  EXPECT_EQ(error_of(nvlink4), "");
  std::ifstream a_in(fs::path(DataDir()) / "hardware-profiles/nodes/dgx-a100.yaml");
  const std::string a100((std::istreambuf_iterator<char>(a_in)), std::istreambuf_iterator<char>());
  const std::string power = error_of(std::regex_replace(a100, std::regex("\ngpu: a100-sxm-80g"), "\ngpu: b200-sxm-180g"));
  EXPECT_NE(power.find("load: 6500 W is below what the node's 8 b200-sxm-180g draw at their TDP alone (1000 W each)"), std::string::npos)
      << power;
}

TEST(HardwareProfileTest, H100DatasheetFigures) {
  const NodeProfile n = LoadNodeProfile(YAML::Node("xe9680-h100"), "", "node");
  EXPECT_DOUBLE_EQ(n.gpu.PeakFlops(Precision::kBf16), 989e12);
  EXPECT_DOUBLE_EQ(n.gpu.PeakFlops(Precision::kFp8), 1979e12);
  EXPECT_EQ(n.gpus_per_node, 8);
  EXPECT_EQ(n.nics_allowed, (std::vector<int>{4, 8}));
  EXPECT_DOUBLE_EQ(n.nic_bytes_per_s, 50e9);
}

TEST(HardwareProfileTest, BlackwellDatasheetFigures) {
  const NodeProfile b = LoadNodeProfile(YAML::Node("dgx-b200"), "", "node");
  EXPECT_DOUBLE_EQ(b.gpu.PeakFlops(Precision::kBf16), 2250e12);
  EXPECT_DOUBLE_EQ(b.gpu.PeakFlops(Precision::kMxfp8), 4500e12);
  EXPECT_DOUBLE_EQ(b.gpu.PeakFlops(Precision::kNvfp4), 9000e12);
  EXPECT_DOUBLE_EQ(b.gpu.PeakFlops(Precision::kFp8Blockwise), 4500e12);  // the fp8 rate
  EXPECT_TRUE(b.gpu.Supports(Precision::kNvfp4));
  EXPECT_EQ(b.nvlink_domain_gpus, 8);
  const NodeProfile g = LoadNodeProfile(YAML::Node("gb200-nvl72"), "", "node");
  EXPECT_EQ(g.gpus_per_node, 4);
  EXPECT_EQ(g.nvlink_domain_gpus, 72);
  EXPECT_EQ(g.nics_per_node, 4);
  EXPECT_DOUBLE_EQ(g.nvlink_bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(g.gpu.PeakFlops(Precision::kNvfp4), 10000e12);
  const NodeProfile x = LoadNodeProfile(YAML::Node("xe9712-gb200"), "", "node");
  EXPECT_EQ(x.nvlink_domain_gpus, 72);
  const NodeProfile u = LoadNodeProfile(YAML::Node("xe9780-b300"), "", "node");
  EXPECT_DOUBLE_EQ(u.nic_bytes_per_s, 100e9);  // ConnectX-8 800 Gb/s
  const NodeProfile h = LoadNodeProfile(YAML::Node("xe9680-h100"), "", "node");
  EXPECT_FALSE(h.gpu.Supports(Precision::kMxfp8));  // Hopper: no block-scaled MMA
  EXPECT_TRUE(h.gpu.Supports(Precision::kFp8Rowwise));
}

// What training cannot use of the HBM is a fixed amount, not a share: the
// same 5.6 GiB of an 80 GiB H100 and a 180 GiB B200 unless a profile says
// otherwise, and never all of it.
TEST(HardwareProfileTest, ReservedMemoryIsAnAmountNotAShare) {
  const NodeProfile h = LoadNodeProfile(YAML::Node("xe9680-h100"), "", "node");
  const NodeProfile b = LoadNodeProfile(YAML::Node("dgx-b200"), "", "node");
  EXPECT_DOUBLE_EQ(h.gpu.reserved_memory_bytes, kDefaultReservedMemoryGib * 1024.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(b.gpu.reserved_memory_bytes, h.gpu.reserved_memory_bytes);
  const fs::path f = WriteProfile("gpu-all-reserved.yaml", "name: r\nmemory_gib: 80\nreserved_memory_gib: 80\nhbm_tb_per_s: 3\nsms: 132\ntdp_w: 700\n");
  EXPECT_EQ(LoadError([&] { LoadGpuProfile(YAML::Node(f.string()), "", "node.gpu"); }),
            f.string() + ":3: reserved_memory_gib: must be below memory_gib");
  // Without reserved_memory_gib, a memory_gib below the default reserve is that line's mistake.
  const fs::path small = WriteProfile("gpu-small.yaml", "name: s\nmemory_gib: 5\nhbm_tb_per_s: 3\nsms: 132\ntdp_w: 700\n");
  EXPECT_EQ(LoadError([&] { LoadGpuProfile(YAML::Node(small.string()), "", "node.gpu"); }),
            small.string() + ":2: memory_gib: 5 GiB leaves nothing once the 5.6 GiB training cannot use are reserved (reserved_memory_gib's default)");
  // A profile written for the share it replaced says what to write instead.
  const fs::path old = WriteProfile("gpu-old-share.yaml", "name: o\nmemory_gib: 80\nusable_memory_fraction: 0.93\n");
  EXPECT_NE(LoadError([&] { LoadGpuProfile(YAML::Node(old.string()), "", "node.gpu"); }).find(":3: usable_memory_fraction: replaced by reserved_memory_gib"),
            std::string::npos);
}

// A number in the wrong unit is caught where no GPU comes near it: bytes for
// GiB, GB/s for TB/s, an attention rate ten times every tensor peak.
TEST(HardwareProfileTest, GpuNumbersInTheWrongUnitAreBadInput) {
  std::ifstream in(fs::path(DataDir()) / "hardware-profiles/gpus/h100-sxm-80g.yaml");
  const std::string base((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto error_of = [&](const std::string& from, const std::string& to) {
    const std::string t = std::regex_replace(base, std::regex(from), to);
    EXPECT_NE(t, base) << from;
    const fs::path f = WriteProfile("gpu-unit.yaml", t);
    return LoadError([&] { LoadGpuProfile(YAML::Node(f.string()), "", "node.gpu"); });
  };
  EXPECT_EQ(error_of("\nname: [^\n]*", "\nname: same"), "");
  EXPECT_NE(error_of("\nmemory_gib: [^\n]*", "\nmemory_gib: 85899345920").find("memory_gib: is in GiB"), std::string::npos);
  EXPECT_NE(error_of("\nhbm_tb_per_s: [^\n]*", "\nhbm_tb_per_s: 3350").find("hbm_tb_per_s: is in TB/s"), std::string::npos);
  EXPECT_NE(error_of("\n  fwd_tflops: [^\n]*", "\n  fwd_tflops: 62000").find("attention.fwd_tflops: ten times the GPU's fastest peak_tflops, 1979"),
            std::string::npos);
}

TEST(HardwareProfileTest, BadProfileNamesItsFileAndKey) {
  const fs::path f = WriteProfile("bad-fabric.yaml", "name: bad\ntopology: rail-optimized\nlink_gbit_per_s: -400\n");
  EXPECT_EQ(LoadError([&] { LoadFabricProfile(YAML::Node(f.string()), "", "cluster.fabric"); }),
            f.string() + ":3: link_gbit_per_s: must be positive, got -400");
  // Oversubscription below 1:1 would buy spines and move nothing faster.
  std::ifstream in(fs::path(DataDir()) / "hardware-profiles/fabrics/ndr-rail-optimized.yaml");
  const std::string ndr((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string under = std::regex_replace(ndr, std::regex("\nspine_oversubscription: 1.0"), "\nspine_oversubscription: 0.5");
  ASSERT_NE(under, ndr);
  const fs::path u = WriteProfile("under-subscribed.yaml", under);
  EXPECT_NE(LoadError([&] { LoadFabricProfile(YAML::Node(u.string()), "", "cluster.fabric"); })
                .find("spine_oversubscription: must be at least 1 (1: non-blocking"),
            std::string::npos);
}

// A release written as changes to another (based_on) takes every value it
// does not set from its base: nemo-24.12 is megatron-core-2024 with Megatron-
// Core's own expert split and its container.
TEST(HardwareProfileTest, ReleaseProfileInheritsWhatItDoesNotChange) {
  const FrameworkProfile base = LoadFrameworkProfile(YAML::Node("megatron-core-2024"), "", "framework");
  const FrameworkProfile release = LoadFrameworkProfile(YAML::Node("nemo-24.12"), "", "framework");
  EXPECT_EQ(release.based_on, "megatron-core-2024");
  EXPECT_FALSE(base.expert_tensor_follows_tensor);
  EXPECT_TRUE(release.expert_tensor_follows_tensor);
  EXPECT_EQ(release.containers, std::vector<std::string>{"nvcr.io/nvidia/nemo:24.12"});
  FrameworkProfile undone = release;
  undone.name = base.name;
  undone.based_on.clear();
  undone.expert_tensor_follows_tensor = base.expert_tensor_follows_tensor;
  undone.containers = base.containers;
  EXPECT_TRUE(undone == base);
}

// A loop of based_on keys is bad input naming the file, key and the loop; a
// chain without one loads at any depth.
TEST(HardwareProfileTest, BasedOnLoopIsBadInput) {
  const fs::path dir = fs::temp_directory_path() / "trainsim_profile_test";
  fs::create_directories(dir);
  const fs::path a = dir / "release-a.yaml", b = dir / "release-b.yaml";
  std::ofstream(a) << "name: a\nbased_on: " << b.string() << "\n";
  std::ofstream(b) << "name: b\nbased_on: " << a.string() << "\n";
  try {
    LoadFrameworkProfile(YAML::Node(a.string()), "", "training.framework");
    FAIL() << "expected an error";
  } catch (const InputException& e) {
    EXPECT_NE(e.error().ToString().find("release-a.yaml:2: based_on: leads back to this profile, a loop of based_on profiles "
                                        "(release-a -> release-b -> release-a)"),
              std::string::npos)
        << e.error().ToString();
  }
  // A recipe on a release on a base: each level's keys over the one below.
  std::ofstream(b) << "name: b\nbased_on: nemo-24.12\ntp_comm_overlap: false\n";
  std::ofstream(a) << "name: a\nbased_on: " << b.string() << "\noverlap_p2p: false\n";
  const FrameworkProfile two = LoadFrameworkProfile(YAML::Node(a.string()), "", "training.framework");
  EXPECT_EQ(two.based_on, "b");
  EXPECT_FALSE(two.tp_comm_overlap);                        // b's
  EXPECT_FALSE(two.overlap_p2p);                            // a's
  EXPECT_TRUE(two.expert_tensor_follows_tensor);            // nemo-24.12's
  EXPECT_TRUE(two.overlap_grad_reduce);                     // megatron-core-2024's
  const FrameworkProfile one = LoadFrameworkProfile(YAML::Node(b.string()), "", "training.framework");
  EXPECT_FALSE(one.tp_comm_overlap);
}

// A chain's depth does not depend on which of its profiles were read before:
// the shipped GB300 DeepSeek-V3 recipe is five profiles deep (its GB200
// recipe, the model's, the repository's, Megatron-Core's) and loads first or
// after its bases alike, where a depth limit counted only the uncached links.
TEST(HardwareProfileTest, DeepBasedOnChainLoadsWhateverWasReadBefore) {
  const fs::path dir = fs::temp_directory_path() / "trainsim_profile_chain_test";
  fs::create_directories(dir);
  std::string below = "megatron-core-2024";
  for (int i = 0; i < 6; ++i) {  // six fresh levels, read top first: nothing of them cached
    const fs::path p = dir / ("level-" + std::to_string(i) + ".yaml");
    std::ofstream(p) << "name: level-" << i << "\nbased_on: " << below << "\n";
    below = p.string();
  }
  EXPECT_EQ(LoadFrameworkProfile(YAML::Node(below), "", "training.framework").based_on, "level-4");
  const FrameworkProfile gb300 = LoadFrameworkProfile(YAML::Node("megatron-bridge-26.08-deepseek-v3-gb300-mxfp8"), "", "framework");
  EXPECT_EQ(gb300.based_on, "megatron-bridge-26.08-deepseek-v3-gb200-mxfp8");
  EXPECT_EQ(gb300.recompute, Recompute::kNone);  // its own key over its GB200 recipe's selective one
  EXPECT_EQ(gb300.moe_dispatcher, MoeDispatcher::kHybridEp);  // the GB200 recipe's
}

// DeepEP's NVLink limit: the base's figures, a recipe's restatement of one of
// them, and a rate that is no rate.
TEST(HardwareProfileTest, DeepEpNvlinkPeersAndTheirRates) {
  const FrameworkProfile base = LoadFrameworkProfile(YAML::Node("megatron-core-2024"), "", "framework");
  EXPECT_EQ(base.deepep_max_nvlink_peers, 8);
  EXPECT_EQ(base.deepep_max_rdma_peers, 20);
  EXPECT_DOUBLE_EQ(base.deepep_beyond_peers_dispatch_bytes_per_s, 400e9);
  EXPECT_DOUBLE_EQ(base.deepep_beyond_peers_combine_bytes_per_s, 190e9);
  const fs::path recipe = WriteProfile("deepep-recipe.yaml",
                                       "name: r\nbased_on: megatron-core-2024\ndeepep:\n  beyond_nvlink_peers_gb_per_s: {combine: 300}\n");
  const FrameworkProfile r = LoadFrameworkProfile(YAML::Node(recipe.string()), "", "training.framework");
  EXPECT_EQ(r.deepep_max_nvlink_peers, 8);
  EXPECT_EQ(r.deepep_max_rdma_peers, 20);
  EXPECT_DOUBLE_EQ(r.deepep_beyond_peers_dispatch_bytes_per_s, 400e9);
  EXPECT_DOUBLE_EQ(r.deepep_beyond_peers_combine_bytes_per_s, 300e9);
  const fs::path bad = WriteProfile("deepep-bad.yaml", "name: b\nbased_on: megatron-core-2024\ndeepep:\n  beyond_nvlink_peers_gb_per_s: {dispatch: 0}\n");
  const std::string e = LoadError([&] { LoadFrameworkProfile(YAML::Node(bad.string()), "", "training.framework"); });
  EXPECT_NE(e.find("deepep-bad.yaml:4: deepep.beyond_nvlink_peers_gb_per_s.dispatch"), std::string::npos) << e;
}

// DeepEP's and HybridEP's measured NVLink rates: the base's tables (DeepEP's
// SM-bound below its cap), a recipe's own table for its SM count, and the
// errors a table can have.
TEST(HardwareProfileTest, FlexDispatchersNvlinkRates) {
  const FrameworkProfile base = LoadFrameworkProfile(YAML::Node("megatron-core-2024"), "", "framework");
  EXPECT_DOUBLE_EQ(base.deepep_nvlink.dispatch_fraction.at(8), 0.718);
  EXPECT_DOUBLE_EQ(base.deepep_nvlink.combine_fraction.at(8), 0.651);
  EXPECT_DOUBLE_EQ(base.deepep_nvlink.dispatch_bytes_per_s_per_sm, 21e9);
  EXPECT_DOUBLE_EQ(base.deepep_nvlink.combine_bytes_per_s_per_sm, 18e9);
  EXPECT_EQ(base.hybridep_nvlink.dispatch_fraction.size(), 5u);
  EXPECT_DOUBLE_EQ(base.hybridep_nvlink.dispatch_fraction.at(8), 0.611);
  EXPECT_DOUBLE_EQ(base.hybridep_nvlink.combine_fraction.at(36), 0.465);
  EXPECT_DOUBLE_EQ(base.hybridep_nvlink.dispatch_bytes_per_s_per_sm, 0);
  // Megatron-Bridge's recipes hold 32 SMs for HybridEP and take the 32-SM measurements.
  const FrameworkProfile bridge = LoadFrameworkProfile(YAML::Node("megatron-bridge-perf"), "", "framework");
  EXPECT_EQ(bridge.hybridep_sms, 32);
  EXPECT_DOUBLE_EQ(bridge.hybridep_nvlink.combine_fraction.at(8), 0.632);
  EXPECT_EQ(bridge.deepep_nvlink, base.deepep_nvlink);
  const fs::path recipe = WriteProfile("hybridep-recipe.yaml",
                                       "name: r\nbased_on: megatron-core-2024\nhybridep:\n  nvlink_fraction:\n    ranks4: {dispatch: 0.5, combine: 0.4}\n");
  const FrameworkProfile r = LoadFrameworkProfile(YAML::Node(recipe.string()), "", "training.framework");
  EXPECT_EQ(r.hybridep_nvlink.dispatch_fraction, (std::map<int, double>{{4, 0.5}}));  // replaces the base's table
  EXPECT_EQ(r.deepep_nvlink, base.deepep_nvlink);
  const auto error = [](const std::string& file, const std::string& body) {
    const fs::path bad = WriteProfile(file, "name: b\nbased_on: megatron-core-2024\n" + body);
    return LoadError([&] { LoadFrameworkProfile(YAML::Node(bad.string()), "", "training.framework"); });
  };
  std::string e = error("hybridep-key.yaml", "hybridep:\n  nvlink_fraction:\n    eight: {dispatch: 0.5, combine: 0.4}\n");
  EXPECT_NE(e.find("hybridep-key.yaml:5: hybridep.nvlink_fraction.eight: expected ranksN"), std::string::npos) << e;
  e = error("hybridep-share.yaml", "hybridep:\n  nvlink_fraction:\n    ranks8: {dispatch: 1.5, combine: 0.4}\n");
  EXPECT_NE(e.find("hybridep-share.yaml:5: hybridep.nvlink_fraction.ranks8.dispatch"), std::string::npos) << e;
  e = error("hybridep-huge.yaml", "hybridep:\n  nvlink_fraction:\n    ranks99999999999: {dispatch: 0.5, combine: 0.4}\n");
  EXPECT_NE(e.find("hybridep-huge.yaml:5: hybridep.nvlink_fraction.ranks99999999999: expected ranksN"), std::string::npos) << e;
  e = error("hybridep-empty.yaml", "hybridep:\n  nvlink_fraction: {}\n");
  EXPECT_NE(e.find("hybridep-empty.yaml:4: hybridep.nvlink_fraction: needs at least one ranksN point"), std::string::npos) << e;
  e = error("deepep-sm.yaml", "deepep:\n  nvlink_gb_per_s_per_sm: {dispatch: 20}\n");
  EXPECT_NE(e.find("deepep-sm.yaml:4: deepep.nvlink_gb_per_s_per_sm.combine"), std::string::npos) << e;
}

// A recipe setting for one training precision (by_precision) applies over
// every plain key, the base's entry first: Megatron-Bridge's performance
// recipes run NVFP4 without TP comm overlap, and a recipe based on them does too.
TEST(HardwareProfileTest, ByPrecisionEntriesApplyToTheirPrecisionOnly) {
  const FrameworkProfile perf = LoadFrameworkProfile(YAML::Node("megatron-bridge-perf"), "", "framework");
  EXPECT_TRUE(perf.tp_comm_overlap);
  EXPECT_FALSE(perf.ForPrecision(Precision::kNvfp4).tp_comm_overlap);
  EXPECT_TRUE(perf.ForPrecision(Precision::kMxfp8).tp_comm_overlap);
  EXPECT_EQ(&perf.ForPrecision(Precision::kBf16), &perf);  // no entry for bf16: the profile itself
  const FrameworkProfile recipe = LoadFrameworkProfile(YAML::Node("megatron-bridge-llama3-70b-gb200"), "", "framework");
  EXPECT_FALSE(recipe.ForPrecision(Precision::kNvfp4).tp_comm_overlap);
  EXPECT_EQ(recipe.ForPrecision(Precision::kNvfp4).activation_offload_layers, recipe.activation_offload_layers);  // the recipe's own keys stay
  EXPECT_EQ(recipe.activation_offload_layers, 40);                                 // its FP8-CS preset
  EXPECT_EQ(recipe.ForPrecision(Precision::kBf16).activation_offload_layers, 20);  // its BF16 preset
  EXPECT_TRUE(recipe.ForPrecision(Precision::kBf16).tp_comm_overlap);

  const fs::path dir = fs::temp_directory_path() / "trainsim_profile_test";
  fs::create_directories(dir);
  const fs::path base = dir / "precision-base.yaml", derived = dir / "precision-derived.yaml";
  std::ofstream(base) << "name: base\nbased_on: megatron-core-2024\nby_precision:\n  fp8:\n    overlap_p2p: false\n    dropout: 0.1\n";
  std::ofstream(derived) << "name: derived\nbased_on: " << base.string()
                         << "\noverlap_p2p: true\ndropout: 0.2\nby_precision:\n  fp8:\n    dropout: 0.3\n";
  const FrameworkProfile d = LoadFrameworkProfile(YAML::Node(derived.string()), "", "training.framework");
  EXPECT_TRUE(d.overlap_p2p);
  EXPECT_DOUBLE_EQ(d.dropout, 0.2);
  const FrameworkProfile& fp8 = d.ForPrecision(Precision::kFp8);
  EXPECT_FALSE(fp8.overlap_p2p);         // the base's fp8 entry, over the derived profile's plain key
  EXPECT_DOUBLE_EQ(fp8.dropout, 0.3);    // the derived profile's own entry last
  EXPECT_EQ(fp8.name, "derived");

  // A scenario trains its precision's variant.
  const fs::path scenario = dir / "precision-scenario.yaml";
  std::ofstream(scenario) << "cluster: {node: gb200-nvl72, nodes: 2}\nmodel: llama3-8b\nparallelism: {tensor: 2}\n"
                          << "training: {framework: megatron-bridge-perf, precision: nvfp4, global_batch: 16, seq_len: 4096}\n";
  auto s = LoadScenario(scenario.string());
  ASSERT_TRUE(s) << s.error().ToString();
  EXPECT_FALSE(s->framework.tp_comm_overlap);
  EXPECT_TRUE(s->framework.variants.of.empty());
}

// A by_precision entry names a training precision and holds the profile's own
// keys: anything else is bad input with the file, line and key.
TEST(HardwareProfileTest, ByPrecisionEntriesAreChecked) {
  const fs::path f = WriteProfile("precision-bad.yaml", "name: r\nbased_on: megatron-core-2024\nby_precision:\n  fp4:\n    dropout: 0.1\n");
  const std::string unknown = LoadError([&] { LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework"); });
  EXPECT_NE(unknown.find(f.string() + ":4: by_precision.fp4: not a training precision (bf16, "), std::string::npos) << unknown;
  WriteProfile("precision-bad.yaml", "name: r\nbased_on: megatron-core-2024\nby_precision:\n  nvfp4:\n    tp_overlap: false\n");
  const std::string key = LoadError([&] { LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework"); });
  EXPECT_NE(key.find(f.string() + ":5: by_precision.nvfp4.tp_overlap"), std::string::npos) << key;
  WriteProfile("precision-bad.yaml", "name: r\nbased_on: megatron-core-2024\nby_precision:\n  nvfp4:\n    name: other\n");
  const std::string name = LoadError([&] { LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework"); });
  EXPECT_NE(name.find(f.string() + ":5: by_precision.nvfp4.name"), std::string::npos) << name;
  WriteProfile("precision-bad.yaml", "name: r\nbased_on: megatron-core-2024\nby_precision:\n  nvfp4: false\n");
  const std::string not_map = LoadError([&] { LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework"); });
  EXPECT_NE(not_map.find(f.string() + ":4: by_precision.nvfp4: expected a map"), std::string::npos) << not_map;
}

// The fp8 amax reduction group is one of three names; a release inherits its base's.
TEST(HardwareProfileTest, AmaxReductionGroupIsNamed) {
  const fs::path dir = fs::temp_directory_path() / "trainsim_profile_test";
  fs::create_directories(dir);
  const fs::path f = dir / "release-amax.yaml";
  std::ofstream(f) << "name: r\nbased_on: megatron-core-2024\nfp8_amax_reduction: all\n";
  try {
    LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework");
    FAIL() << "expected an error";
  } catch (const InputException& e) {
    EXPECT_NE(e.error().ToString().find(f.string() + ":3: fp8_amax_reduction:"), std::string::npos) << e.error().ToString();
    EXPECT_NE(e.error().ToString().find("none, tensor, stage"), std::string::npos) << e.error().ToString();
  }
  std::ofstream(f) << "name: r\nbased_on: megatron-core-2024\nfp8_amax_reduction: tensor\n";
  EXPECT_EQ(LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework").fp8_amax_reduction, Fp8AmaxReduction::kTensor);
  EXPECT_EQ(LoadFrameworkProfile(YAML::Node("nemo-24.12"), "", "framework").fp8_amax_reduction, Fp8AmaxReduction::kStage);
  EXPECT_EQ(LoadFrameworkProfile(YAML::Node("torchtitan-fsdp2-2025"), "", "framework").fp8_amax_reduction, Fp8AmaxReduction::kNone);
}

// A recipe's setting that holds only without context parallelism, and a
// recipe of one benchmark of a repository (result_benchmarks needs the
// repository).
TEST(HardwareProfileTest, RecipeSettingsAndBenchmarks) {
  const FrameworkProfile lora = LoadFrameworkProfile(YAML::Node("mlperf-training-4.1-nemo-lora"), "", "framework");
  EXPECT_EQ(lora.tp_comm_overlap_rs_dgrad, RecipeSetting::kWithoutContextParallel);
  EXPECT_TRUE(Holds(lora.tp_comm_overlap_rs_dgrad, 1));
  EXPECT_FALSE(Holds(lora.tp_comm_overlap_rs_dgrad, 2));
  EXPECT_FALSE(lora.fp8_parameter_transpose_cache);
  EXPECT_EQ(lora.result_benchmarks, std::vector<std::string>{"llama2_70b_lora"});
  EXPECT_FALSE(Holds(RecipeSetting::kOff, 1));
  EXPECT_TRUE(Holds(RecipeSetting::kOn, 4));
  const auto f = std::filesystem::temp_directory_path() / "trainsim_recipe_setting.yaml";
  std::ofstream(f) << "name: r\nbased_on: megatron-core-2024\ntp_comm_overlap_rs_dgrad: sometimes\n";
  try {
    LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework");
    FAIL() << "expected an error";
  } catch (const InputException& e) {
    EXPECT_NE(e.error().ToString().find(f.string() + ":3: tp_comm_overlap_rs_dgrad:"), std::string::npos) << e.error().ToString();
  }
  std::ofstream(f) << "name: r\nbased_on: megatron-core-2024\nresult_benchmarks: [gpt3]\n";
  try {
    LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework");
    FAIL() << "expected an error";
  } catch (const InputException& e) {
    EXPECT_NE(e.error().ToString().find("result_benchmarks"), std::string::npos) << e.error().ToString();
  }
}

// A recipe's selective recompute names its modules (Megatron-Core's
// recompute_modules): a scenario that runs the recipe and names none
// recomputes those, one that names its own keeps them. The key needs
// selective recompute and known module names; each mistake names the file,
// the line and the key.
// Whether a mixture of experts' experts have biases is the model's to say;
// where it does not (an inline model without moe.expert_bias), the recipe's
// add_bias_linear stands in: GPT-OSS's recipe builds them, the base's not.
TEST(HardwareProfileTest, ExpertBiasDefaultsToTheRecipes) {
  const std::string example = DataDir() + "/examples/moe/mixtral-8x7b-8n-8nic.yaml";
  for (const auto& [sets, expect] : {std::pair<std::vector<std::string>, bool>{{"training.framework=megatron-bridge-gpt-oss-120b"}, true},
                                     {{"training.framework=megatron-core-2024"}, false},
                                     {{"training.framework=megatron-bridge-gpt-oss-120b", "model.moe.expert_bias=false"}, false},
                                     {{"training.framework=megatron-core-2024", "model.moe.expert_bias=true"}, true}}) {
    auto s = LoadScenario(example, sets);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    EXPECT_EQ(s->model.moe.expert_bias, std::optional<bool>(expect)) << sets.back();
  }
  EXPECT_EQ(LoadModelFile(DataDir() + "/models/catalogue/gpt-oss-120b.yaml")->moe.expert_bias, std::optional<bool>(true));
}

// The MoE example the recipe-default tests load.
std::string MoeExample() { return DataDir() + "/examples/moe/mixtral-8x7b-8n-8nic.yaml"; }

// Loads the MoE example under each case's --set overrides and checks the
// model key `get` reads: what the recipe or the case made of it.
template <class T>
void ExpectModelKeyOfScenarios(const std::vector<std::pair<std::vector<std::string>, T>>& cases,
                               const std::function<std::optional<T>(const ModelSpec&)>& get) {
  for (const auto& [sets, expect] : cases) {
    auto s = LoadScenario(MoeExample(), sets);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    EXPECT_EQ(get(s->model), std::optional<T>(expect)) << sets.back();
  }
}

// A framework file based on megatron-core-2024 whose third line is `line`
// fails to load naming that line and `key`.
void ExpectFrameworkFileError(const std::string& file_name, const std::string& line, const std::string& key) {
  const fs::path f = WriteProfile(file_name, "name: x\nbased_on: megatron-core-2024\n" + line + "\n");
  const std::string bad = LoadError([&] { LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework"); });
  EXPECT_NE(bad.find(f.string() + ":3"), std::string::npos) << bad;
  EXPECT_NE(bad.find(key), std::string::npos) << bad;
}

// A gated activation's clamp, like the experts' biases, is the model's to
// say (GPT-OSS's swiglu_limit), else the recipe's: GPT-OSS's recipe clamps at
// 7, the base not. A clamp on an ungated activation, or clamp passes that
// launch kernels without moving bytes, are mistakes named by key.
TEST(HardwareProfileTest, ActivationClampDefaultsToTheRecipes) {
  ExpectModelKeyOfScenarios<double>({{{"training.framework=megatron-bridge-gpt-oss-120b"}, 7.0},
                                     {{"training.framework=megatron-core-2024"}, 0.0},
                                     {{"training.framework=megatron-bridge-gpt-oss-120b", "model.activation_clamp=0"}, 0.0},
                                     {{"training.framework=megatron-core-2024", "model.activation_clamp=10"}, 10.0}},
                                    [](const ModelSpec& m) { return m.activation_clamp; });
  EXPECT_EQ(LoadModelFile(DataDir() + "/models/catalogue/gpt-oss-120b.yaml")->activation_clamp, std::optional<double>(7.0));
  auto ungated = LoadScenario(MoeExample(), {"model.activation=gelu", "model.activation_clamp=7"});
  ASSERT_FALSE(ungated.ok());
  EXPECT_NE(ungated.error().ToString().find("activation_clamp"), std::string::npos) << ungated.error().ToString();
  ExpectFrameworkFileError("clamp.yaml", "activation_clamp_pass: {forward: 0, backward: 0, kernels: 2}", "kernels");
}

// Megatron builds the multi-token-prediction modules the recipe asks for
// (mtp_num_layers), not the checkpoint's: a model that does not say takes its
// recipe's, DeepSeek-V3's one in every Megatron-Bridge release from 25.09
// (its release profiles inherit it); a model that says 0 trains none, and a
// recipe without the key adds none.
TEST(HardwareProfileTest, MtpModulesDefaultToTheRecipes) {
  ExpectModelKeyOfScenarios<int>({{{"training.framework=megatron-bridge-deepseek-v3"}, 1},
                                  {{"training.framework=megatron-bridge-25.09-deepseek-v3-h100"}, 1},
                                  {{"training.framework=megatron-core-2024"}, 0},
                                  {{"training.framework=megatron-bridge-deepseek-v3", "model.mtp_layers=0"}, 0},
                                  {{"training.framework=megatron-core-2024", "model.mtp_layers=2"}, 2}},
                                 [](const ModelSpec& m) { return m.mtp_layers; });
  // The catalogue's DeepSeek-V3 says it; a model file that does not leaves it to the scenario.
  EXPECT_EQ(LoadModelFile(DataDir() + "/models/catalogue/deepseek-v3.yaml")->mtp_layers, std::optional<int>(1));
  EXPECT_EQ(LoadModelFile(DataDir() + "/models/catalogue/mixtral-8x7b.yaml")->mtp_layers, std::nullopt);
  ExpectFrameworkFileError("mtp.yaml", "mtp_layers: -1", "mtp_layers");
}

TEST(HardwareProfileTest, RecipeRecomputeModules) {
  const FrameworkProfile oss = LoadFrameworkProfile(YAML::Node("megatron-bridge-gpt-oss-120b"), "", "framework");
  EXPECT_EQ(oss.recompute, Recompute::kSelective);
  EXPECT_EQ(oss.recompute_modules, unsigned(kRecomputeLayerNorm | kRecomputeMoeAct));
  const std::string example = DataDir() + "/examples/reference-design/llama2-7b-1n-8nic.yaml";
  // (The example names its recompute: selective here, as the recipe's.)
  auto inherits = LoadScenario(example, {"training.framework=megatron-bridge-gpt-oss-120b", "training.recompute=selective"});
  ASSERT_TRUE(inherits.ok()) << inherits.error().ToString();
  EXPECT_EQ(inherits->training.recompute, Recompute::kSelective);
  EXPECT_EQ(inherits->training.recompute_modules, unsigned(kRecomputeLayerNorm | kRecomputeMoeAct));
  auto own = LoadScenario(example, {"training.framework=megatron-bridge-gpt-oss-120b", "training.recompute=selective",
                                    "training.recompute_modules=[core_attn]"});
  ASSERT_TRUE(own.ok()) << own.error().ToString();
  EXPECT_EQ(own->training.recompute_modules, unsigned(kRecomputeCoreAttention));
  auto plain = LoadScenario(example, {"training.framework=megatron-core-2024", "training.recompute=selective"});
  ASSERT_TRUE(plain.ok()) << plain.error().ToString();
  EXPECT_EQ(plain->training.recompute_modules, unsigned(kRecomputeCoreAttention));  // the default
  const auto f = fs::temp_directory_path() / "trainsim_recompute_modules.yaml";
  for (const auto& [text, line] : {std::pair<std::string, int>{"name: r\nbased_on: megatron-core-2024\nrecompute_modules: [mlp]\n", 3},
                                   {"name: r\nbased_on: megatron-core-2024\nrecompute: selective\nrecompute_modules: [mpl]\n", 4}}) {
    std::ofstream(f) << text;
    try {
      LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework");
      FAIL() << "expected an error for " << text;
    } catch (const InputException& e) {
      EXPECT_NE(e.error().ToString().find(f.string() + ":" + std::to_string(line) + ": recompute_modules"), std::string::npos)
          << e.error().ToString();
    }
  }
}

// A recipe's CUDA graph scope by Megatron-Core's names, with its rules; each
// mistake names the file, line and key.
TEST(HardwareProfileTest, RecipeCudaGraphScope) {
  const FrameworkProfile full = LoadFrameworkProfile(YAML::Node("megatron-bridge-26.08-qwen3-gb200-mxfp8"), "", "framework");
  EXPECT_EQ(full.cuda_graph_modules, unsigned(kGraphFullIteration));
  const FrameworkProfile layer = LoadFrameworkProfile(YAML::Node("megatron-bridge-25.09-qwen3-cuda-graphs"), "", "framework");
  EXPECT_EQ(layer.cuda_graph_modules, unsigned(kGraphAttention | kGraphMlp | kGraphMoe));
  EXPECT_EQ(LoadFrameworkProfile(YAML::Node("megatron-core-2024"), "", "framework").cuda_graph_modules, 0u);
  const auto f = fs::temp_directory_path() / "trainsim_cuda_graph_scope.yaml";
  std::ofstream(f) << "name: g\nbased_on: megatron-core-2024\ncuda_graph_scope: [attn, moe_router, moe_preprocess]\n";
  EXPECT_EQ(LoadFrameworkProfile(YAML::Node(f.string()), "", "framework").cuda_graph_modules,
            unsigned(kGraphAttention | kGraphMoeRouter | kGraphMoePreprocess));
  for (const std::string scope : {"[atn]", "[full]", "[full_iteration, attn]", "[moe, moe_router]", "[moe_preprocess]", "attn"}) {
    std::ofstream(f) << "name: g\nbased_on: megatron-core-2024\ncuda_graph_scope: " << scope << "\n";
    try {
      LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework");
      FAIL() << "expected an error for " << scope;
    } catch (const InputException& e) {
      EXPECT_NE(e.error().ToString().find(f.string() + ":3: cuda_graph_scope"), std::string::npos) << e.error().ToString();
    }
  }
}

// A recipe's pipeline layouts by pipeline x virtual stages, each checked as
// Megatron-Core checks a layout; each mistake names the file, line and key.
// recompute_layers (Megatron-Core's recompute_num_layers, method block):
// a scenario's own or its recipe's, and only with full recompute.
TEST(HardwareProfileTest, RecomputeLayersGoWithFullRecompute) {
  const std::string example = DataDir() + "/examples/reference-design/llama2-7b-1n-8nic.yaml";
  auto own = LoadScenario(example, {"training.recompute=full", "training.recompute_layers=5"});
  ASSERT_TRUE(own.ok()) << own.error().ToString();
  EXPECT_EQ(own->training.recompute_layers, 5);
  auto selective = LoadScenario(example, {"training.recompute=selective", "training.recompute_layers=5"});
  ASSERT_FALSE(selective.ok());
  EXPECT_NE(selective.error().ToString().find("training.recompute_layers: needs recompute: full"), std::string::npos)
      << selective.error().ToString();
  const auto f = fs::temp_directory_path() / "trainsim_recompute_layers.yaml";
  std::ofstream(f) << "name: r\nbased_on: megatron-core-2024\nrecompute: full\nrecompute_layers: 5\n";
  auto recipe = LoadScenario(example, {"training.framework=" + f.string(), "training.recompute=full"});
  ASSERT_TRUE(recipe.ok()) << recipe.error().ToString();
  EXPECT_EQ(recipe->training.recompute_layers, 5);  // the recipe's
  auto none = LoadScenario(example, {"training.framework=" + f.string(), "training.recompute=none"});
  ASSERT_TRUE(none.ok()) << none.error().ToString();
  EXPECT_EQ(none->training.recompute_layers, 0);
  std::ofstream(f) << "name: r\nbased_on: megatron-core-2024\nrecompute_layers: 5\n";
  const std::string e = LoadError([&] { LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework"); });
  EXPECT_NE(e.find(f.string() + ":3: recompute_layers: needs recompute: full"), std::string::npos) << e;
}

// torchtitan's recompute policy and its eager operators: read from the
// profiles; Megatron-Core's modules do not go with the policy, in a profile
// or a scenario.
TEST(HardwareProfileTest, TorchtitanRecomputePolicyAndEagerOperators) {
  const FrameworkProfile titan = LoadFrameworkProfile(YAML::Node("torchtitan-2024"), "", "framework");
  EXPECT_TRUE(titan.selective_recompute_torchtitan_op);  // from torchtitan-fsdp2-2025
  EXPECT_EQ(titan.eager_norm, (FrameworkProfile::EagerElementwise{36, 72, 8}));
  EXPECT_TRUE(titan.eager_attention_copies);
  const FrameworkProfile mcore = LoadFrameworkProfile(YAML::Node("megatron-core-2024"), "", "framework");
  EXPECT_FALSE(mcore.selective_recompute_torchtitan_op);
  EXPECT_FALSE(mcore.eager_norm.Set());
  const auto f = fs::temp_directory_path() / "trainsim_torchtitan_policy.yaml";
  for (const auto& [text, key] : {std::pair<std::string, std::string>{"name: r\nbased_on: megatron-core-2024\nrecompute: selective\n"
                                                                     "recompute_modules: [mlp]\nselective_recompute_policy: torchtitan_op\n",
                                                                     "selective_recompute_policy"},
                                  {"name: r\nbased_on: megatron-core-2024\nselective_recompute_policy: torchtitan\n", "selective_recompute_policy"},
                                  {"name: r\nbased_on: megatron-core-2024\neager_elementwise: {norm: {forward: 4, backwards: 8, kernels: 1}}\n",
                                   "eager_elementwise.norm.backward"}}) {
    std::ofstream(f) << text;
    const std::string e = LoadError([&] { LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework"); });
    ASSERT_FALSE(e.empty()) << "expected an error for " << text;
    EXPECT_NE(e.find(key), std::string::npos) << e;
    EXPECT_NE(e.find(f.string()), std::string::npos) << e;
  }
  const std::string example = DataDir() + "/examples/reference-design/llama2-7b-1n-8nic.yaml";
  auto modules = LoadScenario(example, {"training.framework=torchtitan-2024", "training.recompute=selective",
                                        "training.recompute_modules=[mlp]"});
  ASSERT_FALSE(modules.ok());
  EXPECT_NE(modules.error().ToString().find("training.recompute_modules: framework torchtitan-2024 recomputes by torchtitan's op policy"),
            std::string::npos)
      << modules.error().ToString();
}

TEST(HardwareProfileTest, RecipePipelineLayouts) {
  const FrameworkProfile ds = LoadFrameworkProfile(YAML::Node("megatron-bridge-26.04.01-deepseek-v3-b200"), "", "framework");
  ASSERT_EQ(ds.pipeline_layouts.count("8x2"), 1u);
  EXPECT_EQ(ds.pipeline_layouts.at("8x2"), "Et*4|(t*4|)*14tmL");
  const auto f = fs::temp_directory_path() / "trainsim_pipeline_layouts.yaml";
  const std::string head = "name: r\nbased_on: megatron-core-2024\n";
  for (const auto& [body, expected] : {std::pair<std::string, std::string>{"pipeline_layouts: EtL\n", ":3: pipeline_layouts: expected a map"},
                                       {"pipeline_layouts:\n  16: EtL\n", ":4: pipeline_layouts: \"16\": expected pipeline x virtual stages"},
                                       {"pipeline_layouts:\n  2x1: Et|tL|tL\n", ":4: pipeline_layouts.2x1: the loss (L) must close the last stage, once"},
                                       {"pipeline_layouts:\n  2x2: Et|tL\n", ":4: pipeline_layouts.2x2: has 2 stages, not 2x2"}}) {
    std::ofstream(f) << head << body;
    try {
      LoadFrameworkProfile(YAML::Node(f.string()), "", "training.framework");
      FAIL() << "expected an error for " << body;
    } catch (const InputException& e) {
      EXPECT_NE(e.error().ToString().find(f.string() + expected), std::string::npos) << e.error().ToString();
    }
  }
}

}  // namespace
}  // namespace trainsim
