#include "gui/comparison_view.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QScrollBar>
#include <QStyle>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QXYSeries>
#include <algorithm>

#include "gui/charts.h"

namespace trainsim::gui {

ComparisonView::ComparisonView(QWidget* parent) : QWidget(parent) {
  model_ = new ResultsTableModel(this);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("resultsTable"));
  table_->setModel(model_);
  table_->setAlternatingRowColors(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectColumns);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 4);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // No column wider than a long figure: the parallelism text (whole in its
  // tooltip) no longer pushes the second configuration out of a 1080p view.
  table_->horizontalHeader()->setMaximumSectionSize(table_->fontMetrics().horizontalAdvance(QStringLiteral("0")) * kResultColumnChars);
  table_->setTextElideMode(Qt::ElideRight);
  connect(table_->horizontalHeader(), &QHeaderView::sectionClicked, this,
          [this](int column) { ShowDetailsOf(model_->ConfigurationOf(column)); });
  headline_ = new QLabel(this);
  headline_->setObjectName(QStringLiteral("headline"));
  headline_->setWordWrap(true);
  headline_->setTextFormat(Qt::RichText);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  heatmap_ = new HeatmapWidget(this);
  heatmap_->setObjectName(QStringLiteral("heatmap"));
  gantt_ = new GanttWidget(this);
  gantt_->setObjectName(QStringLiteral("timeline"));
  heat_choice_ = new QComboBox(this);
  heat_choice_->setToolTip(tr("Configuration shown in the heatmap"));
  gantt_choice_ = new QComboBox(this);
  gantt_choice_->setToolTip(tr("Configuration shown in the timeline"));
  // As wide as 18 characters, not as the longest name: a 120-character name
  // made its panel, and so the window, wider than a 1920-pixel screen.
  for (QComboBox* c : {heat_choice_, gantt_choice_}) {
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(18);
  }
  connect(heat_choice_, &QComboBox::currentIndexChanged, this, [this](int i) {
    heatmap_->SetOutcome(i >= 0 && i < static_cast<int>(outcomes_.size()) ? &outcomes_[i] : nullptr);
  });
  connect(gantt_choice_, &QComboBox::currentIndexChanged, this, [this](int i) {
    gantt_->SetOutcome(i >= 0 && i < static_cast<int>(outcomes_.size()) ? &outcomes_[i] : nullptr);
  });

  for (const char* name : {"breakdown", "memory", "scaling-time", "scaling-cost"}) {
    auto* view = new QChartView(this);
    view->setRenderHint(QPainter::Antialiasing);
    view->setObjectName(QString::fromLatin1(name));
    view->setMinimumSize(240, 220);
    charts_[QString::fromLatin1(name)] = view;
  }

  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(4, 4, 4, 4);
  grid->setSpacing(6);
  auto* results = new QWidget(this);
  auto* rl = new QVBoxLayout(results);
  rl->setContentsMargins(0, 0, 0, 0);
  auto* title = new QLabel(tr("<b>Results</b> against the first configuration, the baseline (full precision in tooltips; "
                              "click a column to show it in the heatmap and timeline)"),
                           results);
  title->setWordWrap(true);
  rl->addWidget(title);
  rl->addWidget(headline_);
  rl->addWidget(table_, 1);
  panels_[QStringLiteral("results")] = table_;
  grid->addWidget(results, 0, 0, 2, 1);
  grid->addWidget(MakePanel(QStringLiteral("breakdown"), WithLegend(QStringLiteral("breakdown"))), 0, 1);
  grid->addWidget(MakePanel(QStringLiteral("memory"), WithLegend(QStringLiteral("memory"))), 0, 2);
  grid->addWidget(MakePanel(QStringLiteral("heatmap"), heatmap_, heat_choice_), 0, 3);
  grid->addWidget(MakePanel(QStringLiteral("scaling-time"), WithLegend(QStringLiteral("scaling-time"))), 1, 1);
  grid->addWidget(MakePanel(QStringLiteral("scaling-cost"), WithLegend(QStringLiteral("scaling-cost"))), 1, 2);
  grid->addWidget(MakePanel(QStringLiteral("timeline"), gantt_, gantt_choice_), 1, 3);
  for (int c = 1; c <= 3; ++c) grid->setColumnStretch(c, 3);
  grid->setColumnStretch(0, 0);
  SetOutcomes({});
}

QWidget* ComparisonView::MakePanel(const QString& name, QWidget* content, QComboBox* chooser) {
  auto* panel = new QWidget(this);
  auto* v = new QVBoxLayout(panel);
  v->setContentsMargins(0, 0, 0, 0);
  v->setSpacing(2);
  auto* header = new QHBoxLayout;
  header->addStretch(1);
  if (chooser) header->addWidget(chooser);
  auto* exporter = new QToolButton(panel);
  exporter->setText(tr("Export"));
  exporter->setToolTip(tr("Export this chart as PNG or SVG"));
  exporter->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(exporter);
  menu->addAction(tr("As PNG…"), this, [this, name] { ExportPanelInteractive(name, false); });
  menu->addAction(tr("As SVG…"), this, [this, name] { ExportPanelInteractive(name, true); });
  exporter->setMenu(menu);
  header->addWidget(exporter);
  v->addLayout(header);
  v->addWidget(content, 1);
  panels_[name] = content;
  return panel;
}

