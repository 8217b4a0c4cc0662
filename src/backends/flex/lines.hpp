// A tensor seen as [outer, n, inner] around one dim: the shape reductions,
// scans and sorts work on. Any view whose dims before and after `dim`
// collapse to one stride each fits without a copy.
#pragma once

#include <cstdint>
#include <optional>

#include "backends/flex/strided.hpp"
#include "backends/host/cpu_tensor.hpp"

namespace burn::flex {

struct Lines {
  const std::byte* base = nullptr;
  std::size_t outer = 1, n = 0, inner = 1;
  std::int64_t outer_stride = 0, stride = 0, inner_stride = 0;  // in elements
};

namespace detail {
// Collapses dims [begin, end) into one (size, stride); nullopt if they are
// not evenly strided.
inline std::optional<std::pair<std::size_t, std::int64_t>> collapse(const host::CpuTensor& t, std::size_t begin,
                                                                    std::size_t end) {
  std::size_t size = 1;
  std::int64_t stride = 0;
  bool any = false;
  for (std::size_t d = begin; d < end; ++d) {
    if (t.shape[d] == 1) continue;
    if (any && stride != t.strides[d] * static_cast<std::int64_t>(t.shape[d])) return std::nullopt;
    size *= t.shape[d];
    stride = t.strides[d];
    any = true;
  }
  return std::pair{size, stride};
}
}  // namespace detail

/// `t` as lines along `dim`, or nullopt when its strides do not allow it
/// (copy it with contiguous_copy first; a row-major tensor always fits).
inline std::optional<Lines> as_lines(const host::CpuTensor& t, std::size_t dim) {
  const auto outer = detail::collapse(t, 0, dim);
  const auto inner = detail::collapse(t, dim + 1, t.rank());
  if (!outer || !inner) return std::nullopt;
  return Lines{t.base(), outer->first, t.shape[dim], inner->first, outer->second, t.strides[dim], inner->second};
}

/// as_lines, copying `t` into `keep` first when its strides do not fit.
inline Lines lines_of(const Context& ctx, const host::CpuTensorPtr& t, std::size_t dim, host::CpuTensorPtr& keep) {
  if (auto l = as_lines(*t, dim)) return *l;
  keep = contiguous_copy(ctx, *t);
  return *as_lines(*keep, dim);
}

}  // namespace burn::flex
