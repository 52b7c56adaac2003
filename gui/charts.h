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
  QString Caption() const;  // the key below the grid, with the configuration's own step time
  bool has_outcome_ = false;
  ConfigOutcome outcome_;
};

// One simulated step per pipeline stage, as `trainsim run --trace` writes it
// (TimelinePart: time 0 at the step's start): a row per timeline track and
// lane, a bar per forward/backward pass of each micro batch and chunk, per
// send, collective and the optimizer. Zoomable: the wheel zooms around the
// pointer, dragging pans, double-click (or 0) shows the whole step, +/- zoom.
// Without a timeline (the analytical path has none) it explains why.
class GanttWidget : public QWidget {
  Q_OBJECT
 public:
  explicit GanttWidget(QWidget* parent = nullptr);
  void SetOutcome(const ConfigOutcome* outcome);
  bool HasTimeline() const { return !events_.empty(); }
  QString PlaceholderText() const;
  // The event under a point of the last painted chart, as tooltip text
  // (name, track, duration, start, and its args: micro batch, chunk, bytes, link).
  QString ToolTipAt(const QPoint& pos) const;
  // The visible window, seconds from the step's start.
  void SetView(double start_s, double end_s);
  void ResetZoom();
  double viewStart() const { return view0_; }
  double viewEnd() const { return view1_; }
  double stepSeconds() const { return step_s_; }
  // Bars painted last time (for tests): how many are on screen.
  int PaintedBars() const { return static_cast<int>(bars_.size()); }
  QSize sizeHint() const override { return {420, 320}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;

 private:
  QRect PlotArea() const;
  std::vector<std::pair<QRectF, int>> bars_;  // painted bars -> index in events_
  QString name_;
  QString fidelity_;
  QString error_;  // why the run has no DES step (does not fit, refused), if that is why

  std::vector<TimelineEvent> events_;  // the traced step, time 0 at its start
  std::vector<int> lanes_;             // per event, its lane on its track
  int hidden_events_ = 0;              // the first checkpoint's events
  double step_s_ = 0;
  double view0_ = 0, view1_ = 1;
  int label_w_ = 0;
  bool dragging_ = false;
  double drag_x_ = 0, drag_view0_ = 0;
};

// Renders a widget (a chart view, the heatmap, the whole comparison view)
// to a PNG at `scale` times its logical size, or to an SVG with QSvgGenerator.
bool ExportPng(QWidget* w, const QString& path, qreal scale = 2.0);
bool ExportSvg(QWidget* w, const QString& path, const QString& title);

}  // namespace trainsim::gui
