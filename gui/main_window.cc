#include "gui/main_window.h"

#include "gui/field_help.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QUrl>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QDialog>
#include <QDialogButtonBox>
#include <QMessageBox>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScrollArea>
#include <QSet>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>
#include <QVBoxLayout>
#include <map>

#include "gui/comparison_view.h"
#include "gui/scenario_form.h"
#include "sim/io/data_paths.h"

namespace trainsim::gui {

namespace {
constexpr int kMaxRecent = 8;
const char* kRecentKey = "recentFiles";
}  // namespace

QStringList MainWindow::ExampleFiles() {
  QStringList out;
  // Only scenarios: sweep files and others in examples/ have no cluster section.
  const QRegularExpression scenario(QStringLiteral("^cluster:"), QRegularExpression::MultilineOption);
  for (const QString& dir : {QString::fromStdString(DataDir()) + QStringLiteral("/examples"),
                             QStringLiteral(TRAINSIM_SOURCE_DIR "/examples")}) {
    QDirIterator it(dir, {QStringLiteral("*.yaml")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
      const QString path = it.next();
      QFile f(path);
      if (f.open(QIODevice::ReadOnly) && scenario.match(QString::fromUtf8(f.readAll())).hasMatch()) out << path;
    }
    if (!out.isEmpty()) {
      out.sort();
      return out;
    }
  }
  for (const QFileInfo& fi : QDir(QStringLiteral(TRAINSIM_SOURCE_DIR "/gui/testdata")).entryInfoList({QStringLiteral("*.yaml")}, QDir::Files, QDir::Name)) {
    out << fi.absoluteFilePath();
  }
  return out;
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("trainsim: what-if comparison"));
  runner_ = new ComparisonRunner(this);
  view_ = new ComparisonView(this);
  setCentralWidget(view_);

  // Left dock: configuration list (with its buttons) above the form.
  auto* left = new QWidget(this);
  auto* lv = new QVBoxLayout(left);
  lv->setContentsMargins(4, 4, 4, 4);
  list_ = new QListWidget(left);
  list_->setObjectName(QStringLiteral("configurations"));
  list_->setToolTip(tr("Configurations compared side by side; invalid ones are marked"));
  list_->setMaximumHeight(160);
  lv->addWidget(list_);
  auto* buttons = new QHBoxLayout;
  lv->addLayout(buttons);
  form_ = new ScenarioForm(left);
  auto* scroll = new QScrollArea(left);
  scroll->setWidget(form_);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(form_->sizeHint().width() + 24);
  lv->addWidget(scroll, 1);
  dock_ = new QDockWidget(tr("Configurations"), this);
  dock_->setObjectName(QStringLiteral("configurationsDock"));
  dock_->setWidget(left);
  dock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock_);

  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(260);
  progress_->setVisible(false);
  status_ = new QLabel(tr("Ready"), this);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);

  setAcceptDrops(true);  // drop scenario files to add them
  BuildActions();
  for (QAction* a : {findChild<QAction*>(QStringLiteral("duplicate")), findChild<QAction*>(QStringLiteral("remove"))}) {
    auto* b = new QPushButton(a->icon(), a->text().remove(QLatin1Char('&')), left);
    b->setToolTip(a->toolTip());
    connect(b, &QPushButton::clicked, a, &QAction::trigger);
    buttons->addWidget(b);
  }

  connect(list_, &QListWidget::currentRowChanged, this, [this](int row) {
    if (!updating_) SelectConfiguration(row);
  });
  connect(form_, &ScenarioForm::edited, this, &MainWindow::OnFormEdited);
  connect(runner_, &ComparisonRunner::progress, this, [this](int done, int total) {
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(done);
    // Progress is simulated work (the DES's steps, the sweeps' runs): time left from the rate so far.
    const double elapsed_s = (QDateTime::currentMSecsSinceEpoch() - run_started_ms_) / 1000.0;
    const double fraction = total > 0 ? double(done) / total : 0;
    if (fraction >= 0.02 && fraction < 1 && elapsed_s > 1) {
      status_->setText(tr("Running… %1 s elapsed, about %2 s left (Esc cancels)")
                           .arg(elapsed_s, 0, 'f', 0)
                           .arg(elapsed_s * (1 - fraction) / fraction, 0, 'f', 0));
    }
  });
  connect(runner_, &ComparisonRunner::finished, this, &MainWindow::OnRunFinished);

  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("windowState")).toByteArray());
  SetFidelity(settings.value(QStringLiteral("fidelity"), QStringLiteral("des")).toString() == QLatin1String("analytical")
                  ? Fidelity::kAnalytical
                  : Fidelity::kDes);
  RebuildRecentMenu();
  UpdateRunEnabled();
}

