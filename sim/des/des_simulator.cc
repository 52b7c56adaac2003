#include "sim/des/des_simulator.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/cost/collective_model.h"
#include "sim/des/des_engine.h"
#include "sim/des/des_platform.h"
#include "sim/schedule/pipeline_schedule.h"
#include "sim/cost/gpu_cost_model.h"
#include "sim/cost/checkpoint_cost.h"
#include "sim/cost/step_costs.h"

namespace trainsim {

namespace sg4 = simgrid::s4u;

namespace {

double Now() { return sg4::Engine::get_clock(); }

// Flows of one transfer or collective, plus its alpha (latency) term: done
// when the last flow finishes plus the latency.
struct Flows {
  std::vector<sg4::CommPtr> comms;
  std::vector<std::pair<sg4::Host*, sg4::Host*>> ends;  // per comm: from, to
  double start_s = 0;
  double latency_s = 0;
  bool active = false;
  double bytes = 0;   // for the timeline: the transfer's logical size
  std::string link;   // for the timeline: "NVLink", "NIC", "storage", "device-to-host"

  double Wait() {
    double done = start_s + latency_s;
    for (auto& c : comms) {
      c->wait();
      done = std::max(done, c->get_finish_time() + latency_s);
    }
    if (done > Now()) sg4::this_actor::sleep_for(done - Now());
    active = false;
    return done;
  }
  bool Done() {
    double done = start_s + latency_s;
    for (auto& c : comms) {
      if (!c->test()) return false;
      done = std::max(done, c->get_finish_time() + latency_s);
    }
    return Now() >= done;
  }
  double EndTime() const {
    double done = start_s + latency_s;
    for (const auto& c : comms) done = std::max(done, c->get_finish_time() + latency_s);
    return done;
  }
};

// One flow per path, each per simulated GPU bytes times the GPUs that send.
struct PathBytes {
  sg4::Host* from = nullptr;
  sg4::Host* to = nullptr;
  double bytes = 0;
};

/// A point-to-point transfer between stages, posted by the sender and waited by the receiver.
struct Slot {
  Flows flows;
  bool posted = false;
  int from_stage = 0;
  double posted_s = 0;           // when the sender posted it
  double critical_comm_s = 0;    // the sender's critical communication then (DesRun::critical_comm_s_)
};

double InterNodeLatency(const Scenario& s) { return s.fabric.inter_node_latency_s + 2 * s.fabric.switch_latency_s; }

class DesRun {
 public:
  DesRun(const Scenario& s, const StepCosts& c, bool record, const DesControl* control)
      : s_(s), c_(c), p_(s.parallelism), record_(record), control_(control), layout_(s.layout()), topo_(BuildDesTopology(s)) {
    P_ = p_.pipeline;
    v_ = std::max(1, p_.virtual_stages);
    nccl_slowdown_ = OverlapSlowdown(s_, CommEngine::kNccl);
    V_ = P_ * v_;
    m_ = std::max(1, s.microbatches_per_step());
    inflate_nic_ = topo_.nic_line_bytes_per_s / std::max(1.0, topo_.nic_achieved_bytes_per_s);
    inflate_nvlink_ = s.node.nvlink_bytes_per_s / std::max(1.0, NvlinkNcclBytesPerS(s));
    for (int st = 0; st < P_; ++st) schedule_.push_back(StageSchedule(P_, st, m_, v_));
    for (const auto& ops : schedule_) {
      std::vector<size_t> last(size_t(v_), ops.size());
      for (size_t i = 0; i < ops.size(); ++i) {
        if (!ops[i].forward) last[size_t(ops[i].chunk)] = i;
      }
      last_backward_.push_back(std::move(last));
    }
  }

  void Build() {
    h_ = BuildSimgridPlatform(s_, topo_);
    barrier_ = sg4::Barrier::create(P_ + 1);
    mutex_ = sg4::Mutex::create();
    for (int st = 0; st < P_; ++st) cv_.push_back(sg4::ConditionVariable::create());
    for (int st = 0; st < P_; ++st) {
      sg4::Actor::create("stage" + std::to_string(st), h_.compute[st], [this, st] { StageLoop(st); });
    }
    sg4::Actor::create("controller", h_.controller, [this] { Controller(); });
  }

  // Results.
  double steady_step_s_ = 0;
  double steady_data_stall_s_ = 0;
  // The steady step's communication on its critical path (the chain of
  // passes and waits that ends last): what the stages on it spent blocked on
  // collectives and transfers. Negative when no step was measured steady.
  double steady_critical_comm_s_ = -1;
  double run_end_s_ = 0;
  // Checkpoint writes: their total time and count (a repeated cycle adds its
  // write as many times as it repeats).
  double write_sum_s_ = 0;
  long writes_ = 0;
  double last_write_s_ = 0;
  void AddWrite(double s, long times = 1) {
    write_sum_s_ += s * times;
    writes_ += times;
    last_write_s_ = s;
  }
  std::vector<TimelineEvent> timeline_;
  DesStats stats_;

 private:

  // ---- flows -------------------------------------------------------------
  Flows Start(const std::vector<PathBytes>& paths, double latency_s) {
    Flows f;
    f.start_s = Now();
    f.latency_s = latency_s;
    f.active = true;
    for (const auto& pb : paths) {
      const auto bytes = static_cast<uint64_t>(std::llround(pb.bytes));
      if (bytes == 0) continue;
      f.comms.push_back(sg4::Comm::sendto_async(pb.from, pb.to, bytes));
      f.ends.emplace_back(pb.from, pb.to);
      stats_.flows++;
    }
    return f;
  }

  static Flows Labelled(Flows f, double bytes, const char* link) {
    f.bytes = bytes;
    f.link = link;
    return f;
  }

  // Bytes one GPU sends as a flow for a phase of a collective plan
  // (collective_model.h): sized so that the platform's link, unshared, takes
  // the phase's time; the flows' sharing of links does the rest.
  double FlowBytes(const CollectivePhase& ph) const {
    const double line = ph.link == LinkClass::kNvlink ? s_.node.nvlink_bytes_per_s : topo_.nic_line_bytes_per_s;
    return ph.unshared_bytes_per_s > 0 ? ph.bytes * line / ph.unshared_bytes_per_s : 0;
  }
  // The flows of `repeat` back-to-back collectives of one plan from stage
  // st's simulated GPUs: each phase towards the mirror host of its link (the
  // folded replicas over the NICs, the node's peers over NVLink); a NIC
  // phase's spine_fraction goes to the mirror past the scalable unit's
  // uplinks, the rest stays under the unit's leaves.
  Flows StartPlanned(int st, const CollectivePlan& plan, double repeat = 1) {
    if (plan.phase_count == 0 || repeat <= 0) return {};
    const DesGroup& grp = topo_.groups[st];
    std::vector<PathBytes> paths;
    for (int k = 0; k < plan.phase_count; ++k) {
      const CollectivePhase& ph = plan.phases[k];
      for (size_t j = 0; j < grp.parts.size(); ++j) {
        const double bytes = repeat * FlowBytes(ph) * grp.parts[j].gpus;
        if (ph.link == LinkClass::kNvlink) {
          paths.push_back({h_.endpoint[st][j], h_.nvlink_mirror[st][j], bytes});
          continue;
        }
        // A non-blocking spine binds nothing: one flow, past the uplinks
        // where the group spans units (two would only change how max-min
        // sharing divides the NIC among this and other flows).
        const bool blocking = ph.spine_oversubscription > 1;
        const double up = blocking ? ph.spine_fraction : plan.span.scalable_units > 1 ? 1.0 : 0.0;
        if (up > 0) paths.push_back({h_.endpoint[st][j], h_.nic_mirror_su[st][j], bytes * up});
        if (up < 1) paths.push_back({h_.endpoint[st][j], h_.nic_mirror[st][j], bytes * (1 - up)});
      }
    }
    return Start(paths, repeat * plan.latency_s);
  }

