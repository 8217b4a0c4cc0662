// The embedded SPIR-V of every shader variant (generated at build time by
// cmake/backends/vulkan.cmake from shaders/*.comp).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace burn::vulkan {

struct ShaderBinary {
  std::string_view name;  ///< "unary_f32", "cast_f16_i64", ...
  std::span<const std::uint32_t> words;
};

/// Every variant, in no particular order.
const std::vector<ShaderBinary>& all_shaders();

}  // namespace burn::vulkan
