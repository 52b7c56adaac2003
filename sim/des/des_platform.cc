#include "sim/des/des_platform.h"

#include <algorithm>
#include <set>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <simgrid/s4u.hpp>

#include "sim/cost/checkpoint_cost.h"
#include "sim/cost/collective_model.h"

namespace trainsim {

namespace sg4 = simgrid::s4u;

namespace {

int EffectiveNics(const Scenario& s) { return std::max(1, std::min(s.node.nics_per_node, s.node.gpus_per_node)); }
int NicOfGpu(const Scenario& s, int local_gpu) { return local_gpu * EffectiveNics(s) / s.node.gpus_per_node; }

// A link the profiles leave at 0 does not limit anything.
double Cap(double bytes_per_s) { return bytes_per_s > 0 ? bytes_per_s : 1e15; }

}  // namespace

DesTopology BuildDesTopology(const Scenario& s) {
  const Parallelism& p = s.parallelism;
  const int gpn = s.node.gpus_per_node;
  DesTopology t;
  t.nodes_per_su = ScalableUnitNodes(s.fabric, s.nodes, s.node.nics_per_node);
  t.nodes_per_domain = s.nvlink_domain_nodes();
  // A NIC faster than the fabric's links (400G ConnectX-7 on 100 GbE) runs at the link's rate.
  t.nic_line_bytes_per_s = NicLineBytesPerS(s);
  t.nic_achieved_bytes_per_s = NicAchievedBytesPerS(s);

  // The simulated TP group of each stage: ranks stage*TP*CP*DP + [0, TP).
  std::map<int, std::set<int>> nics_of_part;  // (stage * nodes + node) -> NICs
  for (int st = 0; st < p.pipeline; ++st) {
    DesGroup g;
    g.stage = st;
    g.first_rank = st * p.tensor * p.context * p.data;
    for (int r = g.first_rank; r < g.first_rank + p.tensor; ++r) {
      const int node = r / gpn;
      if (g.parts.empty() || g.parts.back().node != node) g.parts.push_back(GroupPart{node, 0, -1});
      g.parts.back().gpus++;
      t.simulated_gpus_per_node[node]++;
    }
    t.groups.push_back(g);
  }

  // NIC bundles: per node, connected components of "NIC a and NIC b carry
  // traffic of the same simulated group" (Boost.Graph).
  for (const auto& [node, sim_gpus] : t.simulated_gpus_per_node) {
    const int nics = EffectiveNics(s);
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS> graph(nics);
    std::vector<bool> used(nics, false);
    for (const auto& g : t.groups) {
      int first_nic = -1;
      for (int r = g.first_rank; r < g.first_rank + p.tensor; ++r) {
        if (r / gpn != node) continue;
        const int nic = NicOfGpu(s, r % gpn);
        used[nic] = true;
        if (first_nic < 0) first_nic = nic;
        else if (nic != first_nic) boost::add_edge(first_nic, nic, graph);
      }
    }
    std::vector<int> component(nics);
    boost::connected_components(graph, component.data());
    std::map<int, int> bundle_of_component;
    for (int nic = 0; nic < nics; ++nic) {
      if (!used[nic]) continue;
      auto [it, fresh] = bundle_of_component.try_emplace(component[nic], int(t.bundles.size()));
      if (fresh) t.bundles.push_back(NicBundle{node, 0, 0, 0, 0});
      NicBundle& b = t.bundles[it->second];
      b.nics++;
      for (int gpu = 0; gpu < gpn; ++gpu) {
        if (NicOfGpu(s, gpu) == nic) b.all_gpus++;
      }
    }
    for (auto& g : t.groups) {
      for (int r = g.first_rank; r < g.first_rank + p.tensor; ++r) {
        if (r / gpn != node) continue;
        const int b = bundle_of_component.at(component[NicOfGpu(s, r % gpn)]);
        t.bundles[b].simulated_gpus++;
        for (auto& part : g.parts) {
          if (part.node == node) part.bundle = b;
        }
      }
    }
  }
  for (auto& b : t.bundles) {
    b.capacity_bytes_per_s = b.nics * t.nic_line_bytes_per_s * double(b.simulated_gpus) / std::max(1, b.all_gpus);
  }

  // Host (PCIe) path per node and the scalable units' uplinks to the spines.
  std::map<int, int> sim_gpus_per_su;
  for (const auto& [node, n] : t.simulated_gpus_per_node) {
    t.host_link_bytes_per_s[node] = s.node.pcie_bytes_per_s * n / gpn;
    sim_gpus_per_su[t.SuOf(node)] += n;
  }
  if (t.nodes_per_domain > 1) {
    for (const auto& [node, n] : t.simulated_gpus_per_node) t.nvlink_switch_bytes_per_s[t.DomainOf(node)] += n * s.node.nvlink_bytes_per_s;
  }
  for (const auto& [su, n] : sim_gpus_per_su) {
    const int nodes_in_su = std::min(t.nodes_per_su, s.nodes - su * t.nodes_per_su);
    const double uplinks = nodes_in_su * EffectiveNics(s) * t.nic_line_bytes_per_s / std::max(1.0, s.fabric.spine_oversubscription);
    t.su_uplink_bytes_per_s[su] = uplinks * double(n) / (double(nodes_in_su) * gpn);
  }

  if (s.storage) {
    const StorageProfile& st = *s.storage;
    t.storage_nodes = std::max(1, s.storage_nodes);
    t.checkpoint_writer_gpus = CheckpointWriterGpus(s);
    t.simulated_writer_gpus = p.tensor * p.pipeline;
    t.storage_write_share = double(t.simulated_writer_gpus) / t.checkpoint_writer_gpus;
    t.storage_read_share = 1.0 / p.data;
    t.front_end_bytes_per_s = st.front_end_links_per_node * st.front_end_link_bytes_per_s;
    t.disk_write_bytes_per_s = st.write_bytes_per_s_per_node;
    t.disk_read_bytes_per_s = st.read_bytes_per_s_per_node;
  }
  return t;
}

DesHosts BuildSimgridPlatform(const Scenario& s, const DesTopology& t) {
  using Dir = sg4::LinkInRoute::Direction;
  sg4::NetZone* zone = sg4::create_full_zone("cluster");
  auto duplex = [&](const std::string& name, double bw) {
    return zone->create_split_duplex_link(name, Cap(bw))->set_latency(0)->seal();
  };
  auto simple = [&](const std::string& name, double bw) { return zone->create_link(name, Cap(bw))->set_latency(0)->seal(); };
  auto route = [&](sg4::Host* a, sg4::Host* b, const std::vector<sg4::LinkInRoute>& links) {
    zone->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, links, false);
  };

