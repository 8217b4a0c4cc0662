// Layer normalisation over the last dim, computed in double (the reference
// the fast backends are checked against): per row the mean, the biased
// variance of the deviations, then (x - mean) / sqrt(var + epsilon) * w + b.
#include <cmath>

#include "backends/ndarray/module_util.hpp"

namespace burn::ndarray {

Result kernel(const Context& ctx, const ir::LayerNorm& op, Inputs in, Outputs out) {
  const auto x = detail::read_doubles(in[0]);
  const auto w = detail::read_doubles(in[1]);
  const auto b = detail::read_doubles(in[2]);
  const std::size_t n = w.size();
  std::vector<double> y(x.size());
  for (std::size_t start = 0; n > 0 && start < x.size(); start += n) {
    double mean = 0.0;
    for (std::size_t i = 0; i < n; ++i) mean += x[start + i];
    mean /= static_cast<double>(n);
    double var = 0.0;
    for (std::size_t i = 0; i < n; ++i) var += (x[start + i] - mean) * (x[start + i] - mean);
    var /= static_cast<double>(n);
    const double rstd = 1.0 / std::sqrt(var + op.epsilon);
    for (std::size_t i = 0; i < n; ++i) y[start + i] = (x[start + i] - mean) * rstd * w[i] + b[i];
  }
  return {detail::write_doubles(ctx, out[0], y)};
}

}  // namespace burn::ndarray
