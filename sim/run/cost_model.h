// What a run costs, under the scenario's cost.model:
// - rental: the allocation (GPU nodes and storage nodes) is paid per node-hour
//   for the whole wall time; a NIC count other than the profile's default adds
//   or saves nic_port_hour_usd per NIC.
// - ownership: the cluster is bought (GPU nodes, their compute-fabric NICs, the
//   fabric's switches and links for the chosen topology and node count, the
//   storage nodes) and written off straight-line over the site's years; the run
//   is charged its wall time's share of that, plus its energy times the site's
//   PUE at the site's price per kWh. Switch power is not counted (it is under
//   2% of the GPU nodes' load power in these fabrics).
// The capital figure is reported under both models where the profiles price
// every part (ClusterCapitalPriced; else 0), so a renter sees what buying would take.
#pragma once

#include "sim/core/result.h"
#include "sim/core/scenario.h"

namespace trainsim {

// The switches and links of a two- or three-tier leaf/spine fabric.
// One switch when the node ports fit its radix (8 XE9680 on one 64-port
// QM9700); past that, rail-optimized (DGX SuperPOD): one leaf per rail per
// group of nodes_per_su nodes (at most half the radix, the rest uplinks);
// fat tree: node ports fill leaves of half the radix. Leaves reach spines with as many uplinks as node ports (divided by
// the spine oversubscription); a tier of core switches is added when there
// are more leaves than a spine has ports. One node needs no fabric.
struct FabricPorts {
  int node_links = 0;    // NIC to leaf
  int switch_links = 0;  // leaf to spine, spine to core
  int leaves = 0;
  int spines = 0;
  int cores = 0;
  int switches() const { return leaves + spines + cores; }
};
FabricPorts FabricFor(const FabricProfile& f, int nodes, int nics_per_node);

struct CapitalCost {
  // Nodes bought: the job's, or on rack-scale systems (an NVLink domain of
  // several nodes, GB200 NVL72) whole racks of them: a rack is sold whole,
  // and the trays the job leaves idle in it are its spares.
  int bought_nodes = 0;
  double nodes_usd = 0;     // GPU nodes without their compute-fabric NICs
  double nics_usd = 0;      // compute-fabric NICs
  double switches_usd = 0;
  double links_usd = 0;     // optics and cables, node and switch links
  double storage_usd = 0;
  FabricPorts fabric;
  double total_usd() const { return nodes_usd + nics_usd + switches_usd + links_usd + storage_usd; }
};
CapitalCost ClusterCapital(const Scenario& s);

// Whether the profiles price every part ClusterCapital counts: the node (a
// node without a NIC price is taken to include its NICs), the fabric's switches and links where there is a fabric (more
// than one node), the storage nodes where there are some. A total with a part
// left at $0 would understate the cluster, so it is not reported.
bool ClusterCapitalPriced(const Scenario& s);

// Straight-line write-off of `capital_usd` over `years`, for `hours` of use:
// at most the purchase, which a run longer than the write-off has used up
// (its hardware then costs its energy alone).
double AmortizedUsd(double capital_usd, double years, double hours);

// Sets run.cost_model, run.capital_usd, run.cost_usd and
// run.cost_per_billion_tokens_usd from the wall time (run.time_to_train_s)
// and the IT energy (run.energy_kwh) already in `run`.
void ApplyCostModel(const Scenario& s, RunReport& run);

}  // namespace trainsim