  DesHosts h;
  h.controller = zone->create_host("controller", 1.0);
  std::vector<sg4::Link*> bundle_links;
  for (size_t i = 0; i < t.bundles.size(); ++i) bundle_links.push_back(duplex("nic" + std::to_string(i), t.bundles[i].capacity_bytes_per_s));
  std::map<int, sg4::Link*> su_links, host_links, switch_links;
  for (const auto& [su, bw] : t.su_uplink_bytes_per_s) su_links[su] = duplex("su" + std::to_string(su), bw);
  for (const auto& [d, bw] : t.nvlink_switch_bytes_per_s) switch_links[d] = duplex("nvswitch" + std::to_string(d), bw);
  // NVLink from a GPU link to another node's GPU link of the same domain
  // crosses the switch trays; inside a node it does not.
  auto nvlink_route = [&](sg4::Link* from, int from_node, sg4::Link* to, int to_node) {
    std::vector<sg4::LinkInRoute> links{{from, Dir::UP}};
    if (auto sw = switch_links.find(t.DomainOf(from_node)); sw != switch_links.end() && from_node != to_node) {
      links.push_back({sw->second, Dir::UP});
      links.push_back({sw->second, Dir::DOWN});
    }
    links.push_back({to, Dir::DOWN});
    return links;
  };
  for (const auto& [node, bw] : t.host_link_bytes_per_s) {
    host_links[node] = simple("pcie" + std::to_string(node), bw);
    h.host_memory[node] = zone->create_host("hostmem" + std::to_string(node), 1.0);
  }
  // The storage nodes, joined (see DesTopology): links of all of them.
  sg4::Link *few = nullptr, *dw = nullptr, *fer = nullptr, *dr = nullptr;
  if (t.storage_nodes > 0) {
    const double n = t.storage_nodes;
    few = simple("fe-write", n * t.front_end_bytes_per_s * t.storage_write_share);
    dw = simple("disk-write", n * t.disk_write_bytes_per_s * t.storage_write_share);
    fer = simple("fe-read", n * t.front_end_bytes_per_s * t.storage_read_share);
    dr = simple("disk-read", n * t.disk_read_bytes_per_s * t.storage_read_share);
    h.storage_write = zone->create_host("storage-w", 1.0);
    h.storage_read = zone->create_host("storage-r", 1.0);
  }

