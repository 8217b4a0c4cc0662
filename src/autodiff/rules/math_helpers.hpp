// Small tensor-arithmetic helpers for the math backward rules (elementwise,
// matmul, reductions, scans, sort). They only build ordinary ops, so the rules
// stay device-independent and read like the formulas they implement.
#pragma once

#include <cstdint>
#include <vector>

#include "autodiff/vjp.hpp"

namespace burn::autodiff::math {

using ir::BinaryOp;
using ir::UnaryOp;

inline bool is_empty(const TensorRef& t) { return t->spec.shape.num_elements() == 0; }

inline TensorRef add(const TensorRef& a, const TensorRef& b) { return detail::binary(BinaryOp::Add, a, b); }
inline TensorRef sub(const TensorRef& a, const TensorRef& b) { return detail::binary(BinaryOp::Sub, a, b); }
inline TensorRef mul(const TensorRef& a, const TensorRef& b) { return detail::binary(BinaryOp::Mul, a, b); }
inline TensorRef div(const TensorRef& a, const TensorRef& b) { return detail::binary(BinaryOp::Div, a, b); }
inline TensorRef add(const TensorRef& a, double s) { return detail::binary_scalar(BinaryOp::Add, a, s); }
inline TensorRef mul(const TensorRef& a, double s) { return detail::binary_scalar(BinaryOp::Mul, a, s); }
inline TensorRef neg(const TensorRef& a) { return detail::unary(UnaryOp::Neg, a); }
inline TensorRef square(const TensorRef& a) { return mul(a, a); }
/// s - a.
inline TensorRef rsub(double s, const TensorRef& a) { return add(neg(a), s); }

/// Where `mask`, 0; elsewhere t (mask broadcasts against t).
inline TensorRef zero_where(const TensorRef& t, const TensorRef& mask) { return detail::mask_fill(t, mask, 0.0); }
/// Where `mask`, t; elsewhere 0.
inline TensorRef keep_where(const TensorRef& t, const TensorRef& mask) {
  return zero_where(t, detail::unary(UnaryOp::LogicalNot, mask));
}

inline TensorRef expand_to(const TensorRef& t, const Shape& shape) {
  if (t->spec.shape == shape) return t;
  return detail::execute1(ir::Expand{shape}, {t});
}

inline TensorRef flip_dim(const TensorRef& t, std::size_t dim) { return detail::execute1(ir::Flip{{dim}}, {t}); }

/// out_i = sum_{j >= i} t_j along dim.
inline TensorRef reverse_cumsum(const TensorRef& t, std::size_t dim) {
  return flip_dim(detail::execute1(ir::Cumulative{ir::CumulativeOp::Sum, dim}, {flip_dim(t, dim)}), dim);
}

/// An int dtype for positions along a dim: i64 where the device has it (a
/// narrow device int dtype could not count long dims), else i32.
inline DType position_dtype(const TensorRef& t) {
  return t->device.supports_dtype(DType::I64) ? DType::I64 : DType::I32;
}

/// 0, 1, ..., n-1 along `dim` as a position_dtype tensor of shape [1, .., n, .., 1]
/// (n = like's size at dim); it broadcasts against `like`.
inline TensorRef positions_along(const TensorRef& like, std::size_t dim) {
  const std::size_t n = like->spec.shape[dim];
  auto line = detail::create(ir::Arange{0, static_cast<std::int64_t>(n), 1, position_dtype(like)}, like->device);
  std::vector<std::size_t> dims(like->spec.shape.rank(), 1);
  dims[dim] = n;
  return detail::execute1(ir::Reshape{Shape(dims)}, {line});
}

/// x == y, also true where both are NaN (an extreme that is NaN was taken from
/// a NaN element). y broadcasts against x.
inline TensorRef equal_or_both_nan(const TensorRef& x, const TensorRef& y) {
  auto eq = detail::binary(BinaryOp::Equal, x, y);
  auto both_nan =
      detail::binary(BinaryOp::LogicalAnd, detail::unary(UnaryOp::IsNan, x), detail::unary(UnaryOp::IsNan, y));
  return detail::binary(BinaryOp::LogicalOr, eq, both_nan);
}

}  // namespace burn::autodiff::math
