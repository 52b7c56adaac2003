#include "calib/host_launch_trace.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "sim/io/csv.h"

namespace trainsim::calib {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Kernel launches, by the runtime's and the driver's names (nsys appends a
// version suffix: cudaLaunchKernel_v7000). A graph launch issues its kernels
// as one call.
bool IsLaunch(const std::string& name) {
  for (const char* p : {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaGraphLaunch", "cuLaunchKernel",
                        "cuLaunchCooperativeKernel", "cuGraphLaunch"}) {
    if (StartsWith(name, p)) return true;
  }
  return false;
}

// Calls in which the host waits for the GPU: the synchronizations, and the
// copies that return only when the data has arrived (PyTorch's .item() and
// .cpu() end in cudaStreamSynchronize after cudaMemcpyAsync).
bool IsSync(const std::string& name) {
  if (name.find("Synchronize") != std::string::npos) return true;
  const std::string base = name.substr(0, name.find('_'));
  return base == "cudaMemcpy" || base == "cudaMemcpy2D" || base == "cuMemcpyDtoH" || base == "cuMemcpy";
}

// The seconds one unit of a column whose header ends in "(ns)", "(us)",
// "(ms)" or "(s)" is; 1e-9 when the header names none (nsys's default).
bool UnitSeconds(const std::string& header, double& out) {
  const auto open = header.rfind('('), close = header.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    out = 1e-9;
    return true;
  }
  const std::string u = header.substr(open + 1, close - open - 1);
  if (u == "ns") out = 1e-9;
  else if (u == "us" || u == "\xc2\xb5s") out = 1e-6;
  else if (u == "ms") out = 1e-3;
  else if (u == "s" || u == "sec") out = 1;
  else return false;
  return true;
}

// A thread's launches so far.
struct ThreadState {
  double last_launch_s = -1;           // start of its last launch; < 0 before the first
  double last_launch_duration_s = 0;   // how long that launch call took
  double sync_since_s = 0;             // time in synchronizing calls since then
  double last_start_s = -1;            // start of its last call, to check the order
};

// Threads a trace may name (one job's ranks and their autograd and helper
// threads are far fewer): bounds what the reader keeps per thread.
constexpr size_t kMaxThreads = 1 << 16;

// One launch-to-launch gap on a thread, sync time taken out, and the opening
// launch call's own length (long when the launch queue was full).
struct Gap {
  float gap_s;
  float launch_s;
};

// A YAML double-quoted scalar: a name or a path may hold ": " or "#".
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

Expected<HostLaunchCost> ReadHostLaunchCost(std::istream& in, const std::string& file, const HostLaunchCostOptions& options) {
  int start_col = -1, duration_col = -1, name_col = -1, tid_col = -1, pid_col = -1;
  double start_unit_s = 1e-9, duration_unit_s = 1e-9;
  std::map<std::pair<std::string, std::string>, ThreadState> threads;  // (pid, tid)
  std::vector<Gap> gaps;
  std::vector<float> launch_s;  // every launch call's length, for the typical one
  HostLaunchCost cost;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> f = ParseCsvLine(line);
    if (start_col < 0) {
      // Before the header: nsys's own lines; the header names the columns.
      // nsys writes "Pid"/"Tid" in some releases and "PID"/"TID" in others.
      for (int i = 0; i < int(f.size()); ++i) {
        std::string h = f[size_t(i)];
        std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        if (StartsWith(h, "start")) start_col = i;
        else if (StartsWith(h, "duration")) duration_col = i;
        else if (h == "name") name_col = i;
        else if (h == "tid") tid_col = i;
        else if (h == "pid") pid_col = i;
      }
      if (start_col < 0 || duration_col < 0 || name_col < 0 || tid_col < 0) {
        start_col = duration_col = name_col = tid_col = pid_col = -1;
        continue;
      }
      if (!UnitSeconds(f[size_t(start_col)], start_unit_s) || !UnitSeconds(f[size_t(duration_col)], duration_unit_s)) {
        return InputError{file, line_no, f[size_t(start_col)], "unknown time unit (expected ns, us, ms or s)"};
      }
      continue;
    }
    const int need = std::max({start_col, duration_col, name_col, tid_col, pid_col});
    if (int(f.size()) <= need) {
      return InputError{file, line_no, "", "row has " + std::to_string(f.size()) + " fields, the header " + std::to_string(need + 1) + " or more"};
    }
    auto number = [&](int col, const char* what, double unit_s, double& out) -> std::string {
      const std::string& s = f[size_t(col)];
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != 0 || errno != 0 || !std::isfinite(v) || v < 0) {
        return "'" + s + "' is not a non-negative number of " + what;
      }
      out = v * unit_s;
      return "";
    };
    double start_s = 0, duration_s = 0;
    if (std::string e = number(start_col, "start time", start_unit_s, start_s); !e.empty()) return InputError{file, line_no, "Start", e};
    if (std::string e = number(duration_col, "duration", duration_unit_s, duration_s); !e.empty()) {
      return InputError{file, line_no, "Duration", e};
    }
    ThreadState& t = threads[{pid_col >= 0 ? f[size_t(pid_col)] : std::string(), f[size_t(tid_col)]}];
    if (threads.size() > kMaxThreads) {
      return InputError{file, line_no, "Tid", "more than " + std::to_string(kMaxThreads) + " threads: not one job's trace"};
    }
    if (start_s < t.last_start_s) {
      return InputError{file, line_no, "Start", "rows are not in start order on thread " + f[size_t(tid_col)] +
                                                  " (nsys stats --report cuda_api_trace writes them so)"};
    }
    t.last_start_s = start_s;
    const std::string& name = f[size_t(name_col)];
    if (IsSync(name)) {
      t.sync_since_s += duration_s;
      cost.sync_s += duration_s;
      continue;
    }
    if (!IsLaunch(name)) continue;
    if (++cost.launches > options.max_launches) {
      return InputError{file, line_no, "", "more than " + std::to_string(options.max_launches) +
                                               " kernel launches: trace a few steady-state steps (nsys --capture-range)"};
    }
    launch_s.push_back(float(duration_s));
    if (t.last_launch_s >= 0) {
      gaps.push_back({float(std::max(0.0, start_s - t.last_launch_s - t.sync_since_s)), float(t.last_launch_duration_s)});
    }
    t.last_launch_s = start_s;
    t.last_launch_duration_s = duration_s;
    t.sync_since_s = 0;
  }
  if (start_col < 0) {
    return InputError{file, 0, "", "no header with Start, Duration, Name and Tid columns: expected the CSV of "
                                   "`nsys stats --report cuda_api_trace --format csv`"};
  }
  for (const auto& [id, t] : threads) cost.threads += t.last_launch_s >= 0;
  auto median = [](auto& v) {
    const auto mid = v.begin() + long(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    return double(*mid);
  };
  // A launch call that takes longer than the typical one waited for room in
  // the launch queue: the GPU was behind, and that wait is not issuing.
  const double typical_launch_s = launch_s.empty() ? 0 : median(launch_s);
  std::vector<double> gaps_s;
  double counted_s = 0;
  for (const Gap& g : gaps) {
    const double queue_wait_s = std::max(0.0, double(g.launch_s) - typical_launch_s);
    cost.queue_wait_s += queue_wait_s;
    const double busy_s = std::max(0.0, double(g.gap_s) - queue_wait_s);
    if (busy_s > options.idle_gap_s) {
      ++cost.idle_gaps;
    } else {
      gaps_s.push_back(busy_s);
      counted_s += busy_s;
    }
  }
  if (gaps_s.empty()) {
    std::ostringstream m;
    m << "no thread launched two kernels less than " << options.idle_gap_s * 1e6 << " us of host time apart ("
      << cost.launches << " launches): a trace of training steps has thousands";
    return InputError{file, 0, "", m.str()};
  }
  cost.counted_gaps = int64_t(gaps_s.size());
  cost.host_s_per_kernel = counted_s / double(gaps_s.size());
  cost.median_gap_s = median(gaps_s);
  return cost;
}

