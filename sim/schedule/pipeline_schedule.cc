#include "sim/schedule/pipeline_schedule.h"

#include <algorithm>

namespace trainsim {

namespace {

// The k-th forward (or backward) of the interleaved order, as Megatron's
// get_model_chunk_id / microbatch id computes it; -1 microbatch when padded.
PipelineOp NthOp(int k, bool forward, int ranks, int microbatches, int v) {
  const int group = ranks * v;
  const int in_group = k % group;
  PipelineOp op;
  op.forward = forward;
  op.chunk = in_group / ranks;
  if (!forward) op.chunk = v - 1 - op.chunk;
  op.microbatch = (k / group) * ranks + in_group % ranks;
  if (op.microbatch >= microbatches) op.microbatch = -1;
  return op;
}

}  // namespace

std::vector<PipelineOp> StageSchedule(int ranks, int rank, int microbatches, int virtual_stages) {
  const int v = std::max(1, virtual_stages);
  const int m = std::max(0, microbatches);
  std::vector<PipelineOp> out;
  if (v == 1) {
    // Warm-up forwards, one forward one backward, cool-down backwards.
    for (int i = 0; i < 2 * m; ++i) out.push_back(OneFOneBOp(ranks, rank, m, i));
    return out;
  }
  // Interleaved: the order runs over micro batches padded to a multiple of
  // `ranks`; padded slots are dropped (consistently on every rank).
  const int padded = (m + ranks - 1) / ranks * ranks;
  const int total = padded * v;
  const int warmup = std::min(total, (ranks - rank - 1) * 2 + (v - 1) * ranks);
  std::vector<PipelineOp> seq;
  int f = 0, b = 0;
  for (; f < warmup; ++f) seq.push_back(NthOp(f, true, ranks, m, v));
  while (f < total) {
    seq.push_back(NthOp(f++, true, ranks, m, v));
    seq.push_back(NthOp(b++, false, ranks, m, v));
  }
  while (b < total) seq.push_back(NthOp(b++, false, ranks, m, v));
  for (const auto& op : seq) {
    if (op.microbatch >= 0) out.push_back(op);
  }
  return out;
}

}  // namespace trainsim
