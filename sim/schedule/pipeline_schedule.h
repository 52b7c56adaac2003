// The order in which one pipeline rank runs its forward and backward passes in
// one step: Megatron-LM's 1F1B (virtual_stages == 1) and interleaved 1F1B
// (virtual_stages > 1, model chunks assigned round-robin to the ranks). Pure:
// the DES actors (des_simulator.h) execute this order, waiting for the
// activations and gradients the neighbouring ranks send them.
#pragma once

#include <vector>

namespace trainsim {

/// One pass of one micro batch through one model chunk of a pipeline rank.
struct PipelineOp {
  bool forward = true;
  int microbatch = 0;
  int chunk = 0;  // model chunk of this rank, 0..virtual_stages-1
};

// Position of (rank, chunk) in the whole pipeline: chunk * ranks + rank.
inline int VirtualStage(int ranks, int rank, int chunk) { return chunk * ranks + rank; }

// The ops of `rank` (0..ranks-1) for `microbatches` micro batches: warm-up
// forwards, the one-forward-one-backward steady phase, cool-down backwards.
// With interleaving, Megatron walks micro batches in groups of `ranks`; when
// `microbatches` is not a multiple of `ranks` the missing ones are skipped, so
// every (microbatch, chunk) appears exactly once forward and once backward.
std::vector<PipelineOp> StageSchedule(int ranks, int rank, int microbatches, int virtual_stages);
// The same into `out` (cleared first), reusing its storage (the closed
// form's fill and drain walks the order for each configuration it costs).
void StageScheduleInto(int ranks, int rank, int microbatches, int virtual_stages, std::vector<PipelineOp>& out);

// The i-th op (0 <= i < 2 x microbatches) of `rank`'s order without
// interleaving, StageSchedule(ranks, rank, microbatches, 1)[i]: warm-up
// forwards, one forward one backward, cool-down backwards (the closed
// form's fill and drain takes it one op at a time).
inline PipelineOp OneFOneBOp(int ranks, int rank, int microbatches, int i) {
  const int warmup = ranks - rank - 1 < microbatches ? ranks - rank - 1 : microbatches;
  const int steady_end = warmup + 2 * (microbatches - warmup);
  if (i < warmup) return {true, i, 0};
  if (i < steady_end) {
    const bool forward = (i - warmup) % 2 == 0;
    return {forward, forward ? warmup + (i - warmup) / 2 : (i - warmup) / 2, 0};
  }
  return {false, microbatches - warmup + (i - steady_end), 0};
}

}  // namespace trainsim
