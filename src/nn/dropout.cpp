#include <burn/nn/dropout.hpp>

#include <fmt/format.h>

namespace burn::nn {

Dropout DropoutConfig::init() const {
  if (!(prob >= 0.0 && prob <= 1.0)) throw Error("DropoutConfig", fmt::format("prob must be in [0, 1], got {}", prob));
  return Dropout{prob, {}};
}

namespace detail {
burn::detail::TensorRef dropout(const burn::detail::TensorRef& x, double prob) {
  using namespace burn::detail;
  if (prob >= 1.0) return binary_scalar(ir::BinaryOp::Mul, x, Scalar(0.0));
  // The mask is a plain tensor (never differentiated); the product carries the gradient.
  auto keep = random(x->spec.shape, Distribution::bernoulli(1.0 - prob), {x->device, x->spec.dtype}, TensorKind::Float);
  return binary(ir::BinaryOp::Mul, x, binary_scalar(ir::BinaryOp::Mul, keep, Scalar(1.0 / (1.0 - prob))));
}
}  // namespace detail

}  // namespace burn::nn
