// One logical Vulkan device: the VkDevice on an adapter, its compute queue
// and the memory types buffers come from. Shared (shared_ptr) by everything
// that holds Vulkan objects of this device, so it is destroyed last.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <vulkan/vulkan.h>

#include "backends/vulkan/instance.hpp"

namespace burn::vulkan {

class Gpu {
 public:
  /// Creates the device on adapters()[adapter]; `label` ("vulkan:0") names it in errors.
  Gpu(std::size_t adapter, std::string label);
  ~Gpu();
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  VkDevice device() const noexcept { return device_; }
  VkQueue queue() const noexcept { return queue_; }
  const AdapterInfo& adapter() const noexcept { return adapter_; }
  const std::string& label() const noexcept { return label_; }

  /// Memory type for device buffers (device-local when there is one).
  std::uint32_t device_memory_type(std::uint32_t allowed_bits) const;
  /// Host-visible, coherent memory type for staging (cached when `readback`).
  std::uint32_t host_memory_type(std::uint32_t allowed_bits, bool readback) const;

 private:
  std::shared_ptr<Instance> instance_;  // outlives the device
  AdapterInfo adapter_;
  std::string label_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
};

}  // namespace burn::vulkan