QWidget* ComparisonView::WithLegend(const QString& panel) {
  // Qt Charts elides legend labels that do not fit in one row ("co… ex…");
  // the legend is a wrapping label under the chart instead, with every name in full.
  auto* box = new QWidget(this);
  box->setAutoFillBackground(true);
  QPalette pal = box->palette();
  pal.setColor(QPalette::Window, Qt::white);
  box->setPalette(pal);
  auto* v = new QVBoxLayout(box);
  v->setContentsMargins(0, 0, 0, 4);
  v->setSpacing(0);
  v->addWidget(charts_.at(panel), 1);
  auto* legend = new QLabel(box);
  legend->setObjectName(panel + QStringLiteral("-legend"));
  legend->setWordWrap(true);
  legend->setTextFormat(Qt::RichText);
  legend->setAlignment(Qt::AlignHCenter);
  legend->setContentsMargins(6, 0, 6, 0);
  v->addWidget(legend);
  legends_[panel] = legend;
  return box;
}

QString ComparisonView::LegendText(const QString& panel) const {
  const auto it = legends_.find(panel);
  return it == legends_.end() ? QString() : it->second->text();
}

QChartView* ComparisonView::chartView(const QString& panel) const {
  const auto it = charts_.find(panel);
  return it == charts_.end() ? nullptr : it->second;
}

void ComparisonView::ReplaceChart(const QString& panel, QChart* chart) {
  QChartView* view = charts_.at(panel);
  QChart* old = view->chart();
  view->setChart(chart);  // the view releases, but does not delete, the previous chart
  delete old;
  QStringList items;
  for (QLegendMarker* m : chart->legend()->markers()) {
    if (!m->isVisible()) continue;
    // A line's colour is its series' pen (the marker's own pen is the outline).
    auto* xy = qobject_cast<QXYSeries*>(m->series());
    const QColor c = xy ? xy->pen().color() : m->brush().color();
    items << QStringLiteral("<span style=\"color:%1\">&#9632;</span>&nbsp;%2").arg(c.name(), m->label().toHtmlEscaped());
  }
  chart->legend()->hide();
  if (auto it = legends_.find(panel); it != legends_.end()) it->second->setText(items.join(QStringLiteral(" &nbsp; ")));
}

void ComparisonView::SetOutcomes(const std::vector<ConfigOutcome>& outcomes) {
  outcomes_ = outcomes;
  model_->SetOutcomes(outcomes_);
  table_->resizeColumnsToContents();
  QStringList lines;
  for (const QString& h : model_->Headlines()) {
    const int colon = h.indexOf(QLatin1String(": "));
    lines << (colon > 0 ? QStringLiteral("<b>%1</b>%2").arg(h.left(colon).toHtmlEscaped(), h.mid(colon).toHtmlEscaped()) : h.toHtmlEscaped());
  }
  if (!outcomes_.empty() && lines.isEmpty()) lines << tr("Add a second configuration to see what it changes against %1.").arg(outcomes_[0].name.toHtmlEscaped());
  // A line per configuration that has `text` to say, named when there are several.
  auto each = [&](const QString& label, QString ConfigOutcome::*text) {
    for (const ConfigOutcome& o : outcomes_) {
      if ((o.*text).isEmpty()) continue;
      const QString whose = outcomes_.size() == 1 ? QString() : QStringLiteral(" (%1)").arg(o.name.toHtmlEscaped());
      lines << QStringLiteral("<b>%1</b>%2: %3").arg(label, whose, (o.*text).toHtmlEscaped());
    }
  };
  // What the figures leave out (config.json keys accepted unread, a precision without a recipe).
  for (const ConfigOutcome& o : outcomes_) {
    const QString whose = outcomes_.size() == 1 ? QString() : QStringLiteral(" (%1)").arg(o.name.toHtmlEscaped());
    for (QString w : o.warnings) {
      if (w.startsWith(QLatin1String("warning: "))) w = w.mid(9);
      lines << tr("<b>Warning</b>%1: %2").arg(whose, w.toHtmlEscaped());
    }
  }
  // Where a prediction leans on the host cost per kernel, an estimate until measured.
  each(tr("Waits for the host"), &ConfigOutcome::host_issue);
  // How far to trust the figures: each distinct track record once, with the configurations it covers.
  std::vector<std::pair<QString, QStringList>> records;
  for (const ConfigOutcome& o : outcomes_) {
    if (o.track_record.isEmpty()) continue;
    auto it = std::find_if(records.begin(), records.end(), [&](const auto& r) { return r.first == o.track_record; });
    if (it == records.end()) records.push_back({o.track_record, {o.name}});
    else it->second << o.name;
  }
  for (const auto& [record, names] : records) {
    const QString whose = records.size() == 1 ? QString() : QStringLiteral(" (%1)").arg(names.join(QStringLiteral(", ")).toHtmlEscaped());
    lines << tr("<b>Track record</b>%1: %2").arg(whose, record.toHtmlEscaped());
  }
  headline_->setText(lines.join(QStringLiteral("<br>")));
  headline_->setVisible(!lines.isEmpty());
  // Wide enough for every column, up to half the view: side by side is the point.
  // The vertical scroll bar counts: the table has ~70 rows, and without it
  // the bar covered the right end of the last column ("$76" for $764).
  int w = table_->verticalHeader()->sizeHint().width() + 2 * table_->frameWidth() + 4 +
          table_->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, table_->verticalScrollBar());
  for (int c = 0; c < model_->columnCount(); ++c) w += table_->columnWidth(c);
  table_->setMinimumWidth(std::min(std::max(w, 200), std::max(200, width() / 2)));
  ReplaceChart(QStringLiteral("breakdown"), BuildBreakdownChart(outcomes_));
  ReplaceChart(QStringLiteral("memory"), BuildMemoryChart(outcomes_));
  ReplaceChart(QStringLiteral("scaling-time"), BuildScalingChart(outcomes_, ScalingMetric::kTimeToTrain));
  ReplaceChart(QStringLiteral("scaling-cost"), BuildScalingChart(outcomes_, ScalingMetric::kCost));
  for (QComboBox* c : {heat_choice_, gantt_choice_}) {
    const QSignalBlocker block(c);
    c->clear();
    for (const auto& o : outcomes_) c->addItem(o.name);
  }
  ShowDetailsOf(0);
}