  // A DP collective of `bytes` per rank from stage st's simulated GPUs.
  Flows StartDp(int st, CollectiveKind kind, double bytes, CommGroup group = CommGroup::kData) {
    const CollectivePlan plan = PlanCollective(s_, CommOp{"dp", kind, group, bytes, false, ""});
    return Labelled(StartPlanned(st, plan), bytes, plan.span.on_nvlink() ? "NVLink" : "NIC");
  }

  // Flows of `f` joined to `all` (one wait for both).
  static void Absorb(Flows& all, Flows f) {
    if (!f.active) return;
    if (!all.active) all.start_s = f.start_s;
    if (all.link.empty()) all.link = f.link;
    all.bytes += f.bytes;
    all.latency_s += f.latency_s;
    all.active = true;
    for (size_t k = 0; k < f.comms.size(); ++k) {
      all.comms.push_back(f.comms[k]);
      all.ends.push_back(f.ends[k]);
    }
  }

  // The collectives of `group` in one pass of one chunk (all its layers, of
  // every kind), as flows: the context-parallel K/V ring exchanges, the MoE
  // token all-to-alls.
  Flows StartLayerFlows(int st, int chunk, bool forward, CommGroup group) {
    if (group == CommGroup::kContext && p_.context <= 1) return {};
    if (group == CommGroup::kExpert && p_.expert <= 1) return {};
    const Workload& w = c_.workload;
    const int vs = VirtualStage(P_, st, chunk);
    const std::span<const int> counts = w.KindCounts(vs), recomputed = w.RecomputeKindCounts(vs);
    Flows all;
    double bytes = 0;
    bool nvlink = true;
    // The last chunk's multi-token-prediction modules are each one more layer
    // of the last layer's kind, as their cost counts them (ComputeStepCosts).
    const bool mtp_here = w.mtp_layers > 0 && vs == V_ - 1;
    const size_t mtp_kind = w.kind_of_layer.empty() ? 0 : size_t(w.kind_of_layer.back());
    for (size_t k = 0; k < counts.size(); ++k) {
      const int mtp = mtp_here && k == mtp_kind ? w.mtp_layers : 0;
      if (counts[k] + mtp == 0) continue;
      auto add = [&](const PassWork& pass, int layers) {
        if (layers == 0) return;
        for (const auto& cm : pass.comms) {
          if (cm.group != group || cm.bytes <= 0) continue;
          const CollectivePlan plan = PlanCollective(s_, cm);
          nvlink = plan.span.on_nvlink();
          bytes += layers * cm.bytes;
          Absorb(all, StartPlanned(st, plan, layers));
        }
      };
      const LayerWork& layer = w.kinds[k];
      if (forward) {
        add(layer.forward, counts[k] + mtp);
      } else {
        add(layer.backward, counts[k] + mtp);
        add(layer.recompute, recomputed[k] + mtp);
      }
    }
    return Labelled(std::move(all), bytes, nvlink ? "NVLink" : "NIC");
  }

  // A pass's expert all-to-alls: after its compute (the dispatcher waits for
  // them), or with parallelism.moe_a2a_overlap started with the compute
  // (`started`) and waited for after it.
  void RunAllToAll(int st, const PipelineOp& op, int vs, Flows started = {}) {
    Flows a2a = p_.moe_a2a_overlap ? std::move(started) : StartLayerFlows(st, op.chunk, op.forward, CommGroup::kExpert);
    if (!a2a.active) return;
    const double end = WaitOnComm(st, a2a);
    if (recording_) {
      const char* name = p_.moe_dispatcher == MoeDispatcher::kAllGather ? "moe all-gather / reduce-scatter" : "moe all-to-all";
      Record(StageTrack(st, "ep"), name, "ep", a2a.start_s, end, FlowArgs(a2a, PassArgs(op, vs)));
    }
  }

  // ZeRO-2's and FSDP's per-layer collectives in the shard group and the expert shard group (each
  // layer's gradient reduce-scatter; FSDP's parameter gathers, prefetched a
  // layer ahead): flows from the pass's start, on the NICs beside the
  // pipeline's and the other data-parallel traffic, waited for after its
  // compute. The pass's time already holds the part the closed form finds
  // exposed; the wait is what contention adds to it.
  void WaitOnShardFlows(int st, Flows& shard, const PipelineOp& op, int vs) {
    if (!shard.active) return;
    const double end = WaitOnComm(st, shard);
    if (recording_) {
      Record(StageTrack(st, "dp"), op.forward ? "shard parameter all-gather" : "shard gather / gradient reduce-scatter", "dp",
             shard.start_s, end, FlowArgs(shard, PassArgs(op, vs)));
    }
  }

  // Waits for `f` on stage `st`'s behalf: the time it blocks is
  // communication on the path that leads to the stage's present.
  double WaitOnComm(int st, Flows& f) {
    const double t0 = Now();
    const double end = f.Wait();
    critical_comm_s_[size_t(st)] += Now() - t0;
    return end;
  }

  // Without p2p overlap the sender waits for its transfer (Megatron-Core's
  // batched isend/irecv are waited before the next pass). The slot keeps the
  // transfer's span, already over, for the receiver's trace of it.
  void BlockOnSend(int st, Flows& f) {
    const double end = WaitOnComm(st, f);
    f.comms.clear();
    f.latency_s = end - f.start_s;
  }

  // Activations (or their gradients) of one micro batch from stage a to stage b.
  Flows StartP2p(int a, int b) {
    const double bytes = c_.workload.pipeline_p2p.bytes;
    const CollectivePlan plan = PlanCollective(s_, c_.workload.pipeline_p2p);
    const double per_gpu = plan.phase_count > 0 ? plan.phases[0].bytes : 0;
    const DesGroup& ga = topo_.groups[a];
    const DesGroup& gb = topo_.groups[b];
    std::vector<PathBytes> paths;
    double latency = 0;
    const char* link = "NVLink";
    for (size_t j = 0; j < std::min(ga.parts.size(), gb.parts.size()); ++j) {
      // One NVLink domain (the node on HGX, the rack on NVL72): NVLink.
      const bool nvlink = topo_.SameNvlinkDomain(ga.parts[j].node, gb.parts[j].node);
      paths.push_back({h_.endpoint[a][j], h_.endpoint[b][j], per_gpu * ga.parts[j].gpus * (nvlink ? inflate_nvlink_ : inflate_nic_)});
      latency = std::max(latency, nvlink ? s_.node.intra_latency_s : InterNodeLatency(s_));
      link = nvlink ? "NVLink" : "NIC";
    }
    return Labelled(Start(paths, latency), bytes, link);
  }

