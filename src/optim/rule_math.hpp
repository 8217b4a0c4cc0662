// Arithmetic on untyped tensor handles for the update rules, which work on
// parameters of any rank (private to src/optim).
#pragma once

#include <burn/optim/optimizer.hpp>
#include <burn/tensor.hpp>

namespace burn::optim::detail {

/// A float tensor of any rank with the operators the rules need.
struct Val {
  burn::detail::TensorRef r;
};

inline Val operator+(const Val& a, const Val& b) { return {burn::detail::binary(ir::BinaryOp::Add, a.r, b.r)}; }
inline Val operator-(const Val& a, const Val& b) { return {burn::detail::binary(ir::BinaryOp::Sub, a.r, b.r)}; }
inline Val operator*(const Val& a, const Val& b) { return {burn::detail::binary(ir::BinaryOp::Mul, a.r, b.r)}; }
inline Val operator/(const Val& a, const Val& b) { return {burn::detail::binary(ir::BinaryOp::Div, a.r, b.r)}; }
inline Val operator+(const Val& a, double s) { return {burn::detail::binary_scalar(ir::BinaryOp::Add, a.r, s)}; }
inline Val operator*(const Val& a, double s) { return {burn::detail::binary_scalar(ir::BinaryOp::Mul, a.r, s)}; }
inline Val operator/(const Val& a, double s) { return {burn::detail::binary_scalar(ir::BinaryOp::Div, a.r, s)}; }
inline Val sqrt(const Val& a) { return {burn::detail::unary(ir::UnaryOp::Sqrt, a.r)}; }

/// A step scalar applied with `op`: the host value as an op's scalar in an
/// eager step, the one-element tensor broadcast in a traced one (in the
/// operand's dtype; for f32 the same rounding as the scalar's).
inline Val apply(ir::BinaryOp op, const Val& a, const StepScalar& s) {
  if (!s.tensor) return {burn::detail::binary_scalar(op, a.r, s.value)};
  burn::detail::TensorRef b = s.tensor;
  if (b->spec.dtype != a.r->spec.dtype) b = burn::detail::cast(b, a.r->spec.dtype);
  b = burn::detail::reshape_exact(b, Shape(std::vector<std::size_t>(a.r->spec.shape.rank(), 1)));
  return {burn::detail::binary(op, a.r, b)};
}
inline Val operator+(const Val& a, const StepScalar& s) { return apply(ir::BinaryOp::Add, a, s); }
inline Val operator*(const Val& a, const StepScalar& s) { return apply(ir::BinaryOp::Mul, a, s); }
inline Val operator/(const Val& a, const StepScalar& s) { return apply(ir::BinaryOp::Div, a, s); }
inline Val square(const Val& a) { return a * a; }
inline Val max_pair(const Val& a, const Val& b) { return {burn::detail::binary(ir::BinaryOp::Max, a.r, b.r)}; }

}  // namespace burn::optim::detail
