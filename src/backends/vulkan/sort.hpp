// Stable sorting of lines along one dim, shared by the sort op and by
// scatter / select_assign (which sort their indices to apply duplicates in
// order without atomics).
#pragma once

#include "backends/vulkan/kernels.hpp"

namespace burn::vulkan {

struct Sorted {
  VkTensorPtr values;     ///< x's dtype and shape, row-major
  VkTensorPtr positions;  ///< i32, each value's original position along the dim
};

/// Sorts every line of `x` along `dim` (NaN largest; equal keys keep their
/// order). Lines up to 2048 long (less on adapters with under 24 KiB of
/// workgroup memory) are sorted in workgroup memory in one pass; longer ones
/// in chunks of that size, then merged pairwise in log2(len / chunk) passes
/// through scratch buffers.
Sorted sort_lines(const Context& ctx, const VkTensor& x, std::size_t dim, bool descending);

}  // namespace burn::vulkan
