// Backward of layer norm over the last dim. With xhat = (x - mean) * rstd,
// rstd = 1 / sqrt(var + epsilon) and gw = g * weight (g the cotangent):
//   dbias   = g summed over every dim but the last
//   dweight = g * xhat summed over every dim but the last
//   dx      = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))   (means along the last dim)
// The statistics are recomputed from x, so a node keeps x and the weight
// only. Every step is an ordinary op, so the gradient is differentiable too.
#include "autodiff/rules/math_helpers.hpp"

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

}  // namespace burn::autodiff
