// Where each rank of a parallel job sits, in Megatron-Core's rank order:
// tensor fastest, then context, data, pipeline. The expert layers fold over
// the same GPUs of a pipeline stage as expert_tensor fastest, then expert,
// then expert-data (Megatron-Core's MoE parallel folding). Ranks fill GPUs in order; GPUs fill nodes, nodes fill
// NVLink domains (8 GPUs on HGX: the node; on GB200 NVL72 up to 18 trays of 4:
// as many as the job takes of each rack, Scenario::nvlink_domain_nodes),
// domains fill the fabric's scalable units. The one answer to "which links
// does this group cross", for the analytical collective model and the DES
// platform alike.
#pragma once

#include <algorithm>
#include <string>

namespace trainsim {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kSendRecv, kAllToAll };
// kShard: the gradient replicas one shard of sharded data-parallel state
// spans (consecutive ones); kShardReplica: the shard groups holding the same
// shard (HSDP's replicate dimension). Without HSDP kShard is kData.
// kExpert: the EP group the token all-to-all runs in; kExpertTensor: ETP;
// kExpertData: the ranks holding the same experts (their gradients' group);
// kExpertShard: those of them one shard of the experts' sharded state spans
// (ZeRO-2 / FSDP; kExpertData but for HSDP, whose replicas split it as they
// split kData, so the replicas of an expert shard are kShardReplica's members).
// kStage: every rank of one pipeline stage (TP x CP x DP; Megatron-Core's
// fp8 amax reduction group, get_amax_reduction_group(with_context_parallel)).
enum class CommGroup { kTensor, kContext, kData, kPipeline, kShard, kShardReplica, kExpert, kExpertTensor, kExpertData, kExpertShard, kStage };
std::string ToString(CollectiveKind k);
std::string ToString(CommGroup g);

// How the members of one group are spread. A group whose members split
// unevenly over domains (a rack boundary inside it) counts its fewest in one
// domain: those members carry the most over the NICs and pace the collective.
struct GroupSpan {
  int ranks = 1;             // members
  int stride = 1;            // GPUs between consecutive members
  int ranks_per_domain = 1;  // members sharing one NVLink domain (the fewest, where uneven)
  int domains = 1;           // NVLink domains the group spans
  int ranks_per_node = 1;    // members sharing one node (the fewest, where uneven)
  int nodes = 1;             // nodes the group spans
  int scalable_units = 1;    // fabric scalable units (leaf groups) the group spans
  bool on_nvlink() const { return domains == 1; }
};

struct RankLayoutShape {
  int tensor = 1, context = 1, data = 1, pipeline = 1;
  int shard = 0;  // gradient replicas per shard group; 0: all of them
  int expert = 1, expert_tensor = 1;
  int gpus_per_node = 8;
  int nvlink_domain_gpus = 8;  // GPUs of one NVLink domain the ranks fill before the next; a multiple of gpus_per_node
  int nodes_per_su = 0;        // 0: one scalable unit
};

class RankLayout {
 public:
  explicit RankLayout(const RankLayoutShape& shape) : shape_(shape) {}

  // The slowest group of kind `g` (data: the gradient replicas, DP x CP):
  // the one spread over the most NVLink domains with the fewest members in
  // one of them. Groups of a kind run their collectives together and the
  // step waits for the slowest; where the domains hold whole groups (or whole
  // blocks of them) every group is spread as the group of rank 0.
  GroupSpan Span(CommGroup g) const;
  // A group of `ranks` members `stride` GPUs apart, starting at GPU `first`.
  GroupSpan Span(int ranks, int stride, long first = 0) const;

  int NodeOfGpu(long gpu) const { return int(gpu / shape_.gpus_per_node); }
  int DomainOfGpu(long gpu) const { return int(gpu / shape_.nvlink_domain_gpus); }
  const RankLayoutShape& shape() const { return shape_; }
  int shard_ranks() const { return shape_.shard > 0 ? shape_.shard : shape_.data * shape_.context; }
  // The ranks holding the same experts (a stage's ranks over EP x ETP).
  int expert_data() const {
    return shape_.tensor * shape_.context * shape_.data / std::max(1, shape_.expert * shape_.expert_tensor);
  }

 private:
  // The slowest of the groups of `ranks` members `stride` apart that tile
  // blocks of ranks x stride GPUs, `stride` interleaved groups per block.
  GroupSpan SlowestSpan(int ranks, int stride) const;
  RankLayoutShape shape_;
};

}  // namespace trainsim
