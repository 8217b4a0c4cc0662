#include "backends/vulkan/tensor.hpp"

#include <burn/error.hpp>

namespace burn::vulkan {

std::size_t VkTensor::num_elements() const noexcept {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

bool VkTensor::is_contiguous() const noexcept {
  std::int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= static_cast<std::int64_t>(shape[d]);
  }
  return true;
}

std::shared_ptr<VkTensor> VkTensor::view(std::vector<std::size_t> s, std::vector<std::int64_t> st,
                                         std::int64_t off) const {
  auto t = std::make_shared<VkTensor>();
  t->buffer = buffer;
  t->dtype = dtype;
  t->shape = std::move(s);
  t->strides = std::move(st);
  t->offset = off;
  return t;
}

const VkTensor& as_vk(const backend::PrimitivePtr& p) { return *as_vk_ptr(p); }

VkTensorPtr as_vk_ptr(const backend::PrimitivePtr& p) {
  auto t = std::dynamic_pointer_cast<VkTensor>(p);
  if (!t) throw Error("vulkan", "this tensor does not belong to the vulkan backend; move it with to_device() first");
  return t;
}

std::vector<std::int64_t> row_major_strides(const std::vector<std::size_t>& shape) {
  std::vector<std::int64_t> s(shape.size());
  std::int64_t acc = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    s[d] = acc;
    acc *= static_cast<std::int64_t>(shape[d]);
  }
  return s;
}

}  // namespace burn::vulkan
