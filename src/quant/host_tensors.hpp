// Reading and writing tensors of the host-memory devices (cpu, flex,
// ndarray) in place, for the quantization code that computes on the host
// itself: the int8 layers and quantize. Each falls back to a copy where the
// backend offers no direct access (HostAccess).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <burn/device.hpp>
#include <burn/tensor_data.hpp>

#include <burn/backend/backend.hpp>
#include <burn/detail/ops.hpp>

namespace burn::quant::detail {

/// A tensor's row-major bytes, read where its backend keeps them instead
/// of copied out; a copy (to_data) where that is not offered.
class HostInput {
 public:
  explicit HostInput(const burn::detail::TensorRef& x);
  std::span<const std::byte> bytes() const { return bytes_; }
  /// The values of an F32 tensor.
  std::span<const float> floats() const {
    return {reinterpret_cast<const float*>(bytes_.data()), bytes_.size() / sizeof(float)};
  }

 private:
  burn::detail::TensorRef owner_;  // keeps the bytes read in place alive
  TensorData copy_;
  std::span<const std::byte> bytes_;
};

/// A new tensor of `shape` and `dtype` on `device`, written straight into
/// the device's memory where its backend allows (HostAccess), else into
/// host data handed over by finish().
class HostOutput {
 public:
  HostOutput(const Device& device, Shape shape, DType dtype = DType::F32);
  std::span<std::byte> bytes() const { return bytes_; }
  template <class T>
  T* data() const {
    return reinterpret_cast<T*>(bytes_.data());
  }
  burn::detail::TensorRef finish() &&;

 private:
  Device device_;
  ir::TensorSpec spec_;
  backend::PrimitivePtr primitive_;
  std::vector<std::byte> fallback_;
  std::span<std::byte> bytes_;
};

}  // namespace burn::quant::detail
