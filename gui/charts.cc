#include "gui/charts.h"

#include <QFileInfo>
#include <QHelpEvent>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>
#include <QToolTip>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>

namespace trainsim::gui {

namespace {

// A palette that stays distinguishable in print and for common colour blindness (Okabe-Ito).
const QColor kPalette[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00), QColor(0x00, 0x9E, 0x73),
                           QColor(0xCC, 0x79, 0xA7), QColor(0x56, 0xB4, 0xE9), QColor(0xD5, 0x5E, 0x00),
                           QColor(0xF0, 0xE4, 0x42), QColor(0x00, 0x00, 0x00)};
QColor PaletteColor(int i) { return kPalette[i % 8]; }

QChart* NewChart(const QString& title) {
  auto* chart = new QChart;
  chart->setTitle(title);
  QFont f = chart->titleFont();
  f.setBold(true);
  f.setPointSizeF(f.pointSizeF() * 1.1);
  chart->setTitleFont(f);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setAnimationOptions(QChart::NoAnimation);  // renders complete at once: offscreen screenshots and exports
  chart->setMargins(QMargins(4, 4, 4, 4));
  return chart;
}

// Category labels: what tells the configurations apart. Names such as
// llama2-70b-4n-8nic and llama2-70b-4n-4nic share a long prefix that the
// axis would truncate; it goes into the axis title instead.
QStringList Categories(const std::vector<ConfigOutcome>& outcomes, QString* common) {
  QStringList cats;
  for (const auto& o : outcomes) cats << o.name;
  common->clear();
  if (cats.size() < 2) return cats;
  int n = 0;
  const QString& first = cats.front();
  while (n < first.size() && std::all_of(cats.begin(), cats.end(), [&](const QString& c) { return c.size() > n && c[n] == first[n]; })) ++n;
  // Cut after the last separator so labels start at a word.
  while (n > 0 && !QStringLiteral("-_ .").contains(first[n - 1])) --n;
  if (n < 4) return cats;
  *common = first.left(n);
  for (QString& c : cats) c = c.mid(n);
  return cats;
}

void SmallLegend(QChart* chart) {
  QFont f = chart->legend()->font();
  f.setPointSizeF(f.pointSizeF() * 0.9);
  chart->legend()->setFont(f);
}

// Stacked bars, one set per component, one category per configuration.
QChart* StackedChart(const QString& title, const QString& y_title, const std::vector<ConfigOutcome>& outcomes,
                     const QStringList& components, const std::function<std::vector<double>(const ConfigOutcome&)>& values,
                     double* max_total) {
  QChart* chart = NewChart(title);
  auto* series = new QStackedBarSeries;
  std::vector<QBarSet*> sets;
  for (int i = 0; i < components.size(); ++i) {
    auto* set = new QBarSet(components[i]);
    set->setColor(PaletteColor(i));
    set->setBorderColor(PaletteColor(i).darker(130));
    sets.push_back(set);
  }
  *max_total = 0;
  for (const auto& o : outcomes) {
    const std::vector<double> v = o.ran() ? values(o) : std::vector<double>(components.size(), 0.0);
    double total = 0;
    for (size_t i = 0; i < sets.size(); ++i) {
      *sets[i] << v[i];
      total += v[i];
    }
    *max_total = std::max(*max_total, total);
  }
  for (QBarSet* s : sets) series->append(s);
  series->setBarWidth(0.6);
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  QString common;
  x->append(Categories(outcomes, &common));
  if (!common.isEmpty()) x->setTitleText(common + QStringLiteral("…"));
  SmallLegend(chart);
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  auto* y = new QValueAxis;
  y->setTitleText(y_title);
  y->setRange(0, *max_total > 0 ? *max_total * 1.1 : 1);
  y->applyNiceNumbers();
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(y);
  return chart;
}

}  // namespace

