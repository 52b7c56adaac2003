// trainsim bench: wall-time benchmarks of the simulator itself (design.md §4
// speed targets), on one core: the DES of a 500-step Llama 2 70B run with
// checkpoints on 8 XE9680 nodes, one step of Llama 3.1 405B on 16,384 GPUs,
// how the DES wall time grows from 64 to 16,384 GPUs, the analytical path's
// configurations per second, `trainsim size` on the 70B capacity question,
// and the process's peak memory.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/analytical/analytical_step.h"
#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/des/des_simulator.h"
#include "sim/core/scenario.h"
#include "sim/cost/step_costs.h"
#include "sim/io/data_paths.h"
#include "sim/io/profile_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/size/cluster_sizer.h"

namespace trainsim::cli {

namespace {

const char* kBenchHelp =
    "usage: trainsim bench [--quick]\n"
    "Time the simulator: DES of a 500-step Llama 2 70B run on 8 XE9680 nodes (sync and async\n"
    "checkpoints), one DES step of Llama 3.1 405B from 64 to 16,384 GPUs, the analytical path\n"
    "(configurations per second), trainsim size for Llama 3.1 70B / 2T tokens / 30 days, and peak\n"
    "memory. Targets: design.md section 4.\n"
    "  --quick      fewer repetitions and sizes\n"
    "  -h, --help   this help\n";

double Seconds(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

Expected<Scenario> Inline(const std::string& text, const std::vector<std::string>& sets) {
  YAML::Node root = YAML::Load(text);
  ApplyOverrides(root, sets);
  return ParseScenario(root, "bench");
}

const char* k70b = R"(name: bench-llama2-70b-8n
cluster: {node: xe9680-h100, nodes: 8, nics_per_node: 8, fabric: ndr-rail-optimized, storage: powerscale-f710, storage_nodes: 4}
model: llama2-70b
parallelism: {tensor: 4, pipeline: 4, virtual_stages: 5, distributed_optimizer: true}
training: {seq_len: 4096, global_batch: 128, micro_batch: 1, steps: 500}
checkpoint: {every_steps: 100, contents: full, mode: sync}
)";

const char* k405b = R"(name: bench-llama3.1-405b
cluster: {node: xe9680-h100, nodes: 2048, fabric: ndr-rail-optimized}
model: llama3.1-405b
parallelism: {tensor: 8, pipeline: 16, context: 1, distributed_optimizer: true}
training: {seq_len: 8192, global_batch: 2048, micro_batch: 1, steps: 1, recompute: full}
)";

double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

}  // namespace

