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
  std::vector<PipelineOp> out;
  StageScheduleInto(ranks, rank, microbatches, virtual_stages, out);
  return out;
}

void StageScheduleInto(int ranks, int rank, int microbatches, int virtual_stages, std::vector<PipelineOp>& out) {
  const int v = std::max(1, virtual_stages);
  const int m = std::max(0, microbatches);
  out.clear();
  if (v == 1) {
    // Warm-up forwards, one forward one backward, cool-down backwards.
    for (int i = 0; i < 2 * m; ++i) out.push_back(OneFOneBOp(ranks, rank, m, i));
    return;
  }
  // Interleaved: the order runs over micro batches padded to a multiple of
  // `ranks`; padded slots are dropped (consistently on every rank).
  const int padded = (m + ranks - 1) / ranks * ranks;
  const int total = padded * v;
  const int warmup = std::min(total, (ranks - rank - 1) * 2 + (v - 1) * ranks);
  const auto keep = [&](const PipelineOp& op) {
    if (op.microbatch >= 0) out.push_back(op);
  };
  int f = 0, b = 0;
  for (; f < warmup; ++f) keep(NthOp(f, true, ranks, m, v));
  while (f < total) {
    keep(NthOp(f++, true, ranks, m, v));
    keep(NthOp(b++, false, ranks, m, v));
  }
  while (b < total) keep(NthOp(b++, false, ranks, m, v));
}

}  // namespace trainsim