MainWindow::~MainWindow() = default;

void MainWindow::BuildActions() {
  QStyle* st = style();
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* a_new = file->addAction(st->standardIcon(QStyle::SP_FileIcon), tr("&New Comparison"), this, &MainWindow::NewComparison);
  a_new->setShortcut(QKeySequence::New);
  QAction* a_open = file->addAction(st->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open Scenario…"), this, &MainWindow::OpenDialog);
  a_open->setShortcut(QKeySequence::Open);
  a_open->setToolTip(tr("Add scenario files (the CLI's YAML) to the comparison"));
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  QMenu* examples = file->addMenu(tr("&Examples"));
  std::map<QString, QMenu*> folders;  // one submenu per examples/ subfolder
  for (const QString& path : ExampleFiles()) {
    const QString folder = QFileInfo(path).dir().dirName();
    QMenu* menu = examples;
    if (folder != QLatin1String("examples") && folder != QLatin1String("testdata")) {
      auto& sub = folders[folder];
      if (!sub) sub = examples->addMenu(folder);
      menu = sub;
    }
    menu->addAction(QFileInfo(path).completeBaseName(), this, [this, path] {
      QString err;
      if (!OpenScenario(path, &err)) QMessageBox::warning(this, tr("Open example"), err);
    });
  }
  file->addSeparator();
  QAction* a_save = file->addAction(st->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save Scenario"), this, &MainWindow::SaveCurrent);
  a_save->setShortcut(QKeySequence::Save);
  QAction* a_save_as = file->addAction(tr("Save Scenario &As…"), this, &MainWindow::SaveCurrentAs);
  a_save_as->setShortcut(QKeySequence::SaveAs);
  file->addSeparator();
  file->addAction(tr("&Load Comparison Set…"), QKeySequence(tr("Ctrl+Shift+O")), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load comparison set"), {}, tr("Comparison set (*.yaml *.yml)"));
    QString err;
    if (!path.isEmpty() && !LoadComparisonSetFile(path, &err)) QMessageBox::warning(this, tr("Load comparison set"), err);
  });
  file->addAction(tr("Save Comparison Se&t…"), QKeySequence(tr("Ctrl+Shift+T")), this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save comparison set"), QStringLiteral("comparison.yaml"),
                                                      tr("Comparison set (*.yaml *.yml)"));
    QString err;
    if (!path.isEmpty() && !SaveComparisonSetFile(path, &err)) QMessageBox::warning(this, tr("Save comparison set"), err);
  });
  file->addSeparator();
  file->addAction(tr("E&xport Charts (PNG + SVG)…"), QKeySequence(tr("Ctrl+E")), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export charts to folder"));
    if (dir.isEmpty()) return;
    QString err;
    const QStringList written = view_->ExportAll(dir, &err);
    if (!err.isEmpty()) QMessageBox::warning(this, tr("Export charts"), err);
    else status_->setText(tr("Exported %1 files to %2").arg(written.size()).arg(dir));
  });
  file->addAction(tr("Export &Table as CSV…"), this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export table"), QStringLiteral("results.csv"), tr("CSV (*.csv)"));
    QString err;
    if (!path.isEmpty() && !view_->ExportCsv(path, &err)) QMessageBox::warning(this, tr("Export table"), err);
  });
  file->addSeparator();
  QAction* a_quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  a_quit->setShortcut(QKeySequence::Quit);

  QMenu* conf = menuBar()->addMenu(tr("&Configuration"));
  QAction* a_dup = conf->addAction(st->standardIcon(QStyle::SP_FileDialogNewFolder), tr("&Duplicate"), this, &MainWindow::DuplicateCurrent);
  a_dup->setObjectName(QStringLiteral("duplicate"));
  a_dup->setShortcut(QKeySequence(tr("Ctrl+D")));
  a_dup->setToolTip(tr("Copy the selected configuration to tweak it (Ctrl+D)"));
  QAction* a_rm = conf->addAction(st->standardIcon(QStyle::SP_TrashIcon), tr("&Remove"), this, &MainWindow::RemoveCurrent);
  a_rm->setObjectName(QStringLiteral("remove"));
  a_rm->setToolTip(tr("Remove the selected configuration (Delete in the list)"));
  // Delete only in the list: in the form it edits text.
  auto* list_delete = new QAction(this);
  list_delete->setShortcut(QKeySequence::Delete);
  list_delete->setShortcutContext(Qt::WidgetShortcut);
  connect(list_delete, &QAction::triggered, this, &MainWindow::RemoveCurrent);
  list_->addAction(list_delete);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run_action_ = run->addAction(st->standardIcon(QStyle::SP_MediaPlay), tr("&Run All"), this, &MainWindow::Run);
  run_action_->setShortcuts({QKeySequence(tr("Ctrl+R")), QKeySequence(Qt::Key_F5)});
  run_action_->setToolTip(tr("Simulate every configuration, its node-count scaling and TP x PP grid (Ctrl+R)"));
  cancel_action_ = run->addAction(st->standardIcon(QStyle::SP_MediaStop), tr("&Cancel"), this, &MainWindow::CancelRun);
  cancel_action_->setShortcut(QKeySequence(Qt::Key_Escape));
  cancel_action_->setEnabled(false);
  run->addSeparator();
  QMenu* fid = run->addMenu(tr("&Fidelity"));
  auto* group = new QActionGroup(this);
  des_action_ = fid->addAction(tr("&DES (discrete-event, with timeline)"));
  analytical_action_ = fid->addAction(tr("&Analytical (closed form)"));
  for (QAction* a : {des_action_, analytical_action_}) {
    a->setCheckable(true);
    group->addAction(a);
    connect(a, &QAction::triggered, this, [this] {
      QSettings().setValue(QStringLiteral("fidelity"), fidelity() == Fidelity::kDes ? QStringLiteral("des") : QStringLiteral("analytical"));
    });
  }

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  QAction* a_help = help->addAction(tr("trainsim-gui &Help (method and accuracy)"), this, [this] { ShowHelp(); });
  a_help->setObjectName(QStringLiteral("helpAction"));
  a_help->setShortcut(QKeySequence::HelpContents);
  help->addAction(tr("&About"), this, [this] {
    QMessageBox::about(this, tr("About trainsim-gui"),
                       tr("<b>trainsim-gui</b>: compare cluster and parallelism options for LLM training.<br>"
                          "Scenarios are the YAML files of the <tt>trainsim</tt> CLI; results come from the same library."));
  });

  QToolBar* tb = addToolBar(tr("Main"));
  tb->setObjectName(QStringLiteral("mainToolBar"));
  tb->addAction(a_new);
  tb->addAction(a_open);
  tb->addAction(a_save);
  tb->addSeparator();
  tb->addAction(a_dup);
  tb->addSeparator();
  tb->addAction(run_action_);
  tb->addAction(cancel_action_);
}

