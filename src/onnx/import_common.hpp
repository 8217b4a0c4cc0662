// Helpers shared by the files of ONNX operators import runs
// (import_elementwise.cpp, import_reduce.cpp, import_shape.cpp,
// import_nn.cpp): ranks, axes and ONNX's broadcasting across ranks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <burn/detail/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_ops.hpp"

namespace burn::onnx {

using detail::TensorRef;
using I64s = std::vector<std::int64_t>;

inline std::size_t rank_of(const TensorRef& t) { return t->spec.shape.rank(); }
inline const Shape& shape_of(const TensorRef& t) { return t->spec.shape; }
inline DType dtype_of(const TensorRef& t) { return t->spec.dtype; }

inline std::size_t axis(const NodeArgs& a, std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) a.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// Leading unit dims up to `rank`.
inline TensorRef with_rank(const TensorRef& t, std::size_t rank) {
  if (rank_of(t) >= rank) return t;
  I64s dims(rank - rank_of(t), 1);
  for (auto d : shape_of(t).dims()) dims.push_back(static_cast<std::int64_t>(d));
  return detail::reshape(t, dims);
}

inline std::pair<TensorRef, TensorRef> align_ranks(const TensorRef& a, const TensorRef& b) {
  const std::size_t r = std::max(rank_of(a), rank_of(b));
  return {with_rank(a, r), with_rank(b, r)};
}

inline TensorRef broadcast_binary(ir::BinaryOp op, const TensorRef& x, const TensorRef& y) {
  auto [l, r] = align_ranks(x, y);
  if (dtype_of(r) != dtype_of(l)) r = detail::cast(r, dtype_of(l));  // Pow's exponent may differ
  return detail::binary(op, l, r);
}

inline std::vector<TensorRef> one(TensorRef t) { return {std::move(t)}; }

/// `value` as a scalar of `dtype`'s kind.
inline Scalar scalar_for(DType dtype, double value) {
  if (is_float(dtype)) return Scalar(value);
  if (is_bool(dtype)) return Scalar(value != 0.0);
  return Scalar(static_cast<std::int64_t>(value));
}

}  // namespace burn::onnx
