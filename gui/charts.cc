#include "gui/charts.h"

#include <QFileInfo>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>
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

#include "sim/io/result_writer.h"
#include "sim/report/result_format.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace trainsim::gui {

namespace {

// A palette that stays distinguishable in print and for common colour blindness (Okabe-Ito).
const QColor kPalette[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00), QColor(0x00, 0x9E, 0x73),
                           QColor(0xCC, 0x79, 0xA7), QColor(0x56, 0xB4, 0xE9), QColor(0xD5, 0x5E, 0x00),
                           QColor(0xF0, 0xE4, 0x42), QColor(0x00, 0x00, 0x00)};
QColor PaletteColor(int i) { return kPalette[i % 8]; }

// The colour of each concept the timeline draws (EventColor), and the bar
// charts with it (ComponentColor): one colour, one meaning, in every panel.
const QColor kForwardColor(0x00, 0x72, 0xB2), kBackwardColor(0xE6, 0x9F, 0x00), kPipelineColor(0xCC, 0x79, 0xA7),
    kCollectiveColor(0x56, 0xB4, 0xE9), kContextParallelColor(0xD5, 0x5E, 0x00), kExpertColor(0x6A, 0x3D, 0x9A),
    kOptimizerColor(0x7f, 0x7f, 0x7f), kDataColor(0x00, 0x9E, 0x73), kTensorParallelColor(0xF0, 0xE4, 0x42);

// A concept the timeline draws has its colour there in the bar charts too
// (the optimizer grey, data green: pink had meant the optimizer in one panel
// and the activations in the next); the others take the palette in order.
QColor ComponentColor(const QString& component, int i) {
  if (component.startsWith(QLatin1String("optimizer"))) return kOptimizerColor;
  if (component == QLatin1String("data stall")) return kDataColor;
  if (component == QLatin1String("pipeline bubble")) return kPipelineColor;  // the timeline's pipeline sends
  if (component == QLatin1String("exposed communication")) return kCollectiveColor;  // its collectives
  if (component == QLatin1String("activations")) return QColor(0xD5, 0x5E, 0x00);
  return PaletteColor(i);
}

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
// llama3.1-70b-xe9680-h100-16n and llama3.1-70b-xe9712-gb200-16n share a long
// prefix and a suffix that the axis would have no room for; they go into the
// axis title instead ("llama3.1-70b-…-16n").
QStringList Categories(const std::vector<ConfigOutcome>& outcomes, QString* common) {
  QStringList cats;
  for (const auto& o : outcomes) cats << o.name;
  common->clear();
  if (cats.size() < 2) return cats;
  auto [n, k] = SharedEnds(cats);
  const QString& first = cats.front();
  // Cut after the last separator so labels start at a word.
  while (n > 0 && !QStringLiteral("-_ .").contains(first[n - 1])) --n;
  if (n < 4) n = 0;
  // And the common suffix ("-16n" of every configuration), short of the
  // prefix (a label keeps a character), cut before a separator.
  for (const QString& c : cats) k = std::min(k, static_cast<int>(c.size()) - n);
  while (k > 0 && !QStringLiteral("-_ .").contains(first[first.size() - k])) --k;
  if (k < 3) k = 0;
  if (n == 0 && k == 0) return cats;
  *common = first.left(n) + QStringLiteral("…") + first.right(k);  // "llama3.1-70b-…-16n"
  for (QString& c : cats) c = c.mid(n, c.size() - n - k);
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
                     double* max_total, bool only_runnable) {
  QChart* chart = NewChart(title);
  auto* series = new QStackedBarSeries;
  std::vector<QBarSet*> sets;
  for (int i = 0; i < components.size(); ++i) {
    auto* set = new QBarSet(components[i]);
    set->setColor(ComponentColor(components[i], i));
    set->setBorderColor(ComponentColor(components[i], i).darker(130));
    sets.push_back(set);
  }
  *max_total = 0;
  for (const auto& o : outcomes) {
    // A run that cannot happen draws no bar for what it would take.
    const bool shown = o.ran() && (!only_runnable || o.result.error.empty());
    const std::vector<double> v = shown ? values(o) : std::vector<double>(components.size(), 0.0);
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
  QStringList cats = Categories(outcomes, &common);
  // A slanted label longer than this is cut off at the chart's top; the
  // labels stay distinct (a category axis merges bars of one label).
  constexpr int kMostChars = 26;
  cats = ShortConfigurationNames(cats, kMostChars - 13);
  for (int i = 0; i < cats.size() && i < static_cast<int>(outcomes.size()); ++i) {
    if (only_runnable && outcomes[i].ran() && !outcomes[i].result.error.empty()) cats[i] += QObject::tr(" (cannot run)");
    if (!outcomes[i].ran()) cats[i] += QObject::tr(" (invalid)");
  }
  x->append(cats);
  // Whole labels: elided ones ("xe…" five times) do not tell the bars
  // apart. Long ones are slanted to fit under their bars.
  x->setTruncateLabels(false);
  qsizetype longest = 0;
  for (const QString& c : cats) longest = std::max(longest, c.size());
  if (longest > 8) x->setLabelsAngle(-90);  // upright, a label needs no more width than a line's height
  if (!common.isEmpty()) x->setTitleText(common);
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
      {QObject::tr("compute"), QObject::tr("exposed communication"), QObject::tr("pipeline bubble"), QObject::tr("optimizer"),
       QObject::tr("data stall")},
      [](const ConfigOutcome& o) {
        const StepBreakdown& b = o.result.breakdown;
        return std::vector<double>{b.compute_s, b.exposed_communication_s, b.pipeline_bubble_s, b.optimizer_s, b.data_stall_s};
      },
      &max_total, true);
  return chart;
}

