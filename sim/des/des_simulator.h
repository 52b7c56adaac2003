// The discrete-event simulation (--fidelity des) on SimGrid.
//
// One actor per pipeline stage runs the stage's real schedule (1F1B or
// interleaved 1F1B, pipeline_schedule.h) micro batch by micro batch: an Exec
// per forward/backward pass, lasting the per-micro-batch time of
// ComputeStepCosts (TP collectives folded in, as the analytical path does),
// activations and gradients sent to the neighbouring stage as flows, CP K/V
// exchanges as flows beside each pass, DP gradient reduce-scatter/all-reduce
// started under the last backward pass and the parameter all-gather under the
// first forward pass, each decomposed into the ring flows it sends over NVLink
// and over the NICs. A controller actor drives the steps: it prefetches each
// step's tokens from the storage nodes (a late read is a data stall), and
// writes checkpoints from every GPU (each saves its slice: fully parallel
// save) through its NICs to the storage nodes, synchronously or
// asynchronously (a device-to-host copy stalls, then the write overlaps the
// following steps and contends with their traffic).
//
// The whole run is simulated: steps during which nothing but training runs
// repeat the measured steady-state step (their time is added by a sleep);
// step 0, checkpoints and the steps an asynchronous write overlaps are
// simulated flow by flow; a step that starts from a state an earlier one
// started from is taken as its double (step 1 after step 0, or, the storage
// slower than the step, step 2 after step 1, the loader then in lock step;
// overlapped steps in a periodic regime, whose write flows are carried over with their
// measured per-step progress, whole checkpoint cycles).
// Data-parallel replicas are folded (des_platform.h).
#pragma once

#include <optional>
#include <string>
#include <atomic>
#include <functional>

#include "sim/core/scenario.h"
#include "sim/cost/step_costs.h"

namespace trainsim {

/// What one DES run did, for benchmarks and tests.
struct DesStats {
  int simulated_steps = 0;
  int repeated_steps = 0;  // steps taken as the steady-state step
  int stage_actors = 0;
  int flows = 0;
  double run_time_s = 0;   // simulated wall time of the whole run (steps + checkpoint stalls)
  bool canceled = false;   // stopped by DesControl::cancel before the last step
};

/// Watching and stopping a DES run from outside (progress bars, Cancel).
struct DesControl {
  // Called from the simulation's controller after each step it accounts for
  // (simulated or repeated): steps done of the run's steps. May be empty.
  std::function<void(int steps_done, int steps_total)> progress;
  // When it becomes true the run stops at the next step boundary. May be null.
  const std::atomic<bool>* cancel = nullptr;
};

// The work the DES takes on is bounded so that its time and memory are
// (under a GiB, design.md 4): pipeline passes of one step (pipeline ranks x
// chunks x micro batches x forward and backward), and flows of one storage
// transfer (one per simulated endpoint: at most pipeline ranks x tensor
// ranks). A traced run keeps an event per pass and flow of every simulated
// step (a few KiB a pass; with async checkpoints three steps), so it takes on
// fewer passes. nullopt: within bounds;
// else why the DES refuses it (the analytical path still runs it).
constexpr long kDesMaxPassesPerStep = 1L << 20;
constexpr long kDesMaxTracedPassesPerStep = 1L << 16;
constexpr long kDesMaxFlowsPerTransfer = 1L << 16;
std::optional<std::string> DesRefusal(const Scenario& s, bool traced = false);

// The step time and breakdown of the steady step, and the checkpoints'
// write and stall times as simulated over the whole run. Never throws.
StepTiming SimulateDes(const Scenario& s, const StepCosts& costs, bool record_timeline, DesStats* stats = nullptr,
                       const DesControl* control = nullptr);

}  // namespace trainsim
