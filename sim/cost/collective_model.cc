#include "sim/cost/collective_model.h"

#include <algorithm>
#include <cmath>

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

double MessageSizeFactor(const Scenario& s, double chunk_bytes) {
  const double half = s.node.intra_half_chunk_bytes;
  return half > 0 ? chunk_bytes / (chunk_bytes + half) : 1.0;
}

double CollectiveChunkBytes(const CommOp& op, int ranks) {
  if (op.kind != CollectiveKind::kSendRecv) return op.bytes / std::max(1, ranks);  // one ring step
  if (op.group == CommGroup::kContext) return op.bytes / std::max(1, ranks - 1);   // one ring hop of the K/V exchange
  return op.bytes;                                                                  // one transfer
}

double CollectiveTime(const Scenario& s, const CommOp& op) {
  const GroupSpan g = s.layout().Span(op.group);
  if (g.ranks <= 1 || op.bytes <= 0) return 0;
  const double S = op.bytes;
  const double size_f = MessageSizeFactor(s, CollectiveChunkBytes(op, g.ranks));
  const double inter_lat = s.fabric.inter_node_latency_s + 2 * s.fabric.switch_latency_s;

  if (op.kind == CollectiveKind::kSendRecv) {
    // Point to point with a neighbour: NVLink when the whole group shares a
    // node; otherwise some hop crosses the NICs, and that hop paces the ring
    // or pipeline.
    if (g.on_nvlink()) return s.node.intra_latency_s + S / (s.node.nvlink_bytes_per_s * size_f);
    return inter_lat + S / (NicShareBytesPerS(s) * size_f);
  }

  const double n = g.ranks;
  const double factor = op.kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
  const double intra_bus = (op.kind == CollectiveKind::kAllReduce && s.node.nvls) ? s.node.intra_allreduce_bus_bytes_per_s
                                                                                   : s.node.intra_ring_bus_bytes_per_s;
  if (g.on_nvlink()) {
    return s.node.intra_latency_s + factor * (n - 1) / n * S / (intra_bus * size_f);
  }
  // Hierarchical: the node's members split the buffer over their NICs for the
  // inter-node phase while NVLink carries the intra-node phase; the slower
  // phase bounds a pipelined implementation.
  const double N = g.domains, r = g.ranks_per_domain;
  const double inter = factor * (N - 1) / N * S / (r * NicShareBytesPerS(s) * size_f);
  const double intra = r > 1 ? factor * (r - 1) / r * S / (s.node.intra_ring_bus_bytes_per_s * size_f) : 0.0;
  const double latency = s.node.intra_latency_s + inter_lat * 2 * std::ceil(std::log2(N));
  return latency + std::max(inter, intra);
}

}  // namespace trainsim
