#include "sim/des/des_simulator.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>
#include <set>
#include <thread>

#include "sim/cost/checkpoint_cost.h"
#include "sim/cost/step_costs.h"
#include "sim/run/simulate.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/result_writer.h"

namespace trainsim {
namespace {

Scenario Make(const std::string& text, const std::vector<std::string>& sets = {}) {
  YAML::Node root = YAML::Load(text);
  ApplyOverrides(root, sets);
  auto s = ParseScenario(root, "des.yaml");
  if (!s.ok()) throw std::runtime_error(s.error().ToString());
  return *s;
}

const char* k70b = R"(name: des-70b
cluster: {node: xe9680-h100, nodes: 4, fabric: ndr-rail-optimized}
model: llama2-70b
parallelism: {tensor: 4, pipeline: 4}
training: {seq_len: 4096, global_batch: 64, micro_batch: 1, steps: 10}
)";

const char* k7b = R"(name: des-7b
cluster: {node: xe9680-h100, nodes: 2, fabric: ndr-rail-optimized}
model: llama2-7b
parallelism: {tensor: 8, pipeline: 1}
training: {seq_len: 4096, global_batch: 32, micro_batch: 1, steps: 10}
)";

const char* kStorage = R"(name: des-ckpt
cluster: {node: xe9680-h100, nodes: 2, fabric: ndr-rail-optimized, storage: powerscale-f710, storage_nodes: 4}
model: llama2-7b
parallelism: {tensor: 8, pipeline: 1}
training: {seq_len: 4096, global_batch: 32, micro_batch: 1, steps: 40}
checkpoint: {every_steps: 10, contents: full, mode: sync}
)";

double Rel(double a, double b) { return std::abs(a - b) / b; }

// The DES breakdown adds up to the step it measured, also where an
// overlapped EP all-to-all runs beside the pass (the cost model's folded
// exposure is then more than the DES leaves exposed) and the step's critical
// path spends as long blocked on its all-to-alls as the slowest stage is
// not computing (Qwen3: its whole fill and drain is other stages' waits
// for their all-to-alls, so communication, no bubble).
TEST(DesSimulatorTest, BreakdownAddsUpToTheStepWithOverlappedAllToAll) {
  for (const char* file : {"mixtral-8x7b-8n-8nic.yaml", "qwen3-235b-a22b-32n-8nic.yaml"}) {
    auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/moe/" + file, {"parallelism.moe_a2a_overlap=true"});
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    const SimulationResult r = Simulate(*s, SimulateOptions::At(Fidelity::kDes));
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_NEAR(r.breakdown.total_s(), r.step_time_s, 1e-9 * r.step_time_s) << file;
    EXPECT_GE(r.breakdown.pipeline_bubble_s, 0) << file;
    EXPECT_GT(r.breakdown.exposed_communication_s, 0) << file;
  }
}

// Where nothing but one stream uses each link, the DES and the closed form
// must tell the same story: same per-pass costs, same alpha-beta terms.
TEST(DesSimulatorTest, AgreesWithAnalyticalWithoutContention) {
  const std::vector<std::pair<const char*, std::vector<std::string>>> cases = {
      {k70b, {}},                                                         // PP 4, DP 2, TP in node
      {k70b, {"parallelism.virtual_stages=2", "training.recompute=full"}},  // interleaved (fits with recompute)
      // A Megatron layout whose last chunk holds only the loss (as DeepSeek-V3's recipe on H100 has it).
      {k70b, {"parallelism.virtual_stages=2", "training.recompute=full", "parallelism.pipeline_layout=Et*12|(t*12|)*5t*8|L"}},
      {k70b, {"parallelism.pipeline=2", "parallelism.tensor=8"}},         // PP across nodes, DP 2
      {k7b, {}},                                                          // PP 1, DP 2 across nodes
      {k7b, {"parallelism.tensor=2"}},                                    // DP 8, hierarchical
      {k7b, {"cluster.nodes=1", "parallelism.tensor=4"}},                 // single node DP 2
      {k7b, {"parallelism.tensor=4", "parallelism.context=2"}},           // CP 2
  };
  for (const auto& [text, sets] : cases) {
    const Scenario s = Make(text, sets);
    const SimulationResult a = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical, false));
    const SimulationResult d = Simulate(s, SimulateOptions::At(Fidelity::kDes, false));
    std::string what;
    for (const auto& k : sets) what += k + " ";
    EXPECT_EQ(d.fidelity, "des") << what << d.error;
    EXPECT_LT(Rel(d.step_time_s, a.step_time_s), 0.03) << what << " des " << d.step_time_s << " analytical " << a.step_time_s;
    EXPECT_NEAR(d.breakdown.total_s(), d.step_time_s, 1e-9 * d.step_time_s) << what;
    // The same story part by part: the DES measures its exposed communication
    // (time blocked on flows) and leaves the rest as bubble.
    EXPECT_NEAR(d.breakdown.pipeline_bubble_s, a.breakdown.pipeline_bubble_s, 0.03 * a.step_time_s) << what;
    EXPECT_NEAR(d.breakdown.exposed_communication_s, a.breakdown.exposed_communication_s, 0.03 * a.step_time_s) << what;
    EXPECT_EQ(d.memory.peak_gib_per_gpu, a.memory.peak_gib_per_gpu);
  }
}

