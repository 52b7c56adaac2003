// Hot spares: how many spare nodes keep a training job at full size while
// failed nodes are repaired. Model: failures arrive as a Poisson process
// (rate nodes / MTBF) and each failed node is out for the repair window, so
// the number of nodes in repair at any moment is Poisson with mean
// nodes x repair_hours / MTBF_hours (an M/G/infinity queue); the spares
// needed are the smallest s with P(in repair <= s) >= the target probability.
// With that many spares a failure costs only the restart, not a wait for the
// repair (or a restart at a smaller data-parallel size).
#pragma once

namespace trainsim {

// The smallest s with P(Poisson(mean_in_repair) <= s) >= probability;
// 0 when mean_in_repair <= 0. probability in (0, 1).
int HotSpares(double mean_in_repair, double probability);

// P(Poisson(mean) <= k).
double PoissonCdf(double mean, int k);

}  // namespace trainsim
