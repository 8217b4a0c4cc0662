// A caching host allocator shared by the CPU backends: 64-byte aligned blocks
// in size buckets, freed blocks kept for reuse while they keep being reused,
// reports for Device::memory_pool_usage/memory_pool_report, and
// memory_cleanup.
//
// The policy (docs/api.md, "Memory"): a freed block is cached for the next
// request of its bucket; a cached block that no request took for
// kDecayMilliseconds goes back to the operating system — or, for a bucket
// whose blocks were reused after longer gaps (a loop whose steps take more
// than that), for twice the longest such gap, up to kMaxKeepMilliseconds —
// as does everything beyond the cache limit (1 GiB) and everything on
// memory_cleanup. Blocks of 1 MiB and more are mapped pages, so giving them
// back lowers the resident memory at once (the C heap keeps freed memory for
// itself). A training loop reuses its blocks every step and keeps them,
// however long a step takes; memory of a finished phase (an evaluation pass
// with larger batches) is gone soon after.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
  /// A cached block of `capacity` bytes or, for capacities beyond the small
  /// lists, the smallest cached one up to `max_capacity` (`capacity` is set
  /// to the block's); nullptr when none is cached. `now_ms` (a steady-clock
  /// reading) records how long the block lay idle before this reuse.
  std::byte* take(std::size_t& capacity, std::size_t max_capacity, std::uint64_t now_ms);
  /// Caches a block freed at `now_ms`.
  void put(std::size_t capacity, std::byte* block, std::uint64_t now_ms);
  /// Frees cached blocks, largest first, until at most `keep` bytes remain;
  /// `cached` is the running total of cached bytes and is updated.
  void release_largest(std::size_t& cached, std::size_t keep);
  /// Frees the blocks idle at `now_ms` for longer than their list's keep
  /// period: `decay_ms`, or twice the longest idle time after which one of
  /// the list's blocks was reused, at most `max_keep_ms`. Updates `cached`.
  void release_idle(std::size_t& cached, std::uint64_t now_ms, std::uint64_t decay_ms, std::uint64_t max_keep_ms);
  /// Frees every cached block.
  void release_all();

 private:
  struct Cached {
    std::byte* block;
    std::uint64_t freed_ms;
  };
  // Each list's blocks are in the order they were freed (take pops the
  // newest), so the blocks idle longest are a prefix.
  struct List {
    std::vector<Cached> blocks;
    std::uint64_t longest_reuse_ms = 0;  // the longest a block lay idle before a request took it
    // When the last idle release freed the list's blocks: the newest one's
    // free time, so the next request that finds the list empty learns the
    // gap it would have been reused after.
    std::optional<std::uint64_t> released_freed_ms;
  };
  /// Learns from a request for `capacity` that found no block: if an idle
  /// release emptied that list before, its blocks were given back too soon.
  void learn_from_miss(std::size_t capacity, std::uint64_t now_ms);
  static constexpr std::size_t kSmallLists = 21;  // capacities 2^0 .. 2^20
  List& list_for(std::size_t capacity);
  /// The list of exactly `capacity`, or nullptr when there is none (no
  /// entry is added).
  List* find_list(std::size_t capacity);
  template <typename Fn>
  void for_each_list(Fn&& fn);

  std::array<List, kSmallLists> small_;
  std::map<std::size_t, List> large_;
};

class Allocator : public std::enable_shared_from_this<Allocator> {
 public:
  static constexpr std::size_t kAlignment = 64;
  /// Blocks from kHugePage to kHugeBlockMax bytes start on a (transparent)
  /// huge page (see fresh_block).
  static constexpr std::size_t kHugePage = std::size_t(2) << 20;
  static constexpr std::size_t kHugeBlockMax = std::size_t(16) << 20;
  /// Blocks from this size up are mapped pages (mmap), returned with munmap.
  static constexpr std::size_t kMappedMin = std::size_t(1) << 20;
  /// A cached block unused this long goes back to the system, unless its
  /// bucket's blocks were reused after longer gaps before.
  static constexpr std::uint64_t kDecayMilliseconds = 1000;
  /// The longest an unused cached block is kept however long the gaps
  /// after which its bucket's blocks were reused.
  static constexpr std::uint64_t kMaxKeepMilliseconds = 30000;

  /// caching = false frees every block immediately (the reference backend).
  /// decay_ms: how long an unused cached block is kept at least (0: until
  /// the limit or memory_cleanup).
  explicit Allocator(bool caching, std::size_t cache_limit_bytes = std::size_t(1) << 30,
                     std::uint64_t decay_ms = kDecayMilliseconds);
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
  /// A new block of `capacity` bytes: from the C heap below kMappedMin,
  /// mapped pages from there on (huge-page aligned and advised from
  /// kHugePage to kHugeBlockMax); nullptr when the system has none.
  static std::byte* fresh_block(std::size_t capacity);
  /// Gives back a block fresh_block made.
  static void free_block(std::size_t capacity, std::byte* block);

 private:
  struct PoolStats {
    std::uint64_t live = 0, peak = 0, largest = 0;
  };
  void release_until(std::size_t limit);
  /// Frees the cached blocks idle past their keep period (see
  /// FreeLists::release_idle); runs at most four times per decay period
  /// (callers hold mutex_).
  void decay(std::uint64_t now_ms);

  const bool caching_;
  const std::size_t cache_limit_;
  const std::uint64_t decay_ms_;
  std::uint64_t last_decay_ms_ = 0;
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