QChart* BuildMemoryChart(const std::vector<ConfigOutcome>& outcomes) {
  double max_total = 0;
  QChart* chart = StackedChart(
      QObject::tr("Memory per GPU vs capacity"), QObject::tr("GiB per GPU"), outcomes,
      // The peak is these four parts (models/memory_model.h); the workspace is
      // already off the capacity the red segment marks.
      {QObject::tr("weights"), QObject::tr("gradients"), QObject::tr("optimizer state"), QObject::tr("activations")},
      [](const ConfigOutcome& o) {
        const MemoryReport& m = o.result.memory;
        return std::vector<double>{m.weights_gib, m.gradients_gib, m.optimizer_gib, m.activations_gib};
      },
      &max_total, false);
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
    line->setName(QObject::tr("usable GPU memory"));
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
  // Nodes of different sizes (an 8-GPU XE9680 and a 4-GPU GB200 tray) on one
  // node axis would read as equal clusters: then the axis counts GPUs.
  std::set<int> gpus_per_node;
  for (const auto& o : outcomes) {
    for (const ScalingPoint& p : o.scaling) {
      if (p.nodes > 0 && p.gpus > 0) gpus_per_node.insert(p.gpus / p.nodes);
    }
  }
  const bool by_gpus = gpus_per_node.size() > 1;
  const auto size_of = [by_gpus](const ScalingPoint& p) { return double(by_gpus ? p.gpus : p.nodes); };
  QChart* chart = NewChart(time ? (by_gpus ? QObject::tr("Time to train by GPU count") : QObject::tr("Time to train by node count"))
                                : (by_gpus ? QObject::tr("Cost per run by GPU count") : QObject::tr("Cost per run by node count")));
  auto* x = new QLogValueAxis;
  x->setBase(2);
  x->setLabelFormat(QStringLiteral("%g"));
  x->setTitleText(by_gpus ? QObject::tr("GPUs (analytical; DP re-derived)") : QObject::tr("nodes (analytical; DP re-derived)"));
  // Hours or days, whichever the longest run reads best in (the result-field table's scale).
  double longest_s = 0;
  for (const auto& o : outcomes) {
    for (const ScalingPoint& p : o.scaling) {
      if (p.feasible) longest_s = std::max(longest_s, p.time_to_train_s);
    }
  }
  DisplayScale scale = ScaleFor(Quantity::kDuration, longest_s);
  if (scale.divisor < 3600) scale = {3600, "", " h", 2};
  const QString unit = QString::fromStdString(scale.suffix).trimmed();
  auto* y = new QValueAxis;
  y->setTitleText(time ? QObject::tr("time to train (%1)").arg(unit == QLatin1String("h") ? QObject::tr("hours") : unit)
                       : QObject::tr("cost per run ($)"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  SmallLegend(chart);
  // Thousands or millions of dollars where the runs cost that much: "$6M", not "$6000000".
  double cost_divisor = 1;
  QString cost_suffix;
  if (!time) {
    double most = 0;
    for (const auto& o : outcomes) {
      for (const ScalingPoint& p : o.scaling) {
        if (p.feasible) most = std::max(most, p.cost_usd);
      }
    }
    if (most >= 1e6) cost_divisor = 1e6, cost_suffix = QStringLiteral("M");
    else if (most >= 1e4) cost_divisor = 1e3, cost_suffix = QStringLiteral("k");
  }
  double min_n = 1e9, max_n = 0, max_v = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    auto* series = new QLineSeries;
    // The node counts it cannot run at are named in its legend entry: a
    // curve that stops short says so.
    QStringList cannot;
    for (const ScalingPoint& p : outcomes[i].scaling) {
      if (!p.feasible) cannot << QString::number(p.nodes);
    }
    series->setName(cannot.isEmpty() ? outcomes[i].name
                                     : QObject::tr("%1 (cannot run at %2 nodes)").arg(outcomes[i].name, cannot.join(QStringLiteral(", "))));
    QPen pen(PaletteColor(static_cast<int>(i)));
    pen.setWidthF(2.5);
    series->setPen(pen);
    series->setPointsVisible(true);
    for (const ScalingPoint& p : outcomes[i].scaling) {
      if (!p.feasible) continue;
      const double v = time ? p.time_to_train_s / scale.divisor : p.cost_usd / cost_divisor;
      series->append(size_of(p), v);
      min_n = std::min(min_n, size_of(p));
      max_n = std::max(max_n, size_of(p));
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
  // As many decimals as neighbouring ticks need to read differently (a $0.40
  // run's axis is not "$0, $0, $1"); no numbers on an axis with nothing on it.
  const double tick_step = (y->max() - y->min()) / std::max(1, y->tickCount() - 1);
  const int decimals = tick_step > 0 ? std::clamp(static_cast<int>(std::ceil(-std::log10(tick_step) - 1e-9)), 0, 6) : 0;
  y->setLabelFormat((time ? QStringLiteral("%.") : QStringLiteral("$%.")) + QString::number(decimals) + QStringLiteral("f") + cost_suffix);
  y->setLabelsVisible(max_v > 0);
  return chart;
}

// ------------------------------------------------------------------ heatmap

HeatmapWidget::HeatmapWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(240, 200);
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

QString HeatmapWidget::Caption() const {
  // The outlined cell is the best of its TP x PP, which may not be the
  // configuration's own settings: its own figure is said beside it.
  QString own;
  if (has_outcome_ && outcome_.ran()) {
    const SimulationResult& r = outcome_.result;
    own = r.feasible() ? tr(" (as configured: %1 s, %2)").arg(QString::number(r.step_time_s, 'f', r.step_time_s < 10 ? 2 : 1),
                                                                QString::fromStdString(r.fidelity))
                       : tr(" (as configured: cannot run)");
  }
  return tr("Each cell: the best step time (s) over VP, micro batch (mb), recompute (rc) and, where they apply, EP, CP, SP and "
            "sharding, searched as trainsim plan does; the choice is written in the cell where it fits, and its tooltip has it "
            "in full. Green ★ fastest → red: 2× slower or more; outlined: this configuration's TP × PP%1; *: other settings "
            "changed; grey: nothing runs (hover: why).")
      .arg(own);
}

QRect HeatmapWidget::GridRect() const {
  const int top = fontMetrics().height() * 2 + 8;
  const int left = fontMetrics().horizontalAdvance(QStringLiteral("PP 16")) + fontMetrics().height() + 14;
  // The axis labels and the caption, as many lines as it wraps to.
  const int caption_h = fontMetrics().boundingRect(QRect(0, 0, std::max(10, width() - 8), 10000), Qt::TextWordWrap, Caption()).height();
  const int bottom = fontMetrics().height() + caption_h + 14;
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
  if (!c->feasible) {
    return where + tr(": cannot run: ") + c->reason +
           (c->searched > 0 ? tr("\n(none of the %1 settings of VP, micro batch and recompute tried runs)").arg(c->searched) : QString());
  }
  return where + tr(": %1 s per step, the best of %2 settings tried:\n%3\n(virtual stages %4, micro batch %5, recompute %6; %7)")
                     .arg(c->step_time_s, 0, 'f', 3)
                     .arg(c->searched)
                     .arg(c->chosen)
                     .arg(c->virtual_stages)
                     .arg(c->micro_batch)
                     .arg(c->recompute)
                     .arg(c->also_changed.isEmpty() ? tr("the scenario's other settings kept")
                                                    : tr("changed from the scenario's: %1").arg(c->also_changed));
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

// A few words for a cell: the full reason is in the tooltip. The planner's
// category says which kind; a divisibility rule's message, what it divides.
QString ShortReason(const HeatCell& cell) {
  if (cell.category == QLatin1String("memory")) return QObject::tr("memory");
  if (cell.category == QLatin1String("unsupported")) return QObject::tr("unsupported");
  if (cell.category == QLatin1String("simulation")) return QObject::tr("cannot run");
  const QString& reason = cell.reason;
  if (reason.contains(QLatin1String("GPUs"))) return QObject::tr("GPUs");
  if (reason.contains(QLatin1String("layers"))) return QObject::tr("layers");
  if (reason.contains(QLatin1String("heads"))) return QObject::tr("heads");
  if (reason.contains(QLatin1String("interleav"))) return QObject::tr("interleave");
  return QObject::tr("indivisible");
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
  // Two lines at most: what the grid is, then whose (elided in the middle: a
  // long name wrapped to a third line under the grid's top).
  const QFontMetrics bfm(bold);
  // The first line in the widest wording the panel holds.
  QString heading = tr("Best step by TP × PP");
  for (const QString& wording : {tr("Best step time by TP × PP (analytical):"), tr("Best step by TP × PP (analytical)")}) {
    if (bfm.horizontalAdvance(wording) <= width() - 8) {
      heading = wording;
      break;
    }
  }
  const QString title = has_outcome_ ? bfm.elidedText(heading, Qt::ElideRight, std::max(10, width() - 8)) + QLatin1Char('\n') +
                                           bfm.elidedText(outcome_.name, Qt::ElideMiddle, std::max(10, width() - 8))
                                     : bfm.elidedText(tr("Best step time by TP × PP"), Qt::ElideRight, std::max(10, width() - 8));
  p.drawText(QRect(4, 2, width() - 8, bfm.height() * 2 + 4), Qt::AlignCenter, title);
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
      // The time, its unit and the fastest's star as the cell holds them
      // (inside the outline of the configuration's own cell too): the unit goes first.
      const QString time = QString::number(c.step_time_s, 'f', c.step_time_s < 10 ? 2 : 1);
      const QString star = &c == best ? QStringLiteral("★ ") : QString();
      const int room = r.width() - 10;
      label = star + time + QStringLiteral(" s");
      if (p.fontMetrics().horizontalAdvance(label) > room) label = star + time;
      if (p.fontMetrics().horizontalAdvance(label) > room) label = time;
      // What the cell chose, in brief (the tooltip has it in full).
      const QString rc = c.recompute == QLatin1String("none") ? tr("no rc") : c.recompute == QLatin1String("full") ? tr("full rc") : tr("sel. rc");
      QString choice = tr("VP%1 mb%2").arg(c.virtual_stages).arg(c.micro_batch);
      if (!c.also_changed.isEmpty()) choice += QLatin1Char(' ') + c.also_changed;
      const QFontMetrics fm = p.fontMetrics();
      const int fit_w = std::max(fm.horizontalAdvance(choice), fm.horizontalAdvance(rc)) + 4;
      if (fm.height() * 3 + 4 <= r.height() && fit_w <= r.width()) label += QLatin1Char('\n') + choice + QLatin1Char('\n') + rc;
      else if (fm.height() * 2 + 4 <= r.height() && fm.horizontalAdvance(choice + QLatin1Char(' ') + rc) + 4 <= r.width())
        label += QLatin1Char('\n') + choice + QLatin1Char(' ') + rc;
      else if (!c.also_changed.isEmpty()) label += QLatin1Char('*');  // changed more than VP, mb, rc: in the tooltip
      p.setPen(Qt::black);
    } else {
      p.fillRect(r, InfeasibleColor());
      p.fillRect(r, QBrush(QColor(0x9a, 0x9a, 0x9a), Qt::BDiagPattern));
      label = QStringLiteral("✕ ") + ShortReason(c);
      if (p.fontMetrics().horizontalAdvance(label) + 4 > r.width()) label = ShortReason(c);
      if (p.fontMetrics().horizontalAdvance(label) + 4 > r.width()) label = QStringLiteral("✕");
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
  p.drawText(QRect(4, g.bottom() + fh + 6, width() - 8, height() - (g.bottom() + fh + 6)), Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap,
             Caption());
}

// ------------------------------------------------------------------ timeline

GanttWidget::GanttWidget(QWidget* parent) : QWidget(parent) {
  setMinimumSize(240, 200);
  setMouseTracking(true);
  setFocusPolicy(Qt::WheelFocus);
}

namespace {

QColor EventColor(const TimelineEvent& e) {
  const std::string& c = e.category;
  if (c == "forward" || c == "backward") {
    // Chunks alternate in shade, so interleaved passes read apart.
    int chunk = 0;
    for (const auto& [k, v] : e.args) {
      if (k == "chunk") chunk = std::atoi(v.c_str());
    }
    const QColor base = c == "forward" ? kForwardColor : kBackwardColor;
    return chunk % 2 ? base.lighter(135) : base;
  }
  if (c == "tp") return kTensorParallelColor;
  if (c == "pp") return kPipelineColor;
  if (c == "dp") return kCollectiveColor;
  if (c == "cp") return kContextParallelColor;
  if (c == "ep") return kExpertColor;
  if (c == "optimizer") return kOptimizerColor;
  if (c == "checkpoint") return QColor(0x8c, 0x56, 0x4b);
  if (c == "data") return kDataColor;
  if (c == "step") return QColor(0xc8, 0xc8, 0xc8);
  return QColor(0x40, 0x40, 0x40);  // a category without a colour of its own: never one a legend entry shows
}

// Stage by stage (stage 2 before stage 10), each stage's tracks together,
// run-wide tracks ("steps" first, storage last) around them.
std::tuple<int, int, std::string, int> TrackOrder(const std::string& t, int lane) {
  if (t == "steps") return {-1, 0, t, lane};
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
  const int rank = kind == " compute" ? 0 : kind == " tp" ? 1 : kind == " comm" ? 2 : kind == " dp" ? 3 : kind == " cp" ? 4 : 5;
  return {stage, rank, kind, lane};
}

}  // namespace

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
  QString tip = tr("%1 (%2): %3 ms, from %4 ms into the step")
                    .arg(QString::fromStdString(best->name), QString::fromStdString(best->track))
                    .arg(best->duration_s * 1e3, 0, 'f', 3)
                    .arg(best->start_s * 1e3, 0, 'f', 3);
  for (const auto& [k, v] : best->args) {
    QString value = QString::fromStdString(v);
    if (k == "bytes") value = QString::number(std::atof(v.c_str()) / (1024.0 * 1024), 'f', 1) + QStringLiteral(" MiB");
    tip += QStringLiteral("\n%1: %2").arg(QString::fromStdString(k).replace(QLatin1Char('_'), QLatin1Char(' ')), value);
  }
  return tip;
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
  error_ = outcome ? QString::fromStdString(outcome->result.error) : QString();
  events_.clear();
  lanes_.clear();
  hidden_events_ = 0;
  step_s_ = 0;
  if (outcome) {
    // The traced step, on its own origin, as `trainsim run --trace` writes
    // it; the first checkpoint (far later in the run) is counted, not drawn.
    const auto& all = outcome->result.timeline;
    events_ = TimelinePart(all, TracePart::kStep);
    hidden_events_ = static_cast<int>(TimelinePart(all, TracePart::kCheckpoint).size());
    lanes_ = TimelineLanes(events_);
    for (const auto& e : events_) step_s_ = std::max(step_s_, e.start_s + e.duration_s);
  }
  ResetZoom();
}

void GanttWidget::SetView(double start_s, double end_s) {
  const double full = step_s_ > 0 ? step_s_ : 1;
  const double min_span = full * 1e-5;
  double a = std::clamp(std::min(start_s, end_s), 0.0, full), b = std::clamp(std::max(start_s, end_s), 0.0, full);
  if (b - a < min_span) {
    const double mid = (a + b) / 2;
    a = std::max(0.0, mid - min_span / 2);
    b = std::min(full, a + min_span);
  }
  view0_ = a;
  view1_ = b;
  update();
}

void GanttWidget::ResetZoom() { SetView(0, step_s_ > 0 ? step_s_ : 1); }

QRect GanttWidget::PlotArea() const {
  const int fh = fontMetrics().height();
  return QRect(label_w_ + 12, fh * 2 + 8, std::max(10, width() - label_w_ - 24), std::max(10, height() - fh * 9 - 26));
}

void GanttWidget::wheelEvent(QWheelEvent* e) {
  if (events_.empty()) return;
  const QRect area = PlotArea();
  const double f = std::clamp((e->position().x() - area.left()) / std::max(1, area.width()), 0.0, 1.0);
  const double at = view0_ + f * (view1_ - view0_);
  const double factor = e->angleDelta().y() > 0 ? 0.8 : 1.25;
  const double span = (view1_ - view0_) * factor;
  SetView(at - f * span, at - f * span + span);
  e->accept();
}

void GanttWidget::mousePressEvent(QMouseEvent* e) {
  drag_x_ = e->position().x();
  drag_view0_ = view0_;
  dragging_ = e->button() == Qt::LeftButton;
}

void GanttWidget::mouseMoveEvent(QMouseEvent* e) {
  if (!dragging_ || events_.empty()) return;
  const double span = view1_ - view0_;
  const double dt = -(e->position().x() - drag_x_) / std::max(1, PlotArea().width()) * span;
  const double start = std::clamp(drag_view0_ + dt, 0.0, std::max(0.0, step_s_ - span));
  SetView(start, start + span);
}

void GanttWidget::mouseReleaseEvent(QMouseEvent*) { dragging_ = false; }

void GanttWidget::mouseDoubleClickEvent(QMouseEvent*) { ResetZoom(); }

void GanttWidget::keyPressEvent(QKeyEvent* e) {
  const double mid = (view0_ + view1_) / 2, span = view1_ - view0_;
  if (e->key() == Qt::Key_Plus || e->key() == Qt::Key_Equal) SetView(mid - span * 0.4, mid + span * 0.4);
  else if (e->key() == Qt::Key_Minus) SetView(mid - span * 0.625, mid + span * 0.625);
  else if (e->key() == Qt::Key_0) ResetZoom();
  else QWidget::keyPressEvent(e);
}

QString GanttWidget::PlaceholderText() const {
  if (name_.isEmpty()) return tr("Run the comparison to see the timeline of one simulated step.");
  // Asked for the DES and did not get it: say why rather than ask for it again.
  if (!error_.isEmpty()) return tr("No timeline for %1: %2").arg(name_, error_);
  return tr("No timeline for %1 (fidelity: %2).\n\nThe Gantt chart shows one simulated step per pipeline stage: "
            "forward and backward passes per micro batch and chunk, communication and the optimizer. The "
            "discrete-event simulator records it (fidelity DES); the analytical path computes the step time in "
            "closed form and has no events to show. Choose Run ▸ Fidelity ▸ DES and run again.")
      .arg(name_, fidelity_.isEmpty() ? QStringLiteral("?") : fidelity_);
}

void GanttWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  QFont bold = font();
  bold.setBold(true);
  bold.setPointSizeF(font().pointSizeF() * 1.1);
  p.setFont(bold);
  const int fh = fontMetrics().height();
  const bool zoomed = step_s_ > 0 && (view0_ > 0 || view1_ < step_s_);
  QString title = name_.isEmpty() ? tr("Timeline of one step") : tr("Timeline of one step: %1").arg(name_);
  if (zoomed) title += tr(" (zoomed: %1–%2 ms; double-click for all)").arg(view0_ * 1e3, 0, 'f', 1).arg(view1_ * 1e3, 0, 'f', 1);
  // Elided in the middle where it is wider than the panel (a long name lost both ends).
  p.drawText(QRect(0, 4, width(), fh * 2), Qt::AlignCenter, QFontMetrics(bold).elidedText(title, Qt::ElideMiddle, std::max(10, width() - 8)));
  p.setFont(font());
  bars_.clear();
  if (events_.empty()) {
    p.setPen(Qt::darkGray);
    p.drawText(rect().adjusted(16, fh * 2 + 8, -16, -8), Qt::AlignCenter | Qt::TextWordWrap, PlaceholderText());
    return;
  }
  // Rows: one per (track, lane); a lane holds slices that do not overlap.
  std::vector<std::pair<std::string, int>> rows;
  for (size_t i = 0; i < events_.size(); ++i) {
    const auto key = std::make_pair(events_[i].track, lanes_[i]);
    if (std::find(rows.begin(), rows.end(), key) == rows.end()) rows.push_back(key);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return TrackOrder(a.first, a.second) < TrackOrder(b.first, b.second); });
  auto row_label = [](const std::pair<std::string, int>& r) {
    return QString::fromStdString(r.first) + (r.second > 0 ? QStringLiteral(" (%1)").arg(r.second + 1) : QString());
  };
  label_w_ = 0;
  for (const auto& r : rows) label_w_ = std::max(label_w_, fontMetrics().horizontalAdvance(row_label(r)));
  const QRect area = PlotArea();
  const double row_h = double(area.height()) / rows.size();
  const double t0 = view0_, span = std::max(1e-12, view1_ - view0_);
  auto x_of = [&](double t) { return area.left() + (t - t0) / span * area.width(); };
  // Rows thinner than a line of text (32 lanes of a PP 8 MoE run) get a
  // smaller font, down to 7 pixels; thinner still, a label only where it
  // clears the last one drawn: none overlap.
  QFont label_font = font();
  // A font's line is about 1.2 times its pixel size.
  if (row_h < fontMetrics().height()) label_font.setPixelSize(std::max(7, static_cast<int>(row_h / 1.2)));
  p.setFont(label_font);
  const double label_h = QFontMetrics(label_font).height();
  double last_label_mid = -1e9;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = area.top() + i * row_h;
    p.setPen(Qt::black);
    const double mid = y + row_h / 2;
    if (mid - last_label_mid >= 0.9 * label_h) {
      p.drawText(QRectF(0, mid - label_h / 2, label_w_ + 6, label_h), Qt::AlignRight | Qt::AlignVCenter, row_label(rows[i]));
      last_label_mid = mid;
    }
    if (i % 2 == 1) p.fillRect(QRectF(area.left(), y, area.width(), row_h), QColor(0xf4, 0xf4, 0xf4));
  }
  p.setFont(font());
  p.save();
  p.setClipRect(area.adjusted(0, 0, 1, 1));
  for (size_t i = 0; i < events_.size(); ++i) {
    const TimelineEvent& e = events_[i];
    if (e.start_s > view1_ || e.start_s + e.duration_s < view0_) continue;
    const size_t row = std::find(rows.begin(), rows.end(), std::make_pair(e.track, lanes_[i])) - rows.begin();
    const double x0 = x_of(e.start_s), w = e.duration_s / span * area.width();
    const QRectF r(x0, area.top() + row * row_h + row_h * 0.15, std::max(1.0, w), row_h * 0.7);
    p.fillRect(r, EventColor(e));
    // A hairline between passes once they are wide enough to tell apart: one
    // bar per micro batch and chunk, not one solid bar per stage.
    if (w >= 4) {
      p.setPen(QPen(QColor(255, 255, 255, 200), 1));
      p.drawLine(QPointF(r.left(), r.top()), QPointF(r.left(), r.bottom()));
    }
    bars_.push_back({r, static_cast<int>(i)});
    const QString name = QString::fromStdString(e.name);
    // A name where the bar holds it, in width and height (a thin "steps" row clipped "step 1").
    if (fontMetrics().horizontalAdvance(name) + 4 < r.width() && fontMetrics().height() <= r.height() + 2) {
      p.setPen(e.category == "step" || e.category == "tp" ? Qt::black : Qt::white);
      p.drawText(r, Qt::AlignCenter, name);
    }
  }
  p.restore();
  // Time axis: ticks at round multiples (1, 2, 5 x 10^k) of the visible span.
  p.setPen(Qt::black);
  const int axis_y = area.bottom() + 4;
  p.drawLine(area.left(), axis_y, area.right(), axis_y);
  const bool in_s = span >= 2;
  const double unit = in_s ? 1 : 1e-3;
  const int max_ticks = std::max(2, area.width() / (fontMetrics().horizontalAdvance(QStringLiteral("00000.0 ms")) + 16));
  double tick = std::pow(10, std::floor(std::log10(span / unit / max_ticks))) * unit;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (span / (tick * m) <= max_ticks) {
      tick *= m;
      break;
    }
  }
  for (double t = std::ceil(t0 / tick) * tick; t <= view1_ + span * 1e-4; t += tick) {
    const int x = static_cast<int>(x_of(t));
    p.drawLine(x, axis_y, x, axis_y + 4);
    p.drawText(QRect(x - 50, axis_y + 5, 100, fh), Qt::AlignHCenter,
               QString::number(t / unit, 'g', 6) + (in_s ? QStringLiteral(" s") : QStringLiteral(" ms")));
  }
  // Legend of the bar colours, then what is not shown.
  int lx = 8;
  const int ly = axis_y + fh + 8;
  auto ev = [](const char* cat, const char* chunk = "0") {
    TimelineEvent e;
    e.category = cat;
    e.args = {{"chunk", chunk}};
    return e;
  };
  const std::pair<QString, QColor> legend[] = {
      {tr("forward (F<micro batch>.c<chunk>)"), EventColor(ev("forward"))},
      {tr("odd chunk"), EventColor(ev("forward", "1"))},
      {tr("backward"), EventColor(ev("backward"))},
      {tr("TP/CP wait"), EventColor(ev("tp"))},
      {tr("pipeline send"), EventColor(ev("pp"))},
      {tr("data-parallel collective"), EventColor(ev("dp"))},
      {tr("context-parallel ring"), EventColor(ev("cp"))},
      {tr("expert all-to-all"), EventColor(ev("ep"))},
      {tr("optimizer"), EventColor(ev("optimizer"))},
      {tr("data read"), EventColor(ev("data"))}};
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
  p.setPen(Qt::darkGray);
  QString note = tr("Wheel: zoom, drag: pan, double-click: whole step.");
  if (hidden_events_) note += tr(" The first checkpoint (%n event(s), later in the run) is in trainsim run --trace.", nullptr, hidden_events_);
  p.drawText(QRect(8, line_y + fh + 2, width() - 16, fh * 2 + 4), Qt::AlignLeft | Qt::TextWordWrap, note);
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
