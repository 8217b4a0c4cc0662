// The storage both CPU backends use: a shared buffer viewed through shape,
// strides and an offset (all in elements). Strides may be 0 (expanded dims)
// or negative (flipped dims), so views need no copy.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <burn/backend/backend.hpp>

#include "backends/host/allocator.hpp"

namespace burn::host {

/// Extents and element strides of a view, inline up to six dims.
using Extents = Shape::Dims;
using Strides = SmallVector<std::int64_t, 6>;

class CpuTensor;

/// A layout only some kernels read — oneDNN's blocked activations (nChw16c),
/// which a convolution writes and the next convolution reads without the
/// two reorders plain NCHW costs. A CpuTensor's buffer may hold such a
/// layout instead of its row-major data; every other kernel sees the tensor
/// after make_plain().
class OpaqueLayout {
 public:
  virtual ~OpaqueLayout() = default;
  /// A fresh buffer with the row-major data of `t`, whose `buffer` holds
  /// this layout.
  virtual std::shared_ptr<Buffer> to_plain(const CpuTensor& t, const std::shared_ptr<Buffer>& buffer) const = 0;
};

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

  // ---- opaque layouts ---------------------------------------------------------------
  // An opaque tensor keeps its logical shape, row-major strides and offset 0;
  // only `buffer` holds other bytes. Tensors are values, so turning one plain
  // changes its representation, not what any holder of it sees; that is why
  // a const tensor may do it (once, thread-safe).

  /// Whether `buffer` holds an opaque layout rather than row-major data.
  bool is_opaque() const noexcept { return opaque_flag_.load(std::memory_order_acquire); }
  /// Reorders an opaque tensor into row-major data in place; no-op otherwise.
  void make_plain() const {
    if (is_opaque()) make_plain_locked();
  }
  /// Makes a fresh tensor (no view shares it yet) hold `layout` in `blocked`.
  void set_opaque(std::shared_ptr<const OpaqueLayout> layout, std::shared_ptr<Buffer> blocked);

  /// The opaque representation, both parts kept alive for the caller even
  /// if another thread makes the tensor plain meanwhile; empty when plain.
  struct OpaqueView {
    std::shared_ptr<const OpaqueLayout> layout;
    std::shared_ptr<Buffer> buffer;
  };
  OpaqueView opaque_view() const;

  // ---- a kept copy in another layout ----------------------------------------------
  // A kernel that reorders an input into an opaque layout may keep that copy
  // on the tensor for the next kernel that reads the tensor the same way: a
  // convolution's backward reads its output gradient twice (for the input
  // gradient and for the weight gradient), both times in oneDNN's blocked
  // layout. The copy lives as long as the tensor (its holders decide how
  // long); tensors are values, so it never goes stale.

  /// Keeps `copy` (this tensor's elements in `copy.layout`), replacing any
  /// copy kept before.
  void keep_copy(OpaqueView copy) const;
  /// The kept copy; empty when none.
  OpaqueView kept_copy() const;
  /// The kept copy, no longer kept (its last reader takes it); empty when none.
  OpaqueView take_kept_copy() const;

 private:
  void make_plain_locked() const;

  mutable std::atomic<bool> opaque_flag_{false};
  mutable std::shared_ptr<const OpaqueLayout> opaque_;  // guarded by opaque_mutex(this)
  mutable OpaqueView kept_;                             // guarded by opaque_mutex(this)
};

/// Makes every input plain (see CpuTensor::make_plain), except the first
/// `skip` ones, which the caller reads in their opaque layout itself.
void make_inputs_plain(std::span<const backend::Input> inputs, std::size_t skip = 0);

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
void for_each_offset(const Extents& shape, const Strides& strides, std::int64_t offset, F&& f) {
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

}  // namespace burn::host