bool MainWindow::OpenScenario(const QString& path, QString* error) {
  Configuration c;
  if (!ReadConfigurationFile(path, &c, error)) return false;
  AddConfiguration(c);
  AddRecent(c.file);
  return true;
}

void MainWindow::AddConfiguration(const Configuration& c) {
  configs_.push_back(c);
  messages_.push_back(ValidationMessage(c));
  RefreshList();
  SelectConfiguration(static_cast<int>(configs_.size()) - 1);
}

void MainWindow::DuplicateCurrent() {
  if (current_ < 0) return;
  Configuration c = configs_[current_];
  // A distinct name so the columns and legends tell the copies apart; the
  // copy has no file of its own until saved.
  ScenarioForm scratch;
  scratch.SetConfiguration(c);
  if (auto* name = scratch.findChild<QWidget*>(QStringLiteral("name"))) {
    const QString base = c.Name();
    QSet<QString> names;
    for (const auto& x : configs_) names.insert(x.Name());
    int k = 2;
    while (names.contains(QStringLiteral("%1 (%2)").arg(base).arg(k))) ++k;
    name->setProperty("text", QStringLiteral("%1 (%2)").arg(base).arg(k));
  }
  Configuration copy = scratch.configuration();
  copy.file = c.file;  // relative references keep resolving; Save asks for a new file
  AddConfiguration(copy);
}

void MainWindow::RemoveCurrent() {
  if (current_ < 0 || runner_->IsRunning()) return;
  configs_.erase(configs_.begin() + current_);
  messages_.erase(messages_.begin() + current_);
  const int next = std::min(current_, static_cast<int>(configs_.size()) - 1);
  current_ = -1;
  RefreshList();
  SelectConfiguration(next);
}