// DeepSeek-V3's multi-token-prediction modules are MoE layers on the last
// chunk: their dispatch and combine cross the NICs at EP 64 like any other
// layer's (the DES left them out: 7-11% under the closed form, and a module
// more made the step shorter).
// An oversubscribed spine: each node its own scalable unit, the pipeline's
// hops (stages a node apart) cross the uplinks at a quarter of the NICs'
// rate: both paths slow down, the step within 1% of each other.
TEST(DesSimulatorTest, OversubscribedSpineSlowsBothPathsAlike) {
  const auto step = [](double oversubscription, Fidelity f) {
    Scenario s = Make(k70b);
    s.fabric.nodes_per_su = 1;
    s.fabric.spine_oversubscription = oversubscription;
    s.fabric.switch_radix = 16;  // the 32 node ports do not fit one switch
    return Simulate(s, SimulateOptions::At(f, false)).step_time_s;
  };
  const double des = step(4, Fidelity::kDes), analytical = step(4, Fidelity::kAnalytical);
  const double des_added = des - step(1, Fidelity::kDes), analytical_added = analytical - step(1, Fidelity::kAnalytical);
  EXPECT_LT(Rel(des, analytical), 0.01);
  EXPECT_GT(des_added, 0.02) << des;
  // The closed form charges each slowed hop on the critical path; the DES
  // finds part of them behind other stages' passes (4n, 64 micro batches
  // per replica: 0.19 s both; here, 32: 0.045 against 0.084 s).
  EXPECT_GT(analytical_added, 0.5 * des_added) << des_added << " " << analytical_added;
  EXPECT_LT(analytical_added, 2.5 * des_added) << des_added << " " << analytical_added;
}

TEST(DesSimulatorTest, MtpModulesRunTheirAllToAlls) {
  const std::string text = R"(name: dsv3-mtp
cluster: {node: xe9680-h100, nodes: 128, fabric: ndr-rail-optimized}
model: deepseek-v3
parallelism: {tensor: 2, pipeline: 8, virtual_stages: 4, expert: 64}
training: {seq_len: 4096, global_batch: 8192, micro_batch: 1, precision: fp8, recompute: full, steps: 10}
)";
  double previous = 0;
  for (const char* mtp : {"model.mtp_layers=0", "model.mtp_layers=1", "model.mtp_layers=2"}) {
    const Scenario s = Make(text, {mtp});
    const SimulationResult a = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical, false));
    const SimulationResult d = Simulate(s, SimulateOptions::At(Fidelity::kDes, false));
    ASSERT_TRUE(d.error.empty()) << d.error;
    EXPECT_LT(Rel(d.step_time_s, a.step_time_s), 0.02) << mtp << " des " << d.step_time_s << " analytical " << a.step_time_s;
    EXPECT_GE(d.step_time_s, previous) << mtp;
    previous = d.step_time_s;
  }
}

// Interleaving's short chunks on a slow network: each stage-to-stage hop
// (Llama 2 70B, PP 4 across 4 nodes of 4 x 100 Gb/s RoCE NICs, 20 chunks of
// one layer) outlasts the forward chunk that should hide it, so every 1F1B
// slot waits. The closed form charges that wait as the DES measures it (it
// charged only the fill and drain: 14.05 s against the DES's 18.18 s), and
// nothing where the chunks outlast the hops (one chunk a stage).
TEST(DesSimulatorTest, HopsLongerThanAChunkHoldEverySlot) {
  const auto both = [](const std::string& vp) {
    auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-4n-4nic.yaml",
                          {"cluster.fabric=roce-100g", "parallelism.virtual_stages=" + vp, "training.recompute=none"});
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    return std::pair{Simulate(*s, SimulateOptions::At(Fidelity::kAnalytical, false)), Simulate(*s, SimulateOptions::At(Fidelity::kDes, false))};
  };
  const auto [a20, d20] = both("20");
  ASSERT_TRUE(a20.error.empty() && d20.error.empty()) << a20.error << d20.error;
  EXPECT_LT(Rel(d20.step_time_s, a20.step_time_s), 0.08) << "des " << d20.step_time_s << " analytical " << a20.step_time_s;
  const auto [a1, d1] = both("1");
  EXPECT_LT(Rel(d1.step_time_s, a1.step_time_s), 0.03) << "des " << d1.step_time_s << " analytical " << a1.step_time_s;
  // Both say the interleaving costs more than it saves here.
  EXPECT_GT(a20.step_time_s, a1.step_time_s);
  EXPECT_GT(d20.step_time_s, d1.step_time_s);
}

