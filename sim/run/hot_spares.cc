#include "sim/run/hot_spares.h"

#include <algorithm>
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

double BinomialCdf(int n, double p, int k) {
  if (k < 0) return 0;
  if (k >= n || p <= 0) return 1;
  if (p >= 1) return 0;
  // Terms in log space: (1 - p)^n underflows for large clusters.
  const double log_p = std::log(p), log_q = std::log1p(-p);
  double sum = 0;
  for (int i = 0; i <= k; ++i) {
    const double log_term = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + i * log_p + (n - i) * log_q;
    sum += std::exp(log_term);
  }
  return sum > 1 ? 1 : sum;
}

int HotSpares(int nodes, double fraction_in_repair, double probability) {
  if (nodes <= 0 || fraction_in_repair <= 0) return 0;
  if (probability >= 1) probability = 1 - 1e-12;
  // Accumulate the CDF term by term, at most the job's nodes.
  const double p = std::min(1.0, fraction_in_repair);
  const double log_p = std::log(p), log_q = std::log1p(-p);
  double sum = 0;
  for (int s = 0; s < nodes; ++s) {
    sum += std::exp(std::lgamma(nodes + 1.0) - std::lgamma(s + 1.0) - std::lgamma(nodes - s + 1.0) + s * log_p + (nodes - s) * log_q);
    if (sum >= probability) return s;
  }
  return nodes;
}

}  // namespace trainsim
