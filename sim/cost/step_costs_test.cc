#include "sim/cost/step_costs.h"

#include <gtest/gtest.h>

#include "sim/cost/collective_model.h"
#include "models/memory_model.h"
#include "sim/cost/gpu_cost_model.h"
#include "sim/io/scenario_loader.h"

namespace trainsim {
namespace {

Scenario H100Tp8(std::vector<std::string> sets = {}) {
  sets.insert(sets.begin(), {"cluster.node=dgx-h100", "cluster.fabric=ndr-rail-optimized", "parallelism.tensor=8",
                             "parallelism.pipeline=1", "training.framework=megatron-core-2024"});
  auto s = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/reference-design/llama2-7b-1n-8nic.yaml", sets);
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return *s;
}

// One GEMM and one collective overlapped with it, moved by `engine`.
PassWork GemmWithComm(CommEngine engine, double comm_bytes) {
  PassWork p;
  Operator g;
  g.name = "fc2";
  g.cls = OpClass::kGemm;
  g.m = 4096, g.n = 4096, g.k = 11008;
  g.flops = 2.0 * g.m * g.n * g.k;
  g.bytes = 2.0 * (g.m * g.k + g.k * g.n + g.m * g.n);
  p.ops.push_back(g);
  p.comms.push_back(CommOp{"fc2 reduce-scatter", CollectiveKind::kReduceScatter, CommGroup::kTensor, comm_bytes, true, "fc2", engine});
  ResolvePartners(p);
  return p;
}

// Even ranks: 1F1B takes (m + p - 1) slots, so its fill and drain is p - 1
// slots whatever the micro batches; and one micro batch passes every rank once.
TEST(StepCostsTest, FillDrainOfEvenRanksIsPMinusOneSlots) {
  StepCosts c;
  StageCost even;
  even.forward_compute_s = 1.0;
  even.backward_compute_s = 2.0;
  c.rank.assign(8, even);
  c.virtual_stage = c.rank;
  for (int m : {1, 3, 8, 20, 100}) EXPECT_NEAR(c.FillDrainS(1, m), 7 * 3.0, 1e-9) << m;
  c.rank[0].forward_compute_s = 3.0;  // a heavy first rank
  c.virtual_stage = c.rank;
  c.slowest_rank = 0;
  EXPECT_NEAR(c.FillDrainS(1, 1), 7 * 3.0, 1e-9);  // m = 1: the other ranks' slots
  EXPECT_LT(c.FillDrainS(1, 64), 7 * 3.0);         // many: its warm-up forwards cover the others' round trip
}

TEST(StepCostsTest, OverlappedCollectivesCostTheSmsTheyHold) {
  const Scenario s = H100Tp8();
  const int sms = s.node.gpu.sms;
  const FrameworkProfile& f = s.framework;
  ASSERT_GT(f.userbuffer_pipelined_sms, 0);
  ASSERT_GT(f.userbuffer_bulk_sms, 0);
  const double small = 1e6;  // a collective much shorter than the GEMM
  const PassWork pipe = GemmWithComm(CommEngine::kUserbufferPipelined, small);
  const double gemm_s = PassComputeTime(pipe, s.node.gpu, s.training.precision, false);
  const double comm_s = CollectiveTime(s, pipe.comms[0]);
  ASSERT_LT(comm_s, gemm_s);
  // Pipelined userbuffers: the GEMM runs on the SMs left over for its whole
  // duration, and the last of its chunks' reduce-scatters follows it.
  const double splits = f.userbuffer_pipelined_splits;
  ASSERT_GT(splits, 1);
  EXPECT_NEAR(ExposedCommTime(s, pipe, gemm_s), comm_s / splits + gemm_s * f.userbuffer_pipelined_sms / (sms - f.userbuffer_pipelined_sms), 1e-12);
  // Longer than the GEMM: it ends its own length after the first chunk.
  const PassWork long_pipe = GemmWithComm(CommEngine::kUserbufferPipelined, 4e9);
  const double long_pipe_s = CollectiveTime(s, long_pipe.comms[0]);
  ASSERT_GT(long_pipe_s, gemm_s);
  EXPECT_NEAR(ExposedCommTime(s, long_pipe, gemm_s),
              long_pipe_s - gemm_s * (1 - 1 / splits) + gemm_s * f.userbuffer_pipelined_sms / (sms - f.userbuffer_pipelined_sms), 1e-12);
  // Bulk and NCCL: only while the collective runs.
  const PassWork bulk = GemmWithComm(CommEngine::kUserbufferBulk, small);
  EXPECT_NEAR(ExposedCommTime(s, bulk, gemm_s), comm_s * f.userbuffer_bulk_sms / (sms - f.userbuffer_bulk_sms), 1e-12);
  // Copy engines hold no SMs: fully hidden.
  EXPECT_EQ(ExposedCommTime(s, GemmWithComm(CommEngine::kCopyEngine, small), gemm_s), 0.0);
  // A collective longer than its GEMM: the rest is exposed, the contention lasts the GEMM.
  const PassWork long_bulk = GemmWithComm(CommEngine::kUserbufferBulk, 4e9);
  const double long_s = CollectiveTime(s, long_bulk.comms[0]);
  ASSERT_GT(long_s, gemm_s);
  EXPECT_NEAR(ExposedCommTime(s, long_bulk, gemm_s),
              (long_s - gemm_s) + gemm_s * f.userbuffer_bulk_sms / (sms - f.userbuffer_bulk_sms), 1e-12);
}

// Megatron-Core syncs each model chunk on its own: with one chunk, what
// outlasts the last backward is exposed (or the SMs NCCL takes from it);
// with v chunks, only the last chunk's share, unless the shares queue past
// the gaps between the chunks; the earlier shares slow the passes they overlap.
TEST(StepCostsTest, OverlappedDataParallelCollectivesSyncPerChunk) {
  const double k = 0.1;  // slowdown of a pass while NCCL runs beside it
  // One chunk: what outlasts the pass, or the SMs it takes from it.
  EXPECT_DOUBLE_EQ(OverlappedDpTime({/*first_s=*/1.0, /*other_s=*/0}, /*chunk_pass_s=*/0.25, /*chunks=*/1, /*pipeline=*/4, k), 0.75);
  EXPECT_DOUBLE_EQ(OverlappedDpTime({0.1, 0}, 0.25, 1, 4, k), 0.1 * k);
  // Four chunks of 0.25 s, a chunk's pass 0.05 s, pipeline 4: the chunks'
  // last backwards 0.2 s apart: 0.4 s of queue left when chunk 0 starts,
  // 0.6 s ran beside earlier passes.
  EXPECT_NEAR(OverlappedDpTime({0.25, 0.25}, 0.05, 4, 4, k), 0.6 * k + 0.35, 1e-12);
  // Collectives shorter than the gaps: chunk 0's own is left.
  EXPECT_NEAR(OverlappedDpTime({0.1, 0.1}, 0.05, 4, 4, k), 0.3 * k + 0.05, 1e-12);
  // Chunk 0 holds the embedding: its longer collective is left.
  EXPECT_NEAR(OverlappedDpTime({0.16, 0.08}, 0.05, 4, 4, k), 0.24 * k + 0.11, 1e-12);
  // Shorter than a pass: only the SMs it holds.
  EXPECT_NEAR(OverlappedDpTime({0.025, 0.025}, 0.05, 4, 4, k), 0.075 * k + 0.025 * k, 1e-12);
  EXPECT_EQ(OverlappedDpTime({0, 0}, 0.05, 4, 4, k), 0.0);
}

// The chunks' collectives are timed at their own sizes: together they take
// at least the whole rank's collective (latency and message size).
TEST(StepCostsTest, ChunkCollectivesAreTimedAtTheirSize) {
  const StepCosts c = ComputeStepCosts(H100Tp8({"parallelism.tensor=2", "parallelism.pipeline=4", "parallelism.virtual_stages=4",
                                               "cluster.nodes=4", "training.global_batch=64"}));
  ASSERT_GT(c.grad_reduce_s, 0);
  const double v = 4;
  EXPECT_GE(c.grad_reduce_chunks.first_s + (v - 1) * c.grad_reduce_chunks.other_s, c.grad_reduce_s * (1 - 1e-12));
  EXPECT_LT(c.grad_reduce_chunks.other_s, c.grad_reduce_s);
  EXPECT_GT(c.grad_reduce_chunks.first_s, c.grad_reduce_chunks.other_s);  // rank 0's chunk 0 holds the embedding
}

// FSDP: each layer's parameters are gathered in forward and again in
// backward, its gradients reduce-scattered; the next layer's gather hides
// behind the current layer's compute, so only what exceeds it is exposed
// (plus the SMs NCCL holds while both run), and per virtual stage the first
// unit's gather and the last unit's reduce-scatter stay exposed.
TEST(StepCostsTest, FsdpGathersPerLayerBehindTheLayersCompute) {
  const std::vector<std::string> base = {"parallelism.tensor=1", "cluster.nodes=2", "model=llama2-70b", "training.seq_len=4096",
                                         "training.recompute=full"};
  auto with = [&](std::string mode) {
    std::vector<std::string> sets = base;
    sets.push_back("parallelism.data_sharding=" + mode);
    return H100Tp8(sets);
  };
  const Scenario fsdp = with("full");
  const Scenario zero1 = with("optimizer");
  const Workload w = BuildWorkload(fsdp);
  const GpuProfile& g = fsdp.node.gpu;
  const double fc = PassComputeTime(w.layer(0).forward, g, fsdp.training.precision, false);
  const double gather_s = CollectiveTime(fsdp, w.shard_unit.gather);
  const double reduce_s = CollectiveTime(fsdp, w.shard_unit.reduce);
  ASSERT_GT(gather_s, 0);
  ASSERT_GT(reduce_s, 0);
  EXPECT_DOUBLE_EQ(w.shard_unit.gather.bytes, fsdp.model.LayerParameters(0) * 2);  // bf16 weights of one layer
  EXPECT_DOUBLE_EQ(w.shard_unit.reduce.bytes, fsdp.model.LayerParameters(0) * 4);  // fp32 gradient reduction
  const double nccl = OverlapSlowdown(fsdp, CommEngine::kNccl);
  const double fwd_extra = ExposedCommTime(fsdp, w.layer(0).forward, fc) - ExposedCommTime(zero1, BuildWorkload(zero1).layer(0).forward, fc);
  EXPECT_NEAR(fwd_extra, std::max(0.0, gather_s - fc) + std::min(gather_s, fc) * nccl, 1e-12);
  // Per virtual stage: the layers' exposed part, plus the edge units.
  const StepCosts c = ComputeStepCosts(fsdp);
  const StepCosts c1 = ComputeStepCosts(zero1);
  const double layers = w.stages.VirtualStageLayers(0);
  // PP 1: the one virtual stage also holds the embedding and the LM head, gathered as units of their own.
  const Workload w1 = BuildWorkload(zero1);
  auto extra = [&](const PassWork& sharded, const PassWork& plain) {
    const double t = PassComputeTime(sharded, g, fsdp.training.precision, false);
    return ExposedCommTime(fsdp, sharded, t) - ExposedCommTime(zero1, plain, t);
  };
  EXPECT_NEAR(c.virtual_stage[0].forward_exposed_comm_s - c1.virtual_stage[0].forward_exposed_comm_s,
              layers * fwd_extra + gather_s + extra(w.embedding_forward, w1.embedding_forward) + extra(w.head_forward, w1.head_forward), 1e-9);
  // Backward: a layer's gather and reduce-scatter are issued before its
  // recompute and run behind the recompute and the backward together.
  const double bc = PassComputeTime(w.layer(0).backward, g, fsdp.training.precision, true);
  const double rc = PassComputeTime(w.layer(0).recompute, g, fsdp.training.precision, false);
  ASSERT_GT(rc, 0);
  auto bextra = [&](const PassWork& sharded, const PassWork& plain) {
    const double t = PassComputeTime(sharded, g, fsdp.training.precision, true);
    return ExposedCommTime(fsdp, sharded, t) - ExposedCommTime(zero1, plain, t);
  };
  double edges = 0;
  for (const CommOp& cm : w.ChunkCollectives(0, true)) edges += CollectiveTime(fsdp, cm);
  for (const CommOp& cm : w1.ChunkCollectives(0, true)) edges -= CollectiveTime(zero1, cm);
  EXPECT_NEAR(c.virtual_stage[0].backward_exposed_comm_s - c1.virtual_stage[0].backward_exposed_comm_s,
              layers * (ExposedCommTime(fsdp, w.layer(0).backward, bc + rc) - ExposedCommTime(zero1, w1.layer(0).backward, bc + rc)) + edges +
                  bextra(w.embedding_backward, w1.embedding_backward) + bextra(w.head_backward, w1.head_backward),
              1e-9);
  // Where the collectives outlast the backward (70B FSDP over 4 NICs a node),
  // the recompute hides part of them: the step's exposed backward
  // communication is the layers' at the widened window.
  auto four = LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/sharding/llama3.1-70b-8n.yaml",
                           {"parallelism.data_sharding=full", "cluster.nics_per_node=4"});
  ASSERT_TRUE(four.ok()) << four.error().ToString();
  const Workload w4 = BuildWorkload(*four);
  const double bc4 = PassComputeTime(w4.layer(0).backward, four->node.gpu, four->training.precision, true);
  const double rc4 = PassComputeTime(w4.layer(0).recompute, four->node.gpu, four->training.precision, false);
  EXPECT_LT(ExposedCommTime(*four, w4.layer(0).backward, bc4 + rc4), ExposedCommTime(*four, w4.layer(0).backward, bc4) - 0.5 * rc4);
  EXPECT_LT(ComputeStepCosts(*four).virtual_stage[0].backward_exposed_comm_s,
            w4.stages.VirtualStageLayers(0) * ExposedCommTime(*four, w4.layer(0).backward, bc4));
  // No step-level gradient reduction or parameter gather without HSDP.
  EXPECT_EQ(c.grad_reduce_s, 0.0);
  EXPECT_EQ(c.param_gather_s, 0.0);
  EXPECT_GT(c1.grad_reduce_s, 0.0);
  // HSDP within a node: the shard group stays on NVLink and the shard crosses nodes once per step.
  const Scenario hsdp = H100Tp8({"parallelism.tensor=1", "cluster.nodes=2", "model=llama2-70b", "training.seq_len=4096",
                                 "training.recompute=full", "parallelism.data_sharding=full", "parallelism.sharding_group=8"});
  const StepCosts h = ComputeStepCosts(hsdp);
  EXPECT_GT(h.grad_reduce_s, 0.0);
  EXPECT_LT(CollectiveTime(hsdp, BuildWorkload(hsdp).shard_unit.gather), gather_s);
  // LoRA under fp8: the frozen base is gathered as it is held (its fp8 copy,
  // as the memory counts it), the 16-bit adapters beside it.
  std::vector<std::string> lora_sets = base;
  for (const char* k : {"parallelism.data_sharding=full", "training.precision=fp8", "training.finetune={method: lora, rank: 16}"}) lora_sets.push_back(k);
  const Scenario lora = H100Tp8(lora_sets);
  const Workload lw = BuildWorkload(lora);
  EXPECT_DOUBLE_EQ(BaseWeightBytes(lora), 1.0);
  EXPECT_DOUBLE_EQ(lw.shard_unit.gather.bytes, lora.model.LayerParameters(0) * 1 + LoraLayerParameters(lora.model, lora.training.finetune, lora.model.LayerAt(0)) * 2);
}

// Delayed fp8 scaling (Transformer Engine's DelayedScaling with reduce_amax):
// after each virtual stage's forward and after its backward the amaxes are
// all-reduced over the reduction group, on the critical path, per micro
// batch; 3 amaxes per fp8 GEMM forward, 2 backward. None under current
// scaling, in bf16, or with the reduction off; over TP alone it stays on NVLink.
TEST(StepCostsTest, DelayedScalingAgreesOnAmaxesAfterEachChunkPass) {
  const Scenario on = H100Tp8({"parallelism.tensor=2", "parallelism.pipeline=2", "parallelism.virtual_stages=2", "cluster.nodes=4",
                               "training.global_batch=64", "training.precision=fp8"});
  ASSERT_EQ(on.framework.fp8_amax_reduction, Fp8AmaxReduction::kStage);
  Scenario off = on;
  off.framework.fp8_amax_reduction = Fp8AmaxReduction::kNone;
  const Workload w = BuildWorkload(on);
  EXPECT_DOUBLE_EQ(w.layer(0).fp8_amax_forward_bytes, 4.0 * 3 * 4);  // qkv, proj, fc1, fc2
  EXPECT_DOUBLE_EQ(w.layer(0).fp8_amax_backward_bytes, 4.0 * 2 * 4);
  EXPECT_EQ(w.chunk_amax_reduce.group, CommGroup::kStage);
  const GroupSpan stage = on.layout().Span(CommGroup::kStage);
  EXPECT_EQ(stage.ranks, 2 * 8);  // TP 2 x DP 8 of 32 GPUs at PP 2
  EXPECT_EQ(stage.nodes, 2);
  const StepCosts c_on = ComputeStepCosts(on), c_off = ComputeStepCosts(off);
  ASSERT_EQ(c_on.virtual_stage.size(), 4u);
  for (size_t vs = 0; vs < c_on.virtual_stage.size(); ++vs) {
    CommOp forward = w.chunk_amax_reduce, backward = w.chunk_amax_reduce;
    forward.bytes = w.stages.VirtualStageLayers(int(vs)) * w.layer(0).fp8_amax_forward_bytes;
    backward.bytes = w.stages.VirtualStageLayers(int(vs)) * w.layer(0).fp8_amax_backward_bytes;
    EXPECT_NEAR(c_on.virtual_stage[vs].forward_exposed_comm_s - c_off.virtual_stage[vs].forward_exposed_comm_s, CollectiveTime(on, forward), 1e-12);
    EXPECT_NEAR(c_on.virtual_stage[vs].backward_exposed_comm_s - c_off.virtual_stage[vs].backward_exposed_comm_s, CollectiveTime(on, backward), 1e-12);
    EXPECT_DOUBLE_EQ(c_on.virtual_stage[vs].forward_compute_s, c_off.virtual_stage[vs].forward_compute_s);
  }
  // Across nodes the latency of the inter-node hops: more than one NVLink all-reduce.
  Scenario tp_only = on;
  tp_only.framework.fp8_amax_reduction = Fp8AmaxReduction::kTensor;
  const Workload wt = BuildWorkload(tp_only);
  EXPECT_EQ(wt.chunk_amax_reduce.group, CommGroup::kTensor);
  const StepCosts c_tp = ComputeStepCosts(tp_only);
  const double stage_s = c_on.virtual_stage[0].forward_exposed_comm_s - c_off.virtual_stage[0].forward_exposed_comm_s;
  const double tp_s = c_tp.virtual_stage[0].forward_exposed_comm_s - c_off.virtual_stage[0].forward_exposed_comm_s;
  EXPECT_GT(tp_s, 0);
  EXPECT_GT(stage_s, tp_s);
  // No amax history, nothing to agree on.
  Scenario current = on;
  current.framework.fp8_scaling = Fp8Scaling::kCurrent;
  EXPECT_EQ(BuildWorkload(current).layer(0).fp8_amax_forward_bytes, 0.0);
  Scenario bf16 = off;
  bf16.framework.fp8_amax_reduction = Fp8AmaxReduction::kStage;
  bf16.training.precision = Precision::kBf16;
  EXPECT_EQ(BuildWorkload(bf16).layer(0).fp8_amax_forward_bytes, 0.0);
  EXPECT_EQ(BuildWorkload(off).layer(0).fp8_amax_forward_bytes, 0.0);
}

// Activation offload: each offloaded layer's copy to the host (forward) and
// back (backward) runs behind the next layer's compute; only what the copy
// takes beyond that compute is exposed. Over XE9680's host path (four PCIe
// uplinks for 8 GPUs) a 70B layer's copy outlasts the next layer's forward
// (not its backward, twice as long); over GB200's NVLink-C2C it hides.
TEST(StepCostsTest, ActivationOffloadCopiesHideBehindTheNextLayer) {
  const std::vector<std::string> base = {"parallelism.tensor=1", "cluster.nodes=2", "model=llama2-70b", "training.seq_len=4096",
                                         "parallelism.data_sharding=full"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> sets = base;
    sets.insert(sets.end(), extra.begin(), extra.end());
    return H100Tp8(sets);
  };
  const Scenario plain = with({});
  const Scenario off = with({"training.activation_offload_layers=10"});
  const Workload w = BuildWorkload(off);
  const StepCosts c0 = ComputeStepCosts(plain), c = ComputeStepCosts(off);
  const double copy_s = LayerActivationBytes(off) / off.node.host_copy_bytes_per_s_per_gpu();
  const StageCost& layer = c0.virtual_stage[0];  // compute is unchanged by offload
  const double fc = PassComputeTime(w.layer(1).forward, off.node.gpu, off.training.precision, false);
  ASSERT_GT(copy_s, fc);
  EXPECT_DOUBLE_EQ(c.virtual_stage[0].forward_compute_s, layer.forward_compute_s);
  EXPECT_DOUBLE_EQ(c.virtual_stage[0].backward_compute_s, layer.backward_compute_s);
  EXPECT_GT(c.virtual_stage[0].forward_exposed_comm_s - layer.forward_exposed_comm_s, 9 * (copy_s - fc));
  EXPECT_GE(c.virtual_stage[0].backward_exposed_comm_s, layer.backward_exposed_comm_s);
  // One statement of it (ActivationOffload, which --operators prints) is what the stage costs add.
  const ActivationOffloadTimes t = ActivationOffload(off, w);
  EXPECT_EQ(t.layers, 10);
  EXPECT_NEAR(t.copy_s, 10 * copy_s, 1e-12);
  EXPECT_NEAR(c.virtual_stage[0].forward_exposed_comm_s - layer.forward_exposed_comm_s, t.forward_exposed_s, 1e-12);
  EXPECT_NEAR(c.virtual_stage[0].backward_exposed_comm_s - layer.backward_exposed_comm_s, t.backward_exposed_s, 1e-12);
  // The same layers on GB200 trays: NVLink-C2C copies nearly hide.
  const Scenario gb = with({"cluster.node=xe9712-gb200", "cluster.nics_per_node=4", "cluster.nodes=4", "training.activation_offload_layers=10"});
  const Scenario gb0 = with({"cluster.node=xe9712-gb200", "cluster.nics_per_node=4", "cluster.nodes=4"});
  const double h100_extra = c.virtual_stage[0].forward_s() / layer.forward_s() - 1;
  const double gb_extra = ComputeStepCosts(gb).virtual_stage[0].forward_s() / ComputeStepCosts(gb0).virtual_stage[0].forward_s() - 1;
  EXPECT_GT(h100_extra, 0.05);  // PCIe: the copies lengthen the forward
  EXPECT_LT(gb_extra, 0.5 * h100_extra);
}

// The host issues the kernels at the framework's cost on the node's CPU: a
// Grace tray's (host_op_time_factor 2.75, TransformerEngine#2053) makes a
// host-bound pass slower; a pass of long kernels hides either.
TEST(StepCostsTest, TheNodesCpuPacesAHostBoundPass) {
  Scenario s = H100Tp8({"parallelism.tensor=1", "training.seq_len=256", "training.micro_batch=1"});
  s.framework.host_s_per_kernel = 15e-6;
  s.node.host_op_time_factor = 1.0;
  EXPECT_DOUBLE_EQ(s.host_s_per_kernel(), 15e-6);
  const double x86 = ComputeStepCosts(s).virtual_stage[0].forward_compute_s;
  s.node.host_op_time_factor = 2.75;
  EXPECT_DOUBLE_EQ(s.host_s_per_kernel(), 2.75 * 15e-6);
  const double grace = ComputeStepCosts(s).virtual_stage[0].forward_compute_s;
  EXPECT_GT(grace, 1.1 * x86);  // 256 tokens: the host paces much of the pass
  EXPECT_LT(grace, 2.75 * x86);
  Scenario big = H100Tp8({"training.seq_len=8192", "training.micro_batch=4"});
  big.framework.host_s_per_kernel = 15e-6;
  big.node.host_op_time_factor = 1.0;
  const double big_x86 = ComputeStepCosts(big).virtual_stage[0].forward_compute_s;
  big.node.host_op_time_factor = 2.75;
  EXPECT_NEAR(ComputeStepCosts(big).virtual_stage[0].forward_compute_s, big_x86, 0.01 * big_x86);
  EXPECT_EQ(LoadScenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/blackwell/mixtral-8x7b-xe9712-gb200-16n.yaml")->node.host_op_time_factor, 2.75);
}

// ZeRO-2 reduce-scatters every micro batch's gradients in the backward and
// gathers the updated parameters once per step, as the distributed optimizer.
TEST(StepCostsTest, Zero2ReducesPerMicroBatchAndGathersPerStep) {
  const Scenario z2 = H100Tp8({"parallelism.tensor=1", "cluster.nodes=2", "parallelism.data_sharding=gradients"});
  const Scenario z1 = H100Tp8({"parallelism.tensor=1", "cluster.nodes=2", "parallelism.data_sharding=optimizer"});
  const StepCosts c2 = ComputeStepCosts(z2), c1 = ComputeStepCosts(z1);
  EXPECT_EQ(c2.grad_reduce_s, 0.0);
  EXPECT_DOUBLE_EQ(c2.param_gather_s, c1.param_gather_s);
  EXPECT_GT(c2.slowest().backward_exposed_comm_s, c1.slowest().backward_exposed_comm_s);
  EXPECT_EQ(c2.slowest().forward_exposed_comm_s, c1.slowest().forward_exposed_comm_s);
}


}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Block recompute (Megatron-Core's recompute_method block, recompute_num_layers
// N): each virtual stage's first N layers recompute, the rest keep their
// activations; step time and memory lie between no and full recompute, in
// proportion to the layers, and N at least the chunk's layers is full recompute.
TEST(StepCostsTest, BlockRecomputeRecomputesTheFirstLayersOfEachChunk) {
  auto at = [](std::vector<std::string> sets) {
    sets.insert(sets.begin(), {"parallelism.tensor=2", "parallelism.pipeline=2", "parallelism.virtual_stages=2"});
    const Scenario s = H100Tp8(sets);
    const StepCosts c = ComputeStepCosts(s);
    return std::pair{c.rank[0].slot_s(), EstimateMemory(s, c.workload).activations_gib};
  };
  const auto [none_s, none_gib] = at({"training.recompute=none"});
  const auto [full_s, full_gib] = at({"training.recompute=full"});
  // Llama 2 7B: 32 layers over 2 x 2 virtual stages, 8 each; 2 of each 8 recompute.
  const auto [two_s, two_gib] = at({"training.recompute=full", "training.recompute_layers=2"});
  EXPECT_GT(full_s, none_s);
  EXPECT_NEAR(two_s, none_s + (full_s - none_s) * 2 / 8, 1e-9 * full_s);
  EXPECT_LT(two_gib, none_gib);
  EXPECT_GT(two_gib, full_gib);
  const auto [all_s, all_gib] = at({"training.recompute=full", "training.recompute_layers=8"});
  EXPECT_DOUBLE_EQ(all_s, full_s);
  EXPECT_DOUBLE_EQ(all_gib, full_gib);
  const Scenario s = H100Tp8({"parallelism.tensor=2", "parallelism.pipeline=2", "parallelism.virtual_stages=2", "training.recompute=full",
                              "training.recompute_layers=2"});
  const Workload w = BuildWorkload(s);
  for (int vs = 0; vs < 4; ++vs) EXPECT_EQ(w.RecomputeKindCounts(vs)[0], 2);
}

}  // namespace
}  // namespace trainsim