void MainWindow::SelectConfiguration(int index) {
  if (index < 0 || index >= static_cast<int>(configs_.size())) {
    current_ = -1;
    UpdateRunEnabled();
    return;
  }
  current_ = index;
  updating_ = true;
  list_->setCurrentRow(index);
  updating_ = false;
  form_->SetConfiguration(configs_[index]);
  UpdateRunEnabled();
}

void MainWindow::OnFormEdited() {
  if (current_ < 0) return;
  configs_[current_] = form_->configuration();
  messages_[current_] = form_->ValidationMessage();
  RefreshList();
  UpdateRunEnabled();
  if (!view_->outcomes().empty()) status_->setText(tr("Edited: results are from the last run; press Ctrl+R to update"));
}

void MainWindow::RefreshList() {
  updating_ = true;
  list_->clear();
  for (size_t i = 0; i < configs_.size(); ++i) {
    auto* item = new QListWidgetItem(configs_[i].Name(), list_);
    const bool ok = messages_[i].isEmpty();
    item->setIcon(style()->standardIcon(ok ? QStyle::SP_DialogApplyButton : QStyle::SP_MessageBoxWarning));
    item->setToolTip(ok ? configs_[i].MessageFile() : messages_[i]);
  }
  list_->setCurrentRow(current_);
  updating_ = false;
  setWindowTitle((configs_.size() == 1 ? tr("trainsim: what-if comparison (1 configuration)")
                                        : tr("trainsim: what-if comparison (%1 configurations)").arg(configs_.size())));
}

void MainWindow::UpdateRunEnabled() {
  const bool running = runner_->IsRunning();
  bool all_valid = !configs_.empty();
  int first_invalid = -1;
  for (size_t i = 0; i < messages_.size(); ++i) {
    if (!messages_[i].isEmpty()) {
      all_valid = false;
      if (first_invalid < 0) first_invalid = static_cast<int>(i);
    }
  }
  run_action_->setEnabled(!running && all_valid);
  cancel_action_->setEnabled(running);
  if (first_invalid >= 0) {
    run_action_->setToolTip(tr("Fix %1 first: %2").arg(configs_[first_invalid].Name(), messages_[first_invalid]));
  } else {
    run_action_->setToolTip(tr("Simulate every configuration, its node-count scaling and TP x PP grid (Ctrl+R)"));
  }
}

void MainWindow::SetFidelity(Fidelity f) {
  (f == Fidelity::kDes ? des_action_ : analytical_action_)->setChecked(true);
}

Fidelity MainWindow::fidelity() const { return des_action_->isChecked() ? Fidelity::kDes : Fidelity::kAnalytical; }

void MainWindow::Run() {
  UpdateRunEnabled();
  if (!run_action_->isEnabled()) return;
  RunOptions options;
  options.fidelity = fidelity();
  run_started_ms_ = QDateTime::currentMSecsSinceEpoch();
  runner_->Start(configs_, options);
  progress_->setVisible(true);
  status_->setText((configs_.size() == 1 ? tr("Running 1 configuration… (Esc cancels)")
                                         : tr("Running %1 configurations… (Esc cancels)").arg(configs_.size())));
  UpdateRunEnabled();
}

void MainWindow::CancelRun() { runner_->Cancel(); }

void MainWindow::OnRunFinished(bool canceled) {
  progress_->setVisible(false);
  if (canceled) {
    status_->setText(tr("Run canceled; the previous results stay"));
  } else {
    view_->SetOutcomes(runner_->outcomes());
    view_->ShowDetailsOf(std::max(0, current_));
    const double s = (QDateTime::currentMSecsSinceEpoch() - run_started_ms_) / 1000.0;
    status_->setText((runner_->outcomes().size() == 1 ? tr("Ran 1 configuration in %1 s").arg(s, 0, 'f', 2)
                                                      : tr("Ran %1 configurations in %2 s").arg(runner_->outcomes().size()).arg(s, 0, 'f', 2)));
  }
  UpdateRunEnabled();
}

bool MainWindow::LoadComparisonSetFile(const QString& path, QString* error) {
  std::vector<Configuration> loaded;
  if (!LoadComparisonSet(path, &loaded, error)) return false;
  configs_ = loaded;
  messages_.clear();
  for (const auto& c : configs_) messages_.push_back(ValidationMessage(c));
  current_ = -1;
  RefreshList();
  SelectConfiguration(configs_.empty() ? -1 : 0);
  view_->SetOutcomes({});
  return true;
}