std::string HostCostFrameworkProfileText(const std::string& name, const std::string& base, const HostLaunchCost& c,
                                         const std::string& trace_file, const std::string& node_name,
                                         double host_op_time_factor) {
  auto sig3 = [](double v) {
    std::ostringstream o;
    o.precision(3);
    o << v;
    return o.str();
  };
  auto us = [&](double s) { return sig3(s * 1e6); };
  std::ostringstream o;
  o << "# " << name << ": " << base << " with the host cost per kernel measured from a trace of a real step\n"
    << "# (trainsim calibrate --host-trace; calib/host_launch_trace.h says how it is read).\n"
    << "name: " << Quoted(name) << "\n"
    << "based_on: " << Quoted(base) << "\n"
    << "host_us_per_kernel: " << us(c.host_s_per_kernel / host_op_time_factor) << "  # measured: " << trace_file
    << " (Nsight Systems CUDA API trace): " << us(c.host_s_per_kernel) << " us mean host time from one launch to the next (median "
    << us(c.median_gap_s) << ") over " << c.counted_gaps << " gaps of " << c.launches << " launches on " << c.threads
    << (c.threads == 1 ? " thread; " : " threads; ") << c.idle_gaps << " idle gaps, " << sig3(c.sync_s) << " s in synchronizing calls and " << sig3(c.queue_wait_s)
    << " s of launches waiting for a full queue left out";
  if (host_op_time_factor != 1) o << "; divided by " << node_name << "'s host_op_time_factor " << host_op_time_factor;
  o << "\n";
  return o.str();
}

}  // namespace trainsim::calib
