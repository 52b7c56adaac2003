#include "sim/cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace trainsim::cli {

namespace {

std::string Seconds(double s) {
  char buf[32];
  if (s < 120) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 7200) std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

}  // namespace

ProgressLine::ProgressLine(std::ostream& err, std::string verb, bool forced)
    : err_(err), verb_(std::move(verb)), start_(std::chrono::steady_clock::now()), last_(start_), phase_start_(start_) {
  terminal_ = &err == &std::cerr && isatty(STDERR_FILENO);
  enabled_ = forced || terminal_;
}

ProgressLine::~ProgressLine() { Finish(); }

std::string ProgressLine::Describe(double fraction, double elapsed_s, double phase_elapsed_s) {
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f%%", 100 * fraction);
  std::string s = std::string(pct) + ", " + Seconds(elapsed_s) + " elapsed";
  const double rate_s = phase_elapsed_s < 0 ? elapsed_s : phase_elapsed_s;
  // An ETA from the first few percent is a guess; say nothing until there is a rate.
  if (fraction >= 0.02 && fraction < 1) s += ", about " + Seconds(rate_s * (1 - fraction) / fraction) + " left";
  return s;
}

void ProgressLine::Phase(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (name == phase_) return;
  phase_ = name;
  phase_start_ = std::chrono::steady_clock::now();
  show_next_ = true;  // the new phase's first update is shown at once
}

void ProgressLine::Write(const std::string& text) {
  // On a terminal the line is rewritten in place; in a file (--progress
  // 2>log) each update is its own line.
  if (terminal_) err_ << "\r\033[K" << verb_ << ": " << text << std::flush;
  else err_ << verb_ << ": " << text << "\n" << std::flush;
  written_ = true;
}

void ProgressLine::Update(double fraction, const std::string& what) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  if (written_ && !show_next_ && fraction < 1 && now - last_ < std::chrono::milliseconds(200)) return;
  show_next_ = false;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double in_phase = std::chrono::duration<double>(now - phase_start_).count();
  Write((phase_.empty() ? "" : phase_ + ": ") + Describe(fraction, elapsed, in_phase) + (what.empty() ? "" : " (" + what + ")"));
}

void ProgressLine::Heartbeat(const std::string& what) {
  if (!enabled_ || heartbeat_.joinable()) return;
  heartbeat_ = std::thread([this, what] {
    for (int tick = 0; !stop_; ++tick) {
      if (tick % 10 == 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        Write(what + ", " + Seconds(elapsed) + " elapsed");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
}

void ProgressLine::Finish() {
  stop_ = true;
  if (heartbeat_.joinable()) heartbeat_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  if (written_ && terminal_) err_ << "\r\033[K" << std::flush;
  written_ = false;
}

}  // namespace trainsim::cli
