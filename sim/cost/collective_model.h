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

// Fraction of the peak bandwidth a transfer reaches when NCCL moves it in
// pieces of `chunk_bytes` (small pieces do not fill the links): chunk / (chunk
// + the node's half chunk). A ring collective over n ranks moves bytes/n per
// step, a point-to-point transfer its whole buffer.
double MessageSizeFactor(const Scenario& s, double chunk_bytes);
double CollectiveChunkBytes(const CommOp& op, int ranks);

// Time of one collective or point-to-point transfer of `op.bytes`.
double CollectiveTime(const Scenario& s, const CommOp& op);

}  // namespace trainsim
