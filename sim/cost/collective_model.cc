#include "sim/cost/collective_model.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace trainsim {

double NicLineBytesPerS(const Scenario& s) {
  return s.fabric.link_bytes_per_s > 0 ? std::min(s.node.nic_bytes_per_s, s.fabric.link_bytes_per_s) : s.node.nic_bytes_per_s;
}

double NicAchievedBytesPerS(const Scenario& s) {
  return std::min(s.fabric.achieved_bytes_per_s, s.node.nic_bytes_per_s * s.fabric.achieved_bytes_per_s / s.fabric.link_bytes_per_s);
}

double NicShareBytesPerS(const Scenario& s) {
  return NicAchievedBytesPerS(s) * std::min(s.node.nics_per_node, s.node.gpus_per_node) / s.node.gpus_per_node;
}

double NvlinkNcclBytesPerS(const Scenario& s) { return s.node.intra_ring_bus_bytes_per_s; }

double MessageSizeFactor(const Scenario& s, double chunk_bytes) {
  const double half = s.node.intra_half_chunk_bytes;
  return half > 0 ? std::max(kLowLatencyProtocolEfficiency, chunk_bytes / (chunk_bytes + half)) : 1.0;
}

double CollectiveChunkBytes(const CommOp& op, int ranks) {
  if (op.kind != CollectiveKind::kSendRecv) return op.bytes / std::max(1, ranks);  // one ring step
  if (op.group == CommGroup::kContext) return op.bytes / std::max(1, ranks - 1);   // one ring hop of the K/V exchange
  return op.bytes;                                                                  // one transfer
}

double CollectivePlan::Time() const {
  if (phase_count == 0) return 0;
  double t = 0;
  for (int i = 0; i < phase_count; ++i) t = std::max(t, phases[i].time_s());
  return latency_s + t;
}

double TokenReachFraction(int experts, int top_k, double held_experts) {
  // 1 - C(E - a, k) / C(E, k): the token's k distinct experts all miss the a held ones.
  double miss = 1;
  for (int i = 0; i < top_k; ++i) miss *= std::max(0.0, (experts - held_experts - i) / double(experts - i));
  return 1 - miss;
}

double DeduplicatedNvlinkBytesPerS(const Scenario& s, const CommOp& op, double ranks_per_domain) {
  const FrameworkProfile& f = s.framework;
  const MoeDispatcher dispatcher = s.parallelism.moe_dispatcher;
  if (op.trip == TokenTrip::kNone || ranks_per_domain <= 1) return NvlinkNcclBytesPerS(s);
  const bool combine = op.trip == TokenTrip::kCombine;
  // The dispatchers' rates are measured as algorithm bandwidth, which counts
  // the copies a GPU keeps for itself too: (r - 1) / r of them cross NVLink.
  const double over_nvlink = (ranks_per_domain - 1) / ranks_per_domain;
  if (dispatcher == MoeDispatcher::kDeepEp && f.deepep_max_nvlink_peers > 0 && ranks_per_domain > f.deepep_max_nvlink_peers) {
    const double rate = combine ? f.deepep_beyond_peers_combine_bytes_per_s : f.deepep_beyond_peers_dispatch_bytes_per_s;
    return std::min(NvlinkNcclBytesPerS(s), rate * over_nvlink);
  }
  const DispatcherNvlinkRates* measured = dispatcher == MoeDispatcher::kDeepEp    ? &f.deepep_nvlink
                                          : dispatcher == MoeDispatcher::kHybridEp ? &f.hybridep_nvlink
                                                                                    : nullptr;
  if (measured == nullptr || measured->empty()) return NvlinkNcclBytesPerS(s);
  const int sms = dispatcher == MoeDispatcher::kDeepEp ? f.deepep_sms : f.hybridep_sms;
  return measured->AlgorithmBytesPerS(combine, ranks_per_domain, s.node.nvlink_bytes_per_s, sms) * over_nvlink;
}

CollectivePlan PlanCollective(const Scenario& s, const CommOp& op) { return PlanCollective(s, op, s.layout().Span(op.group)); }

