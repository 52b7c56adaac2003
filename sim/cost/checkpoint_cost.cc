#include "sim/cost/checkpoint_cost.h"

#include <algorithm>

#include "models/workload.h"
#include "sim/cost/collective_model.h"

namespace trainsim {

double CheckpointBytes(const Scenario& s) {
  // A LoRA run saves its adapters (NeMo's PEFT checkpoints): the frozen base is the model it started from.
  // A full one saves every trained weight, the MTP modules' too (which the
  // published parameter counts leave out: DeepSeek-V3's 671B is 685B with its module).
  const double params = s.training.finetune.lora() ? LoraParameters(s.model, s.training.finetune)
                                                   : s.model.TotalParameters(s.training.seq_len) + s.model.MtpParameters();
  return params * (s.checkpoint.contents == CheckpointContents::kWeights ? 2.0 : 14.0);
}

double RestoreBytes(const Scenario& s, bool checkpointed) {
  const double model_bytes = 2.0 * (s.model.TotalParameters(s.training.seq_len) + s.model.MtpParameters());
  if (!checkpointed) return s.training.finetune.method != FinetuneMethod::kNone ? model_bytes : 0.0;
  return CheckpointBytes(s) + (s.training.finetune.lora() ? model_bytes : 0.0);
}

int CheckpointWriterGpus(const Scenario& s) {
  // Fully parallel save (checkpoint_cost.h): the replicas of each model
  // shard split what they hold alike, whatever the contents and optimizer.
  return s.gpus();
}

// Every GPU writes (CheckpointWriterGpus), so every node does.
int CheckpointWritingNodes(const Scenario& s) { return s.nodes; }

namespace {

// What one compute node moves to or from storage: its NICs' line rate, and
// the host path every byte crosses between the GPUs' memory and the NICs
// (a save stages through host memory; an async one's stall is that copy), so
// a sync write is never faster than the async copy that would hide it.
double NodeStorageBytesPerS(const Scenario& s) { return std::min(s.node.nics_per_node * NicLineBytesPerS(s), s.node.pcie_bytes_per_s); }

double StorageBound(const Scenario& s, double per_node_disk) {
  const StorageProfile& st = *s.storage;
  const double front = s.storage_nodes * st.front_end_links_per_node * st.front_end_link_bytes_per_s;
  return std::min(front, s.storage_nodes * per_node_disk);
}

}  // namespace

double CheckpointWriteBytesPerS(const Scenario& s) {
  if (!s.storage) return 0;
  const double nodes = double(CheckpointWritingNodes(s)) * NodeStorageBytesPerS(s);
  return std::min(nodes, StorageBound(s, s.storage->write_bytes_per_s_per_node));
}

double CheckpointReadBytesPerS(const Scenario& s) {
  if (!s.storage) return 0;
  const double nodes = double(s.nodes) * NodeStorageBytesPerS(s);
  return std::min(nodes, StorageBound(s, s.storage->read_bytes_per_s_per_node));
}

double DataReadSeconds(const Scenario& s) {
  if (!s.storage) return 0;
  const double bytes = double(s.training.global_batch) * s.training.seq_len * s.data.bytes_per_token;
  const double reader_gpus = double(s.gpus()) / std::max(1, s.parallelism.pipeline);
  const double nodes = reader_gpus / s.node.gpus_per_node * NodeStorageBytesPerS(s);
  const double rate = std::min(nodes, StorageBound(s, s.storage->read_bytes_per_s_per_node));
  return rate > 0 ? s.storage->latency_s + bytes / rate : 0;
}

double AsyncCopySeconds(const Scenario& s, double checkpoint_bytes) {
  return checkpoint_bytes / CheckpointWriterGpus(s) / s.node.host_copy_bytes_per_s_per_gpu();
}

}  // namespace trainsim
