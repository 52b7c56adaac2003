// trainsim sweep SWEEP.yaml -o RESULTS.csv [--jobs N] [--resume] [--fidelity analytical|des]
// Front end of sim/sweep_runner.h: flags, progress display, Ctrl-C, summary.
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/core/text_format.h"
#include "sim/io/data_paths.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_spec.h"

namespace trainsim::cli {

namespace {
const char* kSweepHelp =
    "usage: trainsim sweep SWEEP.yaml -o RESULTS.csv [options]\n"
    "Simulate every point of a sweep file (a base scenario plus axes, zip groups and filters)\n"
    "and append one row per point as it finishes: its settings, the result fields and, for a\n"
    "point that cannot run (memory, divisibility), the reason in the error column.\n"
    "  -o, --output FILE      results: CSV, or JSON lines when FILE ends in .json or .jsonl\n"
    "  -j, --jobs N           threads (default 1; 0 = one per core; at most 1024, and at most one\n"
    "                         per point). The DES runs one point at a time per process: spread a\n"
    "                         DES sweep over processes with mpirun instead\n"
    "  --resume               keep the rows already in FILE and run only the missing points\n"
    "  --overwrite            start FILE again, dropping the rows it holds (without --resume or\n"
    "                         this, a FILE that holds rows is refused, exit 2: they are kept)\n"
    "  --fidelity F           analytical (default) or des\n"
    "  -q, --quiet            no progress display\n"
    "  -h, --help             this help\n"
    "Under `mpirun -n K trainsim sweep ...` the points are spread over the ranks; rank 0 writes FILE.\n"
    "Another sweep writing FILE holds a lock on it; FILE.fingerprint records what produced the\n"
    "rows (base scenario, axes, fidelity, version, the bundled profiles and the files the scenario\n"
    "reads by path, e.g. a model file) and --resume refuses, leaving FILE as it was, a file it does\n"
    "not match.\n"
    "exit status: 0 every point has a row (infeasible points included), 1 interrupted\n"
    "(rerun with --resume; also a full disk) or FILE locked by another sweep, 2 bad input\n";

// The most --jobs: far more threads than any machine has cores only costs
// memory (a stack each), and tens of thousands make thread creation fail.
constexpr int kMaxJobs = 1024;

// Ctrl-C (SIGINT) and SIGTERM stop handing out points; the rows in flight
// are still written, so --resume continues exactly. The signals are blocked in
// every thread and taken by a waiting thread (sigwait), because the DES's
// engine installs its own SIGINT handler that would exit at once. A second
// Ctrl-C quits at once (the rows written so far are kept). A SIGTERM after a
// SIGINT is the same request, not a second one: mpirun passes a Ctrl-C on to
// its ranks as SIGTERM, and quitting then lost rank 0's summary and its
// --resume hint. Only rank 0 (the one that writes) says it is stopping.
// A hang-up (the ssh session that started it dropped) stops it the same way.
class InterruptWatcher {
 public:
  explicit InterruptWatcher(std::atomic<bool>& stop, std::ostream& err, bool speak) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGHUP);
    sigaddset(&set_, SIGUSR1);  // "the sweep is over"
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    thread_ = std::thread([this, &stop, &err, speak] {
      int first = 0;  // the signal that asked to stop
      while (true) {
        int sig = 0;
        if (sigwait(&set_, &sig) != 0 || sig == SIGUSR1) return;
        if (first != 0) {
          if (first == SIGINT && sig == SIGTERM) continue;  // mpirun forwarding the same Ctrl-C
          std::_Exit(130);
        }
        first = sig;
        stop.store(true);
        if (speak) err << "\ntrainsim sweep: stopping after the points in flight (Ctrl-C again to quit now)\n" << std::flush;
      }
    });
  }
  ~InterruptWatcher() {
    pthread_kill(thread_.native_handle(), SIGUSR1);
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t set_, old_;
  std::thread thread_;
};

std::string Eta(double s) {
  if (s < 100) return Fmt("%.0f s", s);
  if (s < 6000) return Fmt("%.1f min", s / 60);
  return Fmt("%.1f h", s / 3600);
}

}  // namespace

