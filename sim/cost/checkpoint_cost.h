// What a checkpoint costs the network and the storage: its size, which GPUs
// write a shard of it, and the aggregate rate at which they can write (or a
// restart read) it. One statement for the run model's closed form and the
// DES, which sends the same shards as flows.
#pragma once

#include "sim/core/scenario.h"

namespace trainsim {

// Bytes of one checkpoint: 16-bit weights only, or the full training state
// (16-bit weights, fp32 master weights, two fp32 Adam moments).
double CheckpointBytes(const Scenario& s);

// GPUs that each write a shard at the same time: every GPU when the
// distributed optimizer shards the full state over the data-parallel ranks;
// otherwise rank 0 of the gradient replicas (DP x CP: context-parallel ranks
// hold the same weights) of each TP x PP model shard.
int CheckpointWriterGpus(const Scenario& s);

// Nodes those writers sit on (at most every node).
int CheckpointWritingNodes(const Scenario& s);

// Aggregate write (or read) bandwidth to the storage: the slowest of the
// writers' NICs, the storage front-end links and the storage nodes' disks.
// 0 without storage.
double CheckpointWriteBytesPerS(const Scenario& s);
double CheckpointReadBytesPerS(const Scenario& s);

}  // namespace trainsim