  // ---- timeline ----------------------------------------------------------
  using Args = std::vector<std::pair<std::string, std::string>>;
  void Record(const std::string& track, const std::string& name, const char* category, double start_s, double end_s,
              Args args = {}, bool force = false) {
    if ((recording_ || force) && end_s >= start_s) {
      timeline_.push_back({track, name, start_s, end_s - start_s, category, std::move(args)});
    }
  }
  static Args FlowArgs(const Flows& f, Args more = {}) {
    more.emplace_back("bytes", std::to_string(std::llround(f.bytes)));
    if (!f.link.empty()) more.emplace_back("link", f.link);
    return more;
  }
  static Args PassArgs(const PipelineOp& op, int vs) {
    return {{"micro_batch", std::to_string(op.microbatch)}, {"chunk", std::to_string(op.chunk)}, {"virtual_stage", std::to_string(vs)}};
  }
  static std::string StageTrack(int st, const char* what) { return "stage " + std::to_string(st) + " " + what; }
  std::string PassName(const PipelineOp& op) const {
    std::string n = std::string(op.forward ? "F" : "B") + std::to_string(op.microbatch);
    if (v_ > 1) n += ".c" + std::to_string(op.chunk);
    return n;
  }
  // A pass that began at t0 and ends now: its compute on the stage's compute
  // track, then the tensor- and context-parallel communication it waited for
  // on its tp track (exposed_comm_s: the layers' waits summed, drawn as one
  // slice at the pass's end, where each falls inside its layer), so the
  // compute bar is the compute's and the timeline shows what TP costs.
  void RecordPass(int st, const PipelineOp& op, int vs, double t0, double exposed_comm_s) {
    const double end = Now();
    const double split = std::max(t0, end - std::max(0.0, exposed_comm_s));
    Record(StageTrack(st, "compute"), PassName(op), op.forward ? "forward" : "backward", t0, split, PassArgs(op, vs));
    if (split < end) Record(StageTrack(st, "tp"), PassName(op) + " TP/CP wait", "tp", split, end, PassArgs(op, vs));
  }

  // ---- stages --------------------------------------------------------------
  // A pass on the stage's GPUs. Each stage has its own compute host and runs
  // one pass at a time, so nothing ever shares it: a timed sleep is exactly
  // an Exec of `seconds` flops on the 1 flop/s host, without the max-min
  // solver's work (it is most of the cost of a step).
  static void Compute(double seconds) {
    if (seconds > 0) sg4::this_actor::sleep_for(seconds);
  }

  // Slots live from their post (or the receiver's first wait) to their
  // receipt: at most a pipeline's depth of them, whatever the micro batches.
  Slot& SlotOf(int dir, int vs, int mb) { return slots_[(size_t(dir) * V_ + vs) * m_ + mb]; }

  void Post(int dir, int vs, int mb, int from_stage, Flows f) {
    Slot& sl = SlotOf(dir, vs, mb);
    sl.flows = std::move(f);
    sl.posted = true;
    sl.from_stage = from_stage;
    sl.posted_s = Now();
    sl.critical_comm_s = critical_comm_s_[size_t(from_stage)];
    const int to_stage = vs % P_;
    cv_[to_stage]->notify_all();
  }

  void Receive(int st, int dir, int vs, int mb) {
    Slot& sl = SlotOf(dir, vs, mb);
    // A stage that waits for its neighbour's post continues the neighbour's
    // path (its communication so far); one that finds the post there, its own.
    if (!sl.posted) {
      std::unique_lock<sg4::Mutex> lock(*mutex_);
      while (!sl.posted) cv_[st]->wait(lock);
      critical_comm_s_[size_t(st)] = sl.critical_comm_s;
    }
    const double start = sl.flows.start_s;
    const double end = WaitOnComm(st, sl.flows);
    if (recording_) {
      Record(StageTrack(sl.from_stage, "comm"), std::string(dir == 0 ? "send act " : "send grad ") + std::to_string(mb), "pp",
             start, end, FlowArgs(sl.flows, {{"micro_batch", std::to_string(mb)}, {"to_virtual_stage", std::to_string(vs)}}));
    }
    // A received slot is never read again: drop it (and the engine's
    // activities its flows hold), so memory does not grow with the micro batches.
    slots_.erase((size_t(dir) * V_ + vs) * m_ + mb);
  }

  void StageLoop(int st) {
    stats_.stage_actors++;
    for (;;) {
      barrier_->wait();
      if (quit_) return;
      RunStep(st);
      stage_end_s_[size_t(st)] = Now();
      barrier_->wait();
    }
  }

