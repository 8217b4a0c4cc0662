// Arithmetic on untyped tensor handles for the update rules, which work on
// parameters of any rank (private to src/optim).
#pragma once

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
inline Val square(const Val& a) { return a * a; }
inline Val max_pair(const Val& a, const Val& b) { return {burn::detail::binary(ir::BinaryOp::Max, a.r, b.r)}; }

}  // namespace burn::optim::detail
