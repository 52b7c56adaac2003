#include "sim/validate/track_record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <mutex>

#include "sim/io/data_paths.h"

namespace trainsim {

std::vector<std::string> DefaultReferenceFiles() {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ReferenceDirectory(), ec)) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".yaml") files.push_back(entry.path().lexically_normal().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Expected<TrackRecord> TrackRecordOf(const Scenario& s, const std::vector<std::string>& files) {
  TrackRecord t;
  t.gpu = s.node.gpu.name;
  t.workload = WorkloadKind(s);
  t.files = int(files.size());
  ValidationWhatIf like;
  like.select = [&t](const Scenario& c) { return c.node.gpu.name == t.gpu && WorkloadKind(c) == t.workload; };
  std::vector<ValidationCase> cases;
  for (const std::string& file : files) {
    Expected<ValidationReport> rep = ValidateReference(file, Fidelity::kAnalytical, {}, like);
    if (!rep) return rep.error();
    cases.insert(cases.end(), std::make_move_iterator(rep->cases.begin()), std::make_move_iterator(rep->cases.end()));
  }
  // Narrower where enough runs allow: the band of experts per GPU (where the
  // MoE errors part most), then the precision (fp8's casts and scaling are a
  // model of their own).
  const std::string band = ExpertsPerGpuBand(s);
  const std::string precision = ToString(s.training.precision);
  const auto in_band = [&](const ValidationCase& c) { return c.experts_per_gpu == band; };
  if (!band.empty() && SummarizeErrors(cases, in_band).cases >= kTrackRecordMinCases) {
    t.experts_per_gpu = band;
    std::erase_if(cases, [&](const ValidationCase& c) { return !in_band(c); });
  }
  const ErrorSummary same_precision = SummarizeErrors(cases, [&](const ValidationCase& c) { return c.precision == precision; });
  if (same_precision.cases >= kTrackRecordMinCases) {
    t.precision = precision;
    t.summary = same_precision;
  } else {
    t.summary = SummarizeErrors(cases);
  }
  return t;
}

namespace {

// The published runs are predicted with the stock profile of the GPU's
// name: a GPU file of that name elsewhere (edited, or calibrated) is not
// what they measured.
std::string OtherGpuFileNote(const GpuProfile& gpu) {
  namespace fs = std::filesystem;
  if (gpu.source_file.empty()) return "";
  const fs::path stock = fs::path(DataDir()) / "hardware-profiles" / "gpus" / (gpu.name + ".yaml");
  std::error_code ec;
  // A GPU of a name no stock profile has gets no record to qualify.
  if (!fs::is_regular_file(stock, ec) || fs::equivalent(stock, gpu.source_file, ec)) return "";
  return " (the stock " + gpu.name + " profile's record; this run's GPU is " + gpu.source_file + ")";
}

std::string CachedTrackRecordLine(const Scenario& s);

}  // namespace

std::string TrackRecordLine(const Scenario& s) { return CachedTrackRecordLine(s) + OtherGpuFileNote(s.node.gpu); }

namespace {

std::string CachedTrackRecordLine(const Scenario& s) {
  // A record depends on the scenario only through its GPU, kind, band and precision
  // (and on the files): `compare`'s two sides and the GUI's configurations
  // usually share one, and each costs a pass over the reference files.
  static std::mutex mutex;
  static std::map<std::string, std::string> lines;
  const std::vector<std::string> files = DefaultReferenceFiles();
  std::string key = s.node.gpu.name + '\n' + WorkloadKind(s) + '\n' + ExpertsPerGpuBand(s) + '\n' + ToString(s.training.precision);
  for (const std::string& f : files) key += '\n' + f;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = lines.find(key); it != lines.end()) return it->second;
  }
  const Expected<TrackRecord> t = TrackRecordOf(s, files);
  const std::string line = t ? TrackRecordText(*t) : "unavailable: " + t.error().ToString();
  const std::lock_guard<std::mutex> lock(mutex);
  return lines.emplace(key, line).first->second;
}

}  // namespace

std::string TrackRecordText(const TrackRecord& t) {
  if (t.files == 0) return "no reference files of published runs found beside the hardware profiles";
  if (t.summary.cases == 0) return "no published " + t.workload + " run on " + t.gpu + " in the reference files";
  const std::string kind = t.precision.empty() ? t.workload : t.precision + " " + t.workload;
  const std::string band =
      t.experts_per_gpu.empty() ? "" : " with " + t.experts_per_gpu + (t.experts_per_gpu == "1" ? " expert" : " experts") + " per GPU";
  const ErrorSummary& e = t.summary;
  // The sign is worth a word only where it is most of the error.
  const char* lean = std::fabs(e.mean_signed_error) < 0.5 * e.mean_abs_error ? ""
                     : e.mean_signed_error < 0                                 ? ": too fast"
                                                                                : ": too slow";
  char buf[384];
  std::snprintf(buf, sizeof buf, "%d published %s run%s%s on %s: predicted %.1f%% off on average (mean %+.1f%%%s), at worst %.1f%% (trainsim validate)",
                e.cases, kind.c_str(), e.cases == 1 ? "" : "s", band.c_str(), t.gpu.c_str(), 100 * e.mean_abs_error, 100 * e.mean_signed_error,
                lean, 100 * e.max_abs_error);
  return buf;
}

}  // namespace trainsim
