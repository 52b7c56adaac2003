#include "sim/validate/track_record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>


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
    for (ValidationCase& c : rep->cases) {
      if (c.failure.empty()) cases.push_back(std::move(c));
    }
  }
  const std::string precision = ToString(s.training.precision);
  const auto summarize = [&cases](const std::string& only_precision) {
    ErrorSummary e;
    double abs_sum = 0, signed_sum = 0;
    for (const ValidationCase& c : cases) {
      if (!only_precision.empty() && c.precision != only_precision) continue;
      abs_sum += std::fabs(c.error);
      signed_sum += c.error;
      e.max_abs_error = std::max(e.max_abs_error, std::fabs(c.error));
      ++e.cases;
    }
    if (e.cases > 0) {
      e.mean_abs_error = abs_sum / e.cases;
      e.mean_signed_error = signed_sum / e.cases;
    }
    return e;
  };
  // The scenario's precision where enough runs had it (fp8's casts and
  // scaling are a model of their own); else every precision of the kind.
  const ErrorSummary same_precision = summarize(precision);
  if (same_precision.cases >= kTrackRecordMinCases) {
    t.precision = precision;
    t.summary = same_precision;
  } else {
    t.summary = summarize("");
  }
  return t;
}

std::string TrackRecordText(const TrackRecord& t) {
  if (t.files == 0) return "no reference files of published runs found beside the hardware profiles";
  if (t.summary.cases == 0) return "no published " + t.workload + " run on " + t.gpu + " in the reference files";
  const std::string kind = t.precision.empty() ? t.workload : t.precision + " " + t.workload;
  const ErrorSummary& e = t.summary;
  // The sign is worth a word only where it is most of the error.
  const char* lean = std::fabs(e.mean_signed_error) < 0.5 * e.mean_abs_error ? ""
                     : e.mean_signed_error < 0                                 ? ": too fast"
                                                                                : ": too slow";
  char buf[384];
  std::snprintf(buf, sizeof buf, "%d published %s run%s on %s: predicted %.1f%% off on average (mean %+.1f%%%s), at worst %.1f%% (trainsim validate)",
                e.cases, kind.c_str(), e.cases == 1 ? "" : "s", t.gpu.c_str(), 100 * e.mean_abs_error, 100 * e.mean_signed_error,
                lean, 100 * e.max_abs_error);
  return buf;
}

}  // namespace trainsim