  void RunStep(int st) {
    const RankState& state = c_.workload.rank_state[size_t(st)];
    const RankStepCost& dp = c_.rank_dp[size_t(st)];
    // Megatron-Core with an interleaved schedule syncs each model chunk on
    // its own (schedules.py: param_sync_func / grad_sync_func per chunk):
    // chunk c's parameters are gathered before its first forward, chunk c+1's
    // dispatched once chunk c's have arrived, and chunk c's gradients reduced once its last
    // backward of the step starts. Chunk 0 moves its part of the rank's
    // parameters (the embedding's too, on the first rank), the others the
    // rest evenly. Without overlap, the whole rank's collectives run at once.
    auto share = [&](int chunk) { return state.ChunkFraction(chunk, v_); };
    const bool gathers = (p_.gradient_replicas() > 1 && state.param_gather_bytes > 0) || state.expert_param_gather_bytes > 0;
    auto start_gather = [&](double fraction) {
      Flows f;
      if (p_.gradient_replicas() > 1) f = StartDp(st, CollectiveKind::kAllGather, state.param_gather_bytes * fraction, CommGroup::kShard);
      const CommOp experts = ExpertParamGather(s_, state);
      if (experts.bytes > 0) Absorb(f, StartDp(st, experts.kind, experts.bytes * fraction, experts.group));
      return f;
    };
    std::vector<Flows> gather(static_cast<size_t>(v_));
    std::vector<char> gather_started(static_cast<size_t>(v_), 0), gathered(static_cast<size_t>(v_), 0);
    double gather_busy_until = 0;  // when the started gathers would end, for NCCL's SM contention
    if (gathers && !p_.overlap_param_gather) {
      Flows all = start_gather(1.0);
      if (all.active) {
        const double t0 = all.start_s;
        Record(StageTrack(st, "dp"), "param all-gather", "dp", t0, WaitOnComm(st, all), FlowArgs(all));
      }
    }
    // The first stage's last gradient bucket (RankState::last_bucket_fraction):
    // its parameters are gathered before chunk 0's first forward, its
    // gradients reduced once chunk 0's last backward has ended.
    const double tail = state.last_bucket_fraction;
    auto prefetch = [&](int chunk) {
      if (!gathers || !p_.overlap_param_gather || chunk >= v_ || gather_started[size_t(chunk)]) return;
      gather_started[size_t(chunk)] = 1;
      double fraction = share(chunk), busy_s = dp.param_gather_chunks.Of(chunk);
      if (chunk == 0 && tail > 0) {
        Flows first = start_gather(tail);
        if (first.active) {
          const double t0 = first.start_s, end = WaitOnComm(st, first);
          Record(StageTrack(st, "dp"), "param all-gather, first bucket", "dp", t0, end, FlowArgs(first));
        }
        fraction = std::max(0.0, fraction - tail);
        busy_s -= dp.param_gather_chunks.tail_s;
      }
      gather[size_t(chunk)] = start_gather(fraction);
      gather_busy_until = std::max(gather_busy_until, Now()) + busy_s;
    };
    prefetch(0);
    const CollectiveKind grad_kind = state.grad_reduce_kind;
    // ZeRO-2 / FSDP reduce their gradients per micro batch inside the passes
    // (time, as TP's); what is left per step may be HSDP's all-reduce of the
    // shard across shard groups alone.
    // The routed experts' gradients reduce over expert-DP on the same stream.
    const CommOp expert_grads = ExpertGradientReduce(s_, state);
    const bool dense_grads = p_.gradient_replicas() > 1 && (state.grad_reduce_bytes > 0 || state.grad_replica_reduce_bytes > 0);
    const bool step_grads = dense_grads || expert_grads.bytes > 0;
    auto start_grads = [&](double fraction) {
      Flows f;
      if (dense_grads) {
        f = state.grad_reduce_bytes > 0 ? StartDp(st, grad_kind, state.grad_reduce_bytes * fraction, state.grad_reduce_group)
                                        : StartDp(st, CollectiveKind::kAllReduce, state.grad_replica_reduce_bytes * fraction, CommGroup::kShardReplica);
        // HSDP after a reduce-scatter: each bucket's shard crosses the shard
        // groups as its reduce-scatter ends (Megatron-Core's optimizer
        // instances all-reduce bucket by bucket), on other links (the shard
        // group inside the node, the replicas across it): started with it.
        if (state.grad_reduce_bytes > 0 && state.grad_replica_reduce_bytes > 0) {
          Absorb(f, StartDp(st, CollectiveKind::kAllReduce, state.grad_replica_reduce_bytes * fraction, CommGroup::kShardReplica));
        }
      }
      if (expert_grads.bytes > 0) Absorb(f, StartDp(st, expert_grads.kind, expert_grads.bytes * fraction, expert_grads.group));
      return f;
    };
    Flows grads;
    double grads_busy_until = 0;
    const auto& ops = schedule_[st];
    const std::vector<size_t>& last_backward = last_backward_[st];
    for (size_t i = 0; i < ops.size(); ++i) {
      const PipelineOp& op = ops[i];
      const int vs = VirtualStage(P_, st, op.chunk);
      const StageCost& chunk = c_.virtual_stage[size_t(vs)];
      if (op.forward) {
        const bool first_of_chunk = !gathered[size_t(op.chunk)];
        if (vs > 0) Receive(st, 0, vs, op.microbatch);
        else if (i == 0 && data_.active) {
          const double t0 = Now();
          const double start = data_.start_s;
          Record("storage", "data read", "data", start, data_.Wait(), FlowArgs(data_));
          step_data_stall_s_ = Now() - t0;
          // The loader fetches the next step's tokens once this step's are in:
          // one read at a time, so a storage slower than the step settles at
          // its read time rather than splitting between two steps' reads.
          if (read_next_) {
            next_read_ = StartDataRead();
            read_next_ = false;
          }
        }
        if (first_of_chunk) prefetch(op.chunk);
        Flows cp = StartLayerFlows(st, op.chunk, true, CommGroup::kContext);
        Flows shard = StartLayerFlows(st, op.chunk, true, CommGroup::kShard);
        Absorb(shard, StartLayerFlows(st, op.chunk, true, CommGroup::kExpertShard));
        const double t0 = Now();
        // An overlapped parameter gather holds NCCL's SMs during a chunk's
        // first forward, for as long as gathers still run.
        const double contention =
            first_of_chunk ? std::min(std::max(0.0, gather_busy_until - Now()), chunk.forward_compute_s) * nccl_slowdown_ : 0.0;
        Flows a2a = p_.moe_a2a_overlap ? StartLayerFlows(st, op.chunk, true, CommGroup::kExpert) : Flows{};
        critical_comm_s_[size_t(st)] += contention;
        Compute(chunk.forward_s() - chunk.forward_all_to_all_s + contention);
        if (recording_) RecordPass(st, op, vs, t0, chunk.forward_exposed_comm_s - chunk.forward_all_to_all_s);
        RunAllToAll(st, op, vs, std::move(a2a));
        if (first_of_chunk) {
          // The chunk's parameters are needed: wait for them, then dispatch
          // the next chunk's gather (one in flight, as the forward pre-hooks do).
          gathered[size_t(op.chunk)] = 1;
          Flows& g = gather[size_t(op.chunk)];
          if (g.active) Record(StageTrack(st, "dp"), "param all-gather", "dp", g.start_s, WaitOnComm(st, g), FlowArgs(g));
          prefetch(op.chunk + 1);
        }
        if (cp.active) {
          const double end = WaitOnComm(st, cp);  // the args' strings only when recording: this runs per pass
          if (recording_) Record(StageTrack(st, "cp"), "cp ring", "cp", cp.start_s, end, FlowArgs(cp, PassArgs(op, vs)));
        }
        WaitOnShardFlows(st, shard, op, vs);
        if (vs < V_ - 1) {
          Flows f = StartP2p(st, (st + 1) % P_);
          if (!p_.p2p_overlapped()) BlockOnSend(st, f);
          Post(0, vs + 1, op.microbatch, st, std::move(f));
        }
      } else {
        if (vs < V_ - 1) Receive(st, 1, vs, op.microbatch);
        const bool reduce_chunk = step_grads && p_.overlap_grad_reduce && i == last_backward[size_t(op.chunk)];
        const bool reduce_tail = reduce_chunk && op.chunk == 0 && tail > 0;
        if (reduce_chunk) {
          Absorb(grads, start_grads(reduce_tail ? std::max(0.0, share(0) - tail) : share(op.chunk)));
          grads_busy_until = std::max(grads_busy_until, Now()) + dp.grad_reduce_chunks.Of(op.chunk) -
                             (reduce_tail ? dp.grad_reduce_chunks.tail_s : 0.0);
        }
        Flows cp = StartLayerFlows(st, op.chunk, false, CommGroup::kContext);
        Flows shard = StartLayerFlows(st, op.chunk, false, CommGroup::kShard);
        Absorb(shard, StartLayerFlows(st, op.chunk, false, CommGroup::kExpertShard));
        const double t0 = Now();
        Flows a2a = p_.moe_a2a_overlap ? StartLayerFlows(st, op.chunk, false, CommGroup::kExpert) : Flows{};
        const double contention = std::min(std::max(0.0, grads_busy_until - Now()), chunk.backward_compute_s) * nccl_slowdown_;
        critical_comm_s_[size_t(st)] += contention;
        Compute(chunk.backward_s() - chunk.backward_all_to_all_s + contention);
        if (recording_) RecordPass(st, op, vs, t0, chunk.backward_exposed_comm_s - chunk.backward_all_to_all_s);
        RunAllToAll(st, op, vs, std::move(a2a));
        if (reduce_tail) Absorb(grads, start_grads(tail));
        if (cp.active) {
          const double end = WaitOnComm(st, cp);  // the args' strings only when recording: this runs per pass
          if (recording_) Record(StageTrack(st, "cp"), "cp ring", "cp", cp.start_s, end, FlowArgs(cp, PassArgs(op, vs)));
        }
        WaitOnShardFlows(st, shard, op, vs);
        if (vs > 0) {
          Flows f = StartP2p(st, (st + P_ - 1) % P_);
          if (!p_.p2p_overlapped()) BlockOnSend(st, f);
          Post(1, vs - 1, op.microbatch, st, std::move(f));
        }
      }
    }
    if (step_grads && !p_.overlap_grad_reduce) grads = start_grads(1.0);
    if (grads.active) {
      const bool scatter = state.grad_reduce_bytes > 0 && grad_kind == CollectiveKind::kReduceScatter;
      const char* name = !scatter ? "grad all-reduce" : state.grad_replica_reduce_bytes > 0 ? "grad reduce-scatter + shard all-reduce" : "grad reduce-scatter";
      Record(StageTrack(st, "dp"), name, "dp", grads.start_s, WaitOnComm(st, grads), FlowArgs(grads));
    }
    const double t0 = Now();
    Compute(dp.optimizer_s);
    Record(StageTrack(st, "compute"), "optimizer", "optimizer", t0, Now());
  }

