// The comparison charts, built from ConfigOutcomes: stacked bars of the step
// time breakdown, memory per GPU against capacity, scaling curves over node
// count (time and cost per run) with Qt Charts; the TP x PP heatmap and the
// per-stage timeline (Gantt) are painted widgets (Qt Charts has neither).
// Plus PNG and SVG export of any of them.
#pragma once

#include <QRectF>
#include <QString>
#include <QWidget>
#include <utility>
#include <vector>

#include "gui/comparison.h"

class QChart;

namespace trainsim::gui {

QChart* BuildBreakdownChart(const std::vector<ConfigOutcome>& outcomes);
QChart* BuildMemoryChart(const std::vector<ConfigOutcome>& outcomes);
// metric: time to train (hours) or cost per run (USD).
enum class ScalingMetric { kTimeToTrain, kCost };
QChart* BuildScalingChart(const std::vector<ConfigOutcome>& outcomes, ScalingMetric metric);

// Step time over the TP x PP grid of one configuration. Feasible cells are
// coloured by step time (green fast, red slow) with the time printed;
// infeasible cells are grey, hatched and labelled, with the reason as their
// tooltip. The configuration's own setting is outlined, the fastest cell starred.
class HeatmapWidget : public QWidget {
  Q_OBJECT
 public:
  explicit HeatmapWidget(QWidget* parent = nullptr);
  void SetOutcome(const ConfigOutcome* outcome);  // nullptr: empty
  // The cell under a point (nullptr outside the grid) and its tooltip text.
  const HeatCell* CellAt(const QPoint& pos) const;
  QString ToolTipAt(const QPoint& pos) const;
  // Where a cell is drawn (for tests and tooltips); empty if no such cell.
  QRect CellRect(int tensor, int pipeline) const;
  static QColor InfeasibleColor() { return QColor(0xd9, 0xd9, 0xd9); }
  QSize sizeHint() const override { return {420, 320}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;

 private:
  QRect GridRect() const;
  bool has_outcome_ = false;
  ConfigOutcome outcome_;
};

// One simulated step per pipeline stage: a row per timeline track, a bar per
// event. Without a timeline (the analytical path has none) it explains why.
class GanttWidget : public QWidget {
  Q_OBJECT
 public:
  explicit GanttWidget(QWidget* parent = nullptr);
  void SetOutcome(const ConfigOutcome* outcome);
  bool HasTimeline() const { return !events_.empty(); }
  QString PlaceholderText() const;
  // The event under a point of the last painted chart, as tooltip text.
  QString ToolTipAt(const QPoint& pos) const;
  QSize sizeHint() const override { return {420, 320}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;

 private:
  std::vector<std::pair<QRectF, int>> bars_;  // painted bars -> index in events_
  QString name_;
  QString fidelity_;
  std::vector<TimelineEvent> events_;  // clipped to the step
  int hidden_events_ = 0;               // recorded outside the step (checkpoints)
};

// Renders a widget (a chart view, the heatmap, the whole comparison view)
// to a PNG at `scale` times its logical size, or to an SVG with QSvgGenerator.
bool ExportPng(QWidget* w, const QString& path, qreal scale = 2.0);
bool ExportSvg(QWidget* w, const QString& path, const QString& title);

}  // namespace trainsim::gui
