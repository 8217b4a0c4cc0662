#include "backends/vulkan/gpu.hpp"

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/vulkan/vk_check.hpp"

namespace burn::vulkan {

Gpu::Gpu(std::size_t adapter, std::string label)
    : instance_(Instance::get()), adapter_(instance_->adapters().at(adapter)), label_(std::move(label)) {
  const float priority = 1.0f;
  auto queue = make<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queue.queueFamilyIndex = adapter_.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;

  // Only the features the shaders may use, and only where the adapter has them
  // (supports_dtype follows the same flags).
  auto f12 = make<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  f12.storageBuffer8BitAccess = adapter_.storage8;
  auto f11 = make<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  f11.storageBuffer16BitAccess = adapter_.storage16;
  f11.pNext = &f12;
  auto f2 = make<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  f2.features.shaderFloat64 = adapter_.float64;
  f2.features.shaderInt64 = adapter_.int64;
  f2.pNext = &f11;

  auto info = make<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  info.pNext = &f2;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  check(vkCreateDevice(adapter_.handle, &info, nullptr, &device_), label_,
        fmt::format("creating the Vulkan device on {}", adapter_.name));
  vkGetDeviceQueue(device_, adapter_.queue_family, 0, &queue_);
  vkGetPhysicalDeviceMemoryProperties(adapter_.handle, &memory_);
}

Gpu::~Gpu() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    vkDestroyDevice(device_, nullptr);
  }
}

namespace {
std::uint32_t pick(const VkPhysicalDeviceMemoryProperties& m, std::uint32_t allowed, VkMemoryPropertyFlags required,
                   VkMemoryPropertyFlags preferred) {
  std::int64_t fallback = -1;
  for (std::uint32_t i = 0; i < m.memoryTypeCount; ++i) {
    if (!(allowed & (1u << i))) continue;
    const VkMemoryPropertyFlags f = m.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    if ((f & preferred) == preferred) return i;
    if (fallback < 0) fallback = i;
  }
  if (fallback < 0) throw Error("vulkan", "the device has no memory type suitable for buffers");
  return static_cast<std::uint32_t>(fallback);
}
}  // namespace

std::uint32_t Gpu::device_memory_type(std::uint32_t allowed_bits) const {
  return pick(memory_, allowed_bits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
}

std::uint32_t Gpu::host_memory_type(std::uint32_t allowed_bits, bool readback) const {
  return pick(memory_, allowed_bits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
              readback ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : 0);
}

}  // namespace burn::vulkan
