// Vulkan result codes as burn errors.
#pragma once

#include <string_view>

#include <vulkan/vulkan.h>

namespace burn::vulkan {

/// "VK_ERROR_OUT_OF_DEVICE_MEMORY", ...
std::string_view result_name(VkResult r) noexcept;

/// A Vulkan info struct with its type set and every other field zero.
template <class T>
T make(VkStructureType type) noexcept {
  T s{};
  s.sType = type;
  return s;
}

/// Throws burn::Error "[op] <what> failed: <result>" unless `r` is VK_SUCCESS.
void check(VkResult r, std::string_view op, std::string_view what);

}  // namespace burn::vulkan
