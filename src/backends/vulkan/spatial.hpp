// Shared by the module kernels (pool.cpp, conv.cpp): the spatial-dim limit
// of their parameter blocks (MAX_SP in shaders/pool.comp and conv.comp) and
// 32-bit index checks.
#pragma once

#include <cstdint>

#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"

namespace burn::vulkan {

inline constexpr std::size_t kMaxSpatial = 6;

/// Throws "[op] ..." unless there are at most kMaxSpatial spatial dims.
inline void require_spatial(const Context& ctx, std::size_t n) {
  if (n > kMaxSpatial)
    throw Error(ctx.op, fmt::format("the vulkan backend handles at most {} spatial dims, got {}; fold some into the "
                                    "batch dim",
                                    kMaxSpatial, n));
}

/// Throws "[op] ..." unless `count` (an index a shader computes) fits 31 bits.
inline void require_index_range(const Context& ctx, std::uint64_t count, std::string_view what) {
  if (count > 0x7fffffffu)
    throw Error(ctx.op, fmt::format("{} ({}) exceeds the 2^31 indices the vulkan backend's shaders use; split the "
                                    "input",
                                    what, count));
}

/// Copies the first n entries of `v` into `dst`.
template <class V>
void put_spatial(std::uint32_t* dst, const V& v, std::size_t first = 0) {
  for (std::size_t d = 0; d + first < v.size() && d < kMaxSpatial; ++d)
    dst[d] = static_cast<std::uint32_t>(v[d + first]);
}

}  // namespace burn::vulkan