  std::vector<std::vector<sg4::Link*>> nvlinks;
  for (const auto& g : t.groups) {
    const std::string st = std::to_string(g.stage);
    h.compute.push_back(zone->create_host("stage" + st, 1.0));
    h.endpoint.emplace_back();
    h.nic_mirror.emplace_back();
    h.nic_mirror_su.emplace_back();
    h.nvlink_mirror.emplace_back();
    nvlinks.emplace_back();
    for (size_t j = 0; j < g.parts.size(); ++j) {
      const GroupPart& part = g.parts[j];
      const std::string n = st + "." + std::to_string(j);
      sg4::Host* ep = zone->create_host("ep" + n, 1.0);
      sg4::Host* mir = zone->create_host("nic-mirror" + n, 1.0);
      sg4::Host* mir_su = zone->create_host("nic-mirror-su" + n, 1.0);
      sg4::Host* nvm = zone->create_host("nvlink-mirror" + n, 1.0);
      sg4::Link* nv = duplex("nvlink" + n, part.gpus * s.node.nvlink_bytes_per_s);
      sg4::Link* b = bundle_links[part.bundle];
      sg4::Link* su = su_links.at(t.SuOf(part.node));
      route(ep, mir, {{b, Dir::UP}, {b, Dir::DOWN}});
      route(ep, mir_su, {{b, Dir::UP}, {su, Dir::UP}, {su, Dir::DOWN}, {b, Dir::DOWN}});
      // The NVLink mirror: the group's peers. A group spread over several
      // trays of one domain reaches them through the switch trays.
      const bool spread = g.parts.size() > 1 && switch_links.count(t.DomainOf(part.node));
      route(ep, nvm, nvlink_route(nv, part.node, nv, spread ? -1 : part.node));
      route(ep, h.host_memory.at(part.node), {sg4::LinkInRoute(host_links.at(part.node))});
      if (h.storage_write) {
        // Through the node's host path too, as the analytical path bounds it (NodeStorageBytesPerS).
        sg4::Link* host = host_links.at(part.node);
        route(ep, h.storage_write, {sg4::LinkInRoute(host), {b, Dir::UP}, {su, Dir::UP}, sg4::LinkInRoute(few), sg4::LinkInRoute(dw)});
        route(h.storage_read, ep, {sg4::LinkInRoute(dr), sg4::LinkInRoute(fer), {su, Dir::DOWN}, {b, Dir::DOWN}, sg4::LinkInRoute(host)});
      }
      h.endpoint.back().push_back(ep);
      h.nic_mirror.back().push_back(mir);
      h.nic_mirror_su.back().push_back(mir_su);
      h.nvlink_mirror.back().push_back(nvm);
      nvlinks.back().push_back(nv);
    }
  }

  // Point to point between neighbouring stages (both directions; with
  // interleaving the last stage also feeds the first).
  const int stages = int(t.groups.size());
  std::set<std::pair<int, int>> done;
  for (int a = 0; a < stages && stages > 1; ++a) {
    for (int b : {(a + 1) % stages, (a + stages - 1) % stages}) {
      if (!done.insert({a, b}).second) continue;
      const size_t parts = std::min(t.groups[a].parts.size(), t.groups[b].parts.size());
      for (size_t j = 0; j < parts; ++j) {
        const GroupPart& pa = t.groups[a].parts[j];
        const GroupPart& pb = t.groups[b].parts[j];
        std::vector<sg4::LinkInRoute> links;
        if (t.SameNvlinkDomain(pa.node, pb.node)) {
          links = nvlink_route(nvlinks[a][j], pa.node, nvlinks[b][j], pb.node);
        } else {
          links.push_back({bundle_links[pa.bundle], Dir::UP});
          if (t.SuOf(pa.node) != t.SuOf(pb.node)) {
            links.push_back({su_links.at(t.SuOf(pa.node)), Dir::UP});
            links.push_back({su_links.at(t.SuOf(pb.node)), Dir::DOWN});
          }
          links.push_back({bundle_links[pb.bundle], Dir::DOWN});
        }
        route(h.endpoint[a][j], h.endpoint[b][j], links);
      }
    }
  }
  zone->seal();
  return h;
}

}  // namespace trainsim
