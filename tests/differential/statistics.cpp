// Statistical comparison of random samples (see statistics.hpp).
#include "statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace burn::differential {
namespace {

struct Sample {
  double mean = 0.0, std = 0.0, min = 0.0, max = 0.0;
  std::size_t non_finite = 0;
};

Sample describe(const TensorData& d) {
  Sample s;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  const std::size_t n = d.num_elements();
  double sum = 0.0, sum_sq = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = d.value_as_double(i);
    if (!std::isfinite(v)) {
      ++s.non_finite;
      continue;
    }
    sum += v;
    sum_sq += v * v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  if (n) {
    s.mean = sum / static_cast<double>(n);
    s.std = std::sqrt(std::max(0.0, sum_sq / static_cast<double>(n) - s.mean * s.mean));
  }
  return s;
}

/// The distribution's moments and support for a dtype.
struct Expected {
  double mean, std, lo, hi;
  bool integral;
};

Expected expected_for(const ir::Random& op, DType dtype) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (op.dist) {
    case ir::DistributionKind::Default: return {0.5, std::sqrt(1.0 / 12.0), 0.0, 1.0, false};
    case ir::DistributionKind::Uniform:
      if (is_int(dtype)) {
        // Integers a .. b-1, each equally likely.
        const double n = op.b - op.a;
        return {(op.a + op.b - 1.0) / 2.0, std::sqrt((n * n - 1.0) / 12.0), op.a, op.b - 1.0, true};
      }
      return {(op.a + op.b) / 2.0, (op.b - op.a) / std::sqrt(12.0), op.a, op.b, false};
    case ir::DistributionKind::Normal: return {op.a, op.b, -inf, inf, false};
    case ir::DistributionKind::Bernoulli: return {op.a, std::sqrt(op.a * (1.0 - op.a)), 0.0, 1.0, true};
  }
  return {0, 0, -inf, inf, false};
}

}  // namespace

StatisticsResult compare_statistics(const ir::Random& op, const TensorData& dut, const TensorData& oracle) {
  StatisticsResult r;
  const Expected want = expected_for(op, dut.dtype());
  const double n = static_cast<double>(std::max<std::size_t>(dut.num_elements(), 1));
  // Half dtypes round every value: allow their absolute tolerance on the moments.
  const double slack = is_float(dut.dtype()) ? Tolerance::default_for(dut.dtype()).absolute : 0.0;
  const double mean_bound = 6.0 * want.std / std::sqrt(n) + slack;
  const double std_bound = 0.05 * want.std + slack;
  std::ostringstream problems;

  const Sample s[2] = {describe(dut), describe(oracle)};
  const char* who[2] = {"device under test", "oracle"};
  for (int k = 0; k < 2; ++k) {
    if (s[k].non_finite) problems << "\n  " << who[k] << ": " << s[k].non_finite << " non-finite values";
    if (std::abs(s[k].mean - want.mean) > mean_bound)
      problems << "\n  " << who[k] << ": mean " << s[k].mean << ", expected " << want.mean << " +- " << mean_bound;
    if (std::abs(s[k].std - want.std) > std_bound)
      problems << "\n  " << who[k] << ": std " << s[k].std << ", expected " << want.std << " +- " << std_bound;
    // Floats may round up to the open upper bound; integers must stay below it.
    if (s[k].min < want.lo || s[k].max > want.hi)
      problems << "\n  " << who[k] << ": values in [" << s[k].min << ", " << s[k].max << "], outside [" << want.lo
               << ", " << want.hi << "]";
  }
  const TensorData* data[2] = {&dut, &oracle};
  if (want.integral)
    for (int k = 0; k < 2; ++k)
      for (std::size_t i = 0; i < data[k]->num_elements(); ++i) {
        const double v = data[k]->value_as_double(i);
        if (v != std::floor(v)) {
          problems << "\n  " << who[k] << ": non-integral value " << v << " at " << i;
          break;
        }
      }
  const double d_mean = std::abs(s[0].mean - s[1].mean), d_std = std::abs(s[0].std - s[1].std);
  if (d_mean > std::sqrt(2.0) * mean_bound) problems << "\n  means differ: " << s[0].mean << " vs " << s[1].mean;
  if (d_std > std_bound) problems << "\n  standard deviations differ: " << s[0].std << " vs " << s[1].std;
  r.abs = std::max(d_mean, d_std);
  r.rel = want.std > 0 ? r.abs / want.std : r.abs;
  r.problems = problems.str();
  return r;
}

}  // namespace burn::differential