QChart* BuildBreakdownChart(const std::vector<ConfigOutcome>& outcomes) {
  double max_total = 0;
  QChart* chart = StackedChart(
      QObject::tr("Step time breakdown"), QObject::tr("seconds per step"), outcomes,
      {QObject::tr("compute"), QObject::tr("exposed comm"), QObject::tr("bubble"), QObject::tr("optimizer"),
       QObject::tr("data stall")},
      [](const ConfigOutcome& o) {
        const StepBreakdown& b = o.result.breakdown;
        return std::vector<double>{b.compute_s, b.exposed_communication_s, b.pipeline_bubble_s, b.optimizer_s, b.data_stall_s};
      },
      &max_total);
  return chart;
}

QChart* BuildMemoryChart(const std::vector<ConfigOutcome>& outcomes) {
  double max_total = 0;
  QChart* chart = StackedChart(
      QObject::tr("Memory per GPU vs capacity"), QObject::tr("GiB per GPU"), outcomes,
      {QObject::tr("weights"), QObject::tr("grads"), QObject::tr("optimizer"), QObject::tr("activations"),
       QObject::tr("other")},
      [](const ConfigOutcome& o) {
        const MemoryReport& m = o.result.memory;
        const double listed = m.weights_gib + m.gradients_gib + m.optimizer_gib + m.activations_gib;
        return std::vector<double>{m.weights_gib, m.gradients_gib, m.optimizer_gib, m.activations_gib,
                                   std::max(0.0, m.peak_gib_per_gpu - listed)};
      },
      &max_total);
  // Capacity: a red segment across each configuration's bar (GPUs may differ).
  auto* x = chart->axes(Qt::Horizontal).value(0);
  auto* y = qobject_cast<QValueAxis*>(chart->axes(Qt::Vertical).value(0));
  double max_capacity = 0;
  bool first = true;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const double cap = outcomes[i].result.memory.capacity_gib;
    if (!outcomes[i].ran() || cap <= 0) continue;
    max_capacity = std::max(max_capacity, cap);
    auto* line = new QLineSeries;
    line->setName(QObject::tr("capacity"));
    QPen pen(QColor(0xC0, 0x00, 0x00));
    pen.setWidthF(3);
    pen.setStyle(Qt::DashLine);
    line->setPen(pen);
    line->append(double(i) - 0.42, cap);
    line->append(double(i) + 0.42, cap);
    chart->addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
    if (!first) {
      for (QLegendMarker* m : chart->legend()->markers(line)) m->setVisible(false);
    }
    first = false;
  }
  if (y) {
    y->setRange(0, std::max(max_total, max_capacity) * 1.1 + 1);
    y->applyNiceNumbers();
  }
  return chart;
}

QChart* BuildScalingChart(const std::vector<ConfigOutcome>& outcomes, ScalingMetric metric) {
  const bool time = metric == ScalingMetric::kTimeToTrain;
  QChart* chart = NewChart(time ? QObject::tr("Scaling: time to train over node count (analytical)")
                                : QObject::tr("Scaling: cost per run over node count (analytical)"));
  auto* x = new QLogValueAxis;
  x->setBase(2);
  x->setLabelFormat(QStringLiteral("%g"));
  x->setTitleText(QObject::tr("nodes"));
  auto* y = new QValueAxis;
  y->setTitleText(time ? QObject::tr("time to train (hours)") : QObject::tr("cost per run (USD)"));
  y->setLabelFormat(time ? QStringLiteral("%g") : QStringLiteral("%.0f"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  SmallLegend(chart);
  double min_n = 1e9, max_n = 0, max_v = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    auto* series = new QLineSeries;
    series->setName(outcomes[i].name);
    QPen pen(PaletteColor(static_cast<int>(i)));
    pen.setWidthF(2.5);
    series->setPen(pen);
    series->setPointsVisible(true);
    for (const ScalingPoint& p : outcomes[i].scaling) {
      if (!p.feasible) continue;
      const double v = time ? p.time_to_train_s / 3600 : p.cost_usd;
      series->append(p.nodes, v);
      min_n = std::min(min_n, double(p.nodes));
      max_n = std::max(max_n, double(p.nodes));
      max_v = std::max(max_v, v);
    }
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
  }
  if (max_n <= 0) {
    min_n = 1;
    max_n = 64;
  }
  x->setRange(min_n / 1.25, max_n * 1.25);
  y->setRange(0, max_v > 0 ? max_v * 1.1 : 1);
  y->applyNiceNumbers();
  return chart;
}

// ------------------------------------------------------------------ heatmap

HeatmapWidget::HeatmapWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(260, 200);
  setAutoFillBackground(true);
  QPalette pal = palette();
  pal.setColor(QPalette::Window, Qt::white);
  setPalette(pal);
}

