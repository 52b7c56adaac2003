// The comparison workspace's data: configurations (scenario YAML documents),
// their outcomes (the library's SimulationResult plus the node-count scaling
// points and the TP x PP grid), the results table model, CSV export, and the
// comparison-set file. Nothing here simulates: outcomes come from Simulate.
//
// Comparison-set file (YAML):
//   comparison:
//     - file: /path/to/scenario.yaml   # anchors relative paths in the scenario; may be empty
//       scenario: { name: ..., cluster: ..., ... }   # the scenario document, inline
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <utility>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/result.h"
#include "sim/core/scenario.h"
#include "sim/report/result_format.h"

namespace trainsim::gui {

// One configuration of the comparison: a scenario document as YAML text and
// the file it came from (relative model/profile paths resolve against it;
// error messages name it). `file` may be empty for a scenario never saved.
struct Configuration {
  QString yaml;
  QString file;

  // The scenario's `name` key, or the file's base name, or "untitled".
  QString Name() const;
  // The name errors carry: the file, or "untitled.yaml".
  QString MessageFile() const;
};

// Parses a configuration as the CLI parses a file: YAML text, then the --set
// style overrides (ApplyOverrides), then ParseScenario. Never throws.
Expected<Scenario> ParseConfiguration(const Configuration& c, const std::vector<std::string>& overrides = {});

// The CLI's one-line message for a configuration that does not parse; empty when it does.
QString ValidationMessage(const Configuration& c);
// The exit status a configuration's error stands for (sim/core/error.h): 0
// when it parses, 2 for bad input, 1 for a run the hardware cannot do.
int ValidationExitStatus(const Configuration& c);

// A cell of the TP x PP grid: the best configuration with that TP and PP
// (virtual stages, micro batch and recompute searched as `trainsim plan`
// does, the rest of the scenario kept), or why none of them can run.
struct HeatCell {
  int tensor = 1;
  int pipeline = 1;
  bool feasible = false;
  double step_time_s = 0;
  QString reason;  // empty when feasible: the least demanding member's rejection
  QString category;  // the planner's kind of rejection: divisibility, memory, unsupported, simulation
  QString chosen;  // what the cell's best sets, planner notation ("TP4 PP4 VP5 ... mb1 recompute=none")
  int virtual_stages = 1;
  int micro_batch = 1;
  QString recompute;
  // What else the cell's best changes from the scenario's own settings
  // (context parallelism, data sharding, EP...), briefly: "CP4 shard=full"; empty when nothing.
  QString also_changed;
  int searched = 0;  // configurations tried for the cell
};

// A point of the scaling curve over node count (the configuration with
// cluster.nodes overridden and data parallelism re-derived).
struct ScalingPoint {
  int nodes = 0;
  int gpus = 0;  // nodes x the node's GPUs
  bool feasible = false;
  double step_time_s = 0;
  double time_to_train_s = 0;
  double cost_usd = 0;
  QString reason;
};

// Everything one run of a configuration produced.
struct ConfigOutcome {
  QString name;
  QString input_error;  // non-empty: the scenario did not parse (the CLI's exit 2)
  SimulationResult result;
  // How trainsim's predictions of published runs of this GPU and kind came
  // out (sim/validate/track_record.h); empty when the run cannot happen.
  QString track_record;
  // The share of the step the GPU waits for the host to issue kernels, as
  // `trainsim run` says it (sim/run/host_issue_share.h); empty when small.
  QString host_issue;
  // What `trainsim run` warns of before it runs (ScenarioWarnings in
  // sim/io/scenario_loader.h: config.json keys accepted unread, a precision
  // the framework has no recipe for), a line each.
  QStringList warnings;
  int tensor = 1;    // the configuration's own TP and PP, to mark them in the heatmap
  int pipeline = 1;
  int nodes = 0;
  std::vector<ScalingPoint> scaling;
  std::vector<int> heat_tensor;    // grid columns
  std::vector<int> heat_pipeline;  // grid rows
  std::vector<HeatCell> heatmap;   // row-major: heat_pipeline x heat_tensor

  bool ran() const { return input_error.isEmpty(); }
  const HeatCell* Cell(int tensor_size, int pipeline_size) const;
};

// Names of the configurations of a comparison for its column headers: those
// longer than most_chars lose what all of them share at either end (a few
// characters of context kept), then their middle, with "…" where they were cut.
QStringList ShortConfigurationNames(const QStringList& names, int most_chars);
// How many characters ("0"s) the results table's columns may be wide: the
// header names are shortened to it, the columns capped at it.
constexpr int kResultColumnChars = 22;
// The lengths of the longest prefix and suffix all `names` share (each may
// cover a whole name); 0, 0 for fewer than two names.
std::pair<int, int> SharedEnds(const QStringList& names);

// Results side by side: one row per field of the result-field table
// (sim/core/result_fields.h, in DisplayFields order; units and scales from
// sim/report/result_format.h), the text ones (fidelity, why a run cannot
// happen) as text; the first configuration is the baseline
// column, every other one has its value, its delta against the baseline and
// the delta in percent. A run that cannot happen shows "cannot run" except
// for its memory figures (which say why).
class ResultsTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;
  static constexpr int kRawValueRole = Qt::UserRole + 1;  // the field's number, full precision
  enum class ColumnKind { kValue = 0, kDelta = 1, kRelative = 2 };

  void SetOutcomes(const std::vector<ConfigOutcome>& outcomes);
  const std::vector<ConfigOutcome>& outcomes() const { return outcomes_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // The row of a result key ("run.cost_usd", "fidelity", "error"); -1 if none.
  int RowOf(const QString& key) const;
  // The column of a configuration's value, and the configuration a column shows.
  int ValueColumn(int configuration) const;
  int ConfigurationOf(int column) const;
  ColumnKind KindOf(int column) const;

  // One sentence per configuration after the baseline (Headline of
  // sim/report/comparison.h): time, cost, capital and energy against the baseline, what its step is made of.
  std::vector<QString> Headlines() const;

  // One line per configuration, columns "configuration", the flat result
  // keys, "error": the layout of the sweep CSV, so the same tools read both.
  QString ToCsv() const;

 private:
  struct Row {
    std::string key;
    const ResultField* field = nullptr;  // never null; text rows: field->is_text()
  };
  QString RawValue(int key_index, int configuration) const;

  std::vector<ConfigOutcome> outcomes_;
  QStringList short_names_;  // the column headers' names (ShortConfigurationNames)
  std::vector<Row> rows_;
  std::vector<std::string> csv_keys_;
  std::vector<std::vector<std::string>> csv_values_;  // per configuration
};

// Reads and writes the comparison-set file. Errors come back as
// "FILE[:LINE]: what" in *error.
bool SaveComparisonSet(const QString& path, const std::vector<Configuration>& configs, QString* error);
bool LoadComparisonSet(const QString& path, std::vector<Configuration>* configs, QString* error);

// Reads a scenario file into a Configuration (text as written, path absolute).
bool ReadConfigurationFile(const QString& path, Configuration* config, QString* error);

// Quotes a CSV field when it holds a comma, a quote or a line break.
QString CsvField(const QString& s);

}  // namespace trainsim::gui