  // ---- controller -----------------------------------------------------------
  // Tokens of one step for the simulated replica, read by the first stage.
  Flows StartDataRead() {
    if (!s_.storage) return {};
    const double bytes = double(s_.training.global_batch) / p_.data * s_.training.seq_len * s_.data.bytes_per_token;
    const DesGroup& g = topo_.groups[0];
    std::vector<PathBytes> paths;
    for (size_t j = 0; j < g.parts.size(); ++j) paths.push_back({h_.storage_read, h_.endpoint[0][j], bytes / g.parts.size()});
    return Labelled(Start(paths, s_.storage->latency_s), bytes, "storage");
  }

  // Every simulated GPU copies (async) or writes its part: checkpoint bytes /
  // writer GPUs (CheckpointWriterGpus: all of them, each data-parallel
  // replica saving its own slice of the state it shares with the others), so
  // the device-to-host copy is the closed form's AsyncCopySeconds, not one
  // replica's whole model shard.
  // A checkpoint event's args: the whole checkpoint's bytes and each writing
  // GPU's shard of it (a restarted write's flows carry no label of their own).
  Args CheckpointArgs(bool to_host) const {
    const double total = CheckpointBytes(s_);
    return {{"bytes", std::to_string(std::llround(total))},
            {"bytes_per_gpu", std::to_string(std::llround(total / std::max(1, topo_.checkpoint_writer_gpus)))},
            {"link", to_host ? "device-to-host" : "NIC to storage"}};
  }

  Flows StartCheckpoint(bool to_host) {
    const double shard = CheckpointBytes(s_) / std::max(1, topo_.checkpoint_writer_gpus);
    std::vector<PathBytes> paths;
    for (size_t st = 0; st < topo_.groups.size(); ++st) {
      const DesGroup& g = topo_.groups[st];
      for (size_t j = 0; j < g.parts.size(); ++j) {
        const double bytes = shard * g.parts[j].gpus;
        if (to_host) {
          paths.push_back({h_.endpoint[st][j], h_.host_memory.at(g.parts[j].node), bytes});
        } else {
          paths.push_back({h_.endpoint[st][j], h_.storage_write, bytes});
        }
      }
    }
    return Labelled(Start(paths, to_host ? 0.0 : s_.storage->latency_s), CheckpointBytes(s_),
                    to_host ? "device-to-host" : "NIC to storage");
  }

  // Steps an asynchronous write overlaps reach a periodic regime: same step
  // time, same bytes of each write flow per step. Once two consecutive
  // simulated steps show it (to 1e-9), the following steps repeat it: the
  // write flows are cancelled, the controller sleeps for those steps, and the
  // flows restart with what they would have left. The last overlapped steps
  // (and the write's end) are simulated again.
  struct Periodic {
    int seen = 0;                  // overlapped steps observed in a row
    void Start(const Flows& w) {
      *this = Periodic{};
      for (const auto& c : w.comms) remaining.push_back(c->get_remaining());
    }
    double step_s = 0;
    std::vector<double> remaining;  // per write flow, at the end of the last step
    std::vector<double> progress;   // per write flow, bytes in the last step
    bool stable = false;
    // `twin`: the step began and ended with nothing in flight but the write
    // flows (its tokens and the next step's arrived), every one of them still
    // running at its end. Max-min sharing depends on which flows run, not on
    // what they have left, so the next step starts from this one's state and
    // is its double: one step shows the periodic regime.
    void Observe(double step, const Flows& w, bool twin = false) {
      std::vector<double> rem;
      for (const auto& c : w.comms) rem.push_back(c->get_remaining());
      std::vector<double> prog(rem.size(), 0.0);
      bool same = seen > 0 && std::abs(step - step_s) <= 1e-9 * step && rem.size() == remaining.size();
      for (size_t i = 0; i < rem.size() && i < remaining.size(); ++i) {
        prog[i] = remaining[i] - rem[i];
        if (i < progress.size() && std::abs(prog[i] - progress[i]) > 1e-9 * std::max(1.0, progress[i])) same = false;
        if (rem[i] <= 0) twin = false;
      }
      stable = (same && seen >= 1) || (twin && rem.size() == remaining.size());
      seen++;
      step_s = step;
      remaining = rem;
      progress = prog;
    }
  };