void HeatmapWidget::SetOutcome(const ConfigOutcome* outcome) {
  has_outcome_ = outcome != nullptr;
  outcome_ = outcome ? *outcome : ConfigOutcome{};
  update();
}

QRect HeatmapWidget::GridRect() const {
  const int top = fontMetrics().height() * 2 + 8;
  const int left = fontMetrics().horizontalAdvance(QStringLiteral("PP 16")) + fontMetrics().height() + 14;
  const int bottom = fontMetrics().height() * 3 + 12;
  return QRect(left, top, std::max(10, width() - left - 10), std::max(10, height() - top - bottom));
}

QRect HeatmapWidget::CellRect(int tensor, int pipeline) const {
  const auto& ts = outcome_.heat_tensor;
  const auto& ps = outcome_.heat_pipeline;
  const auto ti = std::find(ts.begin(), ts.end(), tensor);
  const auto pi = std::find(ps.begin(), ps.end(), pipeline);
  if (ti == ts.end() || pi == ps.end()) return {};
  const QRect g = GridRect();
  const int cols = static_cast<int>(ts.size()), rows = static_cast<int>(ps.size());
  const int c = static_cast<int>(ti - ts.begin()), r = static_cast<int>(pi - ps.begin());
  const int x0 = g.left() + g.width() * c / cols, x1 = g.left() + g.width() * (c + 1) / cols;
  const int y0 = g.top() + g.height() * r / rows, y1 = g.top() + g.height() * (r + 1) / rows;
  return QRect(QPoint(x0, y0), QPoint(x1 - 1, y1 - 1));
}

const HeatCell* HeatmapWidget::CellAt(const QPoint& pos) const {
  for (const HeatCell& c : outcome_.heatmap) {
    if (CellRect(c.tensor, c.pipeline).contains(pos)) return &c;
  }
  return nullptr;
}

QString HeatmapWidget::ToolTipAt(const QPoint& pos) const {
  const HeatCell* c = CellAt(pos);
  if (!c) return {};
  const QString where = tr("TP %1 × PP %2").arg(c->tensor).arg(c->pipeline);
  if (!c->feasible) return where + tr(": cannot run: ") + c->reason;
  return where + tr(": %1 s per step").arg(c->step_time_s, 0, 'f', 3);
}

bool HeatmapWidget::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* he = static_cast<QHelpEvent*>(e);
    const QString text = ToolTipAt(he->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
      e->ignore();
    } else {
      QToolTip::showText(he->globalPos(), text, this, CellRect(CellAt(he->pos())->tensor, CellAt(he->pos())->pipeline));
    }
    return true;
  }
  return QWidget::event(e);
}

