// Non-temporal ("streaming") stores for large outputs. A normal store first
// reads the destination line into the cache (read-for-ownership); for an
// output far larger than the caches that read is pure waste — a quarter of
// the memory traffic of `c = a + b`. Streaming stores write around the cache.
#pragma once

#include <cstddef>

namespace burn::flex::simd {

/// Copies `bytes` from `src` (cache-resident scratch) to `dst` with
/// non-temporal stores where `dst` is vector-aligned (plain copies for the
/// unaligned head and the tail). Call stream_fence() after the last copy.
void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes);
/// Orders the streamed stores before any later memory access (sfence).
void stream_fence();

}  // namespace burn::flex::simd
