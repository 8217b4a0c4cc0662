// Index arithmetic of the reference kernels. Every kernel walks the
// multi-indices of its output in row-major order and maps each one to input
// elements through the inputs' own shape, strides and offset, so any view
// (0 or negative strides, offsets) is read correctly and outputs are always
// fresh row-major tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/host/cpu_tensor.hpp"
#include "backends/ndarray/numeric.hpp"

namespace burn::ndarray {

using Index = host::Extents;

/// Calls f(flat_index, idx) for every multi-index of `shape`, row-major.
template <class F>
void for_each_index(const host::Extents& shape, F&& f) {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  Index idx(shape.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    f(i, static_cast<const Index&>(idx));
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

/// Buffer offset (in elements) of the element at `idx`. Dims of size 1 always
/// read index 0, so `idx` may come from a broadcast shape of the same rank.
inline std::int64_t offset_of(const host::CpuTensor& t, const Index& idx) {
  std::int64_t off = t.offset;
  for (std::size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] != 1) off += static_cast<std::int64_t>(idx[d]) * t.strides[d];
  return off;
}

/// The buffer's first element; index it with offset_of.
template <class T>
const T* elements(const host::CpuTensor& t) noexcept {
  return reinterpret_cast<const T*>(t.buffer ? t.buffer->data() : nullptr);
}

/// Typed read of the element at `idx` (broadcasting as offset_of does).
template <class T>
T element_at(const host::CpuTensor& t, const Index& idx) noexcept {
  return elements<T>(t)[offset_of(t, idx)];
}

/// Copies one element, whatever its dtype, from `src` at buffer offset
/// `src_off` to element `dst_index` of the row-major `dst`.
inline void copy_element(const host::CpuTensor& src, std::int64_t src_off, const host::CpuTensor& dst,
                         std::size_t dst_index) noexcept {
  const std::size_t width = dtype_size(src.dtype);
  std::memcpy(dst.base() + dst_index * width, src.buffer->data() + src_off * static_cast<std::int64_t>(width), width);
}

/// Writes position `v` as element `i` of a row-major tensor of any int dtype
/// (the index outputs of argmax, sort, ...).
inline void store_index(const host::CpuTensor& t, std::size_t i, std::size_t v) {
  visit_int_dtype("index", t.dtype, [&]<class I>() { t.data<I>()[i] = static_cast<I>(v); });
}

/// Row-major element index of `idx` in a tensor of `shape`.
inline std::size_t flat_index(const host::Extents& shape, const Index& idx) noexcept {
  std::size_t flat = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + idx[d];
  return flat;
}

}  // namespace burn::ndarray
