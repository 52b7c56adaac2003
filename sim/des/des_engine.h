// Runs a function inside a fresh SimGrid engine, one at a time per process.
//
// SimGrid's Engine is a process-wide singleton. Creating one, running it and
// destroying it again works in SimGrid 3.32, but two engines cannot coexist
// and the simulated clock is not reset by the destructor; so every DES run
// takes a process-wide lock (sweeps and the GUI may call Simulate from several
// threads: DES runs then queue, analytical runs do not) and resets the clock
// to 0 afterwards, so that the same input gives bit-identical times however
// many simulations ran before it in the process. It also leaves SimGrid's
// static signals as it found them: 3.32 connects callbacks to some with each
// engine and never disconnects them, so without that each simulation would run
// every earlier engine's callbacks on each of its activities (a process's 24th
// `plan` took 1.7 times the CPU of its first).
#pragma once

#include <functional>

namespace trainsim {

// Creates the engine (logging silenced, the CM02 network model without
// TCP/bandwidth correction factors or cross traffic, so a lone flow takes
// exactly bytes / bandwidth), calls build() to create the platform and the
// actors, runs the simulation to its end. Returns the simulated end time.
double RunInFreshEngine(const std::function<void()>& build);

// Callbacks connected to the SimGrid static signals that RunInFreshEngine
// restores (a diagnostic: it stays the same from one engine to the next).
long SimgridSignalSlots();

}  // namespace trainsim
