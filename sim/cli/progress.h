// Progress of a long verb on stderr: "validate: 42%, 12 s elapsed, about
// 16 s left (case 12 of 27)", rewritten in place, at most 5 times a second.
// Shown only when stderr is a terminal or with --progress; results stay on
// stdout, so pipes and golden outputs see none of it.
#pragma once

#include <atomic>
#include <chrono>
#include <iosfwd>
#include <mutex>
#include <string>
#include <thread>

namespace trainsim::cli {

class ProgressLine {
 public:
  // `forced`: --progress was given. Otherwise shown only when `err` is
  // std::cerr and stderr is a terminal.
  ProgressLine(std::ostream& err, std::string verb, bool forced);
  ~ProgressLine();  // Finish()

  bool enabled() const { return enabled_; }
  // `fraction` of the work done (0..1), `what` the unit just done.
  void Update(double fraction, const std::string& what);
  // Work in phases of different pace (a search, then DES re-checks): each
  // phase's fraction runs 0..1 and its ETA comes from its own rate; the line
  // reads "plan: re-checking with the DES: 50%, 9 s elapsed, about 2 s left".
  // Elapsed time counts from the start of the whole verb.
  void Phase(const std::string& name);
  // Work whose size is not known beforehand: elapsed time once a second from
  // a helper thread until Finish().
  void Heartbeat(const std::string& what);
  // Ends the line (the next output starts on a fresh one).
  void Finish();

  // "42%, 12 s elapsed, about 16 s left" (the ETA from the rate so far:
  // the phase's, `phase_elapsed_s` into it; negative: the whole elapsed time).
  static std::string Describe(double fraction, double elapsed_s, double phase_elapsed_s = -1);

 private:
  void Write(const std::string& text);

  std::ostream& err_;
  std::string verb_;
  bool enabled_ = false;
  bool terminal_ = false;
  bool written_ = false;
  bool show_next_ = false;  // a phase began: show its first update however soon
  std::string phase_;  // "" until Phase()
  std::chrono::steady_clock::time_point start_, last_, phase_start_;
  std::mutex mutex_;
  std::thread heartbeat_;
  std::atomic<bool> stop_{false};
};

}  // namespace trainsim::cli