// Lighter stages ahead of the slowest one fill and drain the pipeline in
// their own, shorter, slots: the slowest waits for each once (not for
// (p-1)/v of its own slots), as the DES measures, and its exposed
// communication is what it spent blocked on collectives, not whatever
// the bubble left.
TEST(DesSimulatorTest, UnevenStagesFillInTheLighterStagesSlots) {
  const Scenario s = Make(k70b, {"cluster.nodes=8", "parallelism.data_sharding=optimizer", "parallelism.pipeline_layout=Et*16|t*16|t*16|t*32L"});
  const SimulationResult a = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical, false));
  const SimulationResult d = Simulate(s, SimulateOptions::At(Fidelity::kDes, false));
  ASSERT_EQ(d.fidelity, "des") << d.error;
  const StepCosts costs = ComputeStepCosts(s);
  EXPECT_EQ(costs.slowest_rank, 3);
  const double even_fill_s = (s.parallelism.pipeline - 1) * costs.slowest().slot_s();
  EXPECT_LT(a.breakdown.pipeline_bubble_s, 0.7 * even_fill_s);
  EXPECT_LT(Rel(d.step_time_s, a.step_time_s), 0.03) << "des " << d.step_time_s << " analytical " << a.step_time_s;
  EXPECT_NEAR(d.breakdown.pipeline_bubble_s, a.breakdown.pipeline_bubble_s, 0.03 * a.step_time_s);
  EXPECT_GT(d.breakdown.exposed_communication_s, 0.5 * a.breakdown.exposed_communication_s);
  EXPECT_NEAR(d.breakdown.total_s(), d.step_time_s, 1e-9 * d.step_time_s);
}

// The slowest stage first: its warm-up forwards and outstanding backwards
// cover the round trip through the lighter stages behind it, so it waits for
// little of their slots (the closed form charged it every one: 20% over the
// DES on a 7B PP 8 with eight layers on the first rank and four on the others).
TEST(DesSimulatorTest, AHeavyFirstStageHidesTheLighterStagesBehindIt) {
  const Scenario s = Make(k70b, {"cluster.nodes=1", "model=llama2-7b", "parallelism.tensor=1", "parallelism.pipeline=8",
                                 "training.global_batch=8", "parallelism.pipeline_layout=Et*8|(t*4|)*6L"});
  const SimulationResult a = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical, false));
  const SimulationResult d = Simulate(s, SimulateOptions::At(Fidelity::kDes, false));
  ASSERT_EQ(d.fidelity, "des") << d.error;
  const StepCosts costs = ComputeStepCosts(s);
  ASSERT_EQ(costs.slowest_rank, 0);
  double others_s = 0;
  for (size_t r = 1; r < costs.rank.size(); ++r) others_s += costs.rank[r].slot_s();
  EXPECT_LT(a.breakdown.pipeline_bubble_s, 0.5 * others_s);
  EXPECT_LT(Rel(a.step_time_s, d.step_time_s), 0.03) << "des " << d.step_time_s << " analytical " << a.step_time_s;
  // Fewer micro batches than stages: every rank runs its forwards first, and
  // the closed form walks the same order (it charged the round trip twice).
  for (const char* batch : {"training.global_batch=1", "training.global_batch=2", "training.global_batch=4"}) {
    const Scenario few = Make(k70b, {"cluster.nodes=1", "model=llama2-7b", "parallelism.tensor=1", "parallelism.pipeline=8", batch,
                      "parallelism.pipeline_layout=Et*8|(t*4|)*6L"});
    const SimulationResult fa = Simulate(few, SimulateOptions::At(Fidelity::kAnalytical, false));
    const SimulationResult fd = Simulate(few, SimulateOptions::At(Fidelity::kDes, false));
    EXPECT_LT(Rel(fa.step_time_s, fd.step_time_s), 0.02) << batch << ": des " << fd.step_time_s << " analytical " << fa.step_time_s;
  }
  // Even stages: (p - 1) slots of fill and drain, wherever the slowest is.
  const Scenario even = Make(k70b, {"cluster.nodes=1", "model=llama2-7b", "parallelism.tensor=1", "parallelism.pipeline=8",
                                    "training.global_batch=8"});
  const StepCosts e = ComputeStepCosts(even);
  double before_s = 0, after_s = 0;
  for (int r = 0; r < int(e.rank.size()); ++r) (r < e.slowest_rank ? before_s : after_s) += r == e.slowest_rank ? 0 : e.rank[size_t(r)].slot_s();
  EXPECT_NEAR(e.FillDrainS(1, 8), before_s + after_s, 1e-9);
}

// Interleaved, ranks of equal weight whose chunks differ (2 and 6 layers):
// the closed form walks the interleaved order with each chunk's own passes
// (the even split's figures were 11-16% short of the DES).
TEST(DesSimulatorTest, UnevenChunksOfEvenRanksWalkTheInterleavedOrder) {
  for (const char* batch : {"training.global_batch=4", "training.global_batch=16"}) {
    const Scenario s = Make(k70b, {"cluster.nodes=1", "model=llama2-7b", "parallelism.tensor=2", "parallelism.pipeline=4",
                                   "parallelism.virtual_stages=2", "training.recompute=full", batch,
                                   "parallelism.pipeline_layout=Et*2|t*2|t*2|t*2|t*6|t*6|t*6|t*6L"});
    const SimulationResult a = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical, false));
    const SimulationResult d = Simulate(s, SimulateOptions::At(Fidelity::kDes, false));
    ASSERT_EQ(d.fidelity, "des") << d.error;
    EXPECT_LT(Rel(a.step_time_s, d.step_time_s), 0.02) << batch << ": des " << d.step_time_s << " analytical " << a.step_time_s;
  }
}

