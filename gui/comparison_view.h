// The comparison view: the results table and every chart of one run, side by
// side in one grid (what `--screenshot` renders). Each panel has an export
// button (PNG, SVG); the heatmap and the timeline show one configuration,
// chosen in their header.
#pragma once

#include <QStringList>
#include <QWidget>
#include <map>
#include <vector>

#include "gui/comparison.h"

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QTableView;

namespace trainsim::gui {

class GanttWidget;
class HeatmapWidget;

class ComparisonView : public QWidget {
  Q_OBJECT
 public:
  explicit ComparisonView(QWidget* parent = nullptr);

  void SetOutcomes(const std::vector<ConfigOutcome>& outcomes);
  const std::vector<ConfigOutcome>& outcomes() const { return outcomes_; }

  ResultsTableModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QLabel* headline() const { return headline_; }
  HeatmapWidget* heatmap() const { return heatmap_; }
  GanttWidget* gantt() const { return gantt_; }
  QChartView* chartView(const QString& panel) const;
  // The legend under a chart, as shown (rich text, every name in full).
  QString LegendText(const QString& panel) const;
  // Chooses the configuration the heatmap and timeline show.
  void ShowDetailsOf(int configuration);

  // Panel names, also the exported file stems: breakdown, memory,
  // scaling-time, scaling-cost, heatmap, timeline.
  QStringList PanelNames() const;
  QWidget* Panel(const QString& name) const;

  // Writes NAME.png and NAME.svg for every panel and results.csv into `dir`.
  // Returns the paths written; on failure, *error says which and why.
  QStringList ExportAll(const QString& dir, QString* error);
  bool ExportCsv(const QString& path, QString* error) const;

 private:
  QWidget* MakePanel(const QString& name, QWidget* content, QComboBox* chooser = nullptr);
  void ExportPanelInteractive(const QString& name, bool svg);
  void ReplaceChart(const QString& panel, QChart* chart);
  QWidget* WithLegend(const QString& panel);

  std::vector<ConfigOutcome> outcomes_;
  ResultsTableModel* model_ = nullptr;
  QTableView* table_ = nullptr;
  QLabel* headline_ = nullptr;  // one sentence per configuration against the baseline
  HeatmapWidget* heatmap_ = nullptr;
  GanttWidget* gantt_ = nullptr;
  QComboBox* heat_choice_ = nullptr;
  QComboBox* gantt_choice_ = nullptr;
  std::map<QString, QChartView*> charts_;
  std::map<QString, QWidget*> panels_;  // what each export renders
  std::map<QString, QLabel*> legends_;
};

}  // namespace trainsim::gui