namespace {

// Green (fast) through yellow to red (slow), on a log scale of step time.
QColor HeatColor(double t) {
  const QColor a(0x1a, 0x98, 0x50), b(0xfe, 0xe0, 0x8b), c(0xd7, 0x30, 0x27);
  auto mix = [](const QColor& p, const QColor& q, double f) {
    return QColor::fromRgbF(p.redF() + (q.redF() - p.redF()) * f, p.greenF() + (q.greenF() - p.greenF()) * f,
                            p.blueF() + (q.blueF() - p.blueF()) * f);
  };
  t = std::clamp(t, 0.0, 1.0);
  return t < 0.5 ? mix(a, b, t * 2) : mix(b, c, (t - 0.5) * 2);
}

// A few words for a cell: the full reason is in the tooltip.
QString ShortReason(const QString& reason) {
  if (reason.contains(QLatin1String("fit"))) return QObject::tr("memory");
  if (reason.contains(QLatin1String("GPUs"))) return QObject::tr("GPUs");
  if (reason.contains(QLatin1String("layers"))) return QObject::tr("layers");
  if (reason.contains(QLatin1String("heads"))) return QObject::tr("heads");
  if (reason.contains(QLatin1String("interleav"))) return QObject::tr("interleave");
  if (reason.contains(QLatin1String("divid"))) return QObject::tr("indivisible");
  return QObject::tr("invalid");
}

}  // namespace

void HeatmapWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), Qt::white);
  QFont bold = font();
  bold.setBold(true);
  bold.setPointSizeF(font().pointSizeF() * 1.1);
  p.setFont(bold);
  const QString title = has_outcome_ ? tr("Step time by TP × PP (analytical): %1").arg(outcome_.name) : tr("Step time by TP × PP");
  p.drawText(QRect(0, 4, width(), fontMetrics().height() * 2), Qt::AlignCenter, title);
  p.setFont(font());
  if (!has_outcome_ || outcome_.heatmap.empty()) {
    p.setPen(Qt::darkGray);
    p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
               has_outcome_ && !outcome_.input_error.isEmpty() ? outcome_.input_error : tr("Run the comparison to fill the grid."));
    return;
  }
  double lo = 1e300, hi = 0;
  const HeatCell* best = nullptr;
  for (const HeatCell& c : outcome_.heatmap) {
    if (!c.feasible || c.step_time_s <= 0) continue;
    lo = std::min(lo, c.step_time_s);
    hi = std::max(hi, c.step_time_s);
    if (!best || c.step_time_s < best->step_time_s) best = &c;
  }
  // Colour from the fastest (green) to twice as slow or more (red): a
  // narrower range would paint a 2% difference as the whole spectrum.
  hi = std::max(hi, 2 * lo);
  const double span = std::log(hi) - std::log(lo);
  for (const HeatCell& c : outcome_.heatmap) {
    const QRect r = CellRect(c.tensor, c.pipeline).adjusted(1, 1, -1, -1);
    QString label;
    if (c.feasible) {
      p.fillRect(r, HeatColor((std::log(c.step_time_s) - std::log(lo)) / span));
      label = QString::number(c.step_time_s, 'f', c.step_time_s < 10 ? 2 : 1) + QStringLiteral(" s");
      if (&c == best) label = QStringLiteral("★ ") + label;
      p.setPen(Qt::black);
    } else {
      p.fillRect(r, InfeasibleColor());
      p.fillRect(r, QBrush(QColor(0x9a, 0x9a, 0x9a), Qt::BDiagPattern));
      label = QStringLiteral("✕ ") + ShortReason(c.reason);
      p.setPen(QColor(0x40, 0x40, 0x40));
    }
    QRect text_box = p.fontMetrics().boundingRect(r, Qt::AlignCenter, label).adjusted(-3, -1, 3, 1);
    if (!c.feasible) p.fillRect(text_box.intersected(r), InfeasibleColor());
    p.drawText(r, Qt::AlignCenter, label);
    if (c.tensor == outcome_.tensor && c.pipeline == outcome_.pipeline) {
      p.setPen(QPen(Qt::black, 3));
      p.setBrush(Qt::NoBrush);
      p.drawRect(r.adjusted(1, 1, -1, -1));
    }
  }
  // Axis labels.
  p.setPen(Qt::black);
  const QRect g = GridRect();
  for (int t : outcome_.heat_tensor) {
    const QRect r = CellRect(t, outcome_.heat_pipeline.front());
    p.drawText(QRect(r.left(), g.bottom() + 2, r.width(), fontMetrics().height() + 2), Qt::AlignCenter, QStringLiteral("TP %1").arg(t));
  }
  for (int pp : outcome_.heat_pipeline) {
    const QRect r = CellRect(outcome_.heat_tensor.front(), pp);
    p.drawText(QRect(0, r.top(), g.left() - 6, r.height()), Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("PP %1").arg(pp));
  }
  const int fh = fontMetrics().height();
  p.setPen(Qt::darkGray);
  p.drawText(QRect(0, g.bottom() + fh + 6, width(), fh * 2), Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap,
             tr("green: fastest (★) → red: 2× slower or more; outlined: this configuration; "
                "grey hatched: cannot run (hover for why)"));
}

