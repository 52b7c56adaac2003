#include "sim/core/rank_layout.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace trainsim {

std::string ToString(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce: return "all-reduce";
    case CollectiveKind::kAllGather: return "all-gather";
    case CollectiveKind::kReduceScatter: return "reduce-scatter";
    case CollectiveKind::kSendRecv: return "send-recv";
    case CollectiveKind::kAllToAll: return "all-to-all";
  }
  return "?";
}

std::string ToString(CommGroup g) {
  switch (g) {
    case CommGroup::kTensor: return "tp";
    case CommGroup::kContext: return "cp";
    case CommGroup::kData: return "dp";
    case CommGroup::kPipeline: return "pp";
    case CommGroup::kShard: return "shard";
    case CommGroup::kShardReplica: return "shard-replica";
    case CommGroup::kExpert: return "ep";
    case CommGroup::kExpertTensor: return "etp";
    case CommGroup::kExpertData: return "edp";
    case CommGroup::kExpertShard: return "eshard";
    case CommGroup::kStage: return "stage";
  }
  return "?";
}

namespace {

// `n` members `stride` GPUs apart from GPU `first`, over containers of `size`
// GPUs that tile the GPUs from 0 (nodes, NVLink domains).
struct Spread {
  int containers = 1;  // containers the members touch
  int fewest = 1;      // the fewest members in one of them
};

Spread SpreadOver(long first, int n, int stride, long size) {
  if (stride >= size) return {n, 1};  // members a container or more apart: one in each
  const long last = first + long(n - 1) * stride;
  const long c0 = first / size, c1 = last / size;
  if (c0 == c1) return {1, n};
  // A stride under the container size skips no container on the way.
  auto members_below = [&](long gpu) { return (gpu - first + stride - 1) / stride; };
  long fewest = std::min(members_below((c0 + 1) * size), n - members_below(c1 * size));
  // The full ones between hold size / stride rounded down or up, by where
  // the progression enters them: a pattern that repeats every
  // stride / gcd(size, stride) containers.
  const long full = std::min(c1 - c0 - 1, long(stride) / std::gcd(size, long(stride)));
  for (long c = c0 + 1; c <= c0 + full; ++c) fewest = std::min(fewest, members_below((c + 1) * size) - members_below(c * size));
  return {int(c1 - c0 + 1), int(std::max(1L, fewest))};
}

// Every group of a kind is spread alike over containers of `size` GPUs when
// its members are a container or more apart, when blocks of groups fill
// whole containers with members at a stride that divides them, or when whole
// blocks sit inside one container.
bool AllSpreadAlike(long block, int stride, long size) {
  return stride >= size || (block % size == 0 && size % stride == 0) || size % block == 0;
}

// A cost order of spreads: on NVLink before across domains; then the fewer
// members one domain holds (they carry the most over its NICs), the more
// domains; then the same by node; then the more scalable units (what crosses
// them shares the spines' uplinks).
auto SlownessKey(const GroupSpan& g) {
  return std::make_tuple(g.domains > 1, -g.ranks_per_domain, g.domains, g.nodes > 1, -g.ranks_per_node, g.nodes, g.scalable_units);
}

}  // namespace

GroupSpan RankLayout::Span(int ranks, int stride, long first) const {
  GroupSpan g;
  g.ranks = std::max(1, ranks);
  g.stride = std::max(1, stride);
  const Spread node = SpreadOver(first, g.ranks, g.stride, shape_.gpus_per_node);
  g.ranks_per_node = node.fewest;
  g.nodes = node.containers;
  const Spread domain = SpreadOver(first, g.ranks, g.stride, std::max(shape_.nvlink_domain_gpus, shape_.gpus_per_node));
  g.ranks_per_domain = domain.fewest;
  g.domains = domain.containers;
  if (shape_.nodes_per_su > 0) {
    const long last_gpu = first + long(g.ranks - 1) * g.stride;
    const long su_gpus = long(shape_.nodes_per_su) * shape_.gpus_per_node;
    g.scalable_units = int(last_gpu / su_gpus - first / su_gpus) + 1;
  }
  return g;
}