int SweepCommand(const Args& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a;
  const std::string perr = Parse(args,
                                 {{"--output", true, "-o"}, {"--jobs", true, "-j"}, {"--resume"}, {"--overwrite"}, {"--fidelity", true},
                                  {"--quiet", false, "-q"}, {"--help", false, "-h"}},
                                 a);
  if (a.Has("--help")) {
    out << kSweepHelp;
    return kExitOk;
  }
  // A progress display or summary piped into a reader that quit (| head)
  // is a write that fails, not the end of the sweep and its rows in flight.
  std::signal(SIGPIPE, SIG_IGN);
  const bool root = SweepMpiRank() == 0;
  if (!perr.empty() || a.positional.size() != 1 || !a.Value("--output")) {
    if (root) err << "trainsim sweep: " << (!perr.empty() ? perr : a.positional.size() != 1 ? "expected one sweep file" : "-o RESULTS.csv is required") << "\n";
    return kExitBadInput;
  }
  SweepRunOptions opt;
  opt.output_path = *a.Value("--output");
  if (opt.output_path.empty()) {
    if (root) err << "trainsim sweep: -o: an empty path; name the results file\n";
    return kExitBadInput;
  }
  // A pipe would block the sweep in open() until a reader came, deaf to Ctrl-C.
  for (const std::string& path : {opt.output_path, SweepFingerprintPath(opt.output_path)}) {
    if (std::string e = NotAFileToWrite(path, OutputWrite::kInPlace); !e.empty()) {
      if (root) err << "trainsim sweep: -o: " << e << "\n";
      return kExitBadInput;
    }
  }
  opt.resume = a.Has("--resume");
  opt.overwrite = a.Has("--overwrite");
  if (opt.resume && a.Has("--overwrite")) {
    if (root) err << "trainsim sweep: --resume keeps FILE's rows and --overwrite drops them: give one\n";
    return kExitBadInput;
  }
  if (auto j = a.Value("--jobs")) {
    try {
      size_t used = 0;
      opt.jobs = std::stoi(*j, &used);
      if (used != j->size() || opt.jobs < 0) throw std::invalid_argument(*j);
    } catch (const std::exception&) {
      if (root) err << "trainsim sweep: --jobs: '" << *j << "' is not a number of threads\n";
      return kExitBadInput;
    }
    if (opt.jobs > kMaxJobs) {
      if (root) err << "trainsim sweep: --jobs: at most " << kMaxJobs << " threads (got " << *j << "); 0 gives one per core\n";
      return kExitBadInput;
    }
    if (opt.jobs == 0) opt.jobs = int(std::clamp(std::thread::hardware_concurrency(), 1u, unsigned(kMaxJobs)));
  }
  if (const std::string ferr = FidelityFlag(a, &opt.fidelity); !ferr.empty()) {
    if (root) err << "trainsim sweep: " << ferr << "\n";
    return kExitBadInput;
  }
  // Watched from here: reading a sweep checks every axis value against the
  // base, which takes seconds for a long one, and Ctrl-C must work then too.
  std::atomic<bool> stop{false};
  opt.stop = &stop;
  std::optional<InterruptWatcher> watcher(std::in_place, stop, err, root);
  Expected<SweepSpec> spec = LoadSweepSpec(a.positional[0]);
  if (stop.load()) {
    if (root) err << "trainsim sweep: interrupted while reading the sweep file; nothing was written\n";
    return kExitSimulationFailed;
  }
  if (!spec) {
    if (root) err << spec.error().ToString() << "\n";
    return kExitBadInput;
  }
  {
    // The results file must not be an input: a slip in a script would replace it with rows.
    // Nor another sweep's fingerprint, which its --resume reads.
    std::error_code ec;
    std::vector<std::string> inputs = {spec->file, spec->base_inline ? std::string() : spec->base_file};
    inputs.insert(inputs.end(), spec->input_files.begin(), spec->input_files.end());
    for (const std::string& input : inputs) {
      if (!input.empty() && std::filesystem::equivalent(opt.output_path, input, ec)) {
        if (root) {
          err << "trainsim sweep: -o: '" << opt.output_path << "' is "
              << (input == spec->file ? "the sweep file itself" : input == spec->base_file ? "its base scenario" : "a file its points read (" + input + ")")
              << "; write the results to another file\n";
        }
        return kExitBadInput;
      }
    }
    // Nor bundled data the points read by name (a profile, a catalogue model).
    const auto inside = [&](const std::string& dir) {
      const std::string data = std::filesystem::weakly_canonical(std::filesystem::path(DataDir()) / dir, ec).string() + "/";
      return std::filesystem::weakly_canonical(opt.output_path, ec).string().rfind(data, 0) == 0;
    };
    if (inside("hardware-profiles") || inside("models")) {
      if (root) err << "trainsim sweep: -o: '" << opt.output_path << "' is inside the bundled data the points read (" << DataDir() << "); write the results elsewhere\n";
      return kExitBadInput;
    }
    if (std::filesystem::path(opt.output_path).extension() == ".fingerprint") {
      if (root) err << "trainsim sweep: -o: '" << opt.output_path << "' is named as a results file's fingerprint; write the results to a .csv or .jsonl file\n";
      return kExitBadInput;
    }
  }
  // More threads than points would only wait.
  opt.jobs = int(std::min<size_t>(size_t(std::max(1, opt.jobs)), spec->points.size()));
  if (root) {
    for (const auto& w : spec->warnings) err << "trainsim sweep: " << w << "\n";
  }

  // Progress: a redrawn bar on a terminal, a plain line every 10% (or 30 s) otherwise.
  const bool tty = &err == &std::cerr && ::isatty(STDERR_FILENO);
  double last_draw = -1;
  int last_decile = 0;
  if (!a.Has("--quiet")) {
    opt.progress = [&](const SweepProgress& p) {
      const double rate = p.elapsed_s > 0 ? p.done / p.elapsed_s : 0;
      const double eta = rate > 0 ? (p.total - p.done) / rate : 0;
      const double frac = p.total ? double(p.done) / p.total : 1;
      if (tty) {
        if (p.elapsed_s - last_draw < 0.1 && p.done != p.total) return;
        last_draw = p.elapsed_s;
        const int width = 30, filled = int(frac * width);
        err << "\r[" << std::string(size_t(filled), '#') << std::string(size_t(width - filled), '.') << "] " << p.done << "/"
            << p.total << Fmt(" %.0f points/s", rate) << " ETA " << Eta(eta) << "   " << (p.done == p.total ? "\n" : "")
            << std::flush;
      } else {
        const int decile = int(frac * 10);
        if (decile == last_decile && p.elapsed_s - last_draw < 30 && p.done != p.total) return;
        last_decile = decile;
        last_draw = p.elapsed_s;
        err << "sweep: " << p.done << "/" << p.total << " points" << Fmt(" (%.0f%%)", 100 * frac) << Fmt(", %.1f points/s", rate)
            << ", ETA " << Eta(eta) << "\n";
      }
    };
  }
  Expected<SweepSummary> r = RunSweep(*spec, opt);
  watcher.reset();
  if (!r) {
    if (root) err << r.error().ToString() << "\n";
    return kExitBadInput;
  }
  const SweepSummary& s = *r;
  if (s.locked) {
    // Locked by another sweep: nothing was read or written.
    if (root) err << opt.output_path << ": " << s.failure << "\n";
    return kExitSimulationFailed;
  }
  if (!s.writer) return s.interrupted ? kExitSimulationFailed : kExitOk;
  out << "sweep: " << s.points << " points";
  if (spec->filtered_out > 0) out << " (" << spec->filtered_out << " more filtered out)";
  out << " -> " << opt.output_path << ": " << s.written << " written";
  if (s.resumed) out << ", " << s.resumed << " already there (resumed)";
  out << "\n  " << s.ok << " ok";
  if (s.analytical) out << " (" << s.analytical << " of them in closed form: the DES refused them, their warnings column says why)";
  out << ", " << s.memory << " do not fit in memory, " << s.invalid << " invalid settings"
      << " (divisibility or values), " << s.cannot_run << " cannot run otherwise (its error column says why)";
  if (s.internal) out << ", " << s.internal << " internal errors (a bug in trainsim: please report the rows)";
  out << "\n";
  out << "  " << Fmt("%.2f s", s.wall_s) << Fmt(", %.1f points/s", s.wall_s > 0 ? s.written / s.wall_s : 0.0) << ", "
      << opt.jobs << (opt.jobs == 1 ? " thread" : " threads") << (s.ranks > 1 ? " x " + std::to_string(s.ranks) + " MPI ranks" : "")
      << "\n";
  if (!s.failure.empty() && s.written == 0 && s.failure.rfind("cannot start a worker thread", 0) == 0) {
    err << "trainsim sweep: " << s.failure << "; nothing was computed: rerun with fewer --jobs (and --resume)\n";
    return kExitSimulationFailed;
  }
  if (!s.failure.empty()) {
    err << opt.output_path << ": " << s.failure << "; interrupted with " << (s.points - s.resumed - s.written)
        << " points left: free the space (or fix the file) and rerun with --resume\n";
    return kExitSimulationFailed;
  }
  if (s.interrupted) {
    err << "trainsim sweep: interrupted with " << (s.points - s.resumed - s.written)
        << " points left; rerun with --resume to finish them\n";
    return kExitSimulationFailed;
  }
  return kExitOk;
}

}  // namespace trainsim::cli
