// Byte buffers for whole tensors in transit (to_data's result, a remote
// upload or download being assembled from its chunks).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace burn::detail {

/// Reserves `bytes` in `buffer` and, for large tensors, offers the memory to
/// the kernel as transparent huge pages before it is first written. Such a
/// buffer is fresh memory every time (glibc maps allocations this large
/// anew), and faulting it in 4 KiB pages cost a 64 MiB remote upload about a
/// third of its time; with 2 MiB pages that cost all but goes. Debian's
/// default THP mode is "madvise", so nothing changes without the advice, and
/// a kernel without THP ignores it. (The host allocator's pooled blocks
/// follow their own rule, in src/backends/host/allocator.cpp.)
inline void reserve_with_huge_pages(std::vector<std::byte>& buffer, std::size_t bytes) {
  buffer.reserve(bytes);
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  std::byte* const data = buffer.data();
  // Only whole 2 MiB pages inside the buffer can be huge: skip to the first
  // boundary, keep to the last one.
  const std::size_t lead = (kHugePage - reinterpret_cast<std::uintptr_t>(data) % kHugePage) % kHugePage;
  if (bytes <= lead) return;
  const std::size_t whole = (bytes - lead) / kHugePage * kHugePage;
  if (whole > 0) madvise(data + lead, whole, MADV_HUGEPAGE);
}

}  // namespace burn::detail
