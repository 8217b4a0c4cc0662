// The host allocator behind flex, cpu and ndarray (white-box: it reads
// src/backends/host/allocator.hpp). Blocks of 2-16 MiB start on a huge
// page, so the kernel can back them with transparent huge pages; other
// blocks keep the 64-byte alignment vector kernels need; all are usable.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>

#include "backends/host/allocator.hpp"

namespace {

using burn::host::Allocator;

std::uintptr_t address(const Allocator::Block& b) { return reinterpret_cast<std::uintptr_t>(b.data); }

TEST(HostAllocator, LargeBlocksStartOnAHugePage) {
  for (const bool caching : {true, false}) {
    SCOPED_TRACE(caching ? "caching" : "not caching");
    auto alloc = std::make_shared<Allocator>(caching);
    for (std::size_t bytes : {Allocator::kHugePage, 3 * Allocator::kHugePage + 12345, Allocator::kHugeBlockMax}) {
      const Allocator::Block b = alloc->allocate(bytes);
      ASSERT_NE(b.data, nullptr);
      EXPECT_EQ(address(b) % Allocator::kHugePage, 0u) << bytes << " bytes";
      EXPECT_GE(b.capacity, bytes);
      std::memset(b.data, 0x5a, bytes);  // every byte is ours
      EXPECT_EQ(static_cast<unsigned char>(b.data[bytes - 1]), 0x5au);
      alloc->deallocate(b);
    }
  }
}

TEST(HostAllocator, OtherBlocksKeepVectorAlignment) {
  auto alloc = std::make_shared<Allocator>(true);
  for (std::size_t bytes :
       {std::size_t{1}, std::size_t{100}, std::size_t{4096}, Allocator::kHugePage - 1, 2 * Allocator::kHugeBlockMax}) {
    const Allocator::Block b = alloc->allocate(bytes);
    ASSERT_NE(b.data, nullptr);
    EXPECT_EQ(address(b) % Allocator::kAlignment, 0u) << bytes << " bytes";
    std::memset(b.data, 0x11, bytes);
    alloc->deallocate(b);
  }
}

}  // namespace
