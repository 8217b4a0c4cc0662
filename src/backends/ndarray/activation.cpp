// Softmax and log-softmax over the last dim, and gelu, computed in double
// (the reference the fast backends are checked against) from their
// definitions: per row the max, the sum of exp(x - max), then exp(x - max) /
// sum or (x - max) - log(sum); gelu as x * (1 + erf(x / sqrt 2)) / 2 or its
// tanh approximation.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "backends/ndarray/module_util.hpp"

namespace burn::ndarray {

Result kernel(const Context& ctx, const ir::Softmax& op, Inputs in, Outputs out) {
  const auto x = detail::read_doubles(in[0]);
  const auto& dims = in[0].spec.shape.dims();
  const std::size_t n = dims.back();
  std::vector<double> y(x.size());
  for (std::size_t start = 0; n > 0 && start < x.size(); start += n) {
    double max = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i)
      max = std::isnan(x[start + i]) || std::isnan(max) ? std::numeric_limits<double>::quiet_NaN()
                                                        : std::max(max, x[start + i]);
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += std::exp(x[start + i] - max);
    for (std::size_t i = 0; i < n; ++i)
      y[start + i] = op.log ? (x[start + i] - max) - std::log(sum) : std::exp(x[start + i] - max) / sum;
  }
  return {detail::write_doubles(ctx, out[0], y)};
}

Result kernel(const Context& ctx, const ir::Gelu& op, Inputs in, Outputs out) {
  auto y = detail::read_doubles(in[0]);
  const double k = std::sqrt(2.0 / std::numbers::pi);
  for (double& v : y)
    v = op.tanh ? v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v))) / 2.0
                : v * (1.0 + std::erf(v / std::numbers::sqrt2)) / 2.0;
  return {detail::write_doubles(ctx, out[0], y)};
}

}  // namespace burn::ndarray