GroupSpan RankLayout::SlowestSpan(int ranks, int stride) const {
  ranks = std::max(1, ranks);
  stride = std::max(1, stride);
  const long block = long(ranks) * stride;
  const long domain = std::max(shape_.nvlink_domain_gpus, shape_.gpus_per_node);
  GroupSpan slowest = Span(ranks, stride, 0);
  const long gpus = long(shape_.tensor) * shape_.context * shape_.data * shape_.pipeline;
  const long unit = shape_.nodes_per_su > 0 ? long(shape_.nodes_per_su) * shape_.gpus_per_node : 0;
  if (AllSpreadAlike(block, stride, domain) && AllSpreadAlike(block, stride, shape_.gpus_per_node)) {
    if (unit == 0 || AllSpreadAlike(block, stride, unit)) return slowest;
    // Only the scalable units differ (a unit of 72 nodes against blocks of
    // 2^k GPUs): the group spanning the most starts furthest into a unit.
    // Its starts j + o x block reach residues o x block mod unit onwards.
    const long extent = long(ranks - 1) * stride;
    const long blocks = std::min(std::max(1L, gpus / block), unit / std::gcd(block, unit));
    long furthest = 0, start = 0;
    for (long o = 0; o < blocks && furthest < unit - 1; ++o) {
      const long base = (o * block) % unit;
      const long reach = std::min(unit - 1, base + stride - 1);
      if (reach > furthest) {
        furthest = reach;
        start = o * block + (reach - base);
      }
    }
    if ((furthest + extent) / unit + 1 > slowest.scalable_units) slowest = Span(ranks, stride, start);
    return slowest;
  }
  // The groups start at j + o x block (j < stride). Their spread repeats with
  // the domain (a multiple of the node), so the starts up to one period of
  // the domain against the block are all there is to compare: at most
  // domain^2 of them, as stride is under the domain here (the units' spread
  // only among those: it decides less than the domains' and nodes').
  const long blocks = std::min(std::max(1L, gpus / block), domain / std::gcd(block, domain));
  for (long o = 0; o < blocks; ++o) {
    for (long j = 0; j < stride; ++j) {
      const GroupSpan g = Span(ranks, stride, o * block + j);
      if (SlownessKey(g) > SlownessKey(slowest)) slowest = g;
    }
  }
  return slowest;
}

GroupSpan RankLayout::Span(CommGroup group) const {
  const RankLayoutShape& s = shape_;
  switch (group) {
    case CommGroup::kTensor: return SlowestSpan(s.tensor, 1);
    case CommGroup::kContext: return SlowestSpan(s.context, s.tensor);
    case CommGroup::kData: return SlowestSpan(s.data * s.context, s.tensor);  // gradient replicas: DP x CP
    case CommGroup::kPipeline: return SlowestSpan(s.pipeline, s.tensor * s.context * s.data);
    case CommGroup::kShard: return SlowestSpan(shard_ranks(), s.tensor);
    case CommGroup::kShardReplica: return SlowestSpan(s.data * s.context / shard_ranks(), s.tensor * shard_ranks());
    case CommGroup::kExpert: return SlowestSpan(s.expert, s.expert_tensor);
    case CommGroup::kExpertTensor: return SlowestSpan(s.expert_tensor, 1);
    case CommGroup::kExpertData: return SlowestSpan(expert_data(), s.expert * s.expert_tensor);
    case CommGroup::kExpertShard:
      return SlowestSpan(std::max(1, expert_data() / std::max(1, s.data * s.context / shard_ranks())), s.expert * s.expert_tensor);
    case CommGroup::kStage: return SlowestSpan(s.tensor * s.context * s.data, 1);
  }
  return {};
}

}  // namespace trainsim