  bool FastForward(Flows& write, int& k, int steps, int every, Periodic& per) {
    if (!per.stable) return false;
    // Whole steps every unfinished flow runs through at its per-step rate:
    // each keeps some bytes (a byte at least) for the step it ends in, which
    // is simulated (the periodic regime ends there).
    long n = every > 0 ? std::min(steps, (k / every + 1) * every) - k : steps - k;
    for (size_t i = 0; i < write.comms.size(); ++i) {
      if (per.remaining[i] <= 0) continue;
      if (per.progress[i] <= 0) return false;
      long steps_through = long(std::ceil(per.remaining[i] / per.progress[i])) - 1;
      if (steps_through > 0 && per.remaining[i] - double(steps_through) * per.progress[i] < 1.0) --steps_through;
      // A timeline keeps the last full step before the write's end, as it did.
      if (record_) steps_through = long(per.remaining[i] / per.progress[i]) - 1;
      n = std::min(n, steps_through);
    }
    if (n < 1) return false;
    Flows next;
    next.start_s = write.start_s;
    next.latency_s = write.latency_s;
    next.active = true;
    for (auto& c : write.comms) c->cancel();
    sg4::this_actor::sleep_for(n * per.step_s);
    for (size_t i = 0; i < write.comms.size(); ++i) {
      const auto bytes = static_cast<uint64_t>(std::llround(per.remaining[i] - n * per.progress[i]));
      if (per.remaining[i] <= 0 || bytes == 0) continue;
      next.comms.push_back(sg4::Comm::sendto_async(write.ends[i].first, write.ends[i].second, bytes));
      next.ends.push_back(write.ends[i]);
    }
    write = std::move(next);
    stats_.repeated_steps += int(n);
    k += int(n);
    per.Start(write);
    return true;
  }

  // The token loader at a step boundary: -1 when the step about to start has
  // its tokens (no read in flight), else how long their read has been running.
  static double LoaderState(Flows& read) { return (!read.active || read.Done()) ? -1.0 : Now() - read.start_s; }

  void RunOneStep(int k, bool record) {
    recording_ = record_ && record;
    slots_.clear();
    step_data_stall_s_ = 0;
    critical_comm_s_.assign(size_t(P_), 0.0);
    stage_end_s_.assign(size_t(P_), 0.0);
    const double t0 = Now();
    barrier_->wait();
    barrier_->wait();
    // The step ends with its last stage: that stage's path is the step's.
    const size_t last = size_t(std::max_element(stage_end_s_.begin(), stage_end_s_.end()) - stage_end_s_.begin());
    step_critical_comm_s_ = critical_comm_s_[last];
    Record("steps", "step " + std::to_string(k), "step", t0, Now(), {{"step", std::to_string(k)}});
    stats_.simulated_steps++;
  }

  // Whole checkpoint cycles (every_steps steps and their checkpoint) repeat,
  // so the cost of a run does not grow with its number of checkpoints. Called
  // at each checkpoint boundary, right after the checkpoint starts (async: its
  // write was just started). A cycle repeats when
  // - it began and ended on a clean boundary: nothing in flight but the write
  //   just started (none with sync checkpoints), no token read pending and
  //   the steady step known. The controller and the stages then start the
  //   next cycle from the very state they started this one from (only the
  //   step number differs, and it matters only through k % every_steps and
  //   the run's last step), so every following full cycle is this one again,
  //   the run's last one included: a clean boundary means the cycle's last
  //   step was not simulated (a simulated step leaves the next step's read
  //   pending), so the last cycle cannot differ by the read the run's last
  //   step does not start. Or
  // - two in a row took the same time and wrote for as long (boundaries that
  //   are not clean: a write still running at the next checkpoint); then the
  //   run's last cycle is simulated.
  // The repeated cycles are one sleep.
  double cycle_start_s_ = -1, last_cycle_s_ = 0, last_cycle_write_s_ = 0;
  bool cycle_started_clean_ = false;
  static bool ReadsDone(std::vector<Flows>& reads) {
    for (auto& r : reads) {
      if (!r.Done()) return false;
    }
    return true;
  }
  bool CleanBoundary(bool steady_known, bool async, const Flows& write, double write_start, std::vector<Flows>& pending_reads) {
    if (!steady_known || data_.active) return false;
    if (async ? !(write.active && write_start == Now()) : write.active) return false;
    return ReadsDone(pending_reads);
  }
  void RepeatCheckpointCycles(int& k, int steps, int every, bool async, bool steady_known, Flows& write, double& write_start,
                              Periodic& periodic, std::vector<Flows>& pending_reads) {
    const double now = Now();
    const double cycle = cycle_start_s_ >= 0 ? now - cycle_start_s_ : 0;
    const bool clean = CleanBoundary(steady_known, async, write, write_start, pending_reads);
    const bool same_state = cycle_start_s_ >= 0 && cycle_started_clean_ && clean;
    const bool same = same_state || (cycle_start_s_ >= 0 && last_cycle_s_ > 0 && std::abs(cycle - last_cycle_s_) <= 1e-9 * cycle &&
                                     std::abs(last_write_s_ - last_cycle_write_s_) <= 1e-9 * std::max(1.0, last_write_s_));
    last_cycle_s_ = cycle;
    last_cycle_write_s_ = last_write_s_;
    cycle_start_s_ = now;
    cycle_started_clean_ = clean;
    const long repeats = long(steps - k) / every - (same_state ? 0 : 1);
    if (!same || repeats < 1) return;
    if (async && write.active) {
      for (auto& c : write.comms) c->cancel();  // restarted whole after the repeated cycles
    }
    sg4::this_actor::sleep_for(double(repeats) * cycle);
    stats_.repeated_steps += int(repeats * every);
    k += int(repeats * every);
    // Each repeated cycle wrote one checkpoint (async: the one started at its
    // start, whose write the next cycle's start saw finished).
    AddWrite(last_write_s_, repeats);
    if (async && write.active) {
      write = StartCheckpoint(false);
      write_start = Now();
      periodic.Start(write);
    }
    if (data_.active) pending_reads.push_back(data_);
    data_ = Flows{};
    cycle_start_s_ = Now();
  }