bool MainWindow::SaveComparisonSetFile(const QString& path, QString* error) {
  return SaveComparisonSet(path, configs_, error);
}

bool MainWindow::SaveCurrentTo(const QString& path, QString* error) {
  if (current_ < 0) return false;
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = path + tr(": cannot write: ") + f.errorString();
    return false;
  }
  f.write(configs_[current_].yaml.toUtf8());
  if (!f.commit()) {
    if (error) *error = path + tr(": cannot write: ") + f.errorString();
    return false;
  }
  configs_[current_].file = QFileInfo(path).absoluteFilePath();
  messages_[current_] = ValidationMessage(configs_[current_]);  // relative references now resolve from the new place
  form_->SetConfiguration(configs_[current_]);
  RefreshList();
  AddRecent(configs_[current_].file);
  return true;
}

void MainWindow::SaveCurrent() {
  if (current_ < 0) return;
  const QString file = configs_[current_].file;
  // Examples and files that are not ours to overwrite get Save As.
  if (file.isEmpty() || !QFileInfo(file).isWritable()) return SaveCurrentAs();
  QString err;
  if (!SaveCurrentTo(file, &err)) QMessageBox::warning(this, tr("Save scenario"), err);
  else status_->setText(tr("Saved %1").arg(file));
}

void MainWindow::SaveCurrentAs() {
  if (current_ < 0) return;
  const QString suggestion = configs_[current_].Name() + QStringLiteral(".yaml");
  const QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), suggestion, tr("Scenario (*.yaml *.yml)"));
  if (path.isEmpty()) return;
  QString err;
  if (!SaveCurrentTo(path, &err)) QMessageBox::warning(this, tr("Save scenario"), err);
}

void MainWindow::OpenDialog() {
  const QStringList paths = QFileDialog::getOpenFileNames(this, tr("Open scenarios"), {}, tr("Scenario (*.yaml *.yml)"));
  for (const QString& p : paths) {
    QString err;
    if (!OpenScenario(p, &err)) QMessageBox::warning(this, tr("Open scenario"), err);
  }
}

void MainWindow::NewComparison() {
  if (runner_->IsRunning()) return;
  configs_.clear();
  messages_.clear();
  current_ = -1;
  view_->SetOutcomes({});
  AddConfiguration(Configuration{ScenarioForm::DefaultScenarioYaml(), QString()});
}

void MainWindow::AddRecent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(QLatin1String(kRecentKey)).toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue(QLatin1String(kRecentKey), recent);
  RebuildRecentMenu();
}

void MainWindow::RebuildRecentMenu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value(QLatin1String(kRecentKey)).toStringList();
  for (int i = 0; i < recent.size(); ++i) {
    const QString path = recent[i];
    QAction* a = recent_menu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this, [this, path] {
      QString err;
      if (!OpenScenario(path, &err)) QMessageBox::warning(this, tr("Open recent"), err);
    });
    a->setToolTip(path);
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::SetConfigurationPanelVisible(bool visible) { dock_->setVisible(visible); }

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  for (const QUrl& url : e->mimeData()->urls()) {
    if (!url.isLocalFile()) continue;
    QString err;
    if (!OpenScenario(url.toLocalFile(), &err)) QMessageBox::warning(this, tr("Open scenario"), err);
  }
  e->acceptProposedAction();
}

void MainWindow::closeEvent(QCloseEvent* e) {
  runner_->Cancel();
  QSettings settings;
  settings.setValue(QStringLiteral("geometry"), saveGeometry());
  settings.setValue(QStringLiteral("windowState"), saveState());
  QMainWindow::closeEvent(e);
}

void MainWindow::ShowHelp() {
  if (!help_) {
    help_ = new QDialog(this);
    help_->setObjectName(QStringLiteral("helpDialog"));
    help_->setWindowTitle(tr("trainsim-gui Help"));
    auto* v = new QVBoxLayout(help_);
    auto* text = new QTextBrowser(help_);
    text->setObjectName(QStringLiteral("helpText"));
    text->setHtml(HelpPageHtml());
    v->addWidget(text);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, help_);
    connect(buttons, &QDialogButtonBox::rejected, help_, &QDialog::close);
    v->addWidget(buttons);
    help_->resize(640, 620);
  }
  help_->show();
  help_->raise();
}

}  // namespace trainsim::gui
