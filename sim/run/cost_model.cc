#include "sim/run/cost_model.h"

#include <algorithm>
#include <cmath>

namespace trainsim {

namespace {

constexpr double kHoursPerYear = 8760;

int CeilDiv(long a, long b) { return int((a + b - 1) / b); }

}  // namespace

FabricPorts FabricFor(const FabricProfile& f, int nodes, int nics_per_node) {
  FabricPorts p;
  if (nodes <= 1 || nics_per_node <= 0) return p;
  const long ports = long(nodes) * nics_per_node;
  const int radix = std::max(2, f.switch_radix);
  p.node_links = int(ports);
  if (ports <= radix) {
    // One switch takes every node port: every rail meets every other in it,
    // one hop, which is what the rail leaves and their spine would buy.
    p.leaves = 1;
    return p;
  }
  if (f.topology == FabricTopology::kRailOptimized) {
    // One leaf per rail (NIC index) per scalable unit; half its ports go up.
    p.leaves = nics_per_node * CeilDiv(nodes, ScalableUnitNodes(f, nodes, nics_per_node));
  } else {
    p.leaves = CeilDiv(ports, radix / 2);
  }
  const int uplinks = CeilDiv(long(std::ceil(double(ports) / f.spine_oversubscription)), 1);
  if (p.leaves <= radix) {
    // Two tiers: every spine reaches every leaf.
    p.spines = std::max(1, CeilDiv(uplinks, radix));
    p.switch_links = uplinks;
  } else {
    // Three tiers: spines split their ports between leaves and cores.
    p.spines = CeilDiv(uplinks, radix / 2);
    p.cores = CeilDiv(uplinks, radix);
    p.switch_links = 2 * uplinks;
  }
  return p;
}

CapitalCost ClusterCapital(const Scenario& s) {
  CapitalCost c;
  c.fabric = FabricFor(s.fabric, s.nodes, s.node.nics_per_node);
  const int domain = std::max(1, s.node.nvlink_domain_nodes());
  c.bought_nodes = domain > 1 ? CeilDiv(s.nodes, domain) * domain : s.nodes;
  c.nodes_usd = c.bought_nodes * s.node.capital_usd;
  c.nics_usd = double(c.bought_nodes) * s.node.nics_per_node * s.node.nic_capital_usd;
  c.switches_usd = c.fabric.switches() * s.fabric.switch_capital_usd;
  c.links_usd = double(c.fabric.node_links + c.fabric.switch_links) * s.fabric.link_capital_usd;
  if (s.storage) c.storage_usd = s.storage_nodes * s.storage->capital_usd;
  return c;
}

bool ClusterCapitalPriced(const Scenario& s) {
  // The parts cost.model ownership requires a price for (scenario_loader.cc);
  // a node without a NIC price is taken to include its NICs.
  if (s.node.capital_usd <= 0) return false;
  if (s.nodes > 1 && (s.fabric.switch_capital_usd <= 0 || s.fabric.link_capital_usd <= 0)) return false;
  return !s.storage || s.storage_nodes <= 0 || s.storage->capital_usd > 0;
}

double AmortizedUsd(double capital_usd, double years, double hours) {
  if (years <= 0) return 0;
  return capital_usd * std::min(1.0, hours / (years * kHoursPerYear));
}

void ApplyCostModel(const Scenario& s, RunReport& run) {
  const double hours = run.time_to_train_s / 3600.0;
  const CapitalCost capital = ClusterCapital(s);
  const double capital_usd = capital.total_usd();
  run.capital_usd = ClusterCapitalPriced(s) ? capital_usd : 0;
  run.idle_rack_nodes = capital.bought_nodes - s.nodes;
  if (s.cost.model == CostBasis::kOwnership) {
    run.cost_model = "ownership";
    const SiteProfile& site = s.cost.site;
    run.facility_energy_kwh = run.energy_kwh * site.pue;
    run.cost_usd = AmortizedUsd(capital_usd, site.amortization_years, hours) + run.facility_energy_kwh * site.electricity_usd_per_kwh;
  } else {
    run.cost_model = "rental";
    // The profile's price is for its default NIC count; other counts add or
    // save the NICs and their fabric ports (a scenario price is taken as given).
    const double node_price = s.cost.node_hour_usd >= 0
                                  ? s.cost.node_hour_usd
                                  : s.node.node_hour_usd + (s.node.nics_per_node - s.node.default_nics_per_node) * s.node.nic_port_hour_usd;
    double usd_per_hour = s.nodes * node_price;
    if (s.storage) {
      const double st_price = s.cost.storage_node_hour_usd >= 0 ? s.cost.storage_node_hour_usd : s.storage->node_hour_usd;
      usd_per_hour += s.storage_nodes * st_price;
    }
    run.cost_usd = usd_per_hour * hours;
  }
  run.cost_per_billion_tokens_usd = run.tokens > 0 ? run.cost_usd / (run.tokens / 1e9) : 0;
}

}  // namespace trainsim
