// A caching host allocator shared by the CPU backends: 64-byte aligned blocks
// in size buckets, freed blocks kept for reuse up to a limit, reports for
// Device::memory_pool_usage/memory_pool_report, and memory_cleanup.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <burn/device.hpp>

namespace burn::host {

/// Cached blocks, one free list per capacity. Reusing a block pops from its
/// list and freeing pushes back onto it; the lists keep their storage, so a
/// steady state of allocations allocates nothing itself (a multimap would
/// allocate a node per cached block). Power-of-two capacities up to 1 MiB
/// (every small bucket) have their list in an array indexed by log2, so the
/// small blocks of tiny ops skip the map lookup.
class FreeLists {
 public:
  /// A cached block of exactly `capacity` bytes, or nullptr.
  std::byte* take(std::size_t capacity);
  void put(std::size_t capacity, std::byte* block);
  /// Frees cached blocks, largest first, until at most `keep` bytes remain;
  /// `cached` is the running total of cached bytes and is updated.
  void release_largest(std::size_t& cached, std::size_t keep);
  /// Frees every cached block.
  void release_all();

 private:
  static constexpr std::size_t kSmallLists = 21;  // capacities 2^0 .. 2^20
  std::vector<std::byte*>& list_for(std::size_t capacity);

  std::array<std::vector<std::byte*>, kSmallLists> small_;
  std::map<std::size_t, std::vector<std::byte*>> large_;
};

class Allocator : public std::enable_shared_from_this<Allocator> {
 public:
  static constexpr std::size_t kAlignment = 64;
  /// Blocks from kHugePage to kHugeBlockMax bytes start on a (transparent)
  /// huge page (see fresh_block).
  static constexpr std::size_t kHugePage = std::size_t(2) << 20;
  static constexpr std::size_t kHugeBlockMax = std::size_t(16) << 20;

  /// caching = false frees every block immediately (the reference backend).
  explicit Allocator(bool caching, std::size_t cache_limit_bytes = std::size_t(1) << 30);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  struct Block {
    std::byte* data = nullptr;
    std::size_t capacity = 0;
    std::size_t requested = 0;
    bool persistent = false;
  };
  /// Throws burn::Error when memory runs out.
  Block allocate(std::size_t bytes);
  void deallocate(const Block& block);

  /// Frees every cached (unused) block except the persistent pool's.
  void cleanup();
  /// Puts a block able to serve `bytes` into the cache with its pages already
  /// touched, so a later allocation of that size costs no page faults.
  void prefault(std::size_t bytes);
  void set_persistent(bool on);

  MemoryPoolUsage usage() const;
  /// Pool 0: the dynamic cache; pool 1: persistent allocations.
  std::vector<SlicedPoolReport> report() const;

  /// The bucket a request is served from (rounded up for reuse).
  static std::size_t bucket_size(std::size_t bytes);
  /// A new block of `capacity` bytes from the C heap (huge-page aligned
  /// from kHugePage to kHugeBlockMax); nullptr when the heap has none.
  static std::byte* fresh_block(std::size_t capacity);

 private:
  struct PoolStats {
    std::uint64_t live = 0, peak = 0, largest = 0;
  };
  void release_until(std::size_t limit);

  const bool caching_;
  const std::size_t cache_limit_;
  mutable std::mutex mutex_;
  FreeLists cache_;
  FreeLists persistent_cache_;  // never released by cleanup
  std::size_t cached_bytes_ = 0;
  std::size_t persistent_cached_bytes_ = 0;
  std::uint64_t live_allocs_ = 0, bytes_in_use_ = 0, bytes_padding_ = 0, live_capacity_ = 0;
  PoolStats dynamic_, persistent_;
  bool persistent_mode_ = false;
};

/// Owns one block; freed back to its allocator when the last view goes.
class Buffer {
 public:
  Buffer(std::shared_ptr<Allocator> alloc, std::size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::byte* data() const noexcept { return block_.data; }
  std::size_t size() const noexcept { return block_.requested; }

 private:
  std::shared_ptr<Allocator> alloc_;
  Allocator::Block block_;
};

}  // namespace burn::host
