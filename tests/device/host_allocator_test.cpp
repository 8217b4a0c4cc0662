// The host allocator behind flex, cpu and ndarray (white-box: it reads
// src/backends/host/allocator.hpp). Blocks of 2-16 MiB start on a huge
// page, so the kernel can back them with transparent huge pages; other
// blocks keep the 64-byte alignment vector kernels need; all are usable.
// Cached blocks that stay unused go back to the system (decay), a large
// request reuses a larger cached block, and giving back a large block lowers
// the resident memory.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

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

TEST(HostAllocator, IdleCachedBlocksGoBackAfterTheDecayPeriod) {
  constexpr std::uint64_t kDecayMs = 200;
  auto alloc = std::make_shared<Allocator>(true, std::size_t(1) << 30, kDecayMs);
  const Allocator::Block big = alloc->allocate(std::size_t(5) << 20);
  const Allocator::Block small = alloc->allocate(1000);
  alloc->deallocate(big);
  alloc->deallocate(small);
  EXPECT_EQ(alloc->usage().bytes_reserved, big.capacity + small.capacity);  // both cached

  // Longer than the decay period: the next release trims the idle blocks but
  // keeps the block it has just cached.
  std::this_thread::sleep_for(std::chrono::milliseconds(kDecayMs + 100));
  const Allocator::Block fresh = alloc->allocate(3000);
  alloc->deallocate(fresh);
  EXPECT_EQ(alloc->usage().bytes_reserved, fresh.capacity);

  // A block reused within the period stays cached and is handed out again.
  const Allocator::Block again = alloc->allocate(3000);
  EXPECT_EQ(again.data, fresh.data);
  alloc->deallocate(again);
}

TEST(HostAllocator, ABucketReusedAfterLongGapsKeepsItsBlocksLonger) {
  // A loop whose steps take longer than the decay period frees a block and
  // asks for it again a step later; its bucket then keeps blocks for twice
  // that gap instead of mapping the same memory anew every step.
  constexpr std::uint64_t kDecayMs = 200;
  auto alloc = std::make_shared<Allocator>(true, std::size_t(1) << 30, kDecayMs);
  const auto step = [&](std::size_t bytes) {
    const Allocator::Block b = alloc->allocate(bytes);
    alloc->deallocate(b);
    return b;
  };
  const Allocator::Block first = step(std::size_t(5) << 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * kDecayMs));  // no allocator call meanwhile
  const Allocator::Block second = step(std::size_t(5) << 20);            // reused after 400 ms: keep 800 ms
  EXPECT_EQ(second.data, first.data);

  // Idle longer than the decay period but within twice the learned gap:
  // the trim another bucket's release runs leaves it cached.
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kDecayMs));
  const Allocator::Block small = step(1000);
  EXPECT_EQ(alloc->usage().bytes_reserved, second.capacity + small.capacity);

  // Idle past twice the gap: it goes back.
  std::this_thread::sleep_for(std::chrono::milliseconds(4 * kDecayMs));
  const Allocator::Block later = step(1000);
  EXPECT_EQ(later.data, small.data);
  EXPECT_EQ(alloc->usage().bytes_reserved, later.capacity);
}

TEST(HostAllocator, ARequestAfterAnIdleReleaseTeachesItsBucketTheGap) {
  // The block went back before the next step asked for it: that request
  // teaches the bucket the gap, so the following steps keep their block.
  constexpr std::uint64_t kDecayMs = 200;
  auto alloc = std::make_shared<Allocator>(true, std::size_t(1) << 30, kDecayMs);
  const std::size_t big = std::size_t(5) << 20;
  const auto step = [&](std::size_t bytes) {
    const Allocator::Block b = alloc->allocate(bytes);
    alloc->deallocate(b);
    return b;
  };
  step(big);
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * kDecayMs));
  const Allocator::Block small = step(1000);  // the big block has been idle 400 ms: released
  EXPECT_EQ(alloc->usage().bytes_reserved, small.capacity);
  const Allocator::Block again = step(big);  // a miss 400 ms after the free: keep 800 ms

  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kDecayMs));
  step(1000);
  EXPECT_EQ(alloc->usage().bytes_reserved, again.capacity + small.capacity);
  const Allocator::Block reused = step(big);
  EXPECT_EQ(reused.data, again.data);
}

TEST(HostAllocator, NoDecayKeepsBlocksUntilCleanup) {
  auto alloc = std::make_shared<Allocator>(true, std::size_t(1) << 30, 0);
  const Allocator::Block b = alloc->allocate(std::size_t(3) << 20);
  alloc->deallocate(b);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const Allocator::Block other = alloc->allocate(100);
  alloc->deallocate(other);
  EXPECT_EQ(alloc->usage().bytes_reserved, b.capacity + other.capacity);
  alloc->cleanup();
  EXPECT_EQ(alloc->usage().bytes_reserved, 0u);
}

TEST(HostAllocator, LargeRequestsReuseACachedBlockUpToTwiceTheirSize) {
  auto alloc = std::make_shared<Allocator>(true, std::size_t(1) << 30, 0);
  const Allocator::Block big = alloc->allocate(std::size_t(8) << 20);
  alloc->deallocate(big);

  const Allocator::Block half = alloc->allocate(std::size_t(4) << 20);  // fits in the 8 MiB block
  EXPECT_EQ(half.data, big.data);
  EXPECT_EQ(half.capacity, big.capacity);
  EXPECT_EQ(alloc->usage().bytes_reserved, big.capacity);  // nothing new mapped
  EXPECT_EQ(alloc->usage().bytes_padding, big.capacity - (std::size_t(4) << 20));
  alloc->deallocate(half);

  const Allocator::Block quarter = alloc->allocate(std::size_t(2) << 20);  // beyond 2x: a block of its own
  EXPECT_NE(quarter.data, big.data);
  EXPECT_EQ(quarter.capacity, std::size_t(2) << 20);
  alloc->deallocate(quarter);

  // Small buckets stay exact: a 64 KiB request never takes a 128 KiB block.
  const Allocator::Block k128 = alloc->allocate(std::size_t(128) << 10);
  alloc->deallocate(k128);
  const Allocator::Block k64 = alloc->allocate(std::size_t(64) << 10);
  EXPECT_NE(k64.data, k128.data);
  EXPECT_EQ(k64.capacity, std::size_t(64) << 10);
  alloc->deallocate(k64);
}

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

TEST(HostAllocator, CleanupLowersResidentMemory) {
  // Blocks of the sizes activations have (the huge-page class included).
  constexpr std::size_t kBlocks = 24, kBlockBytes = std::size_t(4) << 20, kBytes = kBlocks * kBlockBytes;
  auto alloc = std::make_shared<Allocator>(true);
  std::vector<Allocator::Block> blocks;
  for (std::size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(alloc->allocate(kBlockBytes - 1000 * i));
    std::memset(blocks.back().data, 1, blocks.back().requested);  // resident now
  }
  const std::size_t touched = resident_bytes();
  for (const auto& b : blocks) alloc->deallocate(b);
  EXPECT_GE(alloc->usage().bytes_reserved, kBytes);  // cached, still resident
  alloc->cleanup();
  EXPECT_EQ(alloc->usage().bytes_reserved, 0u);
  // The pages are unmapped, not kept by the C heap: at least 3/4 of them leave.
  EXPECT_LT(resident_bytes() + kBytes * 3 / 4, touched);
}

}  // namespace
