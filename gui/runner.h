// Runs the configurations of a comparison off the GUI thread. Each
// configuration is simulated at the chosen fidelity (with the timeline when
// DES), then swept over node count and over a TP x PP grid with the same
// --set style overrides the CLI takes (ApplyOverrides), at analytical
// fidelity: the sweeps are many small runs and the fast path exists for them.
// Progress counts simulations; Cancel stops between two simulations.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <functional>
#include <vector>

#include "gui/comparison.h"
#include "sim/run/simulate.h"

namespace trainsim::gui {

// What a run computes besides the configuration itself.
struct RunOptions {
  Fidelity fidelity = Fidelity::kDes;
  std::vector<int> scaling_nodes{1, 2, 4, 8, 16, 32, 64};
  std::vector<int> heat_tensor{1, 2, 4, 8};
  std::vector<int> heat_pipeline{1, 2, 4, 8, 16};

  // Simulations per configuration, the unit of progress.
  int SimulationsPerConfiguration() const {
    return 1 + static_cast<int>(scaling_nodes.size() + heat_tensor.size() * heat_pipeline.size());
  }
};

// Runs one configuration. `tick` is called after every simulation and
// returns false to stop early (the outcome is then partial). Thread-safe: it
// touches only its arguments.
ConfigOutcome RunConfiguration(const Configuration& config, const RunOptions& options, const std::function<bool()>& tick);

// Runs a list of configurations in a worker thread (QtConcurrent); signals
// arrive in the GUI thread.
class ComparisonRunner : public QObject {
  Q_OBJECT
 public:
  explicit ComparisonRunner(QObject* parent = nullptr);
  ~ComparisonRunner() override;

  // Starts a run; ignored while one is in progress.
  void Start(const std::vector<Configuration>& configs, const RunOptions& options);
  void Cancel();
  bool IsRunning() const;
  // Outcomes of the last run, in configuration order (after finished()).
  const std::vector<ConfigOutcome>& outcomes() const { return outcomes_; }

 signals:
  void progress(int done, int total);
  void finished(bool canceled);

 private:
  void OnFinished();

  QFutureWatcher<ConfigOutcome> watcher_;
  std::vector<ConfigOutcome> outcomes_;
};

}  // namespace trainsim::gui