TEST(DesSimulatorTest, FourNicsSlowDataParallelAcrossNodesOnly) {
  // DP gradient traffic crosses nodes: half the NICs, slower step.
  const Scenario across8 = Make(k7b, {"parallelism.tensor=8", "parallelism.distributed_optimizer=false"});
  const Scenario across4 = Make(k7b, {"parallelism.tensor=8", "parallelism.distributed_optimizer=false", "cluster.nics_per_node=4"});
  const double t8 = Simulate(across8, SimulateOptions::At(Fidelity::kDes)).step_time_s;
  const double t4 = Simulate(across4, SimulateOptions::At(Fidelity::kDes)).step_time_s;
  EXPECT_GT(t4, t8 * 1.001);
  // Inside one node the NICs carry nothing: same step time.
  const Scenario one8 = Make(k7b, {"cluster.nodes=1", "parallelism.tensor=4"});
  const Scenario one4 = Make(k7b, {"cluster.nodes=1", "parallelism.tensor=4", "cluster.nics_per_node=4"});
  EXPECT_DOUBLE_EQ(Simulate(one8, SimulateOptions::At(Fidelity::kDes)).step_time_s, Simulate(one4, SimulateOptions::At(Fidelity::kDes)).step_time_s);
}

TEST(DesSimulatorTest, CheckpointWriteFallsWithStorageNodesUntilNicsBind) {
  // Weights only, without the distributed optimizer: both replicas' 16 GPUs
  // each write their slice (fully parallel save) through their nodes' 4 NICs
  // (2 nodes x 200 GB/s = 400 GB/s); each F710 takes 5 GB/s.
  std::vector<double> write;
  for (int n : {2, 8, 32, 128, 256}) {
    const Scenario s = Make(kStorage, {"cluster.storage_nodes=" + std::to_string(n), "cluster.nics_per_node=4",
                                       "parallelism.distributed_optimizer=false", "checkpoint.contents=weights"});
    write.push_back(Simulate(s, SimulateOptions::At(Fidelity::kDes)).run.checkpoint_write_s);
  }
  EXPECT_GT(write[0], 3.5 * write[1]);
  EXPECT_GT(write[1], 3.5 * write[2]);
  EXPECT_GT(write[2], write[3] * 1.2);
  EXPECT_LT(Rel(write[3], write[4]), 0.02);  // 128 and 256 storage nodes (640 and 1280 GB/s): the NICs bind
}

TEST(DesSimulatorTest, AsyncCheckpointCopiesEachReplicasSlice) {
  // Megatron-Core saves fully in parallel: each data-parallel replica copies
  // to host memory (and writes) its own slice of the weights the replicas
  // share, so a weights-only async checkpoint stalls for checkpoint bytes /
  // GPUs over a GPU's share of the host path, as the closed form says, not
  // for one replica's whole model shard (8 times longer at DP 8 here), and
  // less than a synchronous write of the same bytes.
  for (const char* contents : {"checkpoint.contents=weights", "checkpoint.contents=full"}) {
    const std::vector<std::string> sets{"cluster.nodes=16", "cluster.storage=powerscale-f710", "cluster.storage_nodes=64",
                                        "checkpoint.every_steps=5", contents};
    std::vector<std::string> async_sets = sets;
    async_sets.push_back("checkpoint.mode=async");
    const Scenario async = Make(k70b, async_sets);
    const SimulationResult d = Simulate(async, SimulateOptions::At(Fidelity::kDes));
    const SimulationResult a = Simulate(async, SimulateOptions::At(Fidelity::kAnalytical, false));
    ASSERT_TRUE(d.error.empty()) << d.error;
    const double copy_s = AsyncCopySeconds(async, CheckpointBytes(async));
    EXPECT_DOUBLE_EQ(copy_s, CheckpointBytes(async) / async.gpus() / async.node.host_copy_bytes_per_s_per_gpu()) << contents;
    EXPECT_GE(d.run.checkpoint_stall_s, copy_s * (1 - 1e-6)) << contents;
    EXPECT_LT(Rel(d.run.checkpoint_stall_s, a.run.checkpoint_stall_s), 0.1) << contents;
    const SimulationResult sync = Simulate(Make(k70b, sets), SimulateOptions::At(Fidelity::kDes));
    EXPECT_LT(d.run.checkpoint_stall_s, sync.run.checkpoint_stall_s) << contents;
  }
}