  void Controller() {
    const int steps = std::max(1, s_.training.steps);
    const int every = (s_.storage && s_.checkpoint.every_steps > 0) ? s_.checkpoint.every_steps : 0;
    const bool async = s_.checkpoint.mode == CheckpointMode::kAsync;
    const int steady_index = std::min(1, steps - 1);
    std::optional<double> steady, step0_s;
    double step0_data_stall_s = 0;
    double step0_critical_comm_s = 0;
    // The first step measured for the steady one that left the next step
    // another loader state than it began from, and where its timeline events
    // begin: reported if no later step settles before the run ends.
    struct StepFigures {
      double step_s = 0, data_stall_s = 0, critical_comm_s = 0;
    };
    std::optional<StepFigures> unsettled;
    size_t unsettled_mark = 0;
    std::vector<Flows> pending_reads;  // kept alive until the end
    Flows write;
    double write_start = 0;
    bool recorded_checkpoint = false, recording_checkpoint = false;
    Periodic periodic;
    for (int k = 0; k < steps;) {
      if (control_ && control_->progress) control_->progress(k, steps);
      if (control_ && control_->cancel && control_->cancel->load()) {
        stats_.canceled = true;
        break;
      }
      const bool writing = write.active && !write.Done();
      if (write.active && !writing) {
        AddWrite(write.EndTime() - write_start);
        Record("checkpoint", "checkpoint write", "checkpoint", write_start, write.EndTime(), CheckpointArgs(false), recording_checkpoint);
        write.active = false;
        recording_checkpoint = false;
      }
      // Step 1 starts from the state step 0 started from: nothing in flight
      // (its tokens, read during step 0, have arrived), so it is step 0
      // again and the steady step. A timeline records step 1 itself, and
      // still reports step 0's figures: tracing changes no step figure (step
      // 1's own differs from step 0's in the last bits of its larger clock;
      // the run's checkpoint stall may, by as little, from the recorded cycle).
      const bool repeats_step0 = !steady && k == 1 && step0_s && !write.active && pending_reads.empty() && (!data_.active || data_.Done());
      if (repeats_step0 && !record_) {
        steady = step0_s;
        steady_data_stall_s_ = step0_data_stall_s;
        steady_critical_comm_s_ = step0_critical_comm_s;
      }
      if (steady && !writing) {
        // Nothing but training until the next checkpoint: repeat the steady step.
        const int until = every > 0 ? std::min(steps, (k / every + 1) * every) : steps;
        const int n = until - k;
        sg4::this_actor::sleep_for(n * *steady);
        stats_.repeated_steps += n;
        k += n;
        if (data_.active) pending_reads.push_back(data_);
        data_ = Flows{};  // the step after a repeated stretch finds its tokens prefetched
      } else if (writing && FastForward(write, k, steps, every, periodic)) {
        if (data_.active) pending_reads.push_back(data_);
        data_ = Flows{};
      } else {
        // Nothing in flight but the write (a timeline records every step the write overlaps).
        auto quiet = [&](Flows& read) { return !record_ && (!read.active || read.Done()) && ReadsDone(pending_reads); };
        const bool quiet_start = writing && quiet(data_);
        const double read_at_start = LoaderState(data_);
        // The next step's tokens: read from the step's start when this step
        // has none in flight, else once they are in (the first stage starts it).
        next_read_ = Flows{};
        read_next_ = k + 1 < steps && data_.active;
        if (k + 1 < steps && !data_.active) next_read_ = StartDataRead();
        const double t0 = Now();
        const bool candidate = !steady && k >= steady_index && !writing;  // measured for the steady step
        const size_t mark = timeline_.size();
        RunOneStep(k, k == steady_index || candidate || recording_checkpoint);
        if (read_next_) {  // no stage waited for this step's tokens: read the next ones now
          next_read_ = StartDataRead();
          read_next_ = false;
        }
        Flows next = std::move(next_read_);
        next_read_ = Flows{};
        if (writing) periodic.Observe(Now() - t0, write, quiet_start && quiet(next));
        if (candidate) {
          // The steady step leaves the next one the state it began from: the
          // next step's tokens in, or their read as far along as this step's
          // was at its start. A loader slower than the step settles in lock
          // step (each read started as the last tokens arrive: a step per
          // read time) only from a step that waited for its tokens: step 1,
          // after a step 0 that found its tokens in, hides under its wait the
          // work step 0 did before its first forward (the first parameter
          // gathers: longer over fewer NICs) and is shorter than the read.
          const double step_s = Now() - t0;
          const bool settled =
              repeats_step0 || k + 1 >= steps || std::abs(LoaderState(next) - read_at_start) <= 1e-9 * step_s;
          if (settled) {
            steady = repeats_step0 ? *step0_s : step_s;
            steady_data_stall_s_ = repeats_step0 ? step0_data_stall_s : step_data_stall_s_;
            steady_critical_comm_s_ = repeats_step0 ? step0_critical_comm_s : step_critical_comm_s_;
            // A timeline shows the steady step, not the steps that led to it.
            if (unsettled) timeline_.erase(timeline_.begin() + std::ptrdiff_t(unsettled_mark), timeline_.begin() + std::ptrdiff_t(mark));
            unsettled.reset();
          } else if (!unsettled) {
            unsettled = StepFigures{step_s, step_data_stall_s_, step_critical_comm_s_};
            unsettled_mark = mark;
          }
        }
        if (k == 0 && steady_index == 1 && !writing) {
          step0_s = Now() - t0;
          step0_data_stall_s = step_data_stall_s_;
          step0_critical_comm_s = step_critical_comm_s_;
        }
        if (data_.active) pending_reads.push_back(data_);
        data_ = next;
        ++k;
      }
      if (every > 0 && k % every == 0) {
        // The trace's checkpoint is the first one after the traced step (a
        // checkpoint every step: the one after step 1, not step 0's).
        const bool record_this = record_ && !recorded_checkpoint && k > steady_index && !unsettled;
        recording_ = record_this;
        if (!async) {
          const double t0 = Now();
          Flows f = StartCheckpoint(false);
          const double end = f.Wait();
          Record("checkpoint", "checkpoint write (sync)", "checkpoint", t0, end, CheckpointArgs(false));
          AddWrite(end - t0);
        } else {
          if (write.active) {
            const double end = write.Wait();
            AddWrite(end - write_start);
            Record("checkpoint", "checkpoint write", "checkpoint", write_start, end, CheckpointArgs(false), recording_checkpoint);
            write.active = false;
            recording_checkpoint = false;
          }
          const double t0 = Now();
          Flows copy = StartCheckpoint(true);
          Record("checkpoint", "checkpoint device-to-host copy", "checkpoint", t0, copy.Wait(), CheckpointArgs(true));
          write = StartCheckpoint(false);
          write_start = Now();
          periodic.Start(write);
          recording_checkpoint = record_this;
        }
        recorded_checkpoint |= record_this;
        recording_ = false;
        RepeatCheckpointCycles(k, steps, every, async, steady.has_value(), write, write_start, periodic, pending_reads);
      }
    }
    if (control_ && control_->progress && !stats_.canceled) control_->progress(steps, steps);
    run_end_s_ = Now();
    if (!steady && unsettled) {
      // No step settled before the run ended (checkpoints every step or two
      // under a slow loader): the first measured after step 0.
      steady = unsettled->step_s;
      steady_data_stall_s_ = unsettled->data_stall_s;
      steady_critical_comm_s_ = unsettled->critical_comm_s;
    }
    if (!steady && step0_s) {
      // No step after the first ran without a write in flight (an async
      // checkpoint every step, each write longer than a step): the first is
      // the step; the writes' waits and their contention are checkpoint stall.
      steady = step0_s;
      steady_data_stall_s_ = step0_data_stall_s;
      steady_critical_comm_s_ = step0_critical_comm_s;
    }
    if (!steady) steady = run_end_s_ / steps;
    steady_step_s_ = *steady;
    if (write.active) {
      const double end = write.Wait();
      AddWrite(end - write_start);
      Record("checkpoint", "checkpoint write", "checkpoint", write_start, end, CheckpointArgs(false), recording_checkpoint);
    }
    if (data_.active) data_.Wait();
    for (auto& r : pending_reads) r.Wait();
    quit_ = true;
    barrier_->wait();
  }

