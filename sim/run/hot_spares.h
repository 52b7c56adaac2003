// Hot spares: how many spare nodes keep a training job at full size while
// failed nodes are repaired. Model: each node alternates between running
// (exponential, mean MTBF) and repair (mean repair window), so at any moment
// it is in repair with probability repair / (MTBF + repair), independently
// of the others; the number of the job's nodes in repair is Binomial(nodes,
// that fraction) (Poisson with mean nodes x repair / MTBF where repairs are
// short against the MTBF, as an M/G/infinity queue gives). The spares needed
// are the smallest s with P(in repair <= s) >= the target probability, never
// more than the job's nodes. With that many spares a failure costs only the
// restart, not a wait for the repair (or a restart at a smaller size).
#pragma once

namespace trainsim {

// The smallest s with P(Binomial(nodes, fraction_in_repair) <= s) >=
// probability; 0 when nodes or fraction_in_repair is not positive.
// Preconditions: fraction_in_repair <= 1, probability in (0, 1).
int HotSpares(int nodes, double fraction_in_repair, double probability);

// P(Poisson(mean) <= k).
double PoissonCdf(double mean, int k);

// P(Binomial(n, p) <= k).
double BinomialCdf(int n, double p, int k);

}  // namespace trainsim
