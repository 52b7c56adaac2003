#include "sim/sweep/sweep_runner.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#ifdef TRAINSIM_HAVE_MPI
#include <mpi.h>
#endif

#include "sim/core/fingerprint.h"
#include "sim/core/version.h"
#include "sim/io/data_paths.h"
#include "sim/io/csv.h"
#include "sim/io/json_writer.h"
#include "sim/io/result_writer.h"
#include "sim/io/json_text.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/yaml_reader.h"
#include "sim/sweep/in_order_queue.h"

namespace trainsim {

SweepFormat SweepFormatForPath(const std::string& path) {
  // Any case: x.JSON is as much JSON as x.json (it got CSV).
  auto ends = [&](const std::string& suf) {
    if (path.size() < suf.size()) return false;
    return std::equal(suf.begin(), suf.end(), path.end() - long(suf.size()),
                      [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
  };
  return ends(".json") || ends(".jsonl") ? SweepFormat::kJsonLines : SweepFormat::kCsv;
}

std::vector<std::string> SweepColumns(const SweepSpec& spec) {
  std::vector<std::string> c = spec.Keys();
  c.push_back("feasible");
  for (const auto& k : FlatResultKeys()) c.push_back(k);
  c.push_back("error_kind");
  c.push_back("error");
  return c;
}

namespace {

// The components of a fingerprint, in the order they are written and compared.
struct FingerprintField {
  const char* key;
  const char* what;  // for the refusal: "the <what> differs"
};
constexpr FingerprintField kFingerprintFields[] = {
    {"base_fingerprint", "base scenario"},
    {"axes_fingerprint", "axes, zip groups or filters"},
    {"fidelity", "fidelity"},
    {"trainsim", "trainsim version"},
    {"data_fingerprint", "version of the hardware profiles or model catalogue"},
    {"inputs_fingerprint", "version of a file the scenario reads (a model file or config.json, a profile given by path; the fingerprint file lists them)"},
};

// The contents of the files the scenario reads, as they are now (a missing
// file reads as such): the multiset of each file's own fingerprint, so the
// same files reached from another working directory fingerprint the same.
std::string InputsFingerprint(const SweepSpec& spec) {
  std::vector<std::string> each;
  for (const std::string& path : spec.input_files) {
    std::ifstream in(path, std::ios::binary);
    if (!in.is_open()) {
      each.push_back("missing");
      continue;
    }
    std::ostringstream text;
    text << in.rdbuf();
    each.push_back(TextFingerprint(text.str()));
  }
  std::sort(each.begin(), each.end());
  std::string all;
  for (const auto& e : each) all += e + "\n";
  return TextFingerprint(all);
}

std::map<std::string, std::string> FingerprintValues(const SweepSpec& spec, Fidelity fidelity) {
  return {{"base_fingerprint", TextFingerprint(spec.base_definition)},
          {"axes_fingerprint", TextFingerprint(spec.axes_definition)},
          {"fidelity", ToString(fidelity)},
          {"trainsim", VersionString()},
          {"data_fingerprint", DataFingerprint()},
          {"inputs_fingerprint", InputsFingerprint(spec)}};
}

// A JSON value for a setting: numbers and booleans as themselves, else a string.
std::string JsonSetting(const std::string& v) {
  if (v == "true" || v == "false") return v;
  // A JSON number: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?
  size_t i = 0;
  const size_t n = v.size();
  auto digits = [&] {
    const size_t s = i;
    while (i < n && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
    return i > s;
  };
  bool num = true;
  if (i < n && v[i] == '-') ++i;
  if (i < n && v[i] == '0') ++i;
  else num = digits();
  if (num && i < n && v[i] == '.') {
    ++i;
    num = digits();
  }
  if (num && i < n && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < n && (v[i] == '+' || v[i] == '-')) ++i;
    num = digits();
  }
  return num && i == n ? v : JsonWriter::Quote(v);
}

// A JSON-lines row: the point's settings (the first keys.size() of
// `values`), whether it can run, why not (null where it ran: kind and error
// empty) and its result object (or null), in the order ReadJsonSettings reads.
std::string JsonRow(const std::vector<std::string>& keys, const std::vector<std::string>& values, bool feasible,
                    const std::string& kind, const std::string& error, const std::string& result_json) {
  auto quoted_or_null = [](const std::string& s) { return s.empty() ? std::string("null") : JsonWriter::Quote(s); };
  std::string line = "{\"settings\":{";
  for (size_t i = 0; i < keys.size(); ++i) line += (i ? "," : "") + JsonWriter::Quote(keys[i]) + ":" + JsonSetting(values[i]);
  return line + "},\"feasible\":" + (feasible ? "true" : "false") + ",\"error_kind\":" + quoted_or_null(kind) +
         ",\"error\":" + quoted_or_null(error) + ",\"result\":" + result_json + "}\n";
}

struct Row {
  SweepOutcome outcome = SweepOutcome::kOk;
  std::string text;  // one line, with its "\n"
};

Row MakeRow(const SweepSpec& spec, const SweepPoint& p, Fidelity fidelity, SweepFormat format) {
  thread_local std::vector<std::string> fields;  // the worker's, reused: a row has ~100 (its buffer was an allocation per row)
  std::string json;
  Row row;
  row.outcome = RunSweepPoint(spec, p, fidelity, fields, format == SweepFormat::kJsonLines ? &json : nullptr);
  row.text = format == SweepFormat::kJsonLines ? json : CsvLine(fields);
  return row;
}

// The row of a point whose simulation threw (never expected: Simulate does not throw).
Row ErrorRow(const SweepSpec& spec, const SweepPoint& p, SweepFormat format, const std::string& error) {
  Row row;
  row.outcome = SweepOutcome::kInternal;
  const std::vector<std::string> values = spec.Values(p), keys = spec.Keys();
  if (format == SweepFormat::kJsonLines) {
    row.text = JsonRow(keys, values, false, ToString(ErrorKind::kInternal), error, "null");
  } else {
    std::vector<std::string> f = values;
    f.push_back("false");
    f.resize(f.size() + FlatResultKeys().size());
    f.push_back(ToString(ErrorKind::kInternal));
    f.push_back(error);
    row.text = CsvLine(f);
  }
  return row;
}

// A point's settings as a 128-bit key (two different 64-bit hashes of its
// PointId): what --resume keeps of each row already written, 16 bytes where
// the row and its id would take hundreds (a file of millions of rows). Any two
// of the 10 million points a sweep may have collide with a probability of
// about 2^-82 (n^2 / 2^129), were the hashes ideal.
struct DoneKey {
  uint64_t a = 0, b = 0;
  auto operator<=>(const DoneKey&) const = default;
};

DoneKey KeyOf(const std::string& id) {
  uint64_t fnv = 1469598103934665603ull, mix = 0x9e3779b97f4a7c15ull;
  for (const unsigned char c : id) {
    fnv = (fnv ^ c) * 1099511628211ull;
    mix = (mix ^ c) * 0xff51afd7ed558ccdull;
    mix ^= mix >> 29;
  }
  return {fnv, mix};
}

// The settings of a JSON-lines row: its leading "settings" object, which the
// writer always puts first ({"settings":{...},"feasible":...}). A resume
// needs only them: a few dozen bytes for Boost's JSON reader, where the
// whole line (the result object) took 50 times as long as a CSV resume.
// Values as strings (a number or boolean as its text). False, with `why`,
// when the line does not start so.
bool ReadJsonSettings(const std::string& line, std::vector<std::pair<std::string, std::string>>& out, std::string& why) {
  out.clear();
  static const std::string kStart = "{\"settings\":{";
  if (line.compare(0, kStart.size(), kStart) != 0) {
    why = "not a row of a sweep (a JSON object starting with \"settings\")";
    return false;
  }
  // The object's closing brace (the writer writes its values as scalars).
  size_t close = std::string::npos;
  ForEachJsonBracket(line, kStart.size(), [&](char c, size_t at) {
    if (c == '}') close = at;
    return c != '}';
  });
  why = "malformed settings object";
  if (close == std::string::npos) return false;
  try {
    std::istringstream in(line.substr(kStart.size() - 1, close - kStart.size() + 2));
    boost::property_tree::ptree settings;
    boost::property_tree::read_json(in, settings);
    for (const auto& [key, value] : settings) {
      if (!value.empty()) return false;  // a nested object or list: the writer writes scalars
      out.emplace_back(key, value.data());
    }
  } catch (const boost::property_tree::json_parser_error&) {
    return false;
  }
  return true;
}

// What --resume found in a results file.
struct DoneRows {
  struct Done {
    DoneKey key;
    int line = 0;  // where the row is, for an error that names it
    bool operator<(const Done& o) const { return key < o.key; }
  };
  std::vector<Done> rows;  // of the rows already there, sorted by key (24 bytes a row)
  bool needs_header = false;  // CSV: the file has no (whole) header yet
  uintmax_t size = 0;         // the file's size
  uintmax_t whole = 0;        // bytes of its whole lines: a torn last row starts here
};

// Reads a results file for --resume, a line at a time, and changes nothing:
// a refusal (another sweep's columns, a file that is not a sweep's) must
// leave the file as it was. A torn last line (no newline after it: a row cut
// by a crash) is ignored here; the caller cuts it off once every check has
// passed, and the row is computed again. A torn *first* line is kept only
// where it could be this sweep's: a prefix of the CSV header, or of a JSON
// row's `{"settings":`; any other file is refused, never replaced.
Expected<DoneRows> ReadDone(const SweepSpec& spec, const std::string& path, SweepFormat format) {
  DoneRows d;
  d.needs_header = format == SweepFormat::kCsv;
  std::error_code ec;
  d.size = std::filesystem::file_size(path, ec);
  if (ec || d.size == 0) return d;
  const std::string advice = " (write to another file, or give --overwrite instead of --resume to start it again)";
  const std::vector<std::string> columns = SweepColumns(spec);
  const std::string header = CsvLine(columns);
  {
    std::ifstream tail(path, std::ios::binary);
    uintmax_t keep = d.size;
    char c = 0;
    while (keep > 0) {
      tail.seekg(static_cast<std::streamoff>(keep - 1));
      if (!tail.get(c)) return InputError{path, 0, "", "cannot read"};
      if (c == '\n') break;
      --keep;
    }
    d.whole = keep;
    if (keep == 0) {
      // One line, torn: the start of this sweep's output (its header or first row), or not its output at all.
      std::string first;
      {
        std::ifstream in(path, std::ios::binary);
        first.resize(size_t(std::min<uintmax_t>(d.size, header.size() + 64)));
        in.read(first.data(), std::streamsize(first.size()));
        first.resize(size_t(in.gcount()));
      }
      const std::string start = format == SweepFormat::kCsv ? header : std::string("{\"settings\":");
      const bool ours = d.size <= start.size() ? start.compare(0, first.size(), first) == 0 : first.compare(0, start.size(), start) == 0;
      if (!ours || (format == SweepFormat::kCsv && d.size >= header.size())) {
        return InputError{path, 1, "",
                          format == SweepFormat::kCsv ? "its first line is not this sweep's header" + advice
                                                      : "its first line is not a sweep's JSON row" + advice};
      }
      return d;
    }
  }
  const std::vector<std::string> keys = spec.Keys();
  std::ifstream lines(path, std::ios::binary);
  std::string line;
  int line_no = 0;
  std::vector<std::pair<std::string, std::string>> settings;
  std::vector<std::string> values(keys.size());
  while (std::getline(lines, line)) {
    if (lines.eof()) break;  // the torn last line: no newline after it
    ++line_no;
    if (format == SweepFormat::kCsv) {
      if (line_no == 1) {
        if (line + "\n" != header) return InputError{path, 1, "", "its columns are not this sweep's" + advice};
        d.needs_header = false;
        continue;
      }
      const auto f = ParseCsvLine(line);
      if (f.size() != columns.size()) {
        return InputError{path, line_no, "", "row has " + std::to_string(f.size()) + " fields, expected " + std::to_string(columns.size())};
      }
      d.rows.push_back({KeyOf(SweepSpec::PointId(std::vector<std::string>(f.begin(), f.begin() + long(keys.size())))), line_no});
    } else {
      if (line.empty()) continue;
      std::string why;
      if (!ReadJsonSettings(line, settings, why)) return InputError{path, line_no, "", why + advice};
      if (settings.size() != keys.size()) {
        return InputError{path, line_no, "settings", "its settings are not this sweep's axes" + advice};
      }
      for (size_t k = 0; k < keys.size(); ++k) {
        // The writer lists them in the axes' order; look further only for a file written otherwise.
        auto at = settings[k].first == keys[k] ? settings.begin() + long(k)
                                               : std::find_if(settings.begin(), settings.end(), [&](const auto& kv) { return kv.first == keys[k]; });
        if (at == settings.end()) {
          return InputError{path, line_no, "settings", "no value for axis '" + keys[k] + "'" + advice};
        }
        values[k] = at->second;
      }
      d.rows.push_back({KeyOf(SweepSpec::PointId(values)), line_no});
    }
  }
  if (lines.bad()) return InputError{path, 0, "", "cannot read"};
  std::stable_sort(d.rows.begin(), d.rows.end());
  // A sweep writes each point once: a row twice is a file put together by
  // hand (or two files joined), which resuming would keep duplicated.
  const auto same = [](const DoneRows::Done& a, const DoneRows::Done& b) { return a.key == b.key; };
  if (const auto twice = std::adjacent_find(d.rows.begin(), d.rows.end(), same); twice != d.rows.end()) {
    const int first = twice->line, again = std::next(twice)->line;
    const long extra = long(d.rows.size()) - long(std::unique(d.rows.begin(), d.rows.end(), same) - d.rows.begin());
    return InputError{path, again, "",
                      "holds " + std::to_string(extra) + (extra == 1 ? " row" : " rows") + " of a point already in it (this row's point is at line " +
                          std::to_string(first) + "): a sweep writes each point once" + advice};
  }
  return d;
}

// A row already in the file whose settings are no point of this sweep (edited
// by hand, or joined from another file with the same fingerprint): resuming
// would keep it in a file that claims to be this sweep's output. Names the
// first such row.
std::optional<InputError> RowOfNoPoint(const SweepSpec& spec, const std::vector<DoneRows::Done>& done, const std::string& path) {
  std::vector<bool> kept(done.size(), false);
  size_t found = 0;
  for (const auto& p : spec.points) {
    const DoneRows::Done key{KeyOf(SweepSpec::PointId(spec.Values(p)))};
    if (const auto at = std::lower_bound(done.begin(), done.end(), key); at != done.end() && at->key == key.key) {
      kept[size_t(at - done.begin())] = true;
      ++found;
    }
  }
  if (found == done.size()) return std::nullopt;
  int line = 0;
  for (size_t i = 0; i < done.size(); ++i) {
    if (!kept[i] && (line == 0 || done[i].line < line)) line = done[i].line;
  }
  const size_t foreign = done.size() - found;
  return InputError{path, line, "",
                    "holds " + std::to_string(foreign) + (foreign == 1 ? " row" : " rows") +
                        " whose settings are no point of this sweep (this row is the first): it is not this sweep's output"
                        " (write to another file, or give --overwrite instead of --resume to start it again)"};
}

// Appends with write(2), so a row is in the kernel as soon as it is written
// and survives the process being killed; fsync in batches guards power loss.
class Appender {
 public:
  Appender(std::string path, size_t every_rows, double every_s)
      : path_(std::move(path)), every_rows_(every_rows), every_s_(every_s), last_sync_(Clock::now()) {}
  ~Appender() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Opens without truncating: the file is emptied (Truncate) only once it is locked.
  std::string Open() {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return fd_ < 0 ? std::string("cannot open for writing: ") + std::strerror(errno) : "";
  }
  // An exclusive lock for the whole sweep (released when the fd closes, also
  // when the process is killed). False when another process holds it.
  bool Lock() {
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      return errno != EWOULDBLOCK;  // a file system without flock: proceed unlocked
    }
    return true;
  }
  bool IsRegularFile() const {
    struct stat st {};
    return ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  }
  std::string Truncate() {
    if (IsRegularFile() && ::ftruncate(fd_, 0) != 0) return std::string("cannot truncate: ") + std::strerror(errno);
    return "";
  }
  // `s` holds `rows` whole rows.
  std::string Write(const std::string& s, size_t rows = 1) {
    size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::write(fd_, s.data() + off, s.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return std::string("cannot write: ") + std::strerror(errno);
      off += size_t(n);
    }
    unsynced_ += rows;
    const double since = std::chrono::duration<double>(Clock::now() - last_sync_).count();
    if (unsynced_ >= every_rows_ || since >= every_s_) return Sync();
    return "";
  }
  std::string Sync() {
    unsynced_ = 0;
    last_sync_ = Clock::now();
    if (fd_ >= 0 && ::fsync(fd_) != 0 && errno != EINVAL) return std::string("cannot fsync: ") + std::strerror(errno);
    return "";
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string path_;
  int fd_ = -1;
  size_t every_rows_;
  double every_s_;
  size_t unsynced_ = 0;
  Clock::time_point last_sync_;
};

bool LaunchedByMpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (const char* e = std::getenv(v); e && *e) return true;
  }
  return false;
}

#ifdef TRAINSIM_HAVE_MPI
constexpr int kTagRow = 11;
constexpr int kTagDone = 12;

// Rows as one message: per row its outcome (a byte), its text's length (8
// bytes) and its text.
std::string PackRows(const std::vector<Row>& rows) {
  std::string msg;
  for (const Row& row : rows) {
    const uint64_t n = row.text.size();
    msg += char(row.outcome);
    msg.append(reinterpret_cast<const char*>(&n), sizeof n);
    msg += row.text;
  }
  return msg;
}

// Waits for rank `from`'s next message: its next rows, appended to `rows`, or
// that it has sent its last (`done`).
void ReceiveRows(int from, std::deque<Row>& rows, char& done) {
  MPI_Status st;
  MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  int count = 0;
  MPI_Get_count(&st, MPI_CHAR, &count);
  std::string msg(size_t(count), '\0');
  MPI_Recv(msg.data(), count, MPI_CHAR, from, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (st.MPI_TAG == kTagDone) {
    done = 1;
    return;
  }
  for (size_t at = 0; at + 1 + sizeof(uint64_t) <= msg.size();) {
    Row row;
    row.outcome = static_cast<SweepOutcome>(msg[at]);
    uint64_t n = 0;
    std::memcpy(&n, msg.data() + at + 1, sizeof n);
    at += 1 + sizeof n;
    row.text = msg.substr(at, size_t(n));
    at += size_t(n);
    rows.push_back(std::move(row));
  }
}

// MPI for the duration of one sweep: initialised here unless the program did.
class MpiSession {
 public:
  MpiSession() {
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      owned_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() {
    if (owned_) MPI_Finalize();
  }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  bool owned_ = false;
  int rank_ = 0, size_ = 1;
};
#endif

}  // namespace

std::string SweepFingerprintPath(const std::string& output_path) { return output_path + ".fingerprint"; }

std::string SweepFingerprint(const SweepSpec& spec, Fidelity fidelity) {
  std::string t =
      "# What produced the rows of the results file beside this one (trainsim sweep).\n"
      "# `trainsim sweep --resume` adds rows only when all of these are unchanged.\n";
  t += "trainsim_sweep_fingerprint: 1\n";
  t += "base_file: " + JsonWriter::Quote(spec.base_file) + "\n";
  const auto values = FingerprintValues(spec, fidelity);
  for (const auto& f : kFingerprintFields) t += std::string(f.key) + ": " + JsonWriter::Quote(values.at(f.key)) + "\n";
  if (!spec.input_files.empty()) {
    t += "# inputs_fingerprint covers what these read:\n";
    for (std::string path : spec.input_files) {
      std::replace(path.begin(), path.end(), '\n', ' ');  // a comment stays one line
      t += "#   " + path + "\n";
    }
  }
  return t;
}

int SweepMpiRank() {
  if (!LaunchedByMpirun()) return 0;
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (const char* e = std::getenv(v); e && *e) return std::atoi(e);
  }
  return 0;
}

namespace {

// The outcome of a point that cannot run, by why.
SweepOutcome OutcomeOf(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadInput: return SweepOutcome::kInvalid;
    case ErrorKind::kDoesNotFit: return SweepOutcome::kMemory;
    case ErrorKind::kInternal: return SweepOutcome::kInternal;
    default: return SweepOutcome::kCannotRun;
  }
}

}  // namespace

SweepOutcome RunSweepPoint(const SweepSpec& spec, const SweepPoint& p, Fidelity fidelity,
                           std::vector<std::string>& fields, std::string* json_line) {
  // The result columns' count, once: the fields ResultFields() lists do not change.
  static const size_t kResultColumns = FlatResultKeys().size();
  fields.clear();
  fields.reserve(spec.axes.size() + kResultColumns + 3);
  // The point's axis values (spec.Values(p)) are its first fields.
  for (size_t i = 0; i < spec.axes.size(); ++i) fields.push_back(spec.axes[i].values[spec.ValueIndex(p, i)]);
  SweepOutcome outcome = SweepOutcome::kOk;
  std::string error, result_json = "null";
  bool feasible = false;
  Expected<Scenario> s = spec.PointScenario(p);
  if (!s.ok()) {
    outcome = OutcomeOf(s.error().kind);
    error = s.error().ToString();
    fields.push_back("false");
    fields.resize(fields.size() + kResultColumns);
    fields.push_back(ToString(s.error().kind));
  } else {
    SimulateOptions opt;
    opt.fidelity = fidelity;
    SimulationResult r = Simulate(*s, opt);
    std::vector<std::string> warnings = ScenarioWarnings(*s);
    // A point the DES declines (more passes or flows than it takes on) can
    // still happen: a sweep keeps its closed-form figures, says so in the
    // row, and counts it apart, where run leaves the choice to its user.
    const bool des_refused = fidelity == Fidelity::kDes && r.error_kind == ErrorKind::kRefused && r.memory.fits && !r.error.empty();
    if (des_refused) {
      warnings.push_back("the DES refused this point (" + r.error + "): closed-form figures");
      r = Simulate(*s, SimulateOptions::At(Fidelity::kAnalytical));
    }
    r.warnings = WarningTexts(warnings);
    feasible = r.error.empty() && r.memory.fits;
    fields.push_back(feasible ? "true" : "false");
    // Figures of a run that happened (times, rates, energy, cost) are left
    // empty on an infeasible row (null in its JSON); what the configuration is stays.
    for (const ResultField& f : ResultFields()) {
      if (!f.status) fields.push_back(FlatResultValue(f, r));
    }
    error = r.error;
    if (!feasible) {
      outcome = r.memory.fits ? OutcomeOf(r.error_kind) : SweepOutcome::kMemory;
    } else if (des_refused) {
      outcome = SweepOutcome::kOkAnalytical;
    }
    ErrorKind kind = r.error_kind;
    if (!feasible && error.empty()) {
      error = "does not fit in GPU memory";  // never a blank reason on an infeasible row
      kind = ErrorKind::kDoesNotFit;
    }
    fields.push_back(feasible ? std::string() : ToString(kind));
    if (json_line) {
      result_json = ToJson(r, false);
      while (!result_json.empty() && result_json.back() == '\n') result_json.pop_back();
    }
  }
  fields.push_back(error);
  if (json_line) {
    std::string err1 = error;
    std::replace(err1.begin(), err1.end(), '\n', ' ');
    // The kind as the CSV's error_kind column has it ("" on a feasible row).
    *json_line = JsonRow(spec.Keys(), fields, feasible, fields[fields.size() - 2], err1, result_json);
  }
  return outcome;
}

namespace {

// The finished result rows a sweep's output file holds: its non-empty lines
// that end in a newline (a torn last one is not finished), less a CSV's
// header; 0 for a file that does not exist or is not a regular file (a
// device such as /dev/full or a pipe keeps no rows, and reading /dev/zero
// would never end). Counted in blocks: a row is never held whole.
size_t RowsIn(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return 0;
  std::ifstream in(path, std::ios::binary);
  size_t lines = 0;
  bool in_line = false;
  char block[1 << 16];
  while (in.read(block, sizeof block) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      if (block[i] == '\n') {
        lines += in_line;
        in_line = false;
      } else {
        in_line = true;
      }
    }
  }
  const bool csv = SweepFormatForPath(path) == SweepFormat::kCsv;
  return csv ? (lines > 0 ? lines - 1 : 0) : lines;
}


// Compares the fingerprint beside a results file with this sweep's; the
// refusal names the first component that differs.
std::optional<InputError> CheckFingerprint(const SweepSpec& spec, const SweepRunOptions& options) {
  const std::string fp = SweepFingerprintPath(options.output_path);
  const std::string advice = " (give --overwrite instead of --resume to start the file again, or write to another file)";
  std::error_code ec;
  if (!std::filesystem::exists(fp, ec)) {
    return InputError{options.output_path, 0, "", "has rows but no " + fp + ": cannot tell what produced them" + advice};
  }
  try {
    YamlMap m(LoadYamlFile(fp), fp);
    if (m.PositiveInt("trainsim_sweep_fingerprint") != 1) m.Fail("trainsim_sweep_fingerprint", "unsupported version (expected 1)");
    m.Allow("base_file");
    const auto want = FingerprintValues(spec, options.fidelity);
    for (const auto& f : kFingerprintFields) {
      const std::string had = m.OptString(f.key).value_or("");  // absent: a file from a trainsim that did not record it
      if (had != want.at(f.key)) {
        std::string detail;
        if (std::string(f.key) == "fidelity" || std::string(f.key) == "trainsim") detail = ": '" + had + "', now '" + want.at(f.key) + "'";
        return InputError{options.output_path, 0, "",
                          std::string("its rows were produced with another ") + f.what + detail + " (" + fp + ")" + advice};
      }
    }
  } catch (const InputException& e) {
    return e.error();
  }
  return std::nullopt;
}

}  // namespace

