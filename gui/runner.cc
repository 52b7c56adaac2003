#include "gui/runner.h"

#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <string>

namespace trainsim::gui {

namespace {

// The short form of an input error for a sweep cell: the overridden keys make
// the file and line meaningless, the key and the message are what matter.
QString Reason(const InputError& e) {
  return QString::fromStdString(e.key.empty() ? e.message : e.key + ": " + e.message);
}

}  // namespace

ConfigOutcome RunConfiguration(const Configuration& config, const RunOptions& options, const std::function<bool()>& tick) {
  ConfigOutcome o;
  o.name = config.Name();
  o.heat_tensor = options.heat_tensor;
  o.heat_pipeline = options.heat_pipeline;
  const Expected<Scenario> s = ParseConfiguration(config);
  if (!s) {
    o.input_error = QString::fromStdString(s.error().ToString());
    for (int i = 0; i < options.SimulationsPerConfiguration(); ++i) {
      if (!tick()) break;
    }
    return o;
  }
  o.tensor = s->parallelism.tensor;
  o.pipeline = s->parallelism.pipeline;
  o.nodes = s->nodes;
  SimulateOptions main_options;
  main_options.fidelity = options.fidelity;
  main_options.record_timeline = options.fidelity == Fidelity::kDes;
  o.result = Simulate(*s, main_options);
  if (!tick()) return o;

  SimulateOptions fast;
  fast.fidelity = Fidelity::kAnalytical;
  for (int n : options.scaling_nodes) {
    ScalingPoint p;
    p.nodes = n;
    const Expected<Scenario> sn = ParseConfiguration(config, {"cluster.nodes=" + std::to_string(n), "parallelism.data=auto"});
    if (!sn) {
      p.reason = Reason(sn.error());
    } else {
      const SimulationResult r = Simulate(*sn, fast);
      p.feasible = r.error.empty();
      p.reason = QString::fromStdString(r.error);
      p.step_time_s = r.step_time_s;
      p.time_to_train_s = r.run.time_to_train_s;
      p.cost_usd = r.run.cost_usd;
    }
    o.scaling.push_back(p);
    if (!tick()) return o;
  }

  for (int pp : options.heat_pipeline) {
    for (int tp : options.heat_tensor) {
      HeatCell c;
      c.tensor = tp;
      c.pipeline = pp;
      const Expected<Scenario> sc = ParseConfiguration(
          config, {"parallelism.tensor=" + std::to_string(tp), "parallelism.pipeline=" + std::to_string(pp), "parallelism.data=auto"});
      if (!sc) {
        c.reason = Reason(sc.error());
      } else {
        const SimulationResult r = Simulate(*sc, fast);
        c.feasible = r.error.empty();
        c.reason = QString::fromStdString(r.error);
        c.step_time_s = r.step_time_s;
      }
      o.heatmap.push_back(c);
      if (!tick()) return o;
    }
  }
  return o;
}

ComparisonRunner::ComparisonRunner(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcher<ConfigOutcome>::progressValueChanged, this,
          [this](int v) { emit progress(v, watcher_.progressMaximum()); });
  connect(&watcher_, &QFutureWatcher<ConfigOutcome>::finished, this, &ComparisonRunner::OnFinished);
}

ComparisonRunner::~ComparisonRunner() {
  if (IsRunning()) {
    watcher_.cancel();
    watcher_.waitForFinished();
  }
}

bool ComparisonRunner::IsRunning() const { return watcher_.isRunning(); }

void ComparisonRunner::Start(const std::vector<Configuration>& configs, const RunOptions& options) {
  if (IsRunning()) return;
  outcomes_.clear();
  // The worker owns copies of its inputs: the GUI may edit the configurations meanwhile.
  QFuture<ConfigOutcome> future = QtConcurrent::run([configs, options](QPromise<ConfigOutcome>& promise) {
    const int total = static_cast<int>(configs.size()) * options.SimulationsPerConfiguration();
    promise.setProgressRange(0, total);
    int done = 0;
    const auto tick = [&] {
      promise.setProgressValue(++done);
      return !promise.isCanceled();
    };
    for (size_t i = 0; i < configs.size(); ++i) {
      ConfigOutcome o = RunConfiguration(configs[i], options, tick);
      if (promise.isCanceled()) return;
      promise.addResult(std::move(o), static_cast<int>(i));
    }
  });
  watcher_.setFuture(future);
  emit progress(0, static_cast<int>(configs.size()) * options.SimulationsPerConfiguration());
}

void ComparisonRunner::Cancel() {
  if (IsRunning()) watcher_.cancel();
}

void ComparisonRunner::OnFinished() {
  const bool canceled = watcher_.isCanceled();
  outcomes_.clear();
  if (!canceled) {
    const QList<ConfigOutcome> results = watcher_.future().results();
    outcomes_.assign(results.begin(), results.end());
  }
  emit finished(canceled);
}

}  // namespace trainsim::gui