CollectivePlan PlanCollective(const Scenario& s, const CommOp& op, const GroupSpan& span) {
  CollectivePlan plan;
  const GroupSpan g = span;
  plan.span = g;
  if (g.ranks <= 1 || op.bytes <= 0) return plan;
  const double S = op.bytes;
  const double size_f = MessageSizeFactor(s, CollectiveChunkBytes(op, g.ranks));
  const double inter_lat = s.fabric.inter_node_latency_s + 2 * s.fabric.switch_latency_s;
  const double nic_shared = NicShareBytesPerS(s), nic_alone = NicAchievedBytesPerS(s);
  auto add = [&](LinkClass link, double bytes, double shared, double unshared, double spine_fraction = 0) {
    plan.phases[plan.phase_count++] =
        CollectivePhase{link, bytes, shared, unshared, g.scalable_units > 1 ? std::min(1.0, spine_fraction) : 0.0,
                        std::max(1.0, s.fabric.spine_oversubscription)};
  };
  // The share of a member's off-domain peers in other scalable units, its
  // members spread evenly over them (k units: (k - 1) / k of all members).
  const double units = g.scalable_units;
  const auto off_unit = [&](double members, double off_domain) {
    return off_domain > 0 ? (units - 1) / units * members / off_domain : 0.0;
  };

  if (op.kind == CollectiveKind::kSendRecv) {
    // Point to point with a neighbour: NVLink when the whole group shares an
    // NVLink domain; otherwise some hop crosses the NICs, and that hop paces
    // the ring or pipeline.
    if (g.on_nvlink()) {
      plan.latency_s = s.node.intra_latency_s;
      add(LinkClass::kNvlink, S / size_f, NvlinkNcclBytesPerS(s), NvlinkNcclBytesPerS(s));
    } else {
      // The hop that crosses a node boundary: with members closer than a
      // node apart (a pipeline of stride 1 or 2 inside each node) only the
      // node's last `stride` GPUs, one per interleaved group, send across at
      // once, and they share a NIC only as far as they sit on the same one;
      // with members a node or more apart every GPU of the node sends.
      plan.latency_s = inter_lat;
      const int gpus_per_nic = std::max(1, s.node.gpus_per_node / std::max(1, std::min(s.node.nics_per_node, s.node.gpus_per_node)));
      const double rate = g.ranks_per_node > 1 ? nic_alone / std::min(g.stride, gpus_per_nic) : nic_shared;
      // Members a scalable unit or more apart send every hop over the
      // uplinks; closer, only the unit's last `stride` GPUs do.
      const double unit_gpus = double(ScalableUnitNodes(s.fabric, s.nodes, s.node.nics_per_node)) * s.node.gpus_per_node;
      add(LinkClass::kNic, S / size_f, rate, nic_alone, g.stride / unit_gpus);
    }
    return plan;
  }
  const double n = g.ranks;
  if (op.kind == CollectiveKind::kAllToAll) {
    // Each member keeps 1/n and sends a 1/n piece to every other member:
    // those in its NVLink domain over NVLink, the rest over the NICs.
    const double r = g.ranks_per_domain, nvlink = NvlinkNcclBytesPerS(s);
    plan.latency_s = s.node.intra_latency_s + (g.on_nvlink() ? 0.0 : inter_lat);
    if (op.dedup_top_k > 0 && op.dedup_experts >= op.dedup_top_k) {
      // Deduplicated: one copy of a token (S / k) per remote domain holding
      // any of its experts over the NICs; then one per destination GPU, of
      // which (r - 1) / r are another GPU of that domain, over NVLink.
      // These kernels stream tokens over many queue pairs instead of taking
      // NCCL's ring steps, so NCCL's message-size penalty does not apply:
      // DeepEP's normal kernels reach 43-58 GB/s over a ~50 GB/s CX7 NDR NIC at
      // EP 16-64 and 153 of ~160 GB/s over H800 NVLink at EP 8, with 4,096
      // tokens x 7,168 hidden (deepseek-ai/DeepEP docs/legacy.md, "Normal
      // kernels with NVLink and RDMA forwarding"); its low-latency kernels still
      // move 39-43 GB/s per NIC at 128 tokens.
      const double token = S / op.dedup_top_k, E = op.dedup_experts, domains = g.domains;
      const double gpus_reached = n * TokenReachFraction(op.dedup_experts, op.dedup_top_k, E / n);
      const double nvlink_rate = DeduplicatedNvlinkBytesPerS(s, op, r);
      if (r > 1) add(LinkClass::kNvlink, gpus_reached * (r - 1) / r * token, nvlink_rate, nvlink_rate);
      if (!g.on_nvlink()) {
        const double domains_reached = (domains - 1) * TokenReachFraction(op.dedup_experts, op.dedup_top_k, E / domains);
        add(LinkClass::kNic, domains_reached * token, nic_shared, nic_alone, off_unit(domains, domains - 1));
      }
      return plan;
    }
    // NCCL's per-peer pieces: the message-size penalty is the node's (measured on NVLink) on both
    // parts; no NIC sweep of the all-to-all is published. Not tuned, but the published runs of EP
    // over NDR (Grok-1 proxies, Qwen3-235B on DGX-H100) come out 5-30% fast without it on the NICs.
    if (r > 1) add(LinkClass::kNvlink, (r - 1) / n * S / size_f, nvlink, nvlink);
    if (!g.on_nvlink()) add(LinkClass::kNic, (n - r) / n * S / size_f, nic_shared, nic_alone, off_unit(n, n - r));
    return plan;
  }
  const double factor = op.kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
  if (g.on_nvlink()) {
    const double bus = (op.kind == CollectiveKind::kAllReduce && s.node.nvls) ? s.node.intra_allreduce_bus_bytes_per_s
                                                                              : s.node.intra_ring_bus_bytes_per_s;
    plan.latency_s = s.node.intra_latency_s;
    add(LinkClass::kNvlink, factor * (n - 1) / n * S / size_f, bus, bus);
    return plan;
  }
  // Hierarchical: the domain's members split the buffer over their NICs for
  // the inter-domain phase while NVLink carries the intra-domain phase; the
  // slower phase bounds a pipelined implementation.
  const double N = g.domains, r = g.ranks_per_domain;
  plan.latency_s = s.node.intra_latency_s + inter_lat * 2 * std::ceil(std::log2(N));
  // A ring over the N domains crosses a unit boundary at k of its N hops:
  // each unit's uplinks carry one hop's traffic out per ring, however many
  // nodes the unit holds (NCCL's trees cross as rarely).
  add(LinkClass::kNic, factor * (N - 1) / N * S / r / size_f, nic_shared, nic_alone, units / N);
  if (r > 1) {
    add(LinkClass::kNvlink, factor * (r - 1) / r * S / size_f, s.node.intra_ring_bus_bytes_per_s, s.node.intra_ring_bus_bytes_per_s);
  }
  return plan;
}

double CollectiveTime(const Scenario& s, const CommOp& op) { return PlanCollective(s, op).Time(); }

double CollectiveTimes::operator()(const CommOp& op) {
  if (op.bytes <= 0) return 0;  // PlanCollective's plan has no phases: no time (most once-per-step collectives of a config)
  for (int i = 0; i < count_; ++i) {
    const Entry& e = entries_[i];
    if (e.bytes == op.bytes && e.kind == op.kind && e.group == op.group && e.dedup_top_k == op.dedup_top_k && e.trip == op.trip) return e.time_s;
  }
  const int group = int(op.group);
  if (group < 0 || group >= kGroups) return CollectiveTime(s_, op);
  if (!spanned_[group]) {
    spans_[group] = s_.layout().Span(op.group);
    spanned_[group] = true;
  }
  const double t = PlanCollective(s_, op, spans_[group]).Time();
  if (count_ < int(std::size(entries_))) entries_[count_++] = Entry{op.kind, op.group, op.bytes, op.dedup_top_k, op.trip, t};
  return t;
}

}  // namespace trainsim
