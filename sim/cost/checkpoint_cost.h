// What the storage traffic costs the network and the storage: a checkpoint's
// size, which GPUs write a shard of it, and the aggregate rate at which they
// can write (or a restart read) it; and each step's training tokens, which
// the first pipeline stage reads. One statement for the closed forms and the
// DES, which sends the same bytes as flows.
#pragma once

#include "sim/core/scenario.h"

namespace trainsim {

// Bytes of one checkpoint: 16-bit weights only, or the full training state
// (16-bit weights, fp32 master weights, two fp32 Adam moments).
double CheckpointBytes(const Scenario& s);

// Bytes a restart after a failure reads back: the last checkpoint, and under
// LoRA the frozen 16-bit base it adapts too (the processes that held it are gone).
// A run that writes no checkpoint restarts from its start: a fine-tuning run
// reads its 16-bit base model again, a pre-training run from scratch nothing.
double RestoreBytes(const Scenario& s, bool checkpointed = true);

// GPUs that each copy to host memory and write a distinct part of the
// checkpoint at the same time: every GPU. Megatron-Core's distributed
// checkpoint saves fully in parallel (ckpt_fully_parallel_save, on by
// default; NeMo's ckpt_parallel_save): what the data-parallel (and
// context-parallel) replicas of a TP x PP model shard hold alike, the
// weights and a replicated optimizer's state, is split among them, each
// saving its own slice; the distributed optimizer's state is sharded over
// them already. PyTorch DCP (torchtitan) spreads duplicated tensors over
// their holders likewise. So each GPU moves checkpoint bytes / GPUs.
int CheckpointWriterGpus(const Scenario& s);

// Nodes those writers sit on (at most every node).
int CheckpointWritingNodes(const Scenario& s);

// Aggregate write (or read) bandwidth to the storage: the slowest of the
// writers' nodes (their NICs, and their host paths, which a save crosses
// staging through host memory: never faster than an async save's copy), the
// storage front-end links and the storage nodes' disks. 0 without storage.
double CheckpointWriteBytesPerS(const Scenario& s);
double CheckpointReadBytesPerS(const Scenario& s);

// An async checkpoint's stall: each writer GPU's share of `checkpoint_bytes`
// (CheckpointWriterGpus) copied to host memory, a node's GPUs at once over
// its host path.
double AsyncCopySeconds(const Scenario& s, double checkpoint_bytes);

// Seconds to read one step's tokens (global batch x seq_len x
// data.bytes_per_token) from the storage: its latency, then the slowest of
// the readers' nodes (the first pipeline stage's GPUs, which feed the model)
// and the storage front ends and disks. The next step's tokens are read
// during this one, so only what exceeds the step is a stall. 0 without storage.
double DataReadSeconds(const Scenario& s);

}  // namespace trainsim
