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
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/result.h"
#include "sim/core/scenario.h"

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

// A cell of the TP x PP grid: the step time, or why that setting cannot run.
struct HeatCell {
  int tensor = 1;
  int pipeline = 1;
  bool feasible = false;
  double step_time_s = 0;
  QString reason;  // empty when feasible
};

// A point of the scaling curve over node count (the configuration with
// cluster.nodes overridden and data parallelism re-derived).
struct ScalingPoint {
  int nodes = 0;
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

// Results side by side: one row per result field (FlatResultKeys, then
// "error"), one column per configuration.
class ResultsTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;

  void SetOutcomes(const std::vector<ConfigOutcome>& outcomes);
  const std::vector<ConfigOutcome>& outcomes() const { return outcomes_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // One line per configuration, columns "configuration", the flat result
  // keys, "error": the layout of the sweep CSV, so the same tools read both.
  QString ToCsv() const;

 private:
  QString RawValue(int row, int column) const;

  std::vector<ConfigOutcome> outcomes_;
  std::vector<std::string> keys_;
  std::vector<std::vector<std::string>> values_;  // per column
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
