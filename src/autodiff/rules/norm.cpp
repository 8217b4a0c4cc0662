// Backward of layer norm over the last dim and of batch norm in training.
// Layer norm: With xhat = (x - mean) * rstd,
// rstd = 1 / sqrt(var + epsilon) and gw = g * weight (g the cotangent):
//   dbias   = g summed over every dim but the last
//   dweight = g * xhat summed over every dim but the last
//   dx      = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))   (means along the last dim)
// The statistics are recomputed from x, so a node keeps x and the weight
// only. Batch norm is the same with the sums and means taken per channel
// (dim 1) over every other dim, over M = x's size / C values, and its own
// mean and var outputs (kept, with x and the weight) in place of recomputed
// statistics; cotangents of those outputs add g_mean / M and
// g_var * 2 (x - mean) / M to dx. Every step is an ordinary op, so the
// gradient is differentiable too.
#include <algorithm>

#include "autodiff/rules/math_helpers.hpp"
#include "device/runtime.hpp"

namespace burn::autodiff {

using namespace math;

namespace {

/// t summed over every dim but the last, as a [n] tensor.
TensorRef sum_to_last(const TensorRef& t) {
  std::vector<std::size_t> row(t->spec.shape.rank(), 1);
  row.back() = t->spec.shape.dims().back();
  return detail::reshape_exact(sum_to_shape(t, Shape(row)), Shape{row.back()});
}

/// A [n] tensor as [1, ..., 1, n] of `rank` dims, to broadcast along rows.
TensorRef as_row(const TensorRef& t, std::size_t rank) {
  std::vector<std::size_t> row(rank, 1);
  row.back() = t->spec.shape[0];
  return detail::reshape_exact(t, Shape(row));
}

}  // namespace

SavedValues saved(const ir::LayerNorm&) { return kKeepInputs01; }

Grads rule(const ir::LayerNorm& op, const VjpArgs& a) {
  Grads out(a.inputs.size());
  const TensorRef& x = a.inputs[0];
  const TensorRef& weight = a.inputs[1];
  if (is_empty(x)) {
    for (std::size_t i = 0; i < out.size(); ++i)
      if (wants(a, i)) out[i] = zeros_like(a.inputs[i]);
    return out;
  }
  const std::size_t rank = x->spec.shape.rank();
  const auto last = static_cast<std::int64_t>(rank) - 1;
  const TensorRef g = cotangent_or_zeros(a, 0);
  auto [var, mean] = detail::var_mean_dim(x, last, 0);
  const TensorRef rstd = detail::unary(UnaryOp::Rsqrt, add(var, op.epsilon));
  const TensorRef xhat = mul(sub(x, mean), rstd);
  if (wants(a, 2)) out[2] = sum_to_last(g);
  if (wants(a, 1)) out[1] = sum_to_last(mul(g, xhat));
  if (wants(a, 0)) {
    const TensorRef gw = mul(g, as_row(weight, rank));
    const TensorRef mean_gw = detail::reduce_dim(ir::ReduceOp::Mean, gw, last);
    const TensorRef mean_gwx = detail::reduce_dim(ir::ReduceOp::Mean, mul(gw, xhat), last);
    out[0] = mul(sub(sub(gw, mean_gw), mul(xhat, mean_gwx)), rstd);
  }
  return out;
}

namespace {

/// t [N, C, ...] viewed as [N, C, L]: the per-channel sums below are then
/// sums along the last dim, which a fusion device runs as row reductions
/// (fused with the products they sum), and a sum over N of [N, C, 1].
TensorRef as_lines(const TensorRef& t) {
  const auto& dims = t->spec.shape.dims();
  const std::size_t n = dims[0], c = dims[1];
  return detail::reshape_exact(t, Shape{n, c, t->spec.shape.num_elements() / std::max<std::size_t>(n * c, 1)});
}

/// A [C] tensor as [1, C, 1], to broadcast over the [N, C, L] view.
TensorRef as_channels(const TensorRef& t) { return detail::reshape_exact(t, Shape{1, t->spec.shape[0], 1}); }

/// Line sums [N, C, 1] summed over N, as a [C] tensor.
TensorRef sum_lines(const TensorRef& lines) {
  return detail::reshape_exact(detail::reduce_dim(ir::ReduceOp::Sum, lines, 0), Shape{lines->spec.shape[1]});
}

}  // namespace

// x, weight; mean and var.
SavedValues saved(const ir::BatchNorm&) { return {0b11, 0b110}; }

Grads rule(const ir::BatchNorm& op, const VjpArgs& a) {
  Grads out(a.inputs.size());
  const TensorRef& x_in = a.inputs[0];
  const TensorRef x = as_lines(x_in);
  const double count = static_cast<double>(x->spec.shape[0] * x->spec.shape[2]);
  const TensorRef mean = as_channels(a.outputs[1]);
  const TensorRef rstd = as_channels(detail::unary(UnaryOp::Rsqrt, add(a.outputs[2], op.epsilon)));
  // x - mean, and xhat, feed both the sums and dx. Where elementwise chains
  // fuse, each pass recomputes them from x (read anyway) instead of writing
  // a tensor of x's size and reading it back twice; elsewhere they are
  // computed once. Both give the same values. The two line sums are asked
  // for before either is summed over N, so a fusion device folds both in
  // one pass over g and x.
  const bool recompute = x->device.runtime().backend().fuses_elementwise();
  std::optional<TensorRef> stored_centered;
  auto centered = [&] {
    if (recompute) return sub(x, mean);
    if (!stored_centered) stored_centered = sub(x, mean);
    return *stored_centered;
  };
  std::optional<TensorRef> dbias, dweight, dx;
  if (a.cotangents[0]) {
    const TensorRef g = as_lines(*a.cotangents[0]);
    std::optional<TensorRef> stored_xhat;
    auto xhat = [&] {
      if (recompute) return mul(centered(), rstd);
      if (!stored_xhat) stored_xhat = mul(centered(), rstd);
      return *stored_xhat;
    };
    const TensorRef lines_g = detail::reduce_dim(ir::ReduceOp::Sum, g, 2);
    const TensorRef lines_gx = detail::reduce_dim(ir::ReduceOp::Sum, mul(g, xhat()), 2);
    dbias = sum_lines(lines_g);
    dweight = sum_lines(lines_gx);
    if (wants(a, 0)) {
      const TensorRef scale = mul(as_channels(a.inputs[1]), rstd);
      const TensorRef mean_g = mul(as_channels(*dbias), 1.0 / count);
      const TensorRef mean_gx = mul(as_channels(*dweight), 1.0 / count);
      dx = mul(sub(sub(g, mean_g), mul(xhat(), mean_gx)), scale);
    }
  }
  if (wants(a, 0)) {
    // The statistics' own cotangents, when something read mean or var.
    if (a.cotangents[1]) {
      const TensorRef d = expand_to(mul(as_channels(*a.cotangents[1]), 1.0 / count), x->spec.shape);
      dx = dx ? add(*dx, d) : d;
    }
    if (a.cotangents[2]) {
      const TensorRef d = mul(centered(), mul(as_channels(*a.cotangents[2]), 2.0 / count));
      dx = dx ? add(*dx, d) : d;
    }
    out[0] = dx ? detail::reshape_exact(*dx, x_in->spec.shape) : zeros_like(x_in);
  }
  if (wants(a, 1)) out[1] = dweight ? *dweight : zeros_like(a.inputs[1]);
  if (wants(a, 2)) out[2] = dbias ? *dbias : zeros_like(a.inputs[2]);
  return out;
}

}  // namespace burn::autodiff