  const Scenario& s_;
  const StepCosts& c_;
  const Parallelism& p_;
  bool record_ = false;
  const DesControl* control_ = nullptr;
  bool recording_ = false;
  RankLayout layout_;
  DesTopology topo_;
  DesHosts h_;
  int P_ = 1, v_ = 1, V_ = 1, m_ = 1;
  double nccl_slowdown_ = 0;  // compute lost per second of overlapped DP collective (NCCL holds SMs)
  double inflate_nic_ = 1;
  double inflate_nvlink_ = 1;  // NVLink line rate over NCCL's effective rate: a flow of these bytes takes NCCL's time
  std::vector<std::vector<PipelineOp>> schedule_;
  std::vector<std::vector<size_t>> last_backward_;  // per stage and chunk: its last backward op of the step
  sg4::BarrierPtr barrier_;
  sg4::MutexPtr mutex_;
  std::vector<sg4::ConditionVariablePtr> cv_;
  std::unordered_map<size_t, Slot> slots_;  // node-based: references stay valid while others are added
  Flows data_;  // the current step's token read
  Flows next_read_;         // the next step's, started by the first stage once data_ is in
  bool read_next_ = false;  // the first stage is to start next_read_
  double step_data_stall_s_ = 0;
  std::vector<double> critical_comm_s_;  // per stage: the communication on the path that leads to its present (WaitOnComm)
  std::vector<double> stage_end_s_;      // per stage: when it ended the step
  double step_critical_comm_s_ = 0;      // the step's: its last stage's critical_comm_s_
  bool quit_ = false;
};

}  // namespace

std::optional<std::string> DesRefusal(const Scenario& s, bool traced) {
  const Parallelism& p = s.parallelism;
  const long passes = 2L * p.pipeline * p.virtual_stages * std::max(1, s.microbatches_per_step());
  const std::string per_step = std::to_string(passes) + " pipeline passes per step (pipeline " + std::to_string(p.pipeline) +
                               " x virtual stages " + std::to_string(p.virtual_stages) + " x " +
                               std::to_string(s.microbatches_per_step()) + " micro batches x 2)";
  if (passes > kDesMaxPassesPerStep) {
    return "the DES would simulate " + per_step + ", more than the " + std::to_string(kDesMaxPassesPerStep) +
           " it takes on to bound its memory; the analytical path runs it (--fidelity analytical; plan and size: --recheck analytical)";
  }
  if (traced && passes > kDesMaxTracedPassesPerStep) {
    return "a trace of " + per_step + " is more than the " + std::to_string(kDesMaxTracedPassesPerStep) +
           " the DES traces to bound its memory; run it without --trace, or trace fewer micro batches";
  }
  if (s.storage) {
    const long flows = long(p.pipeline) * std::min(p.tensor, s.gpus());
    if (flows > kDesMaxFlowsPerTransfer) {
      return "the DES would send a checkpoint as up to " + std::to_string(flows) + " flows (pipeline " + std::to_string(p.pipeline) +
             " x tensor " + std::to_string(p.tensor) + " shard owners), more than the " + std::to_string(kDesMaxFlowsPerTransfer) +
             " it takes on; the analytical path runs it (--fidelity analytical; plan and size: --recheck analytical)";
    }
  }
  return std::nullopt;
}

StepTiming SimulateDes(const Scenario& s, const StepCosts& costs, bool record_timeline, DesStats* stats,
                       const DesControl* control) {
  DesRun run(s, costs, record_timeline, control);
  RunInFreshEngine([&] { run.Build(); });

  const Parallelism& p = s.parallelism;
  const double m = s.microbatches_per_step();
  StepTiming r;
  r.step_time_s = run.steady_step_s_;
  // Breakdown of the steady step from the slowest stage's point of view (as
  // the analytical path): its compute, the optimizer and the data stall are
  // known. Its exposed communication is what the cost model folds into its
  // passes (TP's, sequence-sharded; not the all-to-alls the DES runs as flows)
  // plus the simulated step's critical path's: the time the stages along the
  // chain of passes and waits that ended the step spent blocked on their
  // collectives and transfers (a late parameter gather on the first stage
  // delays the last one through the pipeline: communication, not bubble),
  // beyond the pipeline's fill and drain. The rest of the step is the
  // pipeline bubble. Without a steady step's
  // measurement (none ran without a checkpoint write in flight) the rest
  // splits as the closed form does: up to its fill and drain, then
  // exposed communication.
  const StageCost& st = costs.slowest();
  StepBreakdown& b = r.breakdown;
  b.compute_s = m * (st.forward_compute_s + st.backward_compute_s);
  b.optimizer_s = costs.optimizer_s;
  b.data_stall_s = run.steady_data_stall_s_;
  const double rest = std::max(0.0, r.step_time_s - b.compute_s - b.optimizer_s - b.data_stall_s);
  // The schedule's fill and drain comes first: whatever the critical path
  // spent on collectives, the slowest stage waits for the other stages'
  // slots at both ends of the step (a chain through their passes and sends,
  // which the critical path counts as the sends' wait), so the bubble is
  // never below the closed form's (a PP 16 step of all-to-all heavy stages
  // read 0 s of bubble).
  const double fill_drain_s = std::min(rest, costs.FillDrainS(p.virtual_stages, m));
  b.exposed_communication_s = rest - fill_drain_s;
  if (run.steady_critical_comm_s_ >= 0) {
    const double folded = m * (st.forward_exposed_comm_s - st.forward_all_to_all_s + st.backward_exposed_comm_s - st.backward_all_to_all_s);
    b.exposed_communication_s = std::min(b.exposed_communication_s, std::max(0.0, folded) + run.steady_critical_comm_s_);
  }
  b.pipeline_bubble_s = rest - b.exposed_communication_s;
  // A difference of equal sums is a rounding residue (5.6e-17 s of bubble without a pipeline), not a figure.
  if (b.pipeline_bubble_s < 1e-12 * r.step_time_s) {
    b.exposed_communication_s += b.pipeline_bubble_s;
    b.pipeline_bubble_s = 0;
  }

  // Checkpoints as simulated: the mean write time, and the stall per
  // checkpoint as whatever the run took beyond its steps at steady state.
  const int steps = std::max(1, s.training.steps);
  const int every = (s.storage && s.checkpoint.every_steps > 0) ? s.checkpoint.every_steps : 0;
  const int checkpoints = every > 0 ? steps / every : 0;
  if (run.writes_ > 0) r.checkpoint_write_s = run.write_sum_s_ / run.writes_;
  if (checkpoints > 0) r.checkpoint_stall_s = std::max(0.0, (run.run_end_s_ - steps * r.step_time_s) / checkpoints);
  r.timeline = std::move(run.timeline_);
  std::stable_sort(r.timeline.begin(), r.timeline.end(),
                   [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_s < b.start_s; });
  if (stats) {
    *stats = run.stats_;
    stats->run_time_s = run.run_end_s_;
  }
  return r;
}

}  // namespace trainsim
