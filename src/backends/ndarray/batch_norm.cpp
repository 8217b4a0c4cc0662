// Batch normalisation with the batch's statistics, computed in double (the
// reference the fast backends are checked against): per channel (dim 1) the
// mean and the biased variance of the deviations over every other dim, then
// (x - mean) / sqrt(var + epsilon) * w + b.
#include <cmath>

#include "backends/ndarray/module_util.hpp"

namespace burn::ndarray {

Result kernel(const Context& ctx, const ir::BatchNorm& op, Inputs in, Outputs out) {
  const auto x = detail::read_doubles(in[0]);
  const auto w = detail::read_doubles(in[1]);
  const auto b = detail::read_doubles(in[2]);
  const std::size_t n = out[0].shape[0], c = w.size(), l = x.empty() ? 0 : x.size() / (n * c);
  const auto at = [&](std::size_t i, std::size_t ch, std::size_t k) { return (i * c + ch) * l + k; };
  std::vector<double> y(x.size()), mean(c), var(c);
  const auto count = static_cast<double>(n * l);
  for (std::size_t ch = 0; ch < c; ++ch) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < l; ++k) mean[ch] += x[at(i, ch, k)];
    mean[ch] /= count;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < l; ++k) var[ch] += (x[at(i, ch, k)] - mean[ch]) * (x[at(i, ch, k)] - mean[ch]);
    var[ch] /= count;
    const double rstd = 1.0 / std::sqrt(var[ch] + op.epsilon);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < l; ++k) y[at(i, ch, k)] = (x[at(i, ch, k)] - mean[ch]) * rstd * w[ch] + b[ch];
  }
  return {detail::write_doubles(ctx, out[0], y), detail::write_doubles(ctx, out[1], mean),
          detail::write_doubles(ctx, out[2], var)};
}

}  // namespace burn::ndarray