int BenchCommand(const Args& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a;
  const std::string perr = Parse(args, {{"--quick"}, {"--help", false, "-h"}}, a);
  if (a.Has("--help")) {
    out << kBenchHelp;
    return kExitOk;
  }
  if (!perr.empty() || !a.positional.empty()) {
    err << "trainsim bench: " << (perr.empty() ? "takes no positional arguments" : perr) << "\n";
    return kExitBadInput;
  }
  const bool quick = a.Has("--quick");
  char line[256];
  // One DES run of a benchmark scenario: its wall time, result and counters.
  struct DesRun {
    double wall_s = 0;
    SimulationResult result;
    DesStats stats;
  };
  auto run_des = [](const Scenario& s) {
    DesRun d;
    const auto t0 = std::chrono::steady_clock::now();
    d.result = Simulate(s, SimulateOptions::At(Fidelity::kDes, false, &d.stats));
    d.wall_s = Seconds(t0);
    return d;
  };

  // 1. The 500-step run, with 5 and with 20 (the reference design's) interleaved chunks.
  out << "DES, Llama 2 70B, 8 x XE9680 (64 GPUs, TP 4 PP 4 DP 4), 500 steps, checkpoint every 100 to 4 F710 (target < 1 s):\n";
  for (const char* run : {"5 sync", "5 async", "20 sync", "20 async"}) {
    const std::string vp = std::string(run).substr(0, std::string(run).find(' '));
    const std::string mode = std::string(run).substr(vp.size() + 1);
    auto s = Inline(k70b, {"checkpoint.mode=" + mode, "parallelism.virtual_stages=" + vp});
    if (!s) {
      err << s.error().ToString() << "\n";
      return kExitBadInput;
    }
    const DesRun d = run_des(*s);
    std::snprintf(line, sizeof line,
                  "  VP %-2s %-5s wall %.3f s  (%d steps simulated, %d repeated, %d flows; step %.3f s, run %.0f s, ckpt write %.1f s, stall %.2f s)\n",
                  vp.c_str(), mode.c_str(), d.wall_s, d.stats.simulated_steps, d.stats.repeated_steps, d.stats.flows,
                  d.result.step_time_s, d.stats.run_time_s, d.result.run.checkpoint_write_s, d.result.run.checkpoint_stall_s);
    out << line;
  }

  // 2. One step of 405B with its real 126 layers, from 64 to 16,384 GPUs
  // (micro batches per DP rank held at 16); PP 16 has its first and last
  // stage one layer short (7,8x14,7), as Meta ran it.
  out << "DES, Llama 3.1 405B (126 layers), one step, TP 8, 16 micro batches per replica (target 16,384 GPUs < 0.5 s):\n";
  // 128 GPUs is the smallest cluster that holds it (TP 8 x PP 16).
  std::vector<std::pair<int, int>> sizes = {{16, 16}, {64, 16}, {256, 16}, {1024, 16}, {2048, 16}};  // nodes, PP
  if (quick) sizes = {{16, 16}, {2048, 16}};
  for (const auto& [nodes, pp] : sizes) {
    const int dp = nodes * 8 / (8 * pp);
    std::vector<std::string> sets = {"cluster.nodes=" + std::to_string(nodes), "parallelism.pipeline=" + std::to_string(pp),
                                     "training.global_batch=" + std::to_string(16 * dp)};
    if (pp == 16) {
      sets.push_back("parallelism.first_stage_layers=7");
      sets.push_back("parallelism.last_stage_layers=7");
    }
    auto s = Inline(k405b, sets);
    if (!s) {
      err << s.error().ToString() << "\n";
      return kExitBadInput;
    }
    const DesRun d = run_des(*s);
    std::snprintf(line, sizeof line, "  %6d GPUs (PP %2d, DP %4d): wall %.3f s  (%d stage actors, %d flows; step %.2f s)\n",
                  nodes * 8, pp, dp, d.wall_s, d.stats.stage_actors, d.stats.flows, d.result.step_time_s);
    out << line;
  }

  // 3. Analytical path: ComputeStepCosts + AnalyticalStep over pre-parsed configurations.
  std::vector<Scenario> configs;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {1, 2, 4, 8}) {
      for (int mb : {1, 2, 4}) {
        auto s = Inline(k70b, {"parallelism.tensor=" + std::to_string(tp), "parallelism.pipeline=" + std::to_string(pp),
                               "parallelism.virtual_stages=1", "training.micro_batch=" + std::to_string(mb)});
        if (s) configs.push_back(*s);
      }
    }
  }
  const int reps = quick ? 200 : 1000;
  double sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    for (const auto& s : configs) sink += AnalyticalStep(s, ComputeStepCosts(s)).step_time_s;
  }
  const double wall = Seconds(t0);
  const double n = double(reps) * configs.size();
  std::snprintf(line, sizeof line, "Analytical: %.0f configurations in %.3f s = %.0f configurations/s on one core (target >= 100,000) [%g]\n",
                n, wall, n / wall, sink > 0 ? 1.0 : 0.0);
  out << line;
  // 4. trainsim size: the capacity planner's question on the example scenario.
  {
    auto s = LoadScenario(DataDir() + "/examples/size/llama3.1-70b-xe9680.yaml", {"cost.model=ownership"});
    if (!s) {
      err << s.error().ToString() << "\n";
      return kExitBadInput;
    }
    SizeOptions o;
    o.tokens = 2e12;
    o.days = 30;
    o.node_counts = {16, 24, 32, 48, 64, 96, 128, 192, 256};
    o.nics = {4, 8};
    for (const char* p : {"xe9680-h100", "xe9680-h200"}) o.node_profiles.push_back(LoadNodeProfile(YAML::Node(p), "bench", "node"));
    const auto t1 = std::chrono::steady_clock::now();
    const SizeReport r = SizeCluster(*s, o);
    const double size_wall = Seconds(t1);
    std::snprintf(line, sizeof line,
                  "size: Llama 3.1 70B, 2T tokens in 30 days, %d clusters (16-256 XE9680, 4/8 NICs, H100/H200): wall %.3f s "
                  "(search %.3f s, DES re-check of %d %.3f s; target < 2 s)\n",
                  r.clusters, size_wall, r.search_s, r.rechecked, r.recheck_s);
    out << line;
  }
  std::snprintf(line, sizeof line, "Peak memory (max RSS): %.0f MiB (target < 1024)\n", PeakRssMiB());
  out << line;
  return kExitOk;
}

}  // namespace trainsim::cli