// ------------------------------------------------------------------ timeline

GanttWidget::GanttWidget(QWidget* parent) : QWidget(parent) {
  setMinimumSize(260, 200);
  setMouseTracking(true);
}

QString GanttWidget::ToolTipAt(const QPoint& pos) const {
  // Bars can be a pixel wide: take the nearest one within a few pixels.
  const TimelineEvent* best = nullptr;
  double best_d = 4;
  for (const auto& [r, i] : bars_) {
    if (pos.y() < r.top() || pos.y() > r.bottom()) continue;
    const double d = pos.x() < r.left() ? r.left() - pos.x() : pos.x() > r.right() ? pos.x() - r.right() : 0;
    if (d < best_d) {
      best_d = d;
      best = &events_[i];
    }
  }
  if (!best) return {};
  double t0 = best->start_s;
  for (const auto& e : events_) t0 = std::min(t0, e.start_s);
  return tr("%1 (%2): %3 ms, from %4 ms")
      .arg(QString::fromStdString(best->name), QString::fromStdString(best->track))
      .arg(best->duration_s * 1e3, 0, 'f', 3)
      .arg((best->start_s - t0) * 1e3, 0, 'f', 3);
}

bool GanttWidget::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* he = static_cast<QHelpEvent*>(e);
    const QString text = ToolTipAt(he->pos());
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(he->globalPos(), text, this);
    return true;
  }
  return QWidget::event(e);
}

void GanttWidget::SetOutcome(const ConfigOutcome* outcome) {
  name_ = outcome ? outcome->name : QString();
  fidelity_ = outcome ? QString::fromStdString(outcome->result.fidelity) : QString();
  events_.clear();
  hidden_events_ = 0;
  if (outcome) {
    // The timeline holds one step and, when there are checkpoints, the first
    // checkpoint far later in the run: show the step (the window of the
    // pipeline-stage tracks) and what overlaps it; --trace has the rest.
    const auto& all = outcome->result.timeline;
    double t0 = 1e300, t1 = -1e300;
    for (const auto& e : all) {
      if (e.track.rfind("stage", 0) != 0) continue;
      t0 = std::min(t0, e.start_s);
      t1 = std::max(t1, e.start_s + e.duration_s);
    }
    for (const auto& e : all) {
      if (t1 < t0 || (e.start_s < t1 && e.start_s + e.duration_s > t0)) {
        TimelineEvent c = e;
        if (t1 >= t0) {
          c.start_s = std::max(e.start_s, t0);
          c.duration_s = std::min(e.start_s + e.duration_s, t1) - c.start_s;
        }
        events_.push_back(c);
      } else {
        ++hidden_events_;
      }
    }
  }
  update();
}

QString GanttWidget::PlaceholderText() const {
  if (name_.isEmpty()) return tr("Run the comparison to see the timeline of one simulated step.");
  return tr("No timeline for %1 (fidelity: %2).\n\nThe Gantt chart shows one simulated step per pipeline stage: "
            "forward and backward micro batches, communication and the optimizer. The discrete-event simulator "
            "records it (fidelity DES); the analytical path computes the step time in closed form and has no "
            "events to show. Choose Run ▸ Fidelity ▸ DES and run again once the DES is available in this build.")
      .arg(name_, fidelity_.isEmpty() ? QStringLiteral("?") : fidelity_);
}

