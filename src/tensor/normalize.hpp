// Argument normalisation shared by the tensor-layer ops: negative dims,
// default index dtypes, and small constant tensors built next to an input.
#pragma once

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include <burn/detail/ops.hpp>

namespace burn::detail {

/// `dim` in [-rank, rank) -> [0, rank); anything else is an error naming the op.
inline std::size_t normalize_dim(std::string_view op, std::int64_t dim, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (dim < -r || dim >= r) throw Error(op, fmt::format("dim {} is out of range for a tensor of rank {}", dim, rank));
  return static_cast<std::size_t>(dim < 0 ? dim + r : dim);
}

/// A position to insert a new dim at (unsqueeze, stack): [-(rank+1), rank].
inline std::size_t normalize_insert_dim(std::string_view op, std::int64_t dim, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (dim < -(r + 1) || dim > r)
    throw Error(op, fmt::format("dim {} is out of range for inserting a dim into a tensor of rank {} (valid: {} to {})",
                                dim, rank, -(r + 1), r));
  return static_cast<std::size_t>(dim < 0 ? dim + r + 1 : dim);
}

inline const Shape& shape_of(const TensorRef& t) { return t->spec.shape; }
inline std::size_t rank_of(const TensorRef& t) { return t->spec.shape.rank(); }

/// Index outputs (argmax, sort, max_pool indices, argwhere) use the device's int dtype.
inline DType default_int_dtype(const TensorRef& t) { return to_dtype(t->device.settings().int_dtype); }

/// A constant of `t`'s dtype and rank with every dim 1: broadcasts against `t`
/// without materialising a full-size buffer.
inline TensorRef scalar_like(const TensorRef& t, Scalar value) {
  return create(ir::Full{Shape(std::vector<std::size_t>(rank_of(t), 1)), value, t->spec.dtype}, t->device);
}

/// A constant of `t`'s dtype on `t`'s device with another shape.
inline TensorRef full_on(const TensorRef& t, const Shape& shape, Scalar value) {
  return create(ir::Full{shape, value, t->spec.dtype}, t->device);
}

inline void expect_float_tensor(std::string_view op, const TensorRef& t) {
  if (!is_float(t->spec.dtype))
    throw Error(
        op, fmt::format("needs a float tensor, got {}; convert with to_float() or cast()", dtype_name(t->spec.dtype)));
}

}  // namespace burn::detail
