// Compiled once per instruction set by Highway's foreach_target (see math.cpp).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/flex/simd/stream.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <cstdint>
#include <cstring>

#include "backends/flex/simd/stream.hpp"

HWY_BEFORE_NAMESPACE();
namespace burn::flex::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void stream_copy_impl(std::byte* dst, const std::byte* src, std::size_t bytes) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t lanes = hn::Lanes(d);
  // Plain copy up to the first vector-aligned destination byte.
  const auto misalign = reinterpret_cast<std::uintptr_t>(dst) % lanes;
  std::size_t head = misalign ? lanes - misalign : 0;
  if (head > bytes) head = bytes;
  std::memcpy(dst, src, head);
  std::size_t i = head;
  auto* out = reinterpret_cast<std::uint8_t*>(dst);
  const auto* in = reinterpret_cast<const std::uint8_t*>(src);
  for (; i + lanes <= bytes; i += lanes) hn::Stream(hn::LoadU(d, in + i), d, out + i);
  std::memcpy(dst + i, src + i, bytes - i);
}

}  // namespace burn::flex::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <hwy/cache_control.h>

namespace burn::flex::simd {

HWY_EXPORT(stream_copy_impl);

void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
  HWY_DYNAMIC_DISPATCH(stream_copy_impl)(dst, src, bytes);
}

void stream_fence() { hwy::FlushStream(); }

}  // namespace burn::flex::simd
#endif
