// The alpha-beta time of a collective over a parallel group, placed by the
// scenario's rank layout (sim/core/rank_layout.h): NVLink/NVSwitch inside an
// NVLink domain, the NICs across domains, hierarchical when a group spans both. This is the analytical path's network
// model; the DES replaces the bandwidth terms with flows that share links.
#pragma once

#include "models/workload.h"
#include "sim/core/scenario.h"

namespace trainsim {

// A NIC runs at the slower of its own and the fabric's link rate.
double NicLineBytesPerS(const Scenario& s);
// What NCCL reaches over one NIC (a NIC slower than the fabric's link
// reaches the same fraction of its own rate).
double NicAchievedBytesPerS(const Scenario& s);

// NCCL bandwidth one GPU gets from the node's NICs when every GPU of the node
// communicates at once (8 vs 4 ConnectX-7 shows here).
double NicShareBytesPerS(const Scenario& s);

// What NCCL moves per GPU over NVLink in anything but an NVLS all-reduce
// (all-to-all, send/recv, ring collectives): the line rate less NCCL's
// protocol overhead, the node profile's ring bus rate (H100: 370 of 450 GB/s;
// NCCL maintainers in NVIDIA/nccl-tests#212: "NCCL can get an effective NVLink
// bandwidth of 370GB/s, which you can observe as BusBw when running
// non-allreduce operations").
double NvlinkNcclBytesPerS(const Scenario& s);

// NCCL's LL protocol: each 8-byte store carries 4 bytes of data and a 4-byte
// flag, so it moves data at half the link rate, but with no pipeline to
// fill; NCCL's tuner takes it for messages the Simple protocol's pipeline
// would move slower (NCCL docs, NCCL_PROTO: LL "low latency", LL128, Simple).
inline constexpr double kLowLatencyProtocolEfficiency = 0.5;

// What a deduplicating token dispatcher (CommOp::dedup_top_k) moves per GPU
// over NVLink among `ranks_per_domain` members of its group, by the op's
// trip (dispatch or combine): the framework's measured rate of the
// dispatcher's kernels (FrameworkProfile::deepep_nvlink, hybridep_nvlink;
// past DeepEP's NVLink peers, deepep_beyond_peers_*), as the share of it that
// crosses NVLink; NCCL's rate where the profile measures none.
double DeduplicatedNvlinkBytesPerS(const Scenario& s, const CommOp& op, double ranks_per_domain);

// Fraction of the peak bandwidth a transfer reaches when NCCL moves it in
// pieces of `chunk_bytes`: the Simple protocol's chunk / (chunk + the node's
// half chunk) (small pieces do not fill its pipeline), or the LL protocol's
// kLowLatencyProtocolEfficiency where that is more. A ring collective over n
// ranks moves bytes/n per step, a point-to-point transfer its whole buffer.
// So a one-float all-reduce costs the group's latency, a 1 MiB all-reduce on
// 8 H100s about 21 us against 27 us measured (dgx-h100.yaml's source).
double MessageSizeFactor(const Scenario& s, double chunk_bytes);
double CollectiveChunkBytes(const CommOp& op, int ranks);

// How a collective moves its bytes, described once for both fidelities: the
// group as the rank layout places it, the alpha (latency) term, and the
// phases of its algorithm, each on one kind of link, run pipelined (the
// slowest bounds the time). The closed form charges each phase at the rate
// one GPU gets when every GPU of its node communicates at once; the DES sends
// each phase as flows on the platform's links, sized so that an unshared
// link takes the phase's time, and lets the links' sharing decide.
enum class LinkClass { kNvlink, kNic };

struct CollectivePhase {
  LinkClass link = LinkClass::kNvlink;
  double bytes = 0;                  // what one GPU moves in the phase, message-size efficiency included
  double shared_bytes_per_s = 0;     // per GPU, all GPUs of the node at once (NICs shared 8 vs 4)
  double unshared_bytes_per_s = 0;   // per GPU on an otherwise idle link (NVLink bus rate, one NIC's achieved rate)
  // Of a NIC phase's bytes, the share that leaves the sender's scalable unit
  // over its leaves' uplinks to the spines (0 inside one unit): an
  // all-to-all's pieces for members in other units; a ring's hops that cross
  // a unit boundary. With spine oversubscription o every GPU of the unit
  // sending at once gets 1/o of its NIC's rate up there.
  double spine_fraction = 0;
  double spine_oversubscription = 1;
  double time_s() const {
    const double spine = std::max(1.0, spine_oversubscription * spine_fraction);
    return shared_bytes_per_s > 0 ? bytes * spine / shared_bytes_per_s : 0;
  }
};

struct CollectivePlan {
  GroupSpan span;
  double latency_s = 0;
  CollectivePhase phases[2];
  int phase_count = 0;
  double Time() const;
};

// The chance that a token routed to `top_k` distinct experts, chosen
// uniformly of `experts`, reaches a member holding `held_experts` of them:
// a deduplicating dispatcher sends it there once (CommOp::dedup_top_k).
double TokenReachFraction(int experts, int top_k, double held_experts);

// The plan of one collective or point-to-point transfer of `op.bytes`; no
// phases when the group has one member or nothing moves.
CollectivePlan PlanCollective(const Scenario& s, const CommOp& op);
// The same over the group's span looked up already (s.layout().Span(op.group)).
CollectivePlan PlanCollective(const Scenario& s, const CommOp& op, const GroupSpan& span);

// Time of one collective or point-to-point transfer: PlanCollective(...).Time().
double CollectiveTime(const Scenario& s, const CommOp& op);

// CollectiveTime for one scenario, each distinct collective timed once: a
// layer's passes repeat the same TP collective a dozen times, and the
// analytical path times thousands of configurations. Keyed on every field of
// the CommOp that PlanCollective reads (kind, group, bytes, dedup_top_k, trip): one that starts
// reading another must join the key.
class CollectiveTimes {
 public:
  explicit CollectiveTimes(const Scenario& s) : s_(s) {}
  double operator()(const CommOp& op);

 private:
  struct Entry {
    CollectiveKind kind;
    CommGroup group;
    double bytes;
    int dedup_top_k;  // a deduplicated token dispatch plans differently from an all-to-all of the same bytes
    TokenTrip trip;   // and its combine from its dispatch, where DeepEP's two kernels differ
    double time_s;
  };
  const Scenario& s_;
  Entry entries_[48];
  int count_ = 0;
  // Each group's span, placed once (a miss of the entries above needs it).
  static constexpr int kGroups = int(CommGroup::kStage) + 1;
  GroupSpan spans_[kGroups];
  bool spanned_[kGroups] = {};
};

}  // namespace trainsim
