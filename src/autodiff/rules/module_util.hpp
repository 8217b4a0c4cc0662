// Small helpers shared by the module-op backward rules (conv, pool,
// interpolate): spatial shapes, cropping / zero-padding to an input's shape,
// host-built constants, and separable per-axis linear maps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <burn/module/ops.hpp>

#include "autodiff/vjp.hpp"

namespace burn::autodiff::module_rules {

using Sizes = std::vector<std::size_t>;

inline std::size_t numel(const TensorRef& t) { return t->spec.shape.num_elements(); }

/// The spatial dims of a channels-first shape [N, C, *spatial].
inline Sizes spatial(const Shape& s) { return Sizes(s.dims().begin() + 2, s.dims().end()); }

/// A host-computed constant of `like`'s float dtype on `like`'s device.
inline TensorRef host_constant(const std::vector<double>& values, Shape shape, const TensorRef& like) {
  return detail::from_data(TensorData(values, std::move(shape)), {like->device, like->spec.dtype}, TensorKind::Float);
}

/// Makes `t` exactly `target` (same rank): dims that are too long are cut at
/// the end, dims that are too short get zeros appended. Backward rules use it
/// where the forward ignored trailing positions (no window touched them, so
/// their gradient is zero) or where a helper op produced extra ones.
inline TensorRef fit_to(const TensorRef& t, const Shape& target) {
  const Shape& s = t->spec.shape;
  if (s == target) return t;
  std::vector<ir::SliceRange> crop;
  bool cut = false, grow = false;
  for (std::size_t d = 0; d < s.rank(); ++d) {
    crop.push_back({0, std::min(s[d], target[d]), 1});
    cut = cut || s[d] > target[d];
    grow = grow || s[d] < target[d];
  }
  TensorRef r = cut ? detail::execute1(ir::Slice{crop}, {t}) : t;
  if (!grow) return r;
  TensorRef zeros = detail::create(ir::Full{target, 0.0, t->spec.dtype}, t->device);
  if (r->spec.shape.num_elements() == 0) return zeros;
  return detail::execute1(ir::SliceAssign{crop}, {zeros, r});
}

/// Sum over every dim but the channel dim 1: [N, C, ...] -> [C] (bias gradients).
inline TensorRef sum_to_channels(const TensorRef& g) {
  TensorRef r = g;
  const std::size_t rank = g->spec.shape.rank();
  for (std::size_t d = 0; d < rank; ++d)
    if (d != 1) r = detail::reduce_dim(ir::ReduceOp::Sum, r, static_cast<std::int64_t>(d));
  return detail::reshape_exact(r, Shape{g->spec.shape[1]});
}

/// A linear map along one spatial axis, row-major [out][in]: the forward took
/// y[.., o, ..] = sum_i m[o][i] * x[.., i, ..].
struct AxisMap {
  std::size_t out = 0, in = 0;
  std::vector<double> m;
};

/// The transpose of a separable forward: applies every axis map's transpose to
/// the cotangent g [N, C, *out] and returns [N, C, *in]. Each axis costs one
/// matmul (a single GEMM for the last axis, a broadcast batched one otherwise).
inline TensorRef apply_transposed(const TensorRef& g, const std::vector<AxisMap>& maps) {
  TensorRef t = g;
  Sizes shape = g->spec.shape.dims();
  for (std::size_t a = 0; a < maps.size(); ++a) {
    const AxisMap& map = maps[a];
    const std::size_t dim = a + 2;
    std::size_t pre = 1, post = 1;
    for (std::size_t d = 0; d < dim; ++d) pre *= shape[d];
    for (std::size_t d = dim + 1; d < shape.size(); ++d) post *= shape[d];
    if (post == 1) {
      // [1, pre, out] x [1, out, in]: m as stored.
      t = detail::reshape_exact(t, Shape{1, pre, map.out});
      t = detail::matmul(t, host_constant(map.m, Shape{1, map.out, map.in}, g));
    } else {
      // [1, in, out] x [pre, out, post]: m transposed on the host.
      std::vector<double> mt(map.m.size());
      for (std::size_t o = 0; o < map.out; ++o)
        for (std::size_t i = 0; i < map.in; ++i) mt[i * map.out + o] = map.m[o * map.in + i];
      t = detail::reshape_exact(t, Shape{pre, map.out, post});
      t = detail::matmul(host_constant(mt, Shape{1, map.in, map.out}, g), t);
    }
    shape[dim] = map.in;
  }
  return detail::reshape_exact(t, Shape(shape));
}

}  // namespace burn::autodiff::module_rules