namespace {

QColor EventColor(const TimelineEvent& e) {
  const QString n = QString::fromStdString(e.name).toLower();
  const QString track = QString::fromStdString(e.track).toLower();
  if (n.contains(QLatin1String("checkpoint"))) return QColor(0x8c, 0x56, 0x4b);
  if (n.contains(QLatin1String("optim"))) return QColor(0x7f, 0x7f, 0x7f);
  if (track.contains(QLatin1String("comm")) || n.contains(QLatin1String("reduce")) || n.contains(QLatin1String("gather")) ||
      n.contains(QLatin1String("send")) || n.contains(QLatin1String("recv"))) {
    return QColor(0xCC, 0x79, 0xA7);
  }
  if (n.startsWith(QLatin1Char('f'))) return QColor(0x00, 0x72, 0xB2);
  if (n.startsWith(QLatin1Char('b'))) return QColor(0xE6, 0x9F, 0x00);
  return QColor(0x00, 0x9E, 0x73);
}

}  // namespace

void GanttWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  QFont bold = font();
  bold.setBold(true);
  bold.setPointSizeF(font().pointSizeF() * 1.1);
  p.setFont(bold);
  const int fh = fontMetrics().height();
  p.drawText(QRect(0, 4, width(), fh * 2), Qt::AlignCenter,
             name_.isEmpty() ? tr("Timeline of one step") : tr("Timeline of one step: %1").arg(name_));
  p.setFont(font());
  if (events_.empty()) {
    p.setPen(Qt::darkGray);
    p.drawText(rect().adjusted(16, fh * 2 + 8, -16, -8), Qt::AlignCenter | Qt::TextWordWrap, PlaceholderText());
    return;
  }
  bars_.clear();
  std::vector<std::string> tracks;
  double t0 = 1e300, t1 = 0;
  for (const auto& e : events_) {
    if (std::find(tracks.begin(), tracks.end(), e.track) == tracks.end()) tracks.push_back(e.track);
    t0 = std::min(t0, e.start_s);
    t1 = std::max(t1, e.start_s + e.duration_s);
  }
  // Stage by stage (stage 2 before stage 10), each stage's tracks together, other tracks last.
  auto order = [](const std::string& t) {
    int stage = 1 << 30;
    std::string kind = t;
    if (t.rfind("stage ", 0) == 0) {
      size_t used = 0;
      try {
        stage = std::stoi(t.substr(6), &used);
        kind = t.substr(6 + used);
      } catch (const std::exception&) {
      }
    }
    const int rank = kind == " compute" ? 0 : kind == " comm" ? 1 : kind == " dp" ? 2 : 3;
    return std::make_tuple(stage, rank, kind);
  };
  std::stable_sort(tracks.begin(), tracks.end(), [&](const std::string& a, const std::string& b) { return order(a) < order(b); });
  int label_w = 0;
  for (const auto& t : tracks) label_w = std::max(label_w, fontMetrics().horizontalAdvance(QString::fromStdString(t)));
  const QRect area(label_w + 12, fh * 2 + 8, std::max(10, width() - label_w - 24), std::max(10, height() - fh * 7 - 26));
  const double row_h = double(area.height()) / tracks.size();
  const double span = t1 > t0 ? t1 - t0 : 1;
  auto x_of = [&](double t) { return area.left() + (t - t0) / span * area.width(); };
  for (size_t i = 0; i < tracks.size(); ++i) {
    const double y = area.top() + i * row_h;
    p.setPen(Qt::black);
    p.drawText(QRectF(0, y, label_w + 6, row_h), Qt::AlignRight | Qt::AlignVCenter, QString::fromStdString(tracks[i]));
    if (i % 2 == 1) p.fillRect(QRectF(area.left(), y, area.width(), row_h), QColor(0xf4, 0xf4, 0xf4));
  }
  for (const auto& e : events_) {
    const size_t row = std::find(tracks.begin(), tracks.end(), e.track) - tracks.begin();
    const QRectF r(x_of(e.start_s), area.top() + row * row_h + row_h * 0.15, std::max(1.0, e.duration_s / span * area.width()),
                   row_h * 0.7);
    p.fillRect(r, EventColor(e));
    bars_.push_back({r, static_cast<int>(&e - events_.data())});
    const QString name = QString::fromStdString(e.name);
    if (fontMetrics().horizontalAdvance(name) + 4 < r.width()) {
      p.setPen(Qt::white);
      p.drawText(r, Qt::AlignCenter, name);
    }
  }
  // Time axis: ticks at round multiples (1, 2, 5 x 10^k) from the start of the step.
  p.setPen(Qt::black);
  const int axis_y = area.bottom() + 4;
  p.drawLine(area.left(), axis_y, area.right(), axis_y);
  const bool in_s = span >= 2;
  const double unit = in_s ? 1 : 1e-3;
  const int max_ticks = std::max(2, area.width() / (fontMetrics().horizontalAdvance(QStringLiteral("0000 ms")) + 16));
  double tick = std::pow(10, std::floor(std::log10(span / unit / max_ticks))) * unit;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (span / (tick * m) <= max_ticks) {
      tick *= m;
      break;
    }
  }
  for (double t = 0; t <= span * 1.0001; t += tick) {
    const int x = static_cast<int>(x_of(t0 + t));
    p.drawLine(x, axis_y, x, axis_y + 4);
    p.drawText(QRect(x - 50, axis_y + 5, 100, fh), Qt::AlignHCenter,
               QString::number(t / unit, 'g', 4) + (in_s ? QStringLiteral(" s") : QStringLiteral(" ms")));
  }
  // Legend of the bar colours, then what is not shown.
  int lx = 8;
  const int ly = axis_y + fh + 8;
  const std::pair<QString, QColor> legend[] = {
      {tr("forward"), EventColor({"", "F", 0, 0})},      {tr("backward"), EventColor({"", "B", 0, 0})},
      {tr("communication"), EventColor({"comm", "", 0, 0})}, {tr("optimizer"), EventColor({"", "optimizer", 0, 0})},
      {tr("checkpoint"), EventColor({"", "checkpoint", 0, 0})}, {tr("other"), EventColor({"", "", 0, 0})}};
  int line_y = ly;
  for (const auto& [label, color] : legend) {
    const int item_w = fh + fontMetrics().horizontalAdvance(label) + 12;
    if (lx > 8 && lx + item_w > width()) {  // wrap rather than clip
      lx = 8;
      line_y += fh + 2;
    }
    p.fillRect(QRect(lx, line_y + 2, fh - 4, fh - 4), color);
    p.setPen(Qt::black);
    p.drawText(QPoint(lx + fh, line_y + fontMetrics().ascent()), label);
    lx += item_w;
  }
  if (hidden_events_) {
    p.setPen(Qt::darkGray);
    p.drawText(QRect(8, line_y + fh + 2, width() - 16, fh + 2), Qt::AlignLeft,
               tr("%n event(s) outside this step (checkpoints): trainsim run --trace", nullptr, hidden_events_));
  }
}

// ------------------------------------------------------------------- export

bool ExportPng(QWidget* w, const QString& path, qreal scale) {
  QImage img(w->size() * scale, QImage::Format_ARGB32_Premultiplied);
  img.setDevicePixelRatio(scale);
  img.fill(Qt::white);
  {
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    p.setRenderHint(QPainter::TextAntialiasing);
    w->render(&p);
  }
  return img.save(path, "PNG");
}

bool ExportSvg(QWidget* w, const QString& path, const QString& title) {
  QSvgGenerator gen;
  gen.setFileName(path);
  gen.setSize(w->size());
  gen.setViewBox(QRect(QPoint(0, 0), w->size()));
  gen.setTitle(title);
  gen.setDescription(QStringLiteral("trainsim-gui"));
  QPainter p;
  if (!p.begin(&gen)) return false;
  w->render(&p);
  p.end();
  return QFileInfo(path).size() > 0;
}

}  // namespace trainsim::gui
