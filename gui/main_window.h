// The main window of trainsim-gui: the list of configurations and the form of
// the selected one (left dock), the comparison view (centre), menus, toolbar
// and keyboard shortcuts, a progress bar and Cancel while a run is in the
// worker thread. Recent files, geometry and the fidelity live in QSettings.
#pragma once

#include <QMainWindow>
#include <QStringList>
#include <vector>

#include "gui/comparison.h"
#include "gui/runner.h"

class QAction;
class QActionGroup;
class QDialog;
class QDockWidget;
class QLabel;
class QListWidget;
class QMenu;
class QProgressBar;

namespace trainsim::gui {

class ComparisonView;
class ScenarioForm;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Adds a scenario file as a configuration; false with *error when unreadable.
  bool OpenScenario(const QString& path, QString* error = nullptr);
  void AddConfiguration(const Configuration& c);
  void DuplicateCurrent();
  void RemoveCurrent();
  void SelectConfiguration(int index);
  const std::vector<Configuration>& configurations() const { return configs_; }
  int currentIndex() const { return current_; }

  bool LoadComparisonSetFile(const QString& path, QString* error = nullptr);
  bool SaveComparisonSetFile(const QString& path, QString* error = nullptr);
  bool SaveCurrentTo(const QString& path, QString* error = nullptr);

  void SetFidelity(Fidelity f);
  Fidelity fidelity() const;
  // Starts running every configuration (no-op while one runs or any is invalid).
  void Run();
  void CancelRun();

  ScenarioForm* form() const { return form_; }
  ComparisonView* view() const { return view_; }
  ComparisonRunner* runner() const { return runner_; }
  QAction* runAction() const { return run_action_; }
  QAction* cancelAction() const { return cancel_action_; }
  // Hides the configuration dock (the screenshot shows the comparison alone).
  void SetConfigurationPanelVisible(bool visible);

  // Scenario examples offered in File > Examples: DataDir()/examples, else the GUI's test scenarios.
  static QStringList ExampleFiles();

 protected:
  void closeEvent(QCloseEvent* e) override;
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;

 private:
  void BuildActions();
  void OnFormEdited();
  void OnRunFinished(bool canceled);
  void UpdateRunEnabled();
  void RefreshList();
  void AddRecent(const QString& path);
  void RebuildRecentMenu();
  void OpenDialog();
  void SaveCurrent();
  void SaveCurrentAs();
  void NewComparison();
 public:
  // Help ▸ Help: the method and its accuracy (field_help.h).
  void ShowHelp();
  QDialog* helpDialog() const { return help_; }

 private:

  std::vector<Configuration> configs_;
  std::vector<QString> messages_;  // validation message per configuration
  int current_ = -1;
  bool updating_ = false;

  ScenarioForm* form_ = nullptr;
  ComparisonView* view_ = nullptr;
  ComparisonRunner* runner_ = nullptr;
  QListWidget* list_ = nullptr;
  QDockWidget* dock_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QAction* run_action_ = nullptr;
  QAction* cancel_action_ = nullptr;
  QAction* des_action_ = nullptr;
  QAction* analytical_action_ = nullptr;
  qint64 run_started_ms_ = 0;
  QDialog* help_ = nullptr;
};

}  // namespace trainsim::gui
