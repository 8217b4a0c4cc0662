// Small helpers shared by the layout and indexing backward rules.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "autodiff/vjp.hpp"

namespace burn::autodiff::layout {

/// A result vector with one empty slot per input.
inline Grads no_grads(const VjpArgs& a) { return Grads(a.inputs.size()); }

/// Zeros of `shape` with the dtype and device of `like`.
inline TensorRef zeros_shaped(const TensorRef& like, const Shape& shape) {
  return detail::create(ir::Full{shape, 0.0, like->spec.dtype}, like->device);
}

/// Every element of every dim of `shape`.
inline std::vector<ir::SliceRange> full_ranges(const Shape& shape) {
  std::vector<ir::SliceRange> r(shape.rank());
  for (std::size_t d = 0; d < shape.rank(); ++d) r[d] = {0, shape[d], 1};
  return r;
}

/// An int dtype the device supports that can hold indices below `bound`
/// (I64 where available, I32 otherwise, as long as the values fit).
inline DType index_dtype_for(const Device& device, std::size_t bound) {
  if (device.supports_dtype(DType::I64)) return DType::I64;
  if (bound <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()) && device.supports_dtype(DType::I32))
    return DType::I32;
  throw Error("unfold", "backward needs an int dtype for positions up to " + std::to_string(bound) +
                            ", but the device supports neither I64 nor a narrower one wide enough");
}

}  // namespace burn::autodiff::layout
