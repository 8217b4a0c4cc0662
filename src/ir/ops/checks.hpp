// Checks shared by the families' shape and dtype rules (src/ir/ops/*.cpp).
// Each throws burn::Error "[op] ..." with `op` the name of the op inferred.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include <burn/error.hpp>
#include <burn/ir/op.hpp>

namespace burn::ir {

template <class... Args>
[[noreturn]] void fail(std::string_view op, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(op, fmt::format(f, std::forward<Args>(args)...));
}

inline void expect_inputs(std::string_view op, std::span<const TensorSpec> in, std::size_t n) {
  if (in.size() != n) fail(op, "expects {} input tensor(s), got {}", n, in.size());
}

inline void expect_same_dtype(std::string_view op, const TensorSpec& a, const TensorSpec& b) {
  if (a.dtype != b.dtype)
    fail(op, "dtypes {} and {} differ; cast one of the tensors first", dtype_name(a.dtype), dtype_name(b.dtype));
}

inline void expect_same_rank(std::string_view op, const TensorSpec& a, const TensorSpec& b) {
  if (a.shape.rank() != b.shape.rank())
    fail(op, "ranks {} and {} differ (shapes {} and {})", a.shape.rank(), b.shape.rank(), a.shape.to_string(),
         b.shape.to_string());
}

inline void expect_dim(std::string_view op, std::size_t dim, std::size_t rank) {
  if (dim >= rank) fail(op, "dim {} is out of range for a tensor of rank {}", dim, rank);
}

inline void expect_float(std::string_view op, DType d) {
  if (!is_float(d)) fail(op, "needs a float tensor, got {}; convert with to_float() or cast()", dtype_name(d));
}
inline void expect_int(std::string_view op, DType d) {
  if (!is_int(d)) fail(op, "needs an int tensor, got {}", dtype_name(d));
}
inline void expect_numeric(std::string_view op, DType d) {
  if (is_bool(d)) fail(op, "is not defined for bool tensors; convert with to_int() or to_float()");
}
inline void expect_index(std::string_view op, const TensorSpec& s) {
  if (!is_int(s.dtype)) fail(op, "indices must be an int tensor, got {}", dtype_name(s.dtype));
}

// Spatial ops (conv, pool, interpolate): x is [batch, channels, *spatial].

/// The name of a spatial op for its number of spatial dims n: names[n - 1]
/// ("conv1d", "conv2d", "conv3d"), or `other` (inference rejects other n).
inline std::string_view spatial_name(std::size_t n, const std::string_view (&names)[3], std::string_view other) {
  return n >= 1 && n <= 3 ? names[n - 1] : other;
}

inline void expect_spatial(std::string_view op, const TensorSpec& x, std::size_t n) {
  if (x.shape.rank() != n + 2)
    fail(op, "expects an input of rank {} ([batch, channels, {} spatial dims]), got shape {}", n + 2, n,
         x.shape.to_string());
}

/// One value per spatial dim in an attribute (stride, padding, ...).
template <class V>
void expect_len(std::string_view op, const V& v, std::size_t n, std::string_view what) {
  if (v.size() != n) fail(op, "{} has {} values for {} spatial dims", what, v.size(), n);
}

/// [batch, channels, size(0), ..., size(n-1)] with the batch of `x`: the
/// output shape of every spatial op. `size(axis)` checks and sizes one axis.
template <class AxisSize>
Shape spatial_output(const TensorSpec& x, std::size_t channels, std::size_t n, AxisSize&& size) {
  Shape::Dims out;
  out.reserve(n + 2);
  out.push_back(x.shape[0]);
  out.push_back(channels);
  for (std::size_t i = 0; i < n; ++i) out.push_back(size(i));
  return Shape(std::move(out));
}

/// Output size of a convolution along one axis (kernel k, stride s, padding
/// p, dilation d); the kernel must fit the padded input.
inline std::size_t conv_out(std::string_view op, std::size_t in, std::size_t k, std::size_t s, std::size_t p,
                            std::size_t d, std::size_t axis) {
  if (s == 0) fail(op, "stride must be at least 1 (axis {})", axis);
  if (d == 0) fail(op, "dilation must be at least 1 (axis {})", axis);
  const std::size_t span = d * (k - 1) + 1;
  if (k == 0 || in + 2 * p < span)
    fail(op, "kernel of size {} (dilation {}) does not fit the input of size {} with padding {} (axis {})", k, d, in, p,
         axis);
  return (in + 2 * p - span) / s + 1;
}

/// Output size of a pooling window along one axis; with ceil_mode a partial
/// last window counts.
inline std::size_t pool_out(std::string_view op, std::size_t in, std::size_t k, std::size_t s, std::size_t p,
                            std::size_t d, bool ceil_mode, std::size_t axis) {
  if (p * 2 > k) fail(op, "padding {} must be at most half the kernel size {} (axis {})", p, k, axis);
  if (s == 0) fail(op, "stride must be at least 1 (axis {})", axis);
  const std::size_t span = d * (k - 1) + 1;
  if (k == 0 || in + 2 * p < span)
    fail(op, "kernel of size {} does not fit the input of size {} with padding {} (axis {})", k, in, p, axis);
  std::size_t out = (in + 2 * p - span + (ceil_mode ? s - 1 : 0)) / s + 1;
  // As in PyTorch: the last window must start inside the input or left padding.
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

}  // namespace burn::ir
