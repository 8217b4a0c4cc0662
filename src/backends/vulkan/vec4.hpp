// When matmul and conv shaders may stage 4-wide vectors instead of scalars:
// the dtype has a vector view (A_V4 in shaders/shaders.cmake) and the vector's
// first element is 4-aligned both in the tensor's indexing and in memory.
// BURN_VULKAN_SCALAR_LOADS=1 turns the vector paths off, to measure what they
// bring (scripts/gpu-check.sh prints both).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "backends/vulkan/tensor.hpp"

namespace burn::vulkan {

/// The dtypes whose matmul/conv variants define A_V4 (32- and 64-bit).
inline bool has_vec4(DType dtype) noexcept {
  switch (dtype) {
    case DType::F64:
    case DType::F32:
    case DType::I64:
    case DType::I32:
    case DType::U64:
    case DType::U32: return true;
    default: return false;
  }
}

/// False when BURN_VULKAN_SCALAR_LOADS=1 (read once).
inline bool vec4_enabled() noexcept {
  static const bool on = [] {
    const char* v = std::getenv("BURN_VULKAN_SCALAR_LOADS");
    return !(v && std::strcmp(v, "1") == 0);
  }();
  return on;
}

/// Whether `t`'s binding starts on a 4-element boundary (the shader's vector
/// index 0), so vector i covers elements 4i..4i+3 at an aligned address.
inline bool binding_vec4_aligned(const VkTensor& t) noexcept {
  return vec4_enabled() && has_vec4(t.dtype) && t.buffer->block().offset % (4 * dtype_size(t.dtype)) == 0;
}

inline bool multiple_of_4(std::int64_t v) noexcept { return v % 4 == 0; }

}  // namespace burn::vulkan
