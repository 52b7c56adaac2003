// Runs the configurations of a comparison off the GUI thread. Each
// configuration is simulated at the chosen fidelity (with the timeline when
// DES), then swept over node count with the same --set style overrides the
// CLI takes (ApplyOverrides), and over a TP x PP grid whose every cell is the
// best of the virtual stages, micro batches and recompute settings the
// planner would try (PlanConfig/ApplyConfig of sim/plan/planner.h), at
// analytical fidelity: the sweeps are many small runs and the fast path
// exists for them. Progress is by simulated work (the DES reports its steps);
// Cancel stops inside a DES run at its next step.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "gui/comparison.h"
#include "sim/run/simulate.h"

namespace trainsim::gui {

// What a run computes besides the configuration itself.
struct RunOptions {
  Fidelity fidelity = Fidelity::kDes;
  // The scaling curve's node counts; unset: around the configuration's own
  // (ScalingNodesAround), so that a 2,048-node run is not drawn at 1..64.
  std::optional<std::vector<int>> scaling_nodes;
  std::vector<int> heat_tensor{1, 2, 4, 8};
  std::vector<int> heat_pipeline{1, 2, 4, 8, 16};

  // Share of one configuration's work in its main run (the DES of a whole
  // run outweighs hundreds of analytical runs); the sweeps share the rest.
  double MainRunShare() const { return fidelity == Fidelity::kDes ? 0.8 : 0.1; }
};

// Seven node counts by factors of 2 around `nodes` (nodes / 8 .. nodes x 8),
// those under 1 replaced by more above: always `nodes` itself among them.
std::vector<int> ScalingNodesAround(int nodes);

// Progress units of one configuration (progress() counts these).
constexpr int kProgressPerConfiguration = 1000;

// Runs one configuration. `progress` is told the fraction of this
// configuration done (0..1) and returns false to stop early (the outcome is
// then partial); `cancel`, when set, also stops a DES run at its next step.
// Thread-safe: it touches only its arguments.
ConfigOutcome RunConfiguration(const Configuration& config, const RunOptions& options,
                               const std::function<bool(double fraction)>& progress,
                               const std::atomic<bool>* cancel = nullptr);

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
  std::shared_ptr<std::atomic<bool>> cancel_;  // shared with the worker: stops a DES mid-run
  std::vector<ConfigOutcome> outcomes_;
};

}  // namespace trainsim::gui
