// Writing a SimulationResult: the result object (JSON), CSV columns, a Chrome
// trace of its timeline and the human-readable summary.
#pragma once

#include <string>
#include <vector>

#include "sim/core/result.h"
#include "sim/core/result_fields.h"

namespace trainsim {

// The result object of design.md §3 (plus extra fields after the contract's):
// every field of the result-field table (sim/core/result_fields.h) in its
// order, nested at the dots of its key.
std::string ToJson(const SimulationResult& r, bool pretty = true);

// What is known of a run that cannot happen without simulating anything:
// its size and the fidelity asked for (design.md 3: "the fields it could fill").
struct UnsimulatedFacts {
  int gpus = 0;                                  // 0: unknown
  std::string fidelity;                          // empty: unknown
  double parameters = 0, active_parameters = 0;  // 0: unknown
};

// The result object of a run that cannot happen before anything is
// simulated (the scenario asks the GPU for a format it lacks, or does not
// read): ToJson's keys, all of them, null but the status fields and what
// `known` holds (gpus, fidelity, model), so a script reads one shape.
std::string ToJsonOfUnsimulated(const std::string& name, ErrorKind kind, const std::string& error,
                                const UnsimulatedFacts& known = {});

// The table's fields but the status ones (feasible, error_kind, error, which
// a sweep places itself), flattened with dots, for CSV columns; a value is
// empty where the JSON leaves its field out.
std::vector<std::string> FlatResultKeys();
std::vector<std::string> FlatResultValues(const SimulationResult& r);
// One field's CSV text: a number as the JSON writes it, true / false, the text.
std::string FlatResultValue(const ResultField& f, const SimulationResult& r);

// The DES records one steady step (a "steps" event spans it) and, when the
// run has checkpoints, the first checkpoint and the steps its write overlaps,
// far later in the run. Each part is shown on its own time origin.
enum class TracePart { kStep, kCheckpoint };

// The events of one part, times relative to its origin (the traced step's
// start; the first checkpoint event's). Step part: what overlaps the traced
// step, clipped to it (a clipped event gets the arg "clipped"); checkpoint
// part: what starts after it. Without a "steps" event everything is the step part.
std::vector<TimelineEvent> TimelinePart(const std::vector<TimelineEvent>& timeline, TracePart part);

// Per event, its lane on its track (0, 1, ...): slices of one lane never
// overlap, so two sends in flight at once are drawn one above the other.
std::vector<int> TimelineLanes(const std::vector<TimelineEvent>& events);

// Chrome trace JSON (Perfetto, chrome://tracing) of one part of r.timeline:
// a process per pipeline stage ("stage N", its compute/comm/dp/cp lanes as
// threads) plus "run" (steps) and "storage" (data, checkpoints), with
// process/thread names and sort indices; slices with `cat` and `args`;
// `ts`/`dur` in microseconds, fixed notation to the nanosecond, time 0 at
// the part's origin.
std::string ToChromeTrace(const SimulationResult& r, TracePart part = TracePart::kStep);

// Human-readable summary printed by `trainsim run`.
std::string ToSummary(const SimulationResult& r);

}  // namespace trainsim
