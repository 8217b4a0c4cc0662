// The storage both CPU backends use: a shared buffer viewed through shape,
// strides and an offset (all in elements). Strides may be 0 (expanded dims)
// or negative (flipped dims), so views need no copy.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <burn/backend/backend.hpp>

#include "backends/cpu_common/allocator.hpp"

namespace burn::cpu {

/// Extents and element strides of a view, inline up to six dims.
using Extents = Shape::Dims;
using Strides = SmallVector<std::int64_t, 6>;

class CpuTensor final : public backend::Primitive {
 public:
  std::shared_ptr<Buffer> buffer;
  DType dtype = DType::F32;
  Extents shape;
  Strides strides;
  std::int64_t offset = 0;

  /// A fresh row-major tensor (uninitialised memory).
  static std::shared_ptr<CpuTensor> allocate(const std::shared_ptr<Allocator>& alloc, const ir::TensorSpec& spec);
  /// A view sharing this tensor's buffer.
  std::shared_ptr<CpuTensor> view(Extents shape, Strides strides, std::int64_t offset) const;

  std::size_t rank() const noexcept { return shape.size(); }
  std::size_t num_elements() const noexcept;
  /// Row-major and dense (size-1 dims may have any stride).
  bool is_contiguous() const noexcept;
  /// Pointer to element [0, 0, ...] (offset applied).
  std::byte* base() const noexcept {
    return buffer ? buffer->data() + offset * static_cast<std::int64_t>(dtype_size(dtype)) : nullptr;
  }
  template <class T>
  T* data() const noexcept {
    return reinterpret_cast<T*>(base());
  }
};

using CpuTensorPtr = std::shared_ptr<CpuTensor>;

/// The CpuTensor behind a primitive; throws if it belongs to another backend.
const CpuTensor& as_cpu(const backend::PrimitivePtr& p);
CpuTensorPtr as_cpu_ptr(const backend::PrimitivePtr& p);

/// Row-major strides for a shape.
Strides contiguous_strides(const Extents& shape);

/// Copies any view into fresh row-major bytes.
TensorData to_tensor_data(const CpuTensor& t);
/// Copies host data into a fresh row-major tensor.
CpuTensorPtr from_tensor_data(const std::shared_ptr<Allocator>& alloc, const TensorData& data);
/// A row-major copy of any view (returns the same tensor if already contiguous
/// and `force_copy` is false).
CpuTensorPtr contiguous(const std::shared_ptr<Allocator>& alloc, const CpuTensorPtr& t, bool force_copy = false);

/// Calls f(flat_output_index, input_element_offset) for every element of a
/// strided view in row-major order. Serial; for the reference backend and
/// for copies.
template <class F>
void for_each_offset(const Extents& shape, const Strides& strides,
                     std::int64_t offset, F&& f) {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  if (n == 0) return;
  const std::size_t rank = shape.size();
  Extents idx(rank, 0);
  std::int64_t off = offset;
  for (std::size_t i = 0; i < n; ++i) {
    f(i, off);
    for (std::size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * static_cast<std::int64_t>(shape[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace burn::cpu
