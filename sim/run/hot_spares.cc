#include "sim/run/hot_spares.h"

#include <cmath>

namespace trainsim {

double PoissonCdf(double mean, int k) {
  if (k < 0) return 0;
  if (mean <= 0) return 1;
  // Terms in log space: exp(-mean) underflows for means of a few hundred.
  double sum = 0;
  double log_term = -mean;  // k = 0
  for (int i = 0; i <= k; ++i) {
    if (i > 0) log_term += std::log(mean) - std::log(double(i));
    sum += std::exp(log_term);
  }
  return sum > 1 ? 1 : sum;
}

int HotSpares(double mean_in_repair, double probability) {
  if (mean_in_repair <= 0 || probability <= 0) return 0;
  if (probability >= 1) probability = 1 - 1e-12;
  // Accumulate the CDF term by term; the answer lies within mean + 40 sd.
  const int limit = int(mean_in_repair + 40 * std::sqrt(mean_in_repair) + 40);
  double log_term = -mean_in_repair;
  double sum = std::exp(log_term);
  for (int s = 0; s < limit; ++s) {
    if (sum >= probability) return s;
    log_term += std::log(mean_in_repair) - std::log(double(s + 1));
    sum += std::exp(log_term);
  }
  return limit;
}

}  // namespace trainsim