void ComparisonView::ShowDetailsOf(int configuration) {
  const bool ok = configuration >= 0 && configuration < static_cast<int>(outcomes_.size());
  for (QComboBox* c : {heat_choice_, gantt_choice_}) {
    const QSignalBlocker block(c);
    c->setCurrentIndex(ok ? configuration : -1);
  }
  heatmap_->SetOutcome(ok ? &outcomes_[configuration] : nullptr);
  gantt_->SetOutcome(ok ? &outcomes_[configuration] : nullptr);
}

QStringList ComparisonView::PanelNames() const {
  return {QStringLiteral("breakdown"), QStringLiteral("memory"), QStringLiteral("scaling-time"),
          QStringLiteral("scaling-cost"), QStringLiteral("heatmap"), QStringLiteral("timeline")};
}

QWidget* ComparisonView::Panel(const QString& name) const {
  const auto it = panels_.find(name);
  return it == panels_.end() ? nullptr : it->second;
}

QStringList ComparisonView::ExportAll(const QString& dir, QString* error) {
  QStringList written;
  if (!QDir().mkpath(dir)) {
    if (error) *error = dir + tr(": cannot create the folder");
    return written;
  }
  const QDir d(dir);
  for (const QString& name : PanelNames()) {
    QWidget* w = Panel(name);
    const QString png = d.filePath(name + QStringLiteral(".png"));
    const QString svg = d.filePath(name + QStringLiteral(".svg"));
    if (!ExportPng(w, png)) {
      if (error) *error = png + tr(": cannot write");
      return written;
    }
    written << png;
    if (!ExportSvg(w, svg, name)) {
      if (error) *error = svg + tr(": cannot write");
      return written;
    }
    written << svg;
  }
  const QString csv = d.filePath(QStringLiteral("results.csv"));
  if (!ExportCsv(csv, error)) return written;
  written << csv;
  return written;
}

bool ComparisonView::ExportCsv(const QString& path, QString* error) const {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = path + tr(": cannot write: ") + f.errorString();
    return false;
  }
  f.write(model_->ToCsv().toUtf8());
  if (!f.commit()) {
    if (error) *error = path + tr(": cannot write: ") + f.errorString();
    return false;
  }
  return true;
}

void ComparisonView::ExportPanelInteractive(const QString& name, bool svg) {
  const QString filter = svg ? tr("SVG image (*.svg)") : tr("PNG image (*.png)");
  const QString path = QFileDialog::getSaveFileName(this, tr("Export %1").arg(name),
                                                    name + (svg ? QStringLiteral(".svg") : QStringLiteral(".png")), filter);
  if (path.isEmpty()) return;
  const bool ok = svg ? ExportSvg(Panel(name), path, name) : ExportPng(Panel(name), path);
  if (!ok) QMessageBox::warning(this, tr("Export"), path + tr(": cannot write"));
}

}  // namespace trainsim::gui