TEST(DesSimulatorTest, StorageNodesAreOneHostWithTheirCapacity) {
  // An endpoint sends a checkpoint shard or a token read as one flow,
  // whatever the number of storage nodes it stripes over.
  DesStats four, many;
  const SimulationResult a = Simulate(Make(kStorage, {"checkpoint.mode=async"}), SimulateOptions::At(Fidelity::kDes, false, &four));
  const SimulationResult b =
      Simulate(Make(kStorage, {"checkpoint.mode=async", "cluster.storage_nodes=4096"}), SimulateOptions::At(Fidelity::kDes, false, &many));
  EXPECT_FALSE(DesRefusal(Make(kStorage, {"cluster.storage_nodes=4096"})).has_value());
  EXPECT_EQ(b.fidelity, "des");
  EXPECT_LE(many.flows, four.flows);
  EXPECT_LT(b.run.checkpoint_write_s, a.run.checkpoint_write_s);  // the NICs bind instead of the 4 nodes' disks
}

TEST(DesSimulatorTest, AsyncCheckpointHidesMostOfItsWrite) {
  const Scenario sync = Make(kStorage);
  const Scenario async = Make(kStorage, {"checkpoint.mode=async"});
  DesStats st;
  const SimulationResult rs = Simulate(sync, SimulateOptions::At(Fidelity::kDes));
  const SimulationResult ra = Simulate(async, SimulateOptions::At(Fidelity::kDes, false, &st));
  EXPECT_GT(rs.run.checkpoint_stall_s, 0.9 * rs.run.checkpoint_write_s);
  EXPECT_LT(ra.run.checkpoint_stall_s, 0.5 * rs.run.checkpoint_stall_s);
  EXPECT_GT(ra.run.checkpoint_write_s, 2 * ra.run.checkpoint_stall_s);
  EXPECT_EQ(ra.run.checkpoints, 4);
  // The steps an asynchronous write overlaps are simulated, the rest repeated.
  EXPECT_GT(st.simulated_steps, 2);
  EXPECT_GT(st.repeated_steps, 0);
  EXPECT_EQ(st.simulated_steps + st.repeated_steps, 40);
}

TEST(DesSimulatorTest, AsyncWriteContendsWithTrainingTraffic) {
  // 100 GbE: the checkpoint write shares the NICs with the DP traffic of the
  // steps it overlaps; the DES charges the slowed steps to the checkpoint,
  // the closed form only the device-to-host copy.
  const Scenario s = Make(kStorage, {"checkpoint.mode=async", "cluster.fabric=roce-100g", "cluster.storage_nodes=64",
                                     "cluster.nics_per_node=4", "parallelism.tensor=2"});
  const SimulationResult d = Simulate(s, SimulateOptions::At(Fidelity::kDes));
  const SimulationResult a = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical, false));
  EXPECT_LT(Rel(d.step_time_s, a.step_time_s), 1e-3);  // steady steps: only the token reads share the NICs
  EXPECT_GT(d.run.checkpoint_stall_s, 1.05 * a.run.checkpoint_stall_s);
}

TEST(DesSimulatorTest, CostDoesNotGrowWithDataParallelDegree) {
  // 16 micro batches per replica at DP 2 and DP 256: the same actors and flows.
  DesStats small, big;
  Simulate(Make(k7b, {"parallelism.pipeline=2", "cluster.nodes=4", "training.global_batch=32"}), SimulateOptions::At(Fidelity::kDes, false, &small));
  Simulate(Make(k7b, {"parallelism.pipeline=2", "cluster.nodes=512", "training.global_batch=4096"}), SimulateOptions::At(Fidelity::kDes, false, &big));
  EXPECT_EQ(small.stage_actors, big.stage_actors);
  EXPECT_EQ(small.flows, big.flows);
}

TEST(DesSimulatorTest, SlowStorageGivesDataStalls) {
  const Scenario ok = Make(kStorage);
  EXPECT_EQ(Simulate(ok, SimulateOptions::At(Fidelity::kDes)).breakdown.data_stall_s, 0.0);
  // 1 MB per token (a video stream's) from one storage node cannot keep up.
  const Scenario slow = Make(kStorage, {"data.bytes_per_token=1000000", "cluster.storage_nodes=1"});
  const SimulationResult r = Simulate(slow, SimulateOptions::At(Fidelity::kDes));
  EXPECT_GT(r.breakdown.data_stall_s, 0.1 * r.step_time_s);
}

