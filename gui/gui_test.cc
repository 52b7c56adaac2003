// Qt Test suite of trainsim-gui, run under QT_QPA_PLATFORM=offscreen (ctest
// sets it). It drives the real widgets: the form round-trips a scenario,
// invalid input shows the CLI's message and disables Run, two configurations
// run in the worker and fill the table and charts, the heatmap marks an
// infeasible cell, the window stays responsive and Cancel works, exports
// write files, comparison sets save and load.
#include <yaml-cpp/yaml.h>

#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTimer>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QBarSet>
#include <QtTest/QtTest>

#include "gui/charts.h"
#include "gui/comparison_view.h"
#include "gui/field_help.h"
#include "gui/main_window.h"
#include "gui/scenario_form.h"
#include "sim/core/scenario.h"
#include "sim/io/result_writer.h"
#include "sim/io/scenario_loader.h"
#include "sim/run/micro_batch_choice.h"

using namespace trainsim;
using namespace trainsim::gui;

namespace {

QString TestData(const char* name) { return QStringLiteral(TRAINSIM_SOURCE_DIR "/gui/testdata/") + QLatin1String(name); }

Configuration Read(const char* name) {
  Configuration c;
  QString err;
  if (!ReadConfigurationFile(TestData(name), &c, &err)) qFatal("%s", qPrintable(err));
  return c;
}

template <class W>
W* Field(QWidget* form, const char* key) {
  W* w = form->findChild<W*>(QString::fromLatin1(key));
  if (!w) qFatal("no form field %s", key);
  return w;
}

// Runs every configuration of the window and waits for the worker.
bool RunAndWait(MainWindow& w) {
  for (const auto& c : w.configurations()) {
    const QString msg = ValidationMessage(c);
    if (!msg.isEmpty()) {
      qWarning("cannot run: %s", qPrintable(msg));
      return false;
    }
  }
  QSignalSpy spy(w.runner(), &ComparisonRunner::finished);
  w.Run();
  if (!w.runner()->IsRunning() && spy.isEmpty()) return false;
  if (!spy.wait(120000)) return false;
  return spy.takeFirst().at(0).toBool() == false;
}

int CountPixels(const QImage& img, const QRect& r, const QColor& c) {
  int n = 0;
  for (int y = r.top(); y <= r.bottom(); ++y) {
    for (int x = r.left(); x <= r.right(); ++x) n += QColor(img.pixel(x, y)) == c;
  }
  return n;
}

}  // namespace

class GuiTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings (recent files) away from the user's
    QCoreApplication::setOrganizationName(QStringLiteral("trainsim-test"));
    QCoreApplication::setApplicationName(QStringLiteral("trainsim-gui-test"));
  }

  // The scaling curve sits around the configuration's own node count.
  void scalingNodesSurroundTheConfiguration() {
    QCOMPARE(ScalingNodesAround(4), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
    QCOMPARE(ScalingNodesAround(2048), (std::vector<int>{256, 512, 1024, 2048, 4096, 8192, 16384}));
    QCOMPARE(ScalingNodesAround(18), (std::vector<int>{9, 18, 36, 72, 144, 288, 576}));
    QCOMPARE(ScalingNodesAround(1), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  }

  // Column headers keep what tells long names apart, and short names whole.
  void longConfigurationNamesKeepWhatDiffers() {
    const QString a = QStringLiteral("llama2-70b-pretraining-poweredge-xe9680-h100-sxm-80gb-16-nodes-8x-connectx7-ndr-rail-optimized-powerscale");
    QString b = a;
    b.replace(QStringLiteral("-8x-"), QStringLiteral("-4x-"));
    const QStringList s = ShortConfigurationNames({a, b, QStringLiteral("short")}, 22);
    QCOMPARE(s[2], QStringLiteral("short"));
    // With a third name sharing nothing, only the middle of the long ones can go.
    QVERIFY(s[0].size() <= 22);
    const QStringList two = ShortConfigurationNames({a, b}, 22);
    QVERIFY2(two[0].contains(QLatin1String("8x")) && two[1].contains(QLatin1String("4x")), qPrintable(two.join(QLatin1Char('|'))));
    QVERIFY2(two[0].size() <= 22 && two[0] != two[1], qPrintable(two.join(QLatin1Char('|'))));
    QCOMPARE(ShortConfigurationNames({QStringLiteral("llama2-70b-4n-8nic")}, 22)[0], QStringLiteral("llama2-70b-4n-8nic"));
    // A third long name that shares little with them: still three labels, never two alike.
    const QString c = QStringLiteral("llama2-70b-1n-oom-a-long-name-that-shares-only-its-model-with-the-others");
    const QStringList three = ShortConfigurationNames({a, b, c}, 13);
    QVERIFY2(three[0] != three[1] && three[1] != three[2] && three[0] != three[2], qPrintable(three.join(QLatin1Char('|'))));
    const QStringList twins = ShortConfigurationNames({QStringLiteral("same"), QStringLiteral("same")}, 13);
    QVERIFY2(twins[0] != twins[1], qPrintable(twins.join(QLatin1Char('|'))));
    // Names that share a long prefix keep what tells them apart.
    const QStringList qwen = ShortConfigurationNames({QStringLiteral("qwen3-235b-a22b-32n-8nic"), QStringLiteral("qwen3-235b-a22b-32n-4nic")}, 22);
    QVERIFY2(qwen[0].endsWith(QLatin1String("8nic")) && qwen[1].endsWith(QLatin1String("4nic")), qPrintable(qwen.join(QLatin1Char('|'))));
  }

  void formShowsScenarioValues() {
    ScenarioForm form;
    form.SetConfiguration(Read("llama2-70b-4n-8nic.yaml"));
    QVERIFY2(form.IsValid(), qPrintable(form.ValidationMessage()));
    QCOMPARE(Field<QSpinBox>(&form, "cluster.nodes")->value(), 4);
    QCOMPARE(Field<QSpinBox>(&form, "cluster.nics_per_node")->value(), 8);
    QCOMPARE(Field<QSpinBox>(&form, "parallelism.tensor")->value(), 8);
    QCOMPARE(Field<QSpinBox>(&form, "parallelism.pipeline")->value(), 4);
    QCOMPARE(Field<QSpinBox>(&form, "parallelism.data")->text(), QStringLiteral("auto"));
    QCOMPARE(Field<QComboBox>(&form, "model")->currentText(), QStringLiteral("llama2-70b"));
    QCOMPARE(Field<QComboBox>(&form, "cluster.storage")->currentText(), QStringLiteral("powerscale-f710"));
    QCOMPARE(Field<QSpinBox>(&form, "checkpoint.every_steps")->value(), 100);
    // Untouched, the document comes back as it was read, comments included.
    QCOMPARE(form.configuration().yaml, Read("llama2-70b-4n-8nic.yaml").yaml);
  }

  void formRoundTripsScenario() {
    const Configuration original = Read("llama2-70b-4n-8nic.yaml");
    ScenarioForm form;
    form.SetConfiguration(original);
    Field<QSpinBox>(&form, "cluster.nics_per_node")->setValue(4);
    Field<QSpinBox>(&form, "parallelism.tensor")->setValue(4);
    Field<QSpinBox>(&form, "parallelism.pipeline")->setValue(8);
    Field<QComboBox>(&form, "training.recompute")->setCurrentText(QStringLiteral("selective"));
    QVERIFY2(form.IsValid(), qPrintable(form.ValidationMessage()));
    const Configuration edited = form.configuration();

    // The library reads the form's document like the CLI reads the file with --set overrides.
    const Expected<Scenario> from_form = ParseConfiguration(edited);
    const Expected<Scenario> from_cli =
        LoadScenario(TestData("llama2-70b-4n-8nic.yaml").toStdString(),
                     {"cluster.nics_per_node=4", "parallelism.tensor=4", "parallelism.pipeline=8", "training.recompute=selective"});
    QVERIFY(from_form.ok());
    QVERIFY(from_cli.ok());
    QCOMPARE(from_form->node.nics_per_node, from_cli->node.nics_per_node);
    QCOMPARE(from_form->parallelism.tensor, 4);
    QCOMPARE(from_form->parallelism.pipeline, 8);
    QCOMPARE(from_form->parallelism.data, from_cli->parallelism.data);
    QCOMPARE(from_form->nodes, from_cli->nodes);
    QCOMPARE(from_form->storage_nodes, from_cli->storage_nodes);
    QCOMPARE(from_form->training.global_batch, from_cli->training.global_batch);
    QCOMPARE(from_form->training.steps, from_cli->training.steps);
    QVERIFY(from_form->training.recompute == Recompute::kSelective);
    QCOMPARE(from_form->checkpoint.every_steps, from_cli->checkpoint.every_steps);
    QCOMPARE(from_form->model.name, from_cli->model.name);
    // A key the form does not show passes through.
    QCOMPARE(from_form->failures.node_mtbf_hours, 5000.0);

    // Form -> YAML -> form shows the same values in every field.
    ScenarioForm again;
    again.SetConfiguration(edited);
    for (QSpinBox* s : form.findChildren<QSpinBox*>()) {
      QCOMPARE(Field<QSpinBox>(&again, qPrintable(s->objectName()))->value(), s->value());
    }
    for (QComboBox* c : form.findChildren<QComboBox*>()) {
      QCOMPARE(Field<QComboBox>(&again, qPrintable(c->objectName()))->currentText(), c->currentText());
    }
    // Back to the loaded values: the key set by default stays out of the document.
    Field<QSpinBox>(&form, "parallelism.context")->setValue(2);
    Field<QSpinBox>(&form, "parallelism.context")->setValue(1);
    QVERIFY(!form.configuration().yaml.contains(QLatin1String("context")));
  }

  // The expert groups and the dispatcher are fields too: what the form sets
  // is what `--set` would, and left alone they stay out of the document.
  void formSetsExpertParallelism() {
    QString yaml = ScenarioForm::DefaultScenarioYaml();
    yaml.replace(QStringLiteral("model: llama2-7b\n"), QStringLiteral("model: mixtral-8x7b\n"));
    ScenarioForm form;
    form.SetConfiguration(Configuration{yaml, QString()});
    QCOMPARE(Field<QSpinBox>(&form, "parallelism.expert")->value(), 1);
    QCOMPARE(Field<QSpinBox>(&form, "parallelism.expert_tensor")->text(), QStringLiteral("framework default"));
    QCOMPARE(Field<QComboBox>(&form, "parallelism.moe_dispatcher")->currentText(), QStringLiteral("default"));
    QVERIFY(!form.configuration().yaml.contains(QLatin1String("dispatcher")));
    Field<QSpinBox>(&form, "parallelism.expert")->setValue(8);
    Field<QComboBox>(&form, "parallelism.moe_dispatcher")->setCurrentText(QStringLiteral("allgather"));
    QVERIFY2(form.IsValid(), qPrintable(form.ValidationMessage()));
    const Expected<Scenario> s = ParseConfiguration(form.configuration());
    QVERIFY(s.ok());
    QCOMPARE(s->parallelism.expert, 8);
    QVERIFY(s->parallelism.moe_dispatcher == MoeDispatcher::kAllGather);
    QVERIFY(!form.configuration().yaml.contains(QLatin1String("expert_tensor")));
  }

  // Sharding, fine-tuning and the cost basis are fields too; a method chosen
  // in the form takes the fine-tuning keys it does not read with it.
  void formSetsShardingFinetuneAndCost() {
    ScenarioForm form;
    form.SetConfiguration(Configuration{ScenarioForm::DefaultScenarioYaml(), QString()});
    QCOMPARE(Field<QComboBox>(&form, "parallelism.data_sharding")->currentText(), QStringLiteral("default"));
    QCOMPARE(Field<QComboBox>(&form, "training.finetune.method")->currentText(), QStringLiteral("none (pre-training)"));
    QVERIFY(!Field<QSpinBox>(&form, "training.finetune.rank")->isEnabled());
    Field<QComboBox>(&form, "parallelism.data_sharding")->setCurrentText(QStringLiteral("full"));
    Field<QSpinBox>(&form, "parallelism.sharding_group")->setValue(4);
    Field<QComboBox>(&form, "training.finetune.method")->setCurrentText(QStringLiteral("lora"));
    QVERIFY(Field<QSpinBox>(&form, "training.finetune.rank")->isEnabled());
    Field<QSpinBox>(&form, "training.finetune.rank")->setValue(8);
    Field<QComboBox>(&form, "cost.model")->setCurrentText(QStringLiteral("ownership"));
    QVERIFY2(form.IsValid(), qPrintable(form.ValidationMessage()));
    Expected<Scenario> s = ParseConfiguration(form.configuration());
    QVERIFY(s.ok());
    QVERIFY(s->parallelism.data_sharding == DataSharding::kFull);
    QCOMPARE(s->parallelism.sharding_group, 4);
    QVERIFY(s->training.finetune.lora());
    QCOMPARE(s->training.finetune.rank, 8);
    QVERIFY(s->cost.model == CostBasis::kOwnership);

    // Loaded as LoRA, switched to full: the rank goes with it (the loader refuses it beside full).
    ScenarioForm lora;
    lora.SetConfiguration(form.configuration());
    QCOMPARE(Field<QSpinBox>(&lora, "training.finetune.rank")->value(), 8);
    Field<QComboBox>(&lora, "training.finetune.method")->setCurrentText(QStringLiteral("full"));
    QVERIFY(!Field<QSpinBox>(&lora, "training.finetune.rank")->isEnabled());
    QVERIFY2(lora.IsValid(), qPrintable(lora.ValidationMessage()));
    QVERIFY(!lora.configuration().yaml.contains(QLatin1String("rank")));
    s = ParseConfiguration(lora.configuration());
    QVERIFY(s.ok());
    QVERIFY(s->training.finetune.method == FinetuneMethod::kFull);
    // Back to pre-training: no fine-tuning section at all.
    Field<QComboBox>(&lora, "training.finetune.method")->setCurrentText(QStringLiteral("none (pre-training)"));
    QVERIFY2(lora.IsValid(), qPrintable(lora.ValidationMessage()));
    QVERIFY(!lora.configuration().yaml.contains(QLatin1String("finetune")));
  }

  // A config.json with keys accepted unread shows its file, runs with the
  // warning in the outcome, and stays a mapping until another model is chosen.
  void formKeepsAcceptedConfigKeys() {
    QString yaml = ScenarioForm::DefaultScenarioYaml();
    const QString gated = QStringLiteral(TRAINSIM_SOURCE_DIR "/tests/data/hf-accepted-key/config.json");
    yaml.replace(QStringLiteral("model: llama2-7b\n"),
                 QStringLiteral("model:\n  file: %1\n  accept_unknown_keys: [attn_output_gate]\n").arg(gated));
    ScenarioForm form;
    form.SetConfiguration(Configuration{yaml, QString()});
    QVERIFY2(form.IsValid(), qPrintable(form.ValidationMessage()));
    QVERIFY(Field<QComboBox>(&form, "model")->currentText().startsWith(gated));
    Field<QSpinBox>(&form, "cluster.nodes")->setValue(2);
    QVERIFY(form.configuration().yaml.contains(QLatin1String("accept_unknown_keys")));
    RunOptions quick;
    quick.fidelity = Fidelity::kAnalytical;
    quick.scaling_nodes = std::vector<int>{};
    quick.heat_tensor.clear();
    quick.heat_pipeline.clear();
    const ConfigOutcome o = RunConfiguration(form.configuration(), quick, [](double) { return true; }, nullptr);
    QVERIFY(o.warnings.join(QLatin1Char(' ')).contains(QLatin1String("attn_output_gate")));
    Field<QComboBox>(&form, "model")->setCurrentText(QStringLiteral("llama2-7b"));
    QVERIFY(!form.configuration().yaml.contains(QLatin1String("accept_unknown_keys")));
  }

  void formKeepsInlineModel() {
    QString yaml = ScenarioForm::DefaultScenarioYaml();
    yaml.replace(QStringLiteral("model: llama2-7b\n"),
                 QStringLiteral("model:\n  layers: 4\n  hidden: 1024\n  ffn_hidden: 4096\n  heads: 16\n  kv_heads: 16\n"
                                "  vocab: 32000\n  activation: gelu\n  norm: layernorm\n  position: learned\n"));
    ScenarioForm form;
    form.SetConfiguration(Configuration{yaml, QString()});
    QVERIFY2(form.IsValid(), qPrintable(form.ValidationMessage()));
    QVERIFY(Field<QComboBox>(&form, "model")->currentText().contains(QLatin1String("inline")));
    Field<QSpinBox>(&form, "cluster.nodes")->setValue(2);
    const Expected<Scenario> s = ParseConfiguration(form.configuration());
    QVERIFY(s.ok());
    QCOMPARE(s->nodes, 2);
    QCOMPARE(s->model.layers, 4);
    QCOMPARE(s->model.hidden, 1024);
    // Choosing a catalogue model replaces the inline keys.
    Field<QComboBox>(&form, "model")->setCurrentText(QStringLiteral("llama2-7b"));
    const Expected<Scenario> t = ParseConfiguration(form.configuration());
    QVERIFY(t.ok());
    QCOMPARE(t->model.layers, 32);
  }

  void invalidInputShowsMessageAndDisablesRun() {
    MainWindow w;
    QVERIFY(w.OpenScenario(TestData("llama2-70b-4n-8nic.yaml")));
    QVERIFY(w.runAction()->isEnabled());
    auto* tensor = Field<QSpinBox>(w.form(), "parallelism.tensor");
    tensor->setValue(3);
    const QString msg = w.form()->ValidationMessage();
    QVERIFY(!msg.isEmpty());
    // The CLI's message for the same document: same key, same words, the file named.
    QTemporaryDir dir;
    const QString copy = dir.filePath(QStringLiteral("copy.yaml"));
    QFile f(copy);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(w.configurations()[0].yaml.toUtf8());
    f.close();
    const Expected<Scenario> cli = LoadScenario(copy.toStdString());
    QVERIFY(!cli.ok());
    QVERIFY2(msg.endsWith(QString::fromStdString(": " + cli.error().key + ": " + cli.error().message)), qPrintable(msg));
    QVERIFY(msg.startsWith(TestData("llama2-70b-4n-8nic.yaml") + QStringLiteral(":")));
    QVERIFY(msg.contains(QLatin1String("parallelism.tensor")));
    QCOMPARE(w.form()->findChild<QLabel*>(QStringLiteral("validationMessage"))->text(), msg);
    QVERIFY(!w.runAction()->isEnabled());
    tensor->setValue(8);
    QVERIFY(w.form()->IsValid());
    QVERIFY(w.runAction()->isEnabled());
  }

  void invalidFileGivesCliMessage() {
    MainWindow w;
    QVERIFY(w.OpenScenario(TestData("invalid-tensor.yaml")));
    const Expected<Scenario> cli = LoadScenario(TestData("invalid-tensor.yaml").toStdString());
    QVERIFY(!cli.ok());
    QCOMPARE(w.form()->ValidationMessage(), QString::fromStdString(cli.error().ToString()));
    QVERIFY(!w.runAction()->isEnabled());
  }

  void runningTwoConfigurationsFillsTableAndCharts() {
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QVERIFY(w.OpenScenario(TestData("llama2-70b-4n-8nic.yaml")));
    QVERIFY(w.OpenScenario(TestData("llama2-70b-4n-4nic.yaml")));
    QSignalSpy progress(w.runner(), &ComparisonRunner::progress);
    QVERIFY(RunAndWait(w));
    QVERIFY(!progress.isEmpty());

    ResultsTableModel* m = w.view()->model();
    // Baseline column, then the other configuration's value, delta and percent.
    QCOMPARE(m->columnCount(), 4);
    QCOMPARE(m->headerData(0, Qt::Horizontal).toString(), QStringLiteral("Baseline\nllama2-70b-4n-8nic"));
    QCOMPARE(m->headerData(1, Qt::Horizontal).toString(), QStringLiteral("llama2-70b-4n-4nic"));
    QCOMPARE(m->headerData(2, Qt::Horizontal).toString(), QStringLiteral("Δ vs baseline"));
    QCOMPARE(m->headerData(3, Qt::Horizontal).toString(), QStringLiteral("Δ %"));
    const int step_row = m->RowOf(QStringLiteral("step_time_s"));
    const int error_row = m->RowOf(QStringLiteral("error"));
    const int time_row = m->RowOf(QStringLiteral("run.time_to_train_s"));
    QVERIFY(step_row >= 0 && error_row >= 0 && time_row >= 0);
    // Human labels with units and scales from the result-field table.
    QCOMPARE(m->headerData(step_row, Qt::Vertical).toString(), QStringLiteral("Step time"));
    QCOMPARE(m->headerData(time_row, Qt::Vertical).toString(), QStringLiteral("Time to train"));
    QVERIFY2(m->data(m->index(time_row, 0)).toString().endsWith(QLatin1String(" h")), qPrintable(m->data(m->index(time_row, 0)).toString()));
    QVERIFY(m->data(m->index(m->RowOf(QStringLiteral("run.cost_usd")), 0)).toString().startsWith(QLatin1Char('$')));
    QVERIFY(m->data(m->index(m->RowOf(QStringLiteral("memory.peak_gib_per_gpu")), 0)).toString().endsWith(QLatin1String(" GiB")));
    const double t8 = m->data(m->index(step_row, 0), ResultsTableModel::kRawValueRole).toDouble();
    const double t4 = m->data(m->index(step_row, 1), ResultsTableModel::kRawValueRole).toDouble();
    QVERIFY(t8 > 0);
    QVERIFY2(t4 >= t8, "halving the NICs cannot make the step faster");
    // The delta columns agree with the values, in the row's scale.
    const QString delta = m->data(m->index(time_row, 2)).toString();
    QVERIFY2(delta == QLatin1String("0.00 h") || delta.startsWith(QLatin1Char('+')), qPrintable(delta));
    QVERIFY(m->data(m->index(time_row, 3)).toString().endsWith(QLatin1Char('%')));
    QCOMPARE(m->data(m->index(error_row, 0)).toString(), QString());
    // A headline per configuration against the baseline, in the architect's terms.
    const std::vector<QString> heads = m->Headlines();
    QCOMPARE(heads.size(), size_t(1));
    QVERIFY2(heads[0].startsWith(QLatin1String("llama2-70b-4n-4nic: ")) && heads[0].contains(QLatin1String("time to train")) &&
                 heads[0].contains(QLatin1String("per run")) && heads[0].contains(QLatin1String(" capital (")),
             qPrintable(heads[0]));
    // Fewer NICs: less capital (the NIC and switch-port prices of the profiles).
    QVERIFY2(heads[0].contains(QLatin1String(", -$")) && heads[0].contains(QLatin1String(" capital (-")), qPrintable(heads[0]));
    QVERIFY(w.view()->headline()->text().contains(QLatin1String("capital")));
    QVERIFY(w.view()->headline()->text().contains(QLatin1String("per run")));
    // Both on H100: one track record, of dense pre-training there (the reference files' runs, predicted now).
    QVERIFY2(w.view()->headline()->text().count(QLatin1String("Track record")) == 1, qPrintable(w.view()->headline()->text()));
    QVERIFY2(w.view()->headline()->text().contains(QLatin1String(" dense pre-training runs on h100-sxm-80g")),
             qPrintable(w.view()->headline()->text()));
    // Dense 70B with TP 8: long GEMMs hide the host, and the headline does not mention it.
    QVERIFY2(!w.view()->headline()->text().contains(QLatin1String("Waits for the host")), qPrintable(w.view()->headline()->text()));
    // Legends in full, not elided, and the two curves read apart.
    QVERIFY(w.view()->LegendText(QStringLiteral("breakdown")).contains(QLatin1String("exposed communication")));
    QVERIFY(w.view()->LegendText(QStringLiteral("scaling-time")).contains(QLatin1String("llama2-70b-4n-8nic")));
    QVERIFY(w.view()->LegendText(QStringLiteral("scaling-time")).contains(QLatin1String("llama2-70b-4n-4nic")));

    auto* bars = qobject_cast<QStackedBarSeries*>(w.view()->chartView(QStringLiteral("breakdown"))->chart()->series().value(0));
    QVERIFY(bars);
    QCOMPARE(bars->barSets().size(), 5);
    double total8 = 0;
    for (QBarSet* s : bars->barSets()) {
      QCOMPARE(s->count(), 2);
      total8 += s->at(0);
    }
    QVERIFY(std::abs(total8 - w.view()->outcomes()[0].result.breakdown.total_s()) < 1e-9);

    const auto mem_series = w.view()->chartView(QStringLiteral("memory"))->chart()->series();
    int capacity_lines = 0;
    for (auto* s : mem_series) capacity_lines += qobject_cast<QLineSeries*>(s) != nullptr;
    QCOMPARE(capacity_lines, 2);

    for (const char* panel : {"scaling-time", "scaling-cost"}) {
      const auto series = w.view()->chartView(QString::fromLatin1(panel))->chart()->series();
      QCOMPARE(series.size(), 2);
      for (auto* s : series) QVERIFY(qobject_cast<QLineSeries*>(s)->count() >= 2);
    }
    // Without a DES timeline the Gantt panel explains itself instead of staying blank.
    if (w.view()->outcomes()[0].result.timeline.empty()) {
      QVERIFY(!w.view()->gantt()->HasTimeline());
      QVERIFY(w.view()->gantt()->PlaceholderText().contains(QLatin1String("DES")));
    } else {
      GanttWidget* g = w.view()->gantt();
      QVERIFY(g->HasTimeline());
      g->resize(640, 480);
      QImage img(g->size(), QImage::Format_ARGB32);
      g->render(&img);
      // Some point of the chart names the event under it.
      QString tip;
      for (int y = 0; y < g->height() && tip.isEmpty(); y += 4) {
        for (int x = 0; x < g->width() && tip.isEmpty(); x += 4) tip = g->ToolTipAt(QPoint(x, y));
      }
      QVERIFY2(tip.contains(QLatin1String(" ms")), qPrintable(tip));
    }
  }

  void timelineShowsPassesPerMicroBatchAndChunkAndZooms() {
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QVERIFY(w.OpenScenario(TestData("llama2-70b-4n-8nic.yaml")));
    w.SetFidelity(Fidelity::kDes);
    QVERIFY(RunAndWait(w));
    GanttWidget* g = w.view()->gantt();
    QVERIFY(g->HasTimeline());
    g->resize(900, 500);
    QImage img(g->size(), QImage::Format_ARGB32);
    g->render(&img);
    const int all = g->PaintedBars();
    QVERIFY(all > 100);
    // The whole step shows exactly the trace's step: every slice `run --trace` writes, one bar each.
    QCOMPARE(all, static_cast<int>(TimelinePart(w.view()->outcomes()[0].result.timeline, TracePart::kStep).size()));
    // Zoomed to the first tenth of the step: fewer bars, wider, each named by micro batch and chunk.
    g->SetView(0, g->stepSeconds() / 10);
    g->render(&img);
    QVERIFY(g->PaintedBars() < all);
    QVERIFY(g->viewEnd() < g->stepSeconds());
    QString tip;
    for (int y = 0; y < g->height() && !tip.contains(QLatin1String("micro batch")); y += 3) {
      for (int x = 0; x < g->width() && !tip.contains(QLatin1String("micro batch")); x += 3) tip = g->ToolTipAt(QPoint(x, y));
    }
    QVERIFY2(tip.contains(QLatin1String("micro batch")) && tip.contains(QLatin1String("chunk")), qPrintable(tip));
    g->ResetZoom();
    QCOMPARE(g->viewStart(), 0.0);
    QCOMPARE(g->viewEnd(), g->stepSeconds());
  }

  void runThatCannotHappenShowsNoTimeOrCostAndNoBar() {
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QVERIFY(w.OpenScenario(TestData("llama2-70b-4n-8nic.yaml")));
    // 70B on one node does not fit in GPU memory: its time and cost are not a run.
    QVERIFY(w.OpenScenario(QStringLiteral(TRAINSIM_SOURCE_DIR "/examples/reference-design/llama2-70b-1n-8nic.yaml")));
    w.SetFidelity(Fidelity::kAnalytical);
    QVERIFY(RunAndWait(w));
    ResultsTableModel* m = w.view()->model();
    const int col = m->ValueColumn(1);
    for (const char* key : {"run.time_to_train_s", "run.cost_usd", "step_time_s"}) {
      const int row = m->RowOf(QString::fromLatin1(key));
      QCOMPARE(m->data(m->index(row, col)).toString(), QStringLiteral("cannot run"));
      QCOMPARE(m->data(m->index(row, col + 1)).toString(), QString());  // no delta either
    }
    QCOMPARE(m->data(m->index(m->RowOf(QStringLiteral("memory.fits")), col)).toString(), QStringLiteral("no"));
    QVERIFY(m->data(m->index(m->RowOf(QStringLiteral("error")), col)).toString().contains(QLatin1String("does not fit")));
    QVERIFY(m->Headlines().at(0).contains(QLatin1String("cannot run")));
    auto* bars = qobject_cast<QStackedBarSeries*>(w.view()->chartView(QStringLiteral("breakdown"))->chart()->series().value(0));
    QVERIFY(bars);
    for (QBarSet* set : bars->barSets()) QCOMPARE(set->at(1), 0.0);
  }

  void hostBoundMoeRunSaysItWaitsForTheHost() {
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    // Qwen3-30B-A3B: 16 small local experts per GPU; the same line as `trainsim run` prints.
    QVERIFY(w.OpenScenario(QStringLiteral(TRAINSIM_SOURCE_DIR "/tests/data/qwen3-30b-a3b-2n-dgx-h100.yaml")));
    w.SetFidelity(Fidelity::kAnalytical);
    QVERIFY(RunAndWait(w));
    const QString text = w.view()->headline()->text();
    QVERIFY2(text.contains(QLatin1String("<b>Waits for the host</b>: ")) &&
                 text.contains(QLatin1String("the host issuing kernels at 15 us each")) && text.contains(QLatin1String("--host-trace")),
             qPrintable(text));
  }

  void formFieldsHaveTooltipsAndHelpHasTheMethod() {
    MainWindow w;
    for (const char* key : {"cluster.nics_per_node", "parallelism.virtual_stages", "training.recompute", "checkpoint.mode"}) {
      QWidget* field = w.form()->findChild<QWidget*>(QString::fromLatin1(key));
      QVERIFY2(field, key);
      QVERIFY2(field->toolTip().contains(QLatin1String("Default")), key);
    }
    w.ShowHelp();
    auto* text = w.helpDialog()->findChild<QTextBrowser*>(QStringLiteral("helpText"));
    QVERIFY(text);
    QVERIFY(text->toPlainText().contains(QLatin1String("Method")));
    QVERIFY(text->toPlainText().contains(QLatin1String("Accuracy")));
  }

  // Help that names a fact the library owns takes it from the library.
  void fieldHelpNamesTheLibrarysFacts() {
    QVERIFY(FieldHelp(QStringLiteral("training.micro_batch")).contains(QStringLiteral("up to %1 ").arg(kAutoMicroBatchMax)));
    const QString modules = FieldHelp(QStringLiteral("training.recompute_modules"));
    for (const auto& m : RecomputeModuleNames()) QVERIFY2(modules.contains(QString::fromStdString(m)), m.c_str());
    QVERIFY(!modules.contains(QLatin1Char('{')));
  }

  // A format the GPU lacks is a run that cannot happen (exit 1), not bad input (2), as in the CLI.
  void validationKeepsTheErrorsKind() {
    QFile in(TestData("llama2-70b-4n-8nic.yaml"));
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QString yaml = QString::fromUtf8(in.readAll());
    QCOMPARE(ValidationExitStatus(Configuration{yaml, QString()}), 0);
    QString mxfp8 = yaml;
    mxfp8.replace(QStringLiteral("precision: bf16"), QStringLiteral("precision: mxfp8"));
    QCOMPARE(ValidationExitStatus(Configuration{mxfp8, QString()}), 1);
    QString bad = yaml;
    bad.replace(QStringLiteral("precision: bf16"), QStringLiteral("precision: fp4"));
    QCOMPARE(ValidationExitStatus(Configuration{bad, QString()}), 2);
  }

  void heatmapMarksInfeasibleCell() {
    // A global batch of 2 sequences on 32 GPUs: TP 1 x PP 1 leaves at least 4 data-parallel
    // replicas (context parallelism 8 at most) for 2 sequences, whatever else the planner
    // tries; TP 8 x PP 4 is the scenario itself.
    QTemporaryDir dir;
    QFile in(TestData("llama2-70b-4n-8nic.yaml"));
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QString path = dir.filePath(QStringLiteral("llama2-70b-4n-8nic-gbs2.yaml"));
    QFile out(path);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(in.readAll().replace("global_batch: 128", "global_batch: 2"));
    out.close();
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QVERIFY(w.OpenScenario(path));
    w.SetFidelity(Fidelity::kAnalytical);
    QVERIFY(RunAndWait(w));
    const ConfigOutcome& o = w.view()->outcomes().at(0);
    const HeatCell* bad = o.Cell(1, 1);
    const HeatCell* good = o.Cell(8, 4);
    QVERIFY(bad && good);
    QVERIFY(!bad->feasible);
    QVERIFY2(bad->reason.contains(QLatin1String("global_batch")), qPrintable(bad->reason));
    QVERIFY(good->feasible);
    QVERIFY(good->step_time_s > 0);
    // A cell is the best of its family (virtual stages, micro batch, recompute
    // searched), so the scenario's own cell is at least as fast as the scenario.
    const HeatCell* pp8 = o.Cell(4, 8);
    QVERIFY(pp8);
    QVERIFY2(pp8->feasible, qPrintable(pp8->reason));
    QVERIFY(pp8->searched > 1);
    QVERIFY2(pp8->chosen.startsWith(QLatin1String("TP4 PP8 VP")), qPrintable(pp8->chosen));
    QVERIFY(good->step_time_s <= o.result.step_time_s * (1 + 1e-9));

    HeatmapWidget* h = w.view()->heatmap();
    h->resize(640, 480);
    QImage img(h->size(), QImage::Format_ARGB32);
    h->render(&img);
    const QRect bad_rect = h->CellRect(1, 1);
    const QRect good_rect = h->CellRect(8, 4);
    QVERIFY(!bad_rect.isEmpty() && !good_rect.isEmpty());
    const int area = bad_rect.width() * bad_rect.height();
    QVERIFY2(CountPixels(img, bad_rect, HeatmapWidget::InfeasibleColor()) > area / 5, "infeasible cell not painted grey");
    QCOMPARE(CountPixels(img, good_rect, HeatmapWidget::InfeasibleColor()), 0);
    const QString tip = h->ToolTipAt(bad_rect.center());
    QVERIFY2(tip.contains(QLatin1String("cannot run")) && tip.contains(bad->reason), qPrintable(tip));
    QVERIFY(h->ToolTipAt(good_rect.center()).contains(QLatin1String("s per step")));
    QVERIFY(h->ToolTipAt(good_rect.center()).contains(QLatin1String("micro batch")));
  }

  void windowStaysResponsiveAndCancelWorks() {
    MainWindow w;
    QVERIFY(w.OpenScenario(TestData("llama2-70b-4n-8nic.yaml")));
    for (int i = 0; i < 60; ++i) w.DuplicateCurrent();
    QCOMPARE(static_cast<int>(w.configurations().size()), 61);
    int ticks = 0;
    QTimer timer;
    connect(&timer, &QTimer::timeout, [&] { ++ticks; });
    timer.start(5);
    QSignalSpy finished(w.runner(), &ComparisonRunner::finished);
    w.Run();
    QVERIFY(w.runner()->IsRunning());
    QVERIFY(!w.runAction()->isEnabled());
    QVERIFY(w.cancelAction()->isEnabled());
    QTest::qWait(60);
    QVERIFY2(ticks > 0, "the GUI thread did not process events during the run");
    w.cancelAction()->trigger();
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.takeFirst().at(0).toBool(), true);
    QVERIFY(w.view()->outcomes().empty());  // a canceled run leaves the previous results
    QVERIFY(w.runAction()->isEnabled());
  }

  void exportWritesFiles() {
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QVERIFY(w.OpenScenario(TestData("llama2-70b-4n-8nic.yaml")));
    QVERIFY(w.OpenScenario(TestData("llama2-70b-4n-4nic.yaml")));
    QVERIFY(RunAndWait(w));
    QTemporaryDir dir;
    QString err;
    const QStringList files = w.view()->ExportAll(dir.path(), &err);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    QCOMPARE(files.size(), 2 * w.view()->PanelNames().size() + 1);
    for (const QString& f : files) {
      QVERIFY2(QFileInfo(f).size() > 0, qPrintable(f));
      if (f.endsWith(QLatin1String(".png"))) {
        const QImage img(f);
        QVERIFY2(!img.isNull() && img.width() > 100, qPrintable(f));
      } else if (f.endsWith(QLatin1String(".svg"))) {
        QFile svg(f);
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QVERIFY(svg.readAll().contains("<svg"));
      }
    }
    QFile csv(dir.filePath(QStringLiteral("results.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    QVERIFY(lines[0].startsWith(QLatin1String("configuration,name,gpus,parallelism,fidelity,warnings,step_time_s")));
    QVERIFY(lines[1].startsWith(QLatin1String("llama2-70b-4n-8nic,llama2-70b-4n-8nic,32,")));

    // The whole comparison view renders too (what --screenshot writes).
    const QString shot = dir.filePath(QStringLiteral("view.png"));
    QVERIFY(ExportPng(w.view(), shot, 1.0));
    QCOMPARE(QImage(shot).size(), w.view()->size());
  }

  void comparisonSetSavesAndLoads() {
    MainWindow w;
    QVERIFY(w.OpenScenario(TestData("llama2-70b-4n-8nic.yaml")));
    w.DuplicateCurrent();
    Field<QSpinBox>(w.form(), "cluster.nodes")->setValue(8);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("set.yaml"));
    QString err;
    QVERIFY2(w.SaveComparisonSetFile(path, &err), qPrintable(err));

    MainWindow other;
    QVERIFY2(other.LoadComparisonSetFile(path, &err), qPrintable(err));
    QCOMPARE(other.configurations().size(), size_t(2));
    QCOMPARE(other.configurations()[1].Name(), QStringLiteral("llama2-70b-4n-8nic (2)"));
    const Expected<Scenario> s = ParseConfiguration(other.configurations()[1]);
    QVERIFY(s.ok());
    QCOMPARE(s->nodes, 8);
    QCOMPARE(Field<QSpinBox>(other.form(), "cluster.nodes")->value(), 4);  // the first is selected
    QVERIFY(other.runAction()->isEnabled());

    // A malformed set names the file and the problem.
    QFile bad(dir.filePath(QStringLiteral("bad.yaml")));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("comparison: 3\n");
    bad.close();
    QVERIFY(!other.LoadComparisonSetFile(bad.fileName(), &err));
    QVERIFY2(err.startsWith(bad.fileName()) && err.contains(QLatin1String("comparison")), qPrintable(err));
  }
};

QTEST_MAIN(GuiTest)
#include "gui_test.moc"
