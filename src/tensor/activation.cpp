// Activations as composites of primitive ops, written to stay finite where
// the naive formula would overflow. Softmax, log-softmax and gelu are also
// optional IR ops: where the device has a kernel (supports_op) they run as
// one op, one pass over memory, and elsewhere as the composite below.
#include <cmath>
#include <numbers>

#include <burn/activation.hpp>
#include <burn/amp/autocast.hpp>

#include "tensor/normalize.hpp"

namespace burn::detail {
namespace {

using ir::BinaryOp;
using ir::UnaryOp;

TensorRef add(const TensorRef& a, const TensorRef& b) { return binary(BinaryOp::Add, a, b); }
TensorRef sub(const TensorRef& a, const TensorRef& b) { return binary(BinaryOp::Sub, a, b); }
TensorRef mul(const TensorRef& a, const TensorRef& b) { return binary(BinaryOp::Mul, a, b); }
TensorRef add(const TensorRef& a, double s) { return binary_scalar(BinaryOp::Add, a, s); }
TensorRef mul(const TensorRef& a, double s) { return binary_scalar(BinaryOp::Mul, a, s); }

/// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): exp never overflows.
TensorRef softplus_stable(const TensorRef& x) {
  auto tail = unary(UnaryOp::Log1p, unary(UnaryOp::Exp, unary(UnaryOp::Neg, unary(UnaryOp::Abs, x))));
  return add(clamp(x, Scalar(0.0), std::nullopt), tail);
}

/// PyTorch's softplus: linear where beta * x > 20, where log1p(exp(.)) equals
/// its argument to float precision.
TensorRef softplus_thresholded(const TensorRef& x, double beta) {
  constexpr double threshold = 20.0;
  auto bx = beta == 1.0 ? x : mul(x, beta);
  auto soft = softplus_stable(bx);
  if (beta != 1.0) soft = binary_scalar(BinaryOp::Div, soft, beta);
  return mask_where(soft, binary_scalar(BinaryOp::Greater, bx, threshold), x);
}

}  // namespace

TensorRef relu(TensorRef&& t) {
  expect_float_tensor("relu", t);
  // mask_fill leaves NaN in place (NaN <= 0 is false), unlike a max() kernel might;
  // masking x == 0 too makes the gradient at 0 zero, as in PyTorch and Burn.
  // The fill consumes t: when nothing else holds it, its storage takes the result.
  const TensorRef mask = binary_scalar(BinaryOp::LessEqual, t, 0.0);
  return mask_fill(std::move(t), mask, 0.0);
}

// A copy of the caller's handle: t stays shared, so the fill never overwrites it.
TensorRef relu(const TensorRef& t) { return relu(TensorRef(t)); }

TensorRef leaky_relu(const TensorRef& t, double negative_slope) {
  expect_float_tensor("leaky_relu", t);
  return mask_where(t, binary_scalar(BinaryOp::Less, t, 0.0), mul(t, negative_slope));
}

TensorRef gelu(const TensorRef& t) {
  expect_float_tensor("gelu", t);
  if (const ir::Gelu op{false}; t->device.supports_op(op)) return execute1(op, {t});
  auto cdf = add(unary(UnaryOp::Erf, mul(t, 1.0 / std::numbers::sqrt2)), 1.0);
  return mul(mul(t, cdf), 0.5);
}

TensorRef gelu_tanh(const TensorRef& t) {
  expect_float_tensor("gelu_tanh", t);
  if (const ir::Gelu op{true}; t->device.supports_op(op)) return execute1(op, {t});
  const double k = std::sqrt(2.0 / std::numbers::pi);
  auto cube = mul(mul(t, t), t);
  auto inner = mul(add(t, mul(cube, 0.044715)), k);
  return mul(mul(t, add(unary(UnaryOp::Tanh, inner), 1.0)), 0.5);
}

TensorRef sigmoid(const TensorRef& t) {
  expect_float_tensor("sigmoid", t);
  // With e = exp(-|x|) in (0, 1]: 1 / (1 + e) for x >= 0, e / (1 + e) below.
  // Nothing overflows, and small results keep their relative precision even
  // in f16, where exp(-x) alone would overflow at x < -11.
  auto e = unary(UnaryOp::Exp, unary(UnaryOp::Neg, unary(UnaryOp::Abs, t)));
  auto r = unary(UnaryOp::Recip, add(e, 1.0));
  return mask_where(r, binary_scalar(BinaryOp::Less, t, 0.0), mul(e, r));
}

TensorRef silu(const TensorRef& t) {
  expect_float_tensor("silu", t);
  return mul(t, sigmoid(t));
}

TensorRef log_sigmoid(const TensorRef& t) {
  expect_float_tensor("log_sigmoid", t);
  return unary(UnaryOp::Neg, softplus_stable(unary(UnaryOp::Neg, t)));
}

TensorRef softplus(const TensorRef& t, double beta) {
  expect_float_tensor("softplus", t);
  if (beta == 0.0 || !std::isfinite(beta))
    throw Error("softplus", fmt::format("beta must be finite and non-zero, got {}", beta));
  return softplus_thresholded(t, beta);
}

TensorRef softmax(const TensorRef& t_in, std::int64_t dim) {
  expect_float_tensor("softmax", t_in);
  TensorRef t = amp::detail::float32_input(t_in);
  const auto d = static_cast<std::int64_t>(normalize_dim("softmax", dim, rank_of(t)));
  if (shape_of(t).num_elements() == 0) return t;
  if (const ir::Softmax op{false}; d + 1 == static_cast<std::int64_t>(rank_of(t)) && t->device.supports_op(op))
    return execute1(op, {t});
  auto e = unary(UnaryOp::Exp, sub(t, reduce_dim(ir::ReduceOp::Max, t, d)));
  auto out = binary(BinaryOp::Div, e, reduce_dim(ir::ReduceOp::Sum, e, d));
  mark_composite(out, Composite::Softmax, {t}, d);
  return out;
}

TensorRef log_softmax(const TensorRef& t_in, std::int64_t dim) {
  expect_float_tensor("log_softmax", t_in);
  TensorRef t = amp::detail::float32_input(t_in);
  const auto d = static_cast<std::int64_t>(normalize_dim("log_softmax", dim, rank_of(t)));
  if (shape_of(t).num_elements() == 0) return t;
  if (const ir::Softmax op{true}; d + 1 == static_cast<std::int64_t>(rank_of(t)) && t->device.supports_op(op))
    return execute1(op, {t});
  auto shifted = sub(t, reduce_dim(ir::ReduceOp::Max, t, d));
  auto log_sum = unary(UnaryOp::Log, reduce_dim(ir::ReduceOp::Sum, unary(UnaryOp::Exp, shifted), d));
  auto out = sub(shifted, log_sum);
  mark_composite(out, Composite::LogSoftmax, {t}, d);
  return out;
}

TensorRef hard_sigmoid(const TensorRef& t, double alpha, double beta) {
  expect_float_tensor("hard_sigmoid", t);
  return clamp(add(mul(t, alpha), beta), Scalar(0.0), Scalar(1.0));
}

TensorRef mish(const TensorRef& t) {
  expect_float_tensor("mish", t);
  return mul(t, unary(UnaryOp::Tanh, softplus_thresholded(t, 1.0)));
}

}  // namespace burn::detail
