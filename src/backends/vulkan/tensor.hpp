// The Vulkan backend's tensor: a pool block viewed through shape, strides and
// an element offset. Strides may be 0 (expanded) or negative (flipped), so
// permute, expand, flip, slice and reshape of contiguous data are views.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <burn/backend/backend.hpp>

#include "backends/vulkan/memory_pool.hpp"
#include "backends/vulkan/stream.hpp"

namespace burn::vulkan {

class VkTensor final : public backend::Primitive {
 public:
  DeviceBufferPtr buffer;
  DType dtype = DType::F32;
  std::vector<std::size_t> shape;
  std::vector<std::int64_t> strides;  ///< in elements
  std::int64_t offset = 0;            ///< in elements, from the block's start

  std::size_t rank() const noexcept { return shape.size(); }
  std::size_t num_elements() const noexcept;
  /// Row-major and dense from `offset` (size-1 dims may have any stride).
  bool is_contiguous() const noexcept;
  /// The whole block, for binding (shaders index with offset and strides).
  Binding binding() const { return binding_of(buffer->block()); }
  /// A view of the same block.
  std::shared_ptr<VkTensor> view(std::vector<std::size_t> shape, std::vector<std::int64_t> strides,
                                 std::int64_t offset) const;
};
using VkTensorPtr = std::shared_ptr<VkTensor>;

/// The VkTensor behind a primitive; throws if another backend made it.
const VkTensor& as_vk(const backend::PrimitivePtr& p);
VkTensorPtr as_vk_ptr(const backend::PrimitivePtr& p);

std::vector<std::int64_t> row_major_strides(const std::vector<std::size_t>& shape);

}  // namespace burn::vulkan
