// Backward of softmax, log-softmax (over the last dim) and gelu, with g the
// cotangent and sums along the last dim kept as size-1 dims:
//   softmax      y = softmax(x):      dx = y * (g - sum(g * y))
//   log-softmax  y = log_softmax(x):  dx = g - exp(y) * sum(g)
//   gelu         dx = g * (Phi(x) + x * phi(x)), Phi and phi the standard
//                normal CDF and density
//   gelu (tanh)  with u = k * (x + a x^3), t = tanh(u):
//                dx = g * ((1 + t) / 2 + x / 2 * (1 - t^2) * k * (1 + 3 a x^2))
// The softmaxes read their output only, gelu its input. Every step is an
// ordinary op, so the gradients are differentiable too.
#include <cmath>
#include <numbers>

#include "autodiff/rules/math_helpers.hpp"

namespace burn::autodiff {

using namespace math;

namespace {

TensorRef sum_last(const TensorRef& t) {
  return detail::reduce_dim(ir::ReduceOp::Sum, t, static_cast<std::int64_t>(t->spec.shape.rank()) - 1);
}

/// d gelu(x) / dx, exact form.
TensorRef gelu_slope(const TensorRef& x) {
  const TensorRef cdf = mul(add(detail::unary(UnaryOp::Erf, mul(x, 1.0 / std::numbers::sqrt2)), 1.0), 0.5);
  const TensorRef pdf = mul(detail::unary(UnaryOp::Exp, mul(square(x), -0.5)), 1.0 / std::sqrt(2.0 * std::numbers::pi));
  return add(cdf, mul(x, pdf));
}

/// d gelu_tanh(x) / dx.
TensorRef gelu_tanh_slope(const TensorRef& x) {
  constexpr double a = 0.044715;
  const double k = std::sqrt(2.0 / std::numbers::pi);
  const TensorRef x2 = square(x);
  const TensorRef t = detail::unary(UnaryOp::Tanh, mul(mul(x, add(mul(x2, a), 1.0)), k));
  const TensorRef du = mul(add(mul(x2, 3.0 * a), 1.0), k);  // du/dx
  return add(mul(add(t, 1.0), 0.5), mul(mul(mul(x, 0.5), rsub(1.0, square(t))), du));
}

}  // namespace

SavedValues saved(const ir::Softmax&) { return kKeepOutput0; }

Grads rule(const ir::Softmax& op, const VjpArgs& a) {
  Grads out(1);
  if (!wants(a, 0)) return out;
  const TensorRef& y = a.outputs[0];
  if (is_empty(y)) {
    out[0] = zeros_like(a.inputs[0]);
    return out;
  }
  const TensorRef g = cotangent_or_zeros(a, 0);
  if (op.log) out[0] = sub(g, mul(detail::unary(UnaryOp::Exp, y), sum_last(g)));
  else out[0] = mul(y, sub(g, sum_last(mul(g, y))));
  return out;
}

SavedValues saved(const ir::Gelu&) { return kKeepInput0; }

Grads rule(const ir::Gelu& op, const VjpArgs& a) {
  Grads out(1);
  if (!wants(a, 0)) return out;
  const TensorRef& x = a.inputs[0];
  out[0] = mul(cotangent_or_zeros(a, 0), op.tanh ? gelu_tanh_slope(x) : gelu_slope(x));
  return out;
}

}  // namespace burn::autodiff
