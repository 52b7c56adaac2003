#include "gui/runner.h"

#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <string>

#include "sim/io/scenario_loader.h"
#include "sim/plan/plan_space.h"
#include "sim/plan/planner.h"
#include "sim/run/host_issue_share.h"
#include "sim/validate/track_record.h"

namespace trainsim::gui {

namespace {

// The short form of an input error for a sweep cell: the overridden keys make
// the file and line meaningless, the key and the message are what matter.
QString Reason(const InputError& e) {
  return QString::fromStdString(e.key.empty() ? e.message : e.key + ": " + e.message);
}

// The best of one TP x PP family, as `trainsim plan` searches it (the
// library's planner held to the cell's TP and PP: virtual stages, micro
// batch, recompute, context, sequence parallelism, sharding and, for a
// mixture of experts, EP and ETP), ranked by step time on the analytical
// path, the planner's default objective without its re-check.
HeatCell BestOfCell(const Scenario& base, int tp, int pp) {
  HeatCell cell;
  cell.tensor = tp;
  cell.pipeline = pp;
  PlanOptions options;
  options.objective = PlanObjective::kTime;
  options.recheck_fidelity = Fidelity::kAnalytical;
  options.top_k = 1;
  options.only_tensor = tp;
  options.only_pipeline = pp;
  const PlanReport r = Plan(base, options);
  cell.searched = int(r.searched);
  if (!r.candidates.empty()) {
    const PlanCandidate& best = r.candidates.front();
    cell.feasible = true;
    cell.step_time_s = best.result.step_time_s;
    cell.virtual_stages = best.config.virtual_stages;
    cell.micro_batch = best.config.micro_batch;
    cell.recompute = QString::fromStdString(ToString(best.config.recompute));
    cell.chosen = QString::fromStdString(Describe(best.config));
    // The search also varies what the cell label does not name (the planner's
    // dimensions beyond TP, PP, VP, the derived DP, micro batch and recompute):
    // say what it changed from the scenario's own.
    const PlanConfig own = ConfigOf(base);
    QStringList also;
    for (const PlanDimension& d : PlanDimensions()) {
      if (d.label == "TP" || d.label == "PP" || d.label == "VP" || d.label == "DP" || d.label == "mb" || d.label == "recompute") continue;
      const int v = d.get(best.config);
      if (v == d.get(own)) continue;
      const std::string shown = d.kind == PlanValueKind::kCount ? d.label + std::to_string(v) : d.label + "=" + ShowValue(d, v);
      also << QString::fromStdString(shown);
    }
    cell.also_changed = also.join(QLatin1Char(' '));
    return cell;
  }
  // Why the family fails: its least demanding member's rejection, as the planner reports it.
  if (!r.rejected.empty()) {
    cell.reason = QString::fromStdString(r.rejected.front().reason);
    cell.category = QString::fromStdString(r.rejected.front().category);
  } else {
    cell.category = QStringLiteral("divisibility");
    cell.reason = QObject::tr("tensor x pipeline = %1 does not divide the %2 GPUs").arg(tp * pp).arg(base.gpus());
  }
  return cell;
}

}  // namespace

std::vector<int> ScalingNodesAround(int nodes) {
  std::vector<int> counts;
  for (int k = -3; k <= 3; ++k) {
    const long n = k < 0 ? nodes >> -k : long(nodes) << k;
    if (n >= 1 && (k >= 0 || (long(nodes) % (1L << -k)) == 0)) counts.push_back(int(n));
  }
  // Those below lost (not whole, or under one node) come back above.
  for (long n = long(counts.back()) * 2; counts.size() < 7 && n <= (1L << 20); n *= 2) counts.push_back(int(n));
  return counts;
}

ConfigOutcome RunConfiguration(const Configuration& config, const RunOptions& options,
                               const std::function<bool(double)>& progress, const std::atomic<bool>* cancel) {
  ConfigOutcome o;
  o.name = config.Name();
  o.heat_tensor = options.heat_tensor;
  o.heat_pipeline = options.heat_pipeline;
  const Expected<Scenario> s = ParseConfiguration(config);
  if (!s) {
    o.input_error = QString::fromStdString(s.error().ToString());
    progress(1.0);
    return o;
  }
  for (const std::string& w : ScenarioWarnings(*s)) o.warnings << QString::fromStdString(w);
  o.tensor = s->parallelism.tensor;
  o.pipeline = s->parallelism.pipeline;
  o.nodes = s->nodes;
  const double main_share = options.MainRunShare();
  const std::vector<int> scaling_nodes = options.scaling_nodes ? *options.scaling_nodes : ScalingNodesAround(s->nodes);
  const double sweep_units = double(scaling_nodes.size() + options.heat_tensor.size() * options.heat_pipeline.size());
  const double per_sweep = (1 - main_share) / std::max(1.0, sweep_units);
  bool stop = false;
  SimulateOptions main_options;
  main_options.fidelity = options.fidelity;
  main_options.record_timeline = options.fidelity == Fidelity::kDes;
  main_options.cancel = cancel;
  main_options.progress = [&](int done, int total) {
    if (!progress(main_share * done / std::max(1, total))) stop = true;
  };
  o.result = Simulate(*s, main_options);
  o.result.warnings = WarningTexts(ScenarioWarnings(*s));
  if (stop) return o;
  if (o.result.error.empty()) {
    o.track_record = QString::fromStdString(TrackRecordLine(*s));
    o.host_issue = QString::fromStdString(HostIssueShareLine(*s));
  }
  if (!progress(main_share)) return o;

  SimulateOptions fast;
  fast.fidelity = Fidelity::kAnalytical;
  double done = main_share;
  for (int n : scaling_nodes) {
    ScalingPoint p;
    p.nodes = n;
    p.gpus = n * s->node.gpus_per_node;
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
    done += per_sweep;
    if (!progress(done)) return o;
  }

  for (int pp : options.heat_pipeline) {
    for (int tp : options.heat_tensor) {
      o.heatmap.push_back(BestOfCell(*s, tp, pp));
      done += per_sweep;
      if (!progress(done)) return o;
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
    Cancel();
    watcher_.waitForFinished();
  }
}

bool ComparisonRunner::IsRunning() const { return watcher_.isRunning(); }

void ComparisonRunner::Start(const std::vector<Configuration>& configs, const RunOptions& options) {
  if (IsRunning()) return;
  outcomes_.clear();
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  const int total = static_cast<int>(configs.size()) * kProgressPerConfiguration;
  // The worker owns copies of its inputs: the GUI may edit the configurations meanwhile.
  QFuture<ConfigOutcome> future = QtConcurrent::run([configs, options, total, cancel = cancel_](QPromise<ConfigOutcome>& promise) {
    promise.setProgressRange(0, total);
    for (size_t i = 0; i < configs.size(); ++i) {
      const int base = static_cast<int>(i) * kProgressPerConfiguration;
      const auto progress = [&](double fraction) {
        promise.setProgressValue(base + static_cast<int>(fraction * kProgressPerConfiguration));
        return !promise.isCanceled() && !cancel->load();
      };
      ConfigOutcome o = RunConfiguration(configs[i], options, progress, cancel.get());
      if (promise.isCanceled() || cancel->load()) return;
      promise.addResult(std::move(o), static_cast<int>(i));
    }
  });
  watcher_.setFuture(future);
  emit progress(0, total);
}

void ComparisonRunner::Cancel() {
  if (!IsRunning()) return;
  if (cancel_) *cancel_ = true;
  watcher_.cancel();
}

void ComparisonRunner::OnFinished() {
  const bool canceled = watcher_.isCanceled() || (cancel_ && cancel_->load());
  outcomes_.clear();
  if (!canceled) {
    const QList<ConfigOutcome> results = watcher_.future().results();
    outcomes_.assign(results.begin(), results.end());
  }
  emit finished(canceled);
}

}  // namespace trainsim::gui
