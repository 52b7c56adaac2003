// The cluster as the DES sees it: which GPUs the simulated data-parallel
// replica occupies, the NIC bundles its traffic crosses (the GPU-to-NIC rail
// mapping of the node: 8 ConnectX-7 give each GPU its own NIC, 4 give one NIC
// to two GPUs), the fabric's scalable-unit uplinks, the host links and the
// storage nodes' front ends and disks, each with the capacity the simulated
// replica may use (see "Replica folding" in sim/des/README.md).
//
// DesTopology is plain data (built and tested without SimGrid);
// BuildSimgridPlatform turns it into SimGrid hosts, links and routes.
//
// Replica folding: only data-parallel rank 0 and context-parallel rank 0 of
// each pipeline stage are simulated (one tensor-parallel group per stage).
// The others run the same schedule at the same time, so on every link that
// simulated and folded GPUs share, the simulated ones get the fraction
// simulated_gpus / all_gpus of its capacity (max-min fairness among equal
// flows). This captures the load of symmetric replicas on NICs, leaf uplinks
// and storage; it does not capture replicas that drift apart in time or load
// links unevenly (stragglers, uneven rail use, one replica's data stall).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/workload.h"
#include "sim/core/scenario.h"

namespace simgrid::s4u { class Host; class NetZone; }

namespace trainsim {

/// The GPUs of one simulated tensor-parallel group on one node.
struct GroupPart {
  int node = 0;
  int gpus = 0;      // simulated GPUs of the group on this node
  int bundle = -1;   // index into DesTopology::bundles
};

/// One pipeline stage of the simulated replica (its TP group, DP rank 0, CP rank 0).
struct DesGroup {
  int stage = 0;
  int first_rank = 0;
  std::vector<GroupPart> parts;
};

/// NICs of one node that simulated traffic uses together (a connected
/// component of the group-uses-NIC graph), with the capacity it gets.
struct NicBundle {
  int node = 0;
  int nics = 0;
  int simulated_gpus = 0;  // simulated GPUs mapped to these NICs
  int all_gpus = 0;        // all GPUs mapped to these NICs
  double capacity_bytes_per_s = 0;  // line rate (NIC or fabric link, the slower) * nics * simulated/all
};

struct DesTopology {
  std::vector<DesGroup> groups;  // one per pipeline stage
  std::vector<NicBundle> bundles;
  std::map<int, int> simulated_gpus_per_node;
  std::map<int, double> host_link_bytes_per_s;  // per simulated node: PCIe/host path for device-to-host copies
  std::map<int, double> su_uplink_bytes_per_s;  // per scalable unit with simulated nodes
  // NVLink switch trays of an NVLink domain larger than a node (GB200 NVL72:
  // 9 switch trays joining 18 compute trays), per domain with simulated GPUs:
  // non-blocking, so the simulated GPUs' share is their own NVLink rate.
  // Empty when the domain is the node (HGX: the NVSwitch is the node's own).
  std::map<int, double> nvlink_switch_bytes_per_s;
  int nodes_per_su = 1;
  int nodes_per_domain = 1;  // nodes sharing one NVLink domain
  double nic_line_bytes_per_s = 0;
  double nic_achieved_bytes_per_s = 0;  // what NCCL reaches per NIC (collective_model's NicShare before the split)
  // Storage (absent when the scenario has none). Every endpoint stripes its
  // transfers evenly over identical storage nodes, so the platform joins them
  // into one storage host with storage_nodes times one node's front end and
  // disks: an endpoint sends a checkpoint shard or a token read as one flow,
  // as it sends every other transfer. (A flow per storage node would weigh
  // the write by the storage node count against training flows on a shared
  // NIC, and cost the solver a flow per node.)
  int storage_nodes = 0;
  double storage_write_share = 1;  // simulated checkpoint writers / all writers
  double storage_read_share = 1;   // simulated data readers / all readers
  double front_end_bytes_per_s = 0;  // per storage node, all its front-end links
  double disk_write_bytes_per_s = 0;
  double disk_read_bytes_per_s = 0;
  int checkpoint_writer_gpus = 0;    // all GPUs that write a shard
  int simulated_writer_gpus = 0;

  int SuOf(int node) const { return node / nodes_per_su; }
  int DomainOf(int node) const { return node / nodes_per_domain; }
  // Traffic between the two nodes stays on NVLink (one NVLink domain).
  bool SameNvlinkDomain(int a, int b) const { return DomainOf(a) == DomainOf(b); }
};

// Placement and capacities for the scenario. Pure; cost independent of the
// data-parallel degree.
DesTopology BuildDesTopology(const Scenario& s);

/// SimGrid hosts of the platform: the compute host of each stage (speed 1
/// flop/s, so an Exec of d flops lasts d seconds) and the endpoints flows go
/// between; routes list the links each flow crosses.
struct DesHosts {
  simgrid::s4u::Host* controller = nullptr;
  std::vector<simgrid::s4u::Host*> compute;  // per stage
  // Per stage, per part: endpoint, its NIC mirror (flows out of and back
  // into the same bundle: the ring neighbour is a folded replica), the same
  // crossing the SU uplink, and the NVLink mirror.
  std::vector<std::vector<simgrid::s4u::Host*>> endpoint, nic_mirror, nic_mirror_su, nvlink_mirror;
  std::map<int, simgrid::s4u::Host*> host_memory;  // per simulated node
  simgrid::s4u::Host* storage_write = nullptr;  // the storage nodes, joined (see DesTopology)
  simgrid::s4u::Host* storage_read = nullptr;
};

// Creates the platform in the current SimGrid engine (the root zone) and
// seals it. Link bandwidths are in bytes/s, latencies zero: the DES adds the
// alpha terms of collective_model.h itself, so that uncontended flows take
// exactly the analytical bandwidth term.
DesHosts BuildSimgridPlatform(const Scenario& s, const DesTopology& t);

}  // namespace trainsim