// A loader slower than the step (QA's case: 64 nodes read 128 x 4096 x
// 25000 B = 13.1 GB a step from one F710 at 9 GB/s, 1.456 s and 1 ms of
// latency, against a 1.07 s step) reads one step's tokens at a time, each
// read started as the last tokens arrive: the steady step is the read time,
// with 8 NICs or 4 (the storage binds, not the NICs), as the closed form
// says. Step 1, after a step 0 that found its tokens in, hid under its wait
// the parameter gathers step 0 did before its first forward, and was taken
// as the steady step: 1.4538 s with 8 NICs, 1.4468 s with 4 (their gathers
// are longer).
TEST(DesSimulatorTest, DataBoundStepIsTheReadTime) {
  std::vector<double> step;
  for (const char* nics : {"cluster.nics_per_node=8", "cluster.nics_per_node=4"}) {
    auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-70b-8n-8nic.yaml",
                          {"cluster.nodes=64", "cluster.storage_nodes=1", "data.bytes_per_token=25000", nics});
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    const double read_s = DataReadSeconds(*s);
    const SimulationResult d = Simulate(*s, SimulateOptions::At(Fidelity::kDes));
    const SimulationResult a = Simulate(*s, SimulateOptions::At(Fidelity::kAnalytical, false));
    ASSERT_TRUE(d.error.empty()) << d.error;
    EXPECT_EQ(d.fidelity, "des");
    EXPECT_GE(d.step_time_s, read_s * (1 - 1e-6)) << nics;
    EXPECT_LT(Rel(d.step_time_s, read_s), 1e-3) << nics;
    EXPECT_LT(Rel(d.step_time_s, a.step_time_s), 1e-3) << nics;
    EXPECT_GT(d.breakdown.data_stall_s, 0.2) << nics;
    EXPECT_NEAR(d.breakdown.total_s(), d.step_time_s, 1e-9 * d.step_time_s) << nics;
    step.push_back(d.step_time_s);
    // A timeline shows the steady step (step 2) and changes no figure.
    const SimulationResult traced = Simulate(*s, SimulateOptions::At(Fidelity::kDes, true));
    EXPECT_EQ(traced.step_time_s, d.step_time_s) << nics;
    EXPECT_EQ(traced.breakdown.data_stall_s, d.breakdown.data_stall_s) << nics;
    double traced_step_s = 0;
    for (const auto& e : TimelinePart(traced.timeline, TracePart::kStep)) {
      if (e.category == "step") traced_step_s = e.duration_s;
    }
    EXPECT_NEAR(traced_step_s, d.step_time_s, 1e-9 * d.step_time_s) << nics;
  }
  EXPECT_LT(Rel(step[1], step[0]), 1e-6);
}

TEST(DesSimulatorTest, DeterministicAcrossRepeatedRunsInOneProcess) {
  const Scenario s = Make(kStorage, {"checkpoint.mode=async"});
  const std::string a = ToJson(Simulate(s, SimulateOptions::At(Fidelity::kDes, true)));
  const std::string other = ToJson(Simulate(Make(k70b), SimulateOptions::At(Fidelity::kDes, false)));
  const std::string b = ToJson(Simulate(s, SimulateOptions::At(Fidelity::kDes, true)));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, other);
}

TEST(DesSimulatorTest, ConcurrentCallersFromThreadsGetTheSameResults) {
  // Sweeps and the GUI call Simulate from worker threads; DES runs queue on
  // the engine lock and give what the main thread gets.
  const Scenario s = Make(kStorage, {"checkpoint.mode=async"});
  const std::string main_thread = ToJson(Simulate(s, SimulateOptions::At(Fidelity::kDes)));
  std::vector<std::string> out(3);
  std::vector<std::thread> workers;
  for (auto& o : out) workers.emplace_back([&s, &o] { o = ToJson(Simulate(s, SimulateOptions::At(Fidelity::kDes))); });
  for (auto& w : workers) w.join();
  for (const auto& o : out) EXPECT_EQ(o, main_thread);
}

TEST(DesSimulatorTest, TimelineHasStageStreamAndStorageTracks) {
  const Scenario s = Make(k70b, {"cluster.storage=powerscale-f710", "checkpoint.every_steps=5", "checkpoint.mode=async"});
  const SimulationResult r = Simulate(s, SimulateOptions::At(Fidelity::kDes, true));
  std::set<std::string> tracks;
  for (const auto& e : r.timeline) {
    tracks.insert(e.track);
    EXPECT_GE(e.duration_s, 0);
  }
  for (const char* t : {"stage 0 compute", "stage 3 compute", "stage 0 comm", "stage 0 dp", "storage"}) EXPECT_TRUE(tracks.count(t)) << t;
  EXPECT_NE(ToChromeTrace(r, TracePart::kCheckpoint).find("checkpoint write"), std::string::npos);
  EXPECT_TRUE(Simulate(s, SimulateOptions::At(Fidelity::kDes, false)).timeline.empty());
}

