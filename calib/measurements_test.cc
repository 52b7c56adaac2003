#include "calib/measurements.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sim/io/data_paths.h"

namespace trainsim::calib {
namespace {

std::string TempDir() {
  auto d = std::filesystem::temp_directory_path() / ("trainsim-calib-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d.string();
}

Measurements Sample() {
  Measurements m;
  m.backend = "cpu";
  m.host = "h";
  m.date = "2026-01-01T00:00:00Z";
  m.device = "test \"cpu\"";
  m.memory_bytes = 1e9;
  m.cache_bytes = 5.24288e7;
  m.sustained.push_back({{8192, 8192, 8192, 1, "nt", "fp8", 9.5e-4}, 15});
  m.launch_s = 1e-6;
  m.node_host_copy_gpus = 8;
  m.node_host_to_device_bytes_per_s = 2.1e11;
  m.node_device_to_host_bytes_per_s = 1.9e11;
  m.gemm = {{64, 64, 64, 1, "nn", "fp32", 1e-5}, {8, 16, 32, 4, "tn", "fp32", 2e-6}};
  m.grouped_gemm = {{{256, 512, 128, 8, "tn", "bf16", 3e-5}, 4}};
  m.memory = {{"copy", 1e6, 1e-4}};
  m.attention = {{1, 2, 1, 16, 8, 1e-5, 2e-5}};
  m.layers = {{{32, 48, 4, 2, 8, 2}, 1e-3, 2e-3, -1}};
  m.collectives = {{"all-reduce", "intra-node", 2, 65536, 1e-5}};
  m.storage = {{2, 1e6, {0.1, 0.2}, {0.05, 0.06}}};
  return m;
}

TEST(Measurements, RoundTrip) {
  const std::string path = TempDir() + "/m.yaml";
  ASSERT_EQ(WriteFileAtomically(path, MeasurementsYaml(Sample())), "");
  auto m = LoadMeasurements(path);
  ASSERT_TRUE(m) << m.error().ToString();
  EXPECT_EQ(m->device, "test \"cpu\"");
  EXPECT_DOUBLE_EQ(m->cache_bytes, 5.24288e7);
  ASSERT_EQ(m->sustained.size(), 1u);
  EXPECT_EQ(m->sustained[0].gemm.precision, "fp8");
  EXPECT_EQ(m->sustained[0].gemm.layout, "nt");
  EXPECT_DOUBLE_EQ(m->sustained[0].run_s, 15);
  EXPECT_DOUBLE_EQ(m->sustained[0].gemm.seconds, 9.5e-4);
  ASSERT_EQ(m->gemm.size(), 2u);
  EXPECT_EQ(m->gemm[1].batch, 4);
  EXPECT_EQ(m->gemm[1].layout, "tn");
  EXPECT_DOUBLE_EQ(m->gemm[1].seconds, 2e-6);
  ASSERT_EQ(m->grouped_gemm.size(), 1u);
  EXPECT_EQ(m->grouped_gemm[0].experts(), 8);
  EXPECT_EQ(m->grouped_gemm[0].streams, 4);
  EXPECT_EQ(m->grouped_gemm[0].gemm.layout, "tn");
  EXPECT_EQ(m->grouped_gemm[0].gemm.precision, "bf16");
  EXPECT_DOUBLE_EQ(m->grouped_gemm[0].gemm.seconds, 3e-5);
  ASSERT_EQ(m->layers.size(), 1u);
  EXPECT_EQ(m->layers[0].shape.kv_heads, 2);
  EXPECT_DOUBLE_EQ(m->layers[0].backward_s, 2e-3);
  ASSERT_EQ(m->storage.size(), 1u);
  EXPECT_EQ(m->storage[0].read_s.size(), 2u);
  EXPECT_EQ(m->collectives[0].op, "all-reduce");
  EXPECT_EQ(m->node_host_copy_gpus, 8);
  EXPECT_DOUBLE_EQ(m->node_host_to_device_bytes_per_s, 2.1e11);
  EXPECT_DOUBLE_EQ(m->node_device_to_host_bytes_per_s, 1.9e11);
}

std::string ErrorOf(const std::string& text) {
  const std::string path = TempDir() + "/bad.yaml";
  std::ofstream(path) << text;
  auto m = LoadMeasurements(path);
  return m ? "" : m.error().ToString();
}

TEST(Measurements, MalformedFilesGiveLocatedErrors) {
  std::string good = MeasurementsYaml(Sample());
  // A negative time in the second GEMM sample.
  std::string bad = good;
  bad.replace(bad.find("s: 2e-06"), 8, "s: -2e-06");
  std::string e = ErrorOf(bad);
  EXPECT_NE(e.find("bad.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("gemm[1].s"), std::string::npos) << e;
  // An unknown key.
  e = ErrorOf(good + "gpu_count: 3\n");
  EXPECT_NE(e.find("gpu_count"), std::string::npos) << e;
  // Not YAML at all.
  e = ErrorOf("gemm: [1, 2\n");
  EXPECT_NE(e.find("bad.yaml"), std::string::npos) << e;
  // A storage sample with a missing client time.
  bad = good;
  bad.replace(bad.find("write_s: [0.1, 0.2]"), 19, "write_s: [0.1]");
  e = ErrorOf(bad);
  EXPECT_NE(e.find("one write and one read time per client"), std::string::npos) << e;
  // A grouped GEMM of one expert, and one without its streams.
  bad = good;
  bad.replace(bad.find("experts: 8"), 10, "experts: 1");
  e = ErrorOf(bad);
  EXPECT_NE(e.find("grouped_gemm[0].experts"), std::string::npos) << e;
  bad = good;
  bad.replace(bad.find("streams: 4, "), 12, "");
  e = ErrorOf(bad);
  EXPECT_NE(e.find("grouped_gemm[0].streams"), std::string::npos) << e;
  // An inconsistent layer shape.
  bad = good;
  bad.replace(bad.find("heads: 4, kv_heads: 2"), 21, "heads: 4, kv_heads: 3");
  e = ErrorOf(bad);
  EXPECT_NE(e.find("inconsistent layer shape"), std::string::npos) << e;
  EXPECT_NE(ErrorOf("trainsim_measurements: 1\n").find("backend"), std::string::npos);
  // A kernel name no backend runs (a typo would be fitted as a kernel of its own).
  bad = good;
  bad.replace(bad.find("kernel: copy"), 12, "kernel: rmsnrom_fwd");
  e = ErrorOf(bad);
  EXPECT_NE(e.find("memory[0].kernel"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'rmsnorm_fwd'"), std::string::npos) << e;
}

TEST(Measurements, Fp8SamplesRoundTripAndMalformedOnesAreLocated) {
  Measurements with_fp8 = Sample();
  with_fp8.gemm.push_back({64, 64, 64, 1, "nt", "fp8", 3e-6});
  const std::string good = MeasurementsYaml(with_fp8);
  const std::string path = TempDir() + "/fp8.yaml";
  ASSERT_EQ(WriteFileAtomically(path, good), "");
  auto m = LoadMeasurements(path);
  ASSERT_TRUE(m) << m.error().ToString();
  ASSERT_EQ(m->gemm.size(), 3u);
  EXPECT_EQ(m->gemm[2].precision, "fp8");
  EXPECT_EQ(m->gemm[2].layout, "nt");
  // The fp8 entry's line, 1-based, for the expected FILE:LINE.
  const size_t at = good.find("precision: fp8");
  ASSERT_NE(at, std::string::npos);
  const int line = 1 + int(std::count(good.begin(), good.begin() + at, '\n'));
  const size_t start = good.rfind('\n', at) + 1, end = good.find('\n', at);
  const std::string entry = good.substr(start, end - start);
  auto with_entry = [&](const std::string& replacement) {
    std::string bad = good;
    bad.replace(start, end - start, replacement);
    return ErrorOf(bad);
  };
  const std::string located = "bad.yaml:" + std::to_string(line) + ":";
  // A misspelt precision.
  std::string bad_entry = entry;
  bad_entry.replace(bad_entry.find("fp8"), 3, "fp9");
  std::string e = with_entry(bad_entry);
  EXPECT_NE(e.find(located), std::string::npos) << e;
  EXPECT_NE(e.find("gemm[2].precision"), std::string::npos) << e;
  // A zero time.
  bad_entry = entry;
  bad_entry.replace(bad_entry.find("s: 3e-06"), 8, "s: 0");
  e = with_entry(bad_entry);
  EXPECT_NE(e.find(located), std::string::npos) << e;
  EXPECT_NE(e.find("gemm[2].s"), std::string::npos) << e;
  // A missing dimension.
  bad_entry = entry;
  bad_entry.replace(bad_entry.find("k: 64, "), 7, "");
  e = with_entry(bad_entry);
  EXPECT_NE(e.find(located), std::string::npos) << e;
  EXPECT_NE(e.find("gemm[2].k"), std::string::npos) << e;
  // An unknown layout.
  bad_entry = entry;
  bad_entry.replace(bad_entry.find("layout: nt"), 10, "layout: tt");
  e = with_entry(bad_entry);
  EXPECT_NE(e.find(located), std::string::npos) << e;
  EXPECT_NE(e.find("gemm[2].layout"), std::string::npos) << e;
}

TEST(Measurements, BlockScaledSamplesRoundTrip) {
  // What trainsim-calib-cuda writes on a Blackwell GPU: mxfp8 and nvfp4 samples
  // beside the fp8 ones, all in the "nt" layout.
  Measurements mx = Sample();
  mx.gemm.push_back({4096, 4096, 4096, 1, "nt", "fp8", 5e-5});
  mx.gemm.push_back({4096, 4096, 4096, 1, "nt", "mxfp8", 4.5e-5});
  mx.gemm.push_back({4096, 4096, 8192, 1, "nt", "nvfp4", 4e-5});
  const std::string path = TempDir() + "/mx.yaml";
  ASSERT_EQ(WriteFileAtomically(path, MeasurementsYaml(mx)), "");
  auto m = LoadMeasurements(path);
  ASSERT_TRUE(m) << m.error().ToString();
  ASSERT_EQ(m->gemm.size(), 5u);
  EXPECT_EQ(m->gemm[3].precision, "mxfp8");
  EXPECT_EQ(m->gemm[4].precision, "nvfp4");
  EXPECT_EQ(m->gemm[4].layout, "nt");
  EXPECT_EQ(m->gemm[4].k, 8192);
  EXPECT_DOUBLE_EQ(m->gemm[4].seconds, 4e-5);
  // Written again, the same text: nothing is lost or renamed on the way.
  EXPECT_EQ(MeasurementsYaml(*m), MeasurementsYaml(mx));
  // A format the sweep does not measure is an error at its line.
  std::string text = MeasurementsYaml(mx);
  text.replace(text.find("precision: nvfp4"), 16, "precision: mxfp4");
  const std::string e = ErrorOf(text);
  EXPECT_NE(e.find("gemm[4].precision"), std::string::npos) << e;
}

TEST(Measurements, BlockScaledRatesAreBoundedByTheirOwnPeaks) {
  auto load_with = [&](const std::string& sample) {
    std::string text = MeasurementsYaml(Sample());
    const std::string from = "{m: 64, n: 64, k: 64, batch: 1, layout: nn, precision: fp32, s: 1e-05}";
    text.replace(text.find(from), from.size(), sample);
    return ErrorOf(text);
  };
  // 4096^3 (1.37e11 FLOP) in 22.9 us is 6000 TFLOP/s: over twice the fastest
  // bf16 peak (gb200, 2500) but within twice the fastest mxfp8 one (5000).
  EXPECT_EQ(load_with("{m: 4096, n: 4096, k: 4096, batch: 1, layout: nt, precision: mxfp8, s: 2.29e-05}"), "");
  EXPECT_NE(load_with("{m: 4096, n: 4096, k: 4096, batch: 1, layout: nt, precision: bf16, s: 2.29e-05}"), "");
  // 40,000 TFLOP/s of nvfp4 is more than twice any nvfp4 peak (b300: 15000).
  const std::string e = load_with("{m: 4096, n: 4096, k: 4096, batch: 1, layout: nt, precision: nvfp4, s: 3.4e-06}");
  EXPECT_NE(e.find("gemm[0].s: 3.4e-06 s for this nvfp4 GEMM is"), std::string::npos) << e;
  EXPECT_NE(e.find("TFLOP/s nvfp4, "), std::string::npos) << e;
}

TEST(Measurements, AtomicWriteReplacesAndLeavesNoTemporary) {
  const std::string dir = TempDir() + "/atomic";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/p.yaml";
  ASSERT_EQ(WriteFileAtomically(path, "a: 1\n"), "");
  ASSERT_EQ(WriteFileAtomically(path, "a: 2\n"), "");
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "a: 2");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  EXPECT_NE(WriteFileAtomically(dir + "/no/such/dir/p.yaml", "x"), "");
  // A device, pipe or folder is never replaced by the renamed file (as root, -o /dev/full once was).
  const std::string fifo = dir + "/fifo.yaml";
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(WriteFileAtomically(fifo, "x").find("not a regular file"), std::string::npos);
  EXPECT_FALSE(std::filesystem::is_regular_file(fifo));
  EXPECT_NE(NotAFileToWrite("/dev/null").find("is not a regular file (a device)"), std::string::npos);
  EXPECT_EQ(NotAFileToWrite("/dev/null", OutputWrite::kInPlace), "");  // a device written in place takes the bytes
  EXPECT_NE(NotAFileToWrite(fifo, OutputWrite::kInPlace).find("is a pipe or socket"), std::string::npos);
  EXPECT_NE(NotAFileToWrite(dir).find("is a directory"), std::string::npos);
  EXPECT_EQ(NotAFileToWrite(path), "");
  EXPECT_EQ(NotAFileToWrite(dir + "/absent.yaml"), "");
}

TEST(Measurements, DuplicateKeysAndEmptyFilesNameTheFile) {
  const std::string path = TempDir() + "/dup.yaml";
  std::string text = MeasurementsYaml(Sample());
  const size_t at = text.find("dtype:");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "dtype: bf16\n");  // a doubled dtype: the first used to win silently
  std::ofstream(path) << text;
  auto m = LoadMeasurements(path);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().ToString().find(": dtype: duplicate key (first at line"), std::string::npos) << m.error().ToString();
  EXPECT_EQ(m.error().file, path);
  const std::string empty = TempDir() + "/empty.yaml";
  std::ofstream(empty) << "";
  auto e = LoadMeasurements(empty);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().ToString(), empty + ": the file is empty (nothing but comments or blank lines); expected a mapping of keys");
}

TEST(Measurements, ImplausibleValuesAreRejectedWithTheReason) {
  const std::string path = TempDir() + "/implausible.yaml";
  auto load_with = [&](const std::string& from, const std::string& to) {
    std::string text = MeasurementsYaml(Sample());
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    std::ofstream(path) << text;
    auto m = LoadMeasurements(path);
    return m ? std::string("(loaded)") : m.error().ToString();
  };
  const std::string gemm = "{m: 64, n: 64, k: 64, batch: 1, layout: nn, precision: fp32, s: 1e-05}";
  // One sample at 1e-12 s used to give a peak of 1e9 TFLOP/s.
  EXPECT_NE(load_with(gemm, "{m: 64, n: 64, k: 64, batch: 1, layout: nn, precision: fp32, s: 1e-12}")
                .find("gemm[0].s: 1e-12 s is at or below 1 ns, shorter than any kernel can run"), std::string::npos)
      << load_with(gemm, "{m: 64, n: 64, k: 64, batch: 1, layout: nn, precision: fp32, s: 1e-12}");
  // Above 1 ns but far beyond any datasheet: 4096^3 in 10 ns is 1.4e7 TFLOP/s.
  const std::string fast = load_with(gemm, "{m: 4096, n: 4096, k: 4096, batch: 1, layout: nn, precision: bf16, s: 1e-08}");
  EXPECT_NE(fast.find("gemm[0].s: 1e-08 s for this bf16 GEMM is"), std::string::npos) << fast;
  EXPECT_NE(fast.find("more than twice the fastest datasheet peak trainsim knows (2500 TFLOP/s bf16, gb200)"), std::string::npos) << fast;
  // A copy at 1000 TB/s.
  const std::string copy = load_with("{kernel: copy, bytes: 1e+06, s: 0.0001}", "{kernel: copy, bytes: 1e9, s: 1e-6}");
  EXPECT_NE(copy.find("memory[0].s: 1e-06 s for 1e+09 bytes is 1000 TB/s, more than twice the fastest memory"), std::string::npos) << copy;
  // max_rel_error: a word is an error, not -1.
  const std::string lots = load_with("max_rel_error: -1", "max_rel_error: lots");
  EXPECT_NE(lots.find("layers[0].max_rel_error: expected a number, got 'lots'"), std::string::npos) << lots;
  EXPECT_NE(load_with("max_rel_error: -1", "max_rel_error: -2").find("must not be negative"), std::string::npos);
  EXPECT_EQ(load_with("max_rel_error: -1", "max_rel_error: 0.001"), "(loaded)");
  // Sizes no GPU or host has: the wave correction gave a 188,937 TFLOP/s peak.
  const std::string units = load_with("compute_units: 1\n", "compute_units: 100000\n");
  EXPECT_NE(units.find("compute_units: 100000 compute units: not a plausible GPU or host"), std::string::npos) << units;
  EXPECT_NE(load_with("memory_bytes: 1e+09", "memory_bytes: 1e20").find("memory_bytes: must be positive and at most 64 TiB"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::calib
