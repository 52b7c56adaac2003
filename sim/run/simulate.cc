#include "sim/run/simulate.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "models/memory_model.h"
#include "sim/analytical/analytical_step.h"
#include "sim/cost/step_costs.h"
#include "sim/des/des_simulator.h"
#include "sim/run/micro_batch_choice.h"
#include "sim/run/run_model.h"

namespace trainsim {

namespace {

// A step figure that is not a finite number is a bug in the cost model, not
// a property of the scenario: it becomes the result's error (exit 1, named
// as an internal error) instead of a NaN printed with exit status 0.
void RefuseNonFiniteFigures(SimulationResult& r) {
  const std::pair<const char*, double> figures[] = {
      {"step_time_s", r.step_time_s},
      {"breakdown_s.compute", r.breakdown.compute_s},
      {"breakdown_s.exposed_communication", r.breakdown.exposed_communication_s},
      {"breakdown_s.pipeline_bubble", r.breakdown.pipeline_bubble_s},
      {"breakdown_s.optimizer", r.breakdown.optimizer_s},
      {"breakdown_s.data_stall", r.breakdown.data_stall_s},
      {"memory.peak_gib_per_gpu", r.memory.peak_gib_per_gpu},
  };
  for (const auto& [name, value] : figures) {
    if (std::isfinite(value)) continue;
    r.error = std::string("the cost model gave ") + name + " = " + std::to_string(value) +
              ", not a finite number: a trainsim bug; please report the scenario";
    r.error_kind = ErrorKind::kInternal;
    return;
  }
  // A step takes time: 0 s is a simulation that did not finish one (a DES
  // whose actors all wait), never a figure to print with exit status 0.
  if (r.error.empty() && !(r.step_time_s > 0)) {
    r.error = "the " + r.fidelity + " simulation finished no step (step_time_s = " + std::to_string(r.step_time_s) +
              "): a trainsim bug; please report the scenario";
    r.error_kind = ErrorKind::kInternal;
  }
  // A step of more than a year is no training run: a profile figure near
  // zero (an efficiency, a rate) rather than a figure to print.
  constexpr double kYear_s = 365.25 * 86400;
  if (r.error.empty() && r.step_time_s > kYear_s) {
    char text[160];
    std::snprintf(text, sizeof text, "a step of %.3g s, more than a year: no run to simulate (a profile figure near zero?)", r.step_time_s);
    r.error = text;
    r.error_kind = ErrorKind::kCannotProgress;
  }
}

}  // namespace

SimulationResult Simulate(const Scenario& s, const SimulateOptions& options) {
  MicroBatchChoice choice = ChooseMicroBatch(s);
  SimulationResult r = Simulate(choice.scenario, options, choice.costs);
  r.micro_batch_rule = std::move(choice.rule);
  return r;
}

SimulationResult Simulate(const Scenario& s, const SimulateOptions& options, const StepCosts& costs) {
  SimulationResult r;
  r.name = s.name;
  r.gpus = s.gpus();
  r.model.parameters = s.model.TotalParameters(s.training.seq_len);
  r.model.active_parameters = s.model.ActiveParameters(s.training.seq_len);
  r.model.mtp_parameters = s.model.MtpParameters();
  r.model.trainable_parameters =
      s.training.finetune.lora() ? LoraParameters(s.model, s.training.finetune) : r.model.parameters + r.model.mtp_parameters;
  r.memory = EstimateMemory(s, costs.workload);
  r.pipeline_layers = costs.workload.stages.Describe();
  r.pipeline_split = costs.workload.stages.rule();
  r.micro_batch = s.training.micro_batch;
  r.micro_batch_rule = "given";
  r.nvlink_domains = s.nvlink_domains_text();
  r.parallelism = s.parallelism_text();
  r.slowest_stage = s.parallelism.pipeline > 1 ? costs.slowest_rank : -1;
  r.framework = s.framework.name;
  r.precision = ToString(s.training.precision);
  r.framework_rule = s.framework_given ? "given" : s.node.name + "'s default";
  // The memory check comes first: a configuration that cannot run is not
  // worth a DES (whose work grows with what does not fit), so it gets the
  // closed-form step time beside its error.
  std::optional<std::string> refused;
  if (options.fidelity == Fidelity::kDes && r.memory.fits) refused = DesRefusal(s, options.record_timeline);
  const bool des = options.fidelity == Fidelity::kDes && r.memory.fits && !refused;
  DesStats stats;
  const DesControl control{options.progress, options.cancel};
  // A timeline comes from a run of its own: recording steps the DES would
  // fast-forward moved the figures (by 1e-8), and asking for a trace must not
  // change the result.
  StepTiming timing = des ? SimulateDes(s, costs, false, &stats, &control) : AnalyticalStep(s, costs);
  if (des && options.record_timeline && !stats.canceled) {
    const DesControl quiet{nullptr, options.cancel};  // one progress bar, the first run's
    DesStats traced;
    timing.timeline = SimulateDes(s, costs, true, &traced, &quiet).timeline;
    stats.canceled = traced.canceled;
  }
  if (des && options.des_stats) *options.des_stats = stats;
  r.fidelity = ToString(des ? Fidelity::kDes : Fidelity::kAnalytical);
  r.step_time_s = timing.step_time_s;
  r.breakdown = timing.breakdown;
  const double tokens = double(s.training.global_batch) * s.training.seq_len;
  r.tokens_per_s_per_gpu = tokens / r.step_time_s / r.gpus;
  r.model_tflops_per_gpu = costs.workload.model_flops_per_step / r.step_time_s / r.gpus / 1e12;
  r.mfu = r.model_tflops_per_gpu * 1e12 / s.node.gpu.PeakFlops(s.training.precision);
  ApplyRunModel(s, timing, r);
  r.timeline = std::move(timing.timeline);
  if (!r.error.empty()) r.error_kind = ErrorKind::kCannotProgress;
  if (refused) {
    r.error = *refused;
    r.error_kind = ErrorKind::kRefused;
  }
  if (!r.memory.fits) {
    r.error = r.memory.Problem();
    r.error_kind = ErrorKind::kDoesNotFit;
  }
  if (stats.canceled) {
    r.error = "canceled";
    r.error_kind = ErrorKind::kRefused;
  }
  RefuseNonFiniteFigures(r);
  return r;
}

SimulationResult SimulateRunFigures(const Scenario& s, const StepCosts& costs) {
  // Simulate's analytical path, its figures only: the same step, then the run model on it.
  SimulationResult r;
  r.name = s.name;
  r.gpus = s.gpus();
  r.fidelity = "analytical";
  const StepTiming timing = AnalyticalStep(s, costs);
  r.step_time_s = timing.step_time_s;
  r.breakdown = timing.breakdown;
  ApplyRunModel(s, timing, r);
  if (!r.error.empty()) r.error_kind = ErrorKind::kCannotProgress;
  RefuseNonFiniteFigures(r);
  return r;
}

}  // namespace trainsim