// A pass's exposed TP waits are slices of their own (stage N tp), not part of
// its compute bar: the slowest stage's compute slices of the shown step sum to
// the breakdown's compute, and TP in the node leaves waits to show.
TEST(DesSimulatorTest, TimelineComputeIsTheBreakdownsCompute) {
  const Scenario s = Make(k70b);
  const SimulationResult r = Simulate(s, SimulateOptions::At(Fidelity::kDes, true));
  ASSERT_TRUE(r.error.empty()) << r.error;
  std::map<std::string, double> compute_s, tp_s;
  for (const auto& e : TimelinePart(r.timeline, TracePart::kStep)) {
    if (e.category == "forward" || e.category == "backward") compute_s[e.track] += e.duration_s;
    if (e.category == "tp") tp_s[e.track] += e.duration_s;
  }
  ASSERT_FALSE(compute_s.empty());
  double most = 0;
  for (const auto& [track, t] : compute_s) most = std::max(most, t);
  EXPECT_NEAR(most, r.breakdown.compute_s, 0.02 * r.breakdown.compute_s);
  ASSERT_FALSE(tp_s.empty());
  EXPECT_TRUE(tp_s.count("stage 0 tp"));
  for (const auto& [track, t] : tp_s) EXPECT_GT(t, 0) << track;
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A checkpoint cycle that repeats is simulated once: ten times the steps
// (and checkpoints) simulate the same number of steps, with the same figures.
TEST(DesSimulatorTest, RepeatedCheckpointCyclesCostNothingMore) {
  for (const char* mode : {"checkpoint.mode=sync", "checkpoint.mode=async"}) {
    DesStats few, many;
    const SimulationResult a = Simulate(Make(kStorage, {mode, "training.steps=100"}), SimulateOptions::At(Fidelity::kDes, false, &few));
    const SimulationResult b = Simulate(Make(kStorage, {mode, "training.steps=1000"}), SimulateOptions::At(Fidelity::kDes, false, &many));
    EXPECT_EQ(b.run.checkpoints, 100) << mode;
    EXPECT_EQ(few.simulated_steps, many.simulated_steps) << mode;
    EXPECT_NEAR(b.run.checkpoint_write_s, a.run.checkpoint_write_s, 1e-3 * a.run.checkpoint_write_s) << mode;
    EXPECT_NEAR(b.run.checkpoint_stall_s, a.run.checkpoint_stall_s, 1e-3 * a.run.checkpoint_stall_s + 1e-9) << mode;
    EXPECT_NEAR(b.run.time_to_train_s, 10 * a.run.time_to_train_s, 2e-3 * b.run.time_to_train_s) << mode;
  }
}

// A cycle that starts and ends with nothing in flight but its new write is
// the next one's double: from the second checkpoint on, every full cycle,
// the run's last included, is repeated, not simulated. Three cycles cost
// what two do, and the repeated third adds exactly what the second added.
// (The first cycle's write overlaps no earlier one's; an asynchronous write
// slows the steps it overlaps where their DP traffic shares its NICs.)
TEST(DesSimulatorTest, CleanCheckpointCyclesRepeatFromTheSecond) {
  for (const char* mode : {"checkpoint.mode=sync", "checkpoint.mode=async"}) {
    DesStats one, two, three;
    const SimulationResult x = Simulate(Make(kStorage, {mode, "training.steps=10"}), SimulateOptions::At(Fidelity::kDes, false, &one));
    const SimulationResult a = Simulate(Make(kStorage, {mode, "training.steps=20"}), SimulateOptions::At(Fidelity::kDes, false, &two));
    const SimulationResult b = Simulate(Make(kStorage, {mode, "training.steps=30"}), SimulateOptions::At(Fidelity::kDes, false, &three));
    EXPECT_EQ(two.simulated_steps, three.simulated_steps) << mode;
    EXPECT_EQ(three.simulated_steps + three.repeated_steps, 30) << mode;
    EXPECT_LT(three.simulated_steps, 20) << mode;  // steps a write does not overlap are repeated too
    EXPECT_NEAR(b.run.checkpoint_write_s, a.run.checkpoint_write_s, 1e-9 * a.run.checkpoint_write_s) << mode;
    EXPECT_NEAR(b.run.time_to_train_s - a.run.time_to_train_s, a.run.time_to_train_s - x.run.time_to_train_s,
                1e-9 * b.run.time_to_train_s) << mode;
  }
}

// A timeline keeps every step it shows simulated (step 1, the last full step
// before a write ends, the second step of a periodic stretch); without one
// those steps are taken as the doubles they are. The figures agree (Simulate
// takes them from a run without a timeline either way).
TEST(DesSimulatorTest, StepsTakenAsDoublesGiveTheSameFigures) {
  for (const char* mode : {"checkpoint.mode=sync", "checkpoint.mode=async"}) {
    const Scenario s = Make(k70b, {"cluster.storage=powerscale-f710", "checkpoint.every_steps=5", mode, "training.steps=20"});
    const StepCosts costs = ComputeStepCosts(s);
    DesStats traced, plain;
    const StepTiming a = SimulateDes(s, costs, true, &traced);
    const StepTiming b = SimulateDes(s, costs, false, &plain);
    EXPECT_LT(plain.simulated_steps, traced.simulated_steps) << mode;
    EXPECT_FALSE(a.timeline.empty()) << mode;
    EXPECT_NEAR(b.step_time_s, a.step_time_s, 1e-9 * a.step_time_s) << mode;
    ASSERT_TRUE(a.checkpoint_write_s && b.checkpoint_write_s && a.checkpoint_stall_s && b.checkpoint_stall_s) << mode;
    EXPECT_NEAR(*b.checkpoint_write_s, *a.checkpoint_write_s, 1e-9 * *a.checkpoint_write_s) << mode;
    EXPECT_NEAR(*b.checkpoint_stall_s, *a.checkpoint_stall_s, 1e-6 * *a.checkpoint_stall_s + 1e-9) << mode;
    EXPECT_NEAR(traced.run_time_s, plain.run_time_s, 1e-9 * plain.run_time_s) << mode;
  }
}

// Work the DES cannot bound is refused with the reason (the analytical step
// still fills the figures); a configuration that does not fit never reaches it.
TEST(DesSimulatorTest, RefusesWorkBeyondItsBounds) {
  const Scenario passes = Make(k7b, {"training.global_batch=2097152"});
  ASSERT_TRUE(DesRefusal(passes).has_value());
  const SimulationResult r = Simulate(passes, SimulateOptions::At(Fidelity::kDes));
  EXPECT_EQ(r.fidelity, "analytical");
  EXPECT_NE(r.error.find("pipeline passes per step"), std::string::npos) << r.error;
  EXPECT_GT(r.step_time_s, 0);
  EXPECT_FALSE(DesRefusal(Make(kStorage)).has_value());
  // A trace keeps events of every pass: it takes on fewer (2.6 GiB at the
  // untraced bound), and says to run without it.
  const Scenario traced = Make(k7b, {"training.global_batch=262144"});
  EXPECT_FALSE(DesRefusal(traced).has_value());
  ASSERT_TRUE(DesRefusal(traced, true).has_value());
  EXPECT_NE(DesRefusal(traced, true)->find("without --trace"), std::string::npos);
  const SimulationResult big = Simulate(Make(k7b, {"training.seq_len=1048576"}), SimulateOptions::At(Fidelity::kDes));
  EXPECT_FALSE(big.memory.fits);
  EXPECT_EQ(big.fidelity, "analytical");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// An async checkpoint every step whose write outlasts the step: no step after
// the first runs without a write in flight. The step is still the training
// step (as the analytical path's), the waits for the writes are checkpoint
// stall, and the trace's checkpoint is the one after the traced step.
TEST(DesSimulatorTest, AsyncCheckpointEveryStepIsStallNotStep) {
  const Scenario s = Make(k70b, {"cluster.storage=powerscale-f710", "checkpoint.every_steps=1", "checkpoint.mode=async"});
  const SimulationResult des = Simulate(s, SimulateOptions::At(Fidelity::kDes, true));
  const SimulationResult analytical = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical));
  ASSERT_TRUE(des.error.empty()) << des.error;
  ASSERT_GT(des.run.checkpoint_write_s, 2 * des.step_time_s);  // the case: writes longer than steps
  EXPECT_NEAR(des.step_time_s, analytical.step_time_s, 0.05 * analytical.step_time_s);
  EXPECT_NEAR(des.run.checkpoint_stall_s, analytical.run.checkpoint_stall_s, 0.1 * analytical.run.checkpoint_stall_s);
  EXPECT_NEAR(des.run.goodput, analytical.run.goodput, 0.1 * analytical.run.goodput);
  EXPECT_NE(ToChromeTrace(des, TracePart::kCheckpoint).find("checkpoint write"), std::string::npos);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// ZeRO-1 in shard groups (HSDP): each bucket's shard is all-reduced across
// the groups as its reduce-scatter ends, hidden behind the backward as the
// analytical path has it; the DES ran the whole all-reduce after the last
// reduce-scatter, exposed (17.5% longer on 100 GbE with 4 NICs).
// ZeRO-2's and FSDP's per-layer collectives run as flows in the shard group
// (the timeline shows them), on the NICs beside the pipeline's transfers;
// without much else on the links the DES agrees with the closed form.
TEST(DesSimulatorTest, ShardedDataParallelCollectivesAreFlowsThatContend) {
  for (const char* sharding : {"gradients", "full"}) {
    const Scenario s = Make(k70b, {"cluster.nics_per_node=4", std::string("parallelism.data_sharding=") + sharding,
                                   "parallelism.tensor=8", "parallelism.pipeline=2"});
    const SimulationResult des = Simulate(s, SimulateOptions::At(Fidelity::kDes, true));
    const SimulationResult analytical = Simulate(s, SimulateOptions::At(Fidelity::kAnalytical));
    ASSERT_TRUE(des.error.empty()) << des.error;
    bool shard_flows = false;
    for (const auto& e : des.timeline) shard_flows |= e.name.rfind("shard ", 0) == 0 && e.track == "stage 0 dp";
    EXPECT_TRUE(shard_flows) << sharding;
    EXPECT_NEAR(des.step_time_s, analytical.step_time_s, 0.05 * analytical.step_time_s) << sharding;
  }
}

TEST(DesSimulatorTest, ShardGroupAllReducesOverlapTheBackward) {
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/sharding/llama3.1-8b-2n.yaml",
                        {"cluster.nodes=4", "parallelism.data_sharding=optimizer", "parallelism.sharding_group=8", "cluster.fabric=roce-100g",
                         "cluster.nics_per_node=4", "training.recompute=full"});
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  const SimulationResult des = Simulate(*s, SimulateOptions::At(Fidelity::kDes));
  const SimulationResult analytical = Simulate(*s, SimulateOptions::At(Fidelity::kAnalytical));
  ASSERT_TRUE(des.error.empty()) << des.error;
  EXPECT_NEAR(des.step_time_s, analytical.step_time_s, 0.05 * analytical.step_time_s);
}

}  // namespace
}  // namespace trainsim
