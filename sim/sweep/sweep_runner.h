// Runs the points of a sweep (sweep_spec.h) and appends one row per point to
// a results file, in the points' order whatever order they finish in (so the
// file is the same under any -j or number of MPI ranks): CSV (columns: the axis keys, `feasible`,
// FlatResultKeys(), then `error_kind` and `error`) or JSON lines (.json/.jsonl: one object
// {"settings", "feasible", "error", "result"} per line). Infeasible points keep their row
// with the reason in `error`. Rows are written with write(2) as they are ready,
// a batch (up to 256 rows, or what is there every 20 ms) per call, and
// fsync'd every few thousand rows or seconds; a resumed run drops a torn last line, skips the
// points whose settings already have a row and appends the rest, so an
// interrupted sweep plus its resume has exactly the rows of an uninterrupted
// one, line for line. `jobs` threads compute points; under `mpirun` (when built with MPI) the
// points are spread round-robin over the ranks and rank 0 writes the file.
// An interrupted sweep's file is a prefix of its points' rows; rows finished
// past the first point not finished are computed again by --resume.
//
// Integrity: the writer holds an exclusive flock(2) on the results file for
// the whole sweep, so a second sweep (or resume) on the same file stops with
// the reason instead of interleaving rows. A run that neither resumes nor
// overwrites refuses a file that holds finished rows (checked under the lock). Beside the file, FILE.fingerprint
// records what produced its rows (the base scenario, the axes, zips and
// filters, the fidelity, the trainsim version, the bundled data and the
// files the scenario reads by path: SweepSpec::input_files); --resume
// refuses to add rows when any of them differ, and then changes nothing in
// the file (a torn last row is cut off only once every check has passed). A failed write (disk full) stops the sweep as an
// interruption: the rows written stay valid and --resume continues.
//
// CSV columns: the axis keys, `feasible` (the run can happen: it parsed, fits
// and simulated), the result fields, `error_kind` (ToString(ErrorKind), empty
// when it ran), `error`. Time, rate, energy and cost
// fields are empty where the run cannot happen, so sorting by cost never picks
// a configuration that does not fit.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/run/simulate.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/io/result_writer.h"

namespace trainsim {

enum class SweepFormat { kCsv, kJsonLines };

// .json and .jsonl, in any case, mean JSON lines; anything else CSV.
SweepFormat SweepFormatForPath(const std::string& path);

// What a row says about its point: it ran; it needs more GPU memory; its
// settings are invalid (divisibility, values); it cannot run for another
// reason its error says (failures outrun the checkpoints, a number format the
// GPU lacks, beyond the DES's bounds); or trainsim failed on it (a bug).
// kOkAnalytical: a point of a DES sweep that the DES refused (more passes
// or flows than it takes on) and that ran in closed form instead.
enum class SweepOutcome { kOk, kMemory, kInvalid, kCannotRun, kInternal, kOkAnalytical };

struct SweepProgress {
  size_t done = 0;     // rows written by this run
  size_t total = 0;    // rows this run will write (points minus those resumed)
  size_t resumed = 0;  // rows already in the file
  double elapsed_s = 0;
};

struct SweepRunOptions {
  std::string output_path;
  int jobs = 1;
  bool resume = false;  // keep the rows already in the file and run the missing points
  // Without resume: a file that holds rows is refused (bad input) unless
  // this is set, when it is emptied and written again.
  bool overwrite = false;
  Fidelity fidelity = Fidelity::kAnalytical;
  // fsync after this many rows or seconds, and at the end: only a power loss
  // loses rows that were written, and --resume computes them again.
  size_t fsync_every_rows = 8192;
  double fsync_every_s = 2.0;
  // Stop after this many new rows (as if killed there); for tests of resume.
  size_t max_new_rows = std::numeric_limits<size_t>::max();
  // Set (e.g. by a SIGINT handler) to stop handing out points; rows in flight are still written.
  const std::atomic<bool>* stop = nullptr;
  // Called on the writing rank after each row.
  std::function<void(const SweepProgress&)> progress;
  bool allow_mpi = true;  // spread points over MPI ranks when launched by mpirun
  // Tests: starting the thread after this many fails as if the system refused it.
  int thread_limit_for_tests = std::numeric_limits<int>::max();
};

struct SweepSummary {
  size_t points = 0;   // in the sweep
  size_t resumed = 0;  // rows kept from an earlier run
  size_t written = 0;  // rows written by this run (all ranks)
  size_t ok = 0, memory = 0, invalid = 0, cannot_run = 0, internal = 0;  // of the rows written, by SweepOutcome
  size_t analytical = 0;  // of the ok ones, those the DES refused and the closed form ran (kOkAnalytical)
  bool interrupted = false;  // stopped before every point had a row
  // Why the sweep stopped early without bad input: the results file is locked
  // by another sweep, or a write failed (disk full). Empty otherwise.
  // Or no worker thread could be started.
  std::string failure;
  bool locked = false;  // the failure is another sweep's lock: nothing was read or written
  int ranks = 1;
  bool writer = true;  // this process wrote the file (MPI rank 0, or no MPI)
  double wall_s = 0;
};

// Column names of the CSV.
std::vector<std::string> SweepColumns(const SweepSpec& spec);

// The fingerprint file kept beside a results file.
std::string SweepFingerprintPath(const std::string& output_path);
// Its text for this sweep at this fidelity: YAML, one `key: value` per
// component (hashes for the base and the axes), with a comment saying why.
std::string SweepFingerprint(const SweepSpec& spec, Fidelity fidelity);


// Simulates one point; `fields` gets the axis values, result values and error.
SweepOutcome RunSweepPoint(const SweepSpec& spec, const SweepPoint& p, Fidelity fidelity,
                           std::vector<std::string>& fields, std::string* json_line = nullptr);

// Runs the sweep. Errors (bad input): the results file cannot be opened or
// read, holds rows while neither resume nor overwrite is set, or is a
// --resume file whose columns or fingerprint are not this sweep's.
// A locked file or a failed write is a summary with `failure` set. Never throws.
Expected<SweepSummary> RunSweep(const SweepSpec& spec, const SweepRunOptions& options);

// The MPI rank and size this process would use (0 and 1 without mpirun).
int SweepMpiRank();

}  // namespace trainsim