Expected<SweepSummary> RunSweep(const SweepSpec& spec, const SweepRunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const SweepFormat format = SweepFormatForPath(options.output_path);
  SweepSummary sum;
  sum.points = spec.points.size();

  int rank = 0, size = 1;
#ifdef TRAINSIM_HAVE_MPI
  std::unique_ptr<MpiSession> mpi;
  if (options.allow_mpi && LaunchedByMpirun()) {
    mpi = std::make_unique<MpiSession>();
    rank = mpi->rank();
    size = mpi->size();
  }
#endif
  sum.ranks = size;
  sum.writer = rank == 0;

  // Rank 0 prepares the file and decides which points remain.
  Appender out(options.output_path, std::max<size_t>(1, options.fsync_every_rows), options.fsync_every_s);
  std::vector<unsigned long long> pending;
  std::optional<InputError> prep_error;
  std::string lock_failure, write_failure;
  if (rank == 0) {
    std::vector<DoneRows::Done> done;
    bool needs_header = format == SweepFormat::kCsv;
    auto fail = [&](const std::string& e) { prep_error = InputError{options.output_path, 0, "", e}; };
    // Open and lock before reading or truncating: a second sweep on the file stops here.
    if (std::string e = out.Open(); !e.empty()) {
      fail(e);
    } else if (!out.Lock()) {
      lock_failure = "another trainsim sweep is writing this file (it holds its lock); wait for it to finish, or write to another file";
    } else if (!options.resume) {
      // Finished rows are never dropped by a rerun that forgot --resume;
      // counted under the lock, so a sweep finishing meanwhile is seen.
      if (const size_t rows = options.overwrite ? 0 : RowsIn(options.output_path); rows > 0) {
        fail("already holds " + std::to_string(rows) + (rows == 1 ? " row" : " rows") +
             ": --resume keeps them and runs the missing points, --overwrite starts again");
      } else if (std::string e2 = out.Truncate(); !e2.empty()) {
        fail(e2);
      }
    } else if (auto d = ReadDone(spec, options.output_path, format); !d.ok()) {
      prep_error = d.error();
    } else {
      done = std::move(d->rows);
      needs_header = d->needs_header;
      if (!done.empty()) {
        if (auto mismatch = CheckFingerprint(spec, options); mismatch) {
          prep_error = *mismatch;
        } else if (auto foreign = RowOfNoPoint(spec, done, options.output_path); foreign) {
          prep_error = *foreign;
        }
      }
      // Every check passed: only now the torn last row goes (it is computed again).
      if (!prep_error && d->whole < d->size && ::truncate(options.output_path.c_str(), static_cast<off_t>(d->whole)) != 0) {
        fail(std::string("cannot cut off the torn last row: ") + std::strerror(errno));
      }
    }
    // The fingerprint is written once the file holds no rows of another sweep
    // (after truncating, or resuming a file with none), before the first row.
    if (!prep_error && lock_failure.empty() && done.empty() && out.IsRegularFile()) {
      const std::string fp = SweepFingerprintPath(options.output_path);
      const std::string tmp = fp + ".tmp" + std::to_string(::getpid());
      // A full disk here is an interruption, as for rows: exit 1, and --resume
      // continues; a directory that takes no new file is the output's fault
      // (exit 2): no rerun gets further.
      {
        errno = 0;
        std::ofstream f(tmp, std::ios::trunc);
        if (!f.is_open()) {
          fail("cannot create " + fp + " beside it, for the sweep's fingerprint: " + std::strerror(errno != 0 ? errno : EACCES) +
               " (write the results where new files can be made)");
        } else {
          f << SweepFingerprint(spec, options.fidelity);
          f.flush();
          if (!f) write_failure = "cannot write " + fp + ": " + std::strerror(errno != 0 ? errno : EIO);
        }
      }
      if (!prep_error && write_failure.empty() && std::rename(tmp.c_str(), fp.c_str()) != 0) {
        write_failure = "cannot write " + fp + ": " + std::strerror(errno);
      }
      if (!write_failure.empty() || prep_error) std::remove(tmp.c_str());
    }
    if (!prep_error && lock_failure.empty() && write_failure.empty() && needs_header) {
      write_failure = out.Write(CsvLine(SweepColumns(spec)));  // a full disk: an interruption, as for rows
    }
    for (const auto& p : spec.points) {
      const DoneRows::Done key{KeyOf(SweepSpec::PointId(spec.Values(p)))};
      if (!std::binary_search(done.begin(), done.end(), key)) pending.push_back(p.index);
    }
    sum.resumed = spec.points.size() - pending.size();
  }
#ifdef TRAINSIM_HAVE_MPI
  if (size > 1) {
    int status = prep_error ? 1 : !lock_failure.empty() ? 2 : !write_failure.empty() ? 3 : 0;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status == 1) {
      if (rank == 0) return *prep_error;
      return InputError{options.output_path, 0, "", "rank 0 could not prepare the results file"};
    }
    if (status == 2 || status == 3) {
      sum.interrupted = true;
      sum.locked = status == 2;
      sum.failure = rank == 0 ? lock_failure + write_failure : "rank 0 could not write the results file";
      return sum;
    }
    unsigned long long n = pending.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    pending.resize(n);
    if (n > 0) MPI_Bcast(pending.data(), int(n), MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  }
#endif
  if (prep_error) return *prep_error;
  if (!lock_failure.empty() || !write_failure.empty()) {
    sum.interrupted = true;
    sum.locked = !lock_failure.empty();
    sum.failure = lock_failure + write_failure;
    return sum;
  }

  std::vector<size_t> mine;
  for (size_t i = size_t(rank); i < pending.size(); i += size_t(size)) mine.push_back(size_t(pending[i]));
  const size_t limit = std::min(mine.size(), options.max_new_rows);

  // Workers compute rows; this thread writes them (or sends them to rank 0)
  // in the order of the points, whatever order they finish in (InOrderQueue):
  // a sweep's file is the same under any -j or number of ranks. A batch at a
  // time: up to kBatchRows rows, or what is there every kBatchWait, in one
  // write(2) (a wake-up and a system call per row cost more than an
  // analytical point).
  constexpr size_t kBatchRows = 256;
  constexpr auto kBatchWait = std::chrono::milliseconds(20);
  int threads = int(std::max<size_t>(1, std::min<size_t>(size_t(std::max(1, options.jobs)), std::max<size_t>(1, limit))));
  // Room for every worker to be 64 points ahead of the slowest point in flight.
  InOrderQueue<Row> rows(limit, std::max<size_t>(1024, 64 * size_t(threads)), threads);
  std::atomic<bool> write_failed{false};  // stop computing rows that cannot be written
  const std::function<bool()> stopping = [&] { return (options.stop && options.stop->load()) || write_failed.load(); };
  std::vector<std::thread> workers;
  std::string thread_error;
  for (int t = 0; t < threads; ++t) {
    // The system may refuse a thread (its limit on threads or memory): the
    // ones started do the work. A std::thread destroyed while joinable would
    // terminate the program, so none is left so.
    try {
      if (t >= options.thread_limit_for_tests) throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
      workers.emplace_back([&] {
        while (const std::optional<size_t> i = rows.Take(stopping)) {
          Row row;
          try {
            row = MakeRow(spec, spec.points[mine[*i]], options.fidelity, format);
          } catch (const std::exception& e) {
            row = ErrorRow(spec, spec.points[mine[*i]], format, std::string("internal error: ") + e.what());
          }
          rows.Put(*i, std::move(row));
        }
        rows.WorkerDone();
      });
    } catch (const std::system_error& e) {
      thread_error = std::string("cannot start a worker thread: ") + e.what();
      break;
    }
  }
  if (int(workers.size()) < threads) rows.SetWorkers(int(workers.size()));  // none: the reader finds every (no) worker done at once

  std::string write_error;
  SweepProgress prog;
  prog.total = pending.size();
  prog.resumed = sum.resumed;
  // Writes rows with one write(2) and counts them once they are in the file.
  auto record = [&](const Row* rows, size_t n) {
    if (!write_error.empty() || n == 0) return;
    std::string text;
    if (n == 1) {
      write_error = out.Write(rows[0].text);
    } else {
      for (size_t i = 0; i < n; ++i) text += rows[i].text;
      write_error = out.Write(text, n);
    }
    if (!write_error.empty()) {
      write_failed.store(true);
      return;  // rows not (wholly) in the file: --resume drops a torn one and computes them again
    }
    for (size_t i = 0; i < n; ++i) {
      ++sum.written;
      switch (rows[i].outcome) {
        case SweepOutcome::kOk: ++sum.ok; break;
        case SweepOutcome::kOkAnalytical: ++sum.ok, ++sum.analytical; break;
        case SweepOutcome::kMemory: ++sum.memory; break;
        case SweepOutcome::kInvalid: ++sum.invalid; break;
        case SweepOutcome::kCannotRun: ++sum.cannot_run; break;
        case SweepOutcome::kInternal: ++sum.internal; break;
      }
      prog.done = sum.written;
      prog.elapsed_s = elapsed();
      if (options.progress) options.progress(prog);
    }
  };

  if (size == 1) {
    for (bool all_read = false; !all_read;) {
      const std::vector<Row> batch = rows.Read(kBatchRows, kBatchWait, all_read);
      record(batch.data(), batch.size());
    }
  }
#ifdef TRAINSIM_HAVE_MPI
  else if (rank != 0) {
    // Each batch is sent synchronously, received when rank 0 reaches its
    // turn: a rank runs ahead of the file by a batch and its queue's window.
    for (bool all_read = false; !all_read;) {
      const std::vector<Row> batch = rows.Read(kBatchRows, kBatchWait, all_read);
      if (batch.empty()) continue;
      std::string msg = PackRows(batch);
      MPI_Ssend(msg.data(), int(msg.size()), MPI_CHAR, 0, kTagRow, MPI_COMM_WORLD);
    }
    MPI_Send(nullptr, 0, MPI_CHAR, 0, kTagDone, MPI_COMM_WORLD);
  } else {
    // Rank 0 writes the points in the sweep's order: pending[k] is rank
    // (k % size)'s (k / size)-th row, and each rank's rows come in its own
    // order. A rank that stopped early (interrupted) ends the file there, a
    // prefix of the points; --resume computes the rest.
    std::vector<std::deque<Row>> waiting(static_cast<size_t>(size));
    std::vector<char> rank_done(static_cast<size_t>(size), 0);
    bool own_read = false;
    std::vector<Row> batch;
    auto flush = [&] {
      record(batch.data(), batch.size());
      batch.clear();
    };
    for (size_t k = 0; k < pending.size() && write_error.empty(); ++k) {
      const int from = int(k % size_t(size));
      std::deque<Row>& next = waiting[size_t(from)];
      if (next.empty()) {
        flush();  // what is ready goes to the file before waiting
        if (from == 0) {
          while (next.empty() && !own_read) {
            for (Row& r : rows.Read(kBatchRows, kBatchWait, own_read)) next.push_back(std::move(r));
          }
        } else if (!rank_done[size_t(from)]) {
          ReceiveRows(from, next, rank_done[size_t(from)]);
        }
        if (next.empty()) break;
      }
      batch.push_back(std::move(next.front()));
      next.pop_front();
      if (batch.size() >= kBatchRows) flush();
    }
    flush();
    // Every rank's sends are received (and dropped past an interruption) so that every rank ends.
    rows.Abandon();
    while (!own_read) rows.Read(kBatchRows, kBatchWait, own_read);
    for (int r = 1; r < size; ++r) {
      std::deque<Row> dropped;
      while (!rank_done[size_t(r)]) {
        ReceiveRows(r, dropped, rank_done[size_t(r)]);
        dropped.clear();
      }
    }
  }
#endif
  for (auto& w : workers) w.join();
  if (rank == 0 && write_error.empty()) write_error = out.Sync();
#ifdef TRAINSIM_HAVE_MPI
  if (size > 1) {
    // Every rank reports the whole sweep (and so exits with the same status).
    unsigned long long counts[2] = {sum.written, sum.resumed};
    MPI_Bcast(counts, 2, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    sum.written = counts[0];
    sum.resumed = counts[1];
  }
#endif
  sum.wall_s = elapsed();
  sum.interrupted = sum.resumed + sum.written < sum.points;
  if (write_error.empty() && workers.empty() && !thread_error.empty()) {
    // Not one thread: the sweep could not run here; what is in the file stays valid for --resume.
    sum.interrupted = true;
    sum.failure = thread_error;
  }
  if (!write_error.empty()) {
    // Disk full or an I/O error: what is in the file is whole rows (a torn
    // last one is dropped on resume), so this is an interruption, not bad input.
    sum.interrupted = true;
    sum.failure = write_error;
  }
  return sum;
}

}  // namespace trainsim
