#include "sim/core/rank_layout.h"

#include <algorithm>

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
    case CommGroup::kStage: return "stage";
  }
  return "?";
}

GroupSpan RankLayout::Span(int ranks, int stride) const {
  GroupSpan g;
  g.ranks = std::max(1, ranks);
  g.stride = std::max(1, stride);
  // Members per container: a container of C GPUs holds C / stride members
  // (at least one, at most the group) when members are `stride` apart.
  auto per = [&](long container_gpus) { return int(std::clamp<long>(container_gpus / g.stride, 1, g.ranks)); };
  auto count = [&](int per_container) { return (g.ranks + per_container - 1) / per_container; };
  g.ranks_per_node = per(shape_.gpus_per_node);
  g.nodes = count(g.ranks_per_node);
  g.ranks_per_domain = per(std::max(shape_.nvlink_domain_gpus, shape_.gpus_per_node));
  g.domains = count(g.ranks_per_domain);
  if (shape_.nodes_per_su > 0) {
    const long last_gpu = long(g.ranks - 1) * g.stride;
    const long su_gpus = long(shape_.nodes_per_su) * shape_.gpus_per_node;
    g.scalable_units = int(last_gpu / su_gpus) + 1;
  }
  return g;
}

GroupSpan RankLayout::Span(CommGroup group) const {
  const RankLayoutShape& s = shape_;
  switch (group) {
    case CommGroup::kTensor: return Span(s.tensor, 1);
    case CommGroup::kContext: return Span(s.context, s.tensor);
    case CommGroup::kData: return Span(s.data * s.context, s.tensor);  // gradient replicas: DP x CP
    case CommGroup::kPipeline: return Span(s.pipeline, s.tensor * s.context * s.data);
    case CommGroup::kShard: return Span(shard_ranks(), s.tensor);
    case CommGroup::kShardReplica: return Span(s.data * s.context / shard_ranks(), s.tensor * shard_ranks());
    case CommGroup::kExpert: return Span(s.expert, s.expert_tensor);
    case CommGroup::kExpertTensor: return Span(s.expert_tensor, 1);
    case CommGroup::kExpertData:
      return Span(s.tensor * s.context * s.data / std::max(1, s.expert * s.expert_tensor), s.expert * s.expert_tensor);
    case CommGroup::kStage: return Span(s.tensor * s.context * s.data, 1);
  }
  return {};
}

}  // namespace trainsim
