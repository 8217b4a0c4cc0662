#include "backends/host/allocator.hpp"

#include <sys/mman.h>

#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include <burn/error.hpp>

namespace burn::host {

namespace {
// A power of two below 2^kSmallLists (not std::has_single_bit: without
// -mpopcnt that is a call into libgcc).
bool is_small(std::size_t capacity, std::size_t lists) {
  return capacity != 0 && (capacity & (capacity - 1)) == 0 && capacity < (std::size_t(1) << lists);
}

std::uint64_t steady_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

constexpr std::size_t kPage = 4096;
std::size_t whole_pages(std::size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

// Maps `capacity` bytes aligned to `alignment` (a multiple of the page size):
// maps the extra alignment and unmaps what lies outside the aligned range.
std::byte* map_aligned(std::size_t capacity, std::size_t alignment) {
  capacity = whole_pages(capacity);
  const std::size_t span = capacity + alignment;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto* const start = static_cast<std::byte*>(p);
  const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(start) % alignment;
  std::byte* const aligned = misalignment == 0 ? start : start + (alignment - misalignment);
  if (aligned > start) munmap(start, static_cast<std::size_t>(aligned - start));
  std::byte* const end = aligned + capacity;
  if (start + span > end) munmap(end, static_cast<std::size_t>(start + span - end));
  return aligned;
}
}  // namespace

template <typename Fn>
void FreeLists::for_each_list(Fn&& fn) {
  for (std::size_t i = 0; i < kSmallLists; ++i) fn(small_[i], std::size_t(1) << i);
  for (auto& [capacity, list] : large_) fn(list, capacity);
}

FreeLists::List* FreeLists::find_list(std::size_t capacity) {
  if (is_small(capacity, kSmallLists)) return &small_[static_cast<std::size_t>(std::countr_zero(capacity))];
  const auto it = large_.find(capacity);
  return it == large_.end() ? nullptr : &it->second;
}

FreeLists::List& FreeLists::list_for(std::size_t capacity) {
  if (List* list = find_list(capacity)) return *list;
  return large_[capacity];
}

std::byte* FreeLists::take(std::size_t& capacity, std::size_t max_capacity, std::uint64_t now_ms) {
  List* list = nullptr;
  if (is_small(capacity, kSmallLists)) {
    list = find_list(capacity);
  } else {
    // The smallest cached capacity that fits, up to max_capacity (lower_bound,
    // not [], so a miss adds no entry).
    for (auto it = large_.lower_bound(capacity); it != large_.end() && it->first <= max_capacity; ++it) {
      if (!it->second.blocks.empty()) {
        list = &it->second;
        capacity = it->first;
        break;
      }
    }
  }
  if (list == nullptr || list->blocks.empty()) {
    learn_from_miss(capacity, now_ms);
    return nullptr;
  }
  const Cached cached = list->blocks.back();
  list->blocks.pop_back();
  if (now_ms > cached.freed_ms) list->longest_reuse_ms = std::max(list->longest_reuse_ms, now_ms - cached.freed_ms);
  return cached.block;
}

void FreeLists::learn_from_miss(std::size_t capacity, std::uint64_t now_ms) {
  List* const list = find_list(capacity);
  if (list == nullptr || !list->released_freed_ms) return;
  if (now_ms > *list->released_freed_ms)
    list->longest_reuse_ms = std::max(list->longest_reuse_ms, now_ms - *list->released_freed_ms);
  list->released_freed_ms.reset();
}

void FreeLists::put(std::size_t capacity, std::byte* block, std::uint64_t now_ms) {
  list_for(capacity).blocks.push_back({block, now_ms});
}

void FreeLists::release_idle(std::size_t& cached, std::uint64_t now_ms, std::uint64_t decay_ms,
                             std::uint64_t max_keep_ms) {
  for_each_list([&](List& list, std::size_t capacity) {
    // A loop whose steps take longer than decay_ms frees a block and asks
    // for it again a step later: its list learns that gap (from the reuse,
    // or from the request that found the list emptied by this release) and
    // keeps its blocks for twice as long, instead of mapping (and faulting
    // in) the same memory anew every step.
    const std::uint64_t keep = std::min(max_keep_ms, std::max(decay_ms, 2 * list.longest_reuse_ms));
    if (now_ms <= keep) return;
    const std::uint64_t cutoff = now_ms - keep;
    std::size_t idle = 0;
    while (idle < list.blocks.size() && list.blocks[idle].freed_ms < cutoff) {
      Allocator::free_block(capacity, list.blocks[idle].block);
      cached -= capacity;
      ++idle;
    }
    if (idle > 0) list.released_freed_ms = list.blocks[idle - 1].freed_ms;
    list.blocks.erase(list.blocks.begin(), list.blocks.begin() + static_cast<std::ptrdiff_t>(idle));
  });
}

void FreeLists::release_largest(std::size_t& cached, std::size_t keep) {
  // Largest blocks first: they return the most memory for the fewest frees.
  // The map and the array are both walked from their largest capacity down,
  // taking whichever list holds the larger blocks next.
  auto large = large_.rbegin();
  std::size_t small = kSmallLists;
  auto drain = [&](List& list, std::size_t capacity) {
    while (!list.blocks.empty() && cached > keep) {
      Allocator::free_block(capacity, list.blocks.back().block);
      list.blocks.pop_back();
      cached -= capacity;
    }
  };
  while (cached > keep && (large != large_.rend() || small > 0)) {
    const std::size_t small_capacity = small > 0 ? std::size_t(1) << (small - 1) : 0;
    if (large != large_.rend() && large->first > small_capacity) {
      drain(large->second, large->first);
      ++large;
    } else {
      --small;
      drain(small_[small], small_capacity);
    }
  }
}

void FreeLists::release_all() {
  for_each_list([](List& list, std::size_t capacity) {
    for (const Cached& c : list.blocks) Allocator::free_block(capacity, c.block);
    list.blocks.clear();
  });
}

Allocator::Allocator(bool caching, std::size_t cache_limit_bytes, std::uint64_t decay_ms)
    : caching_(caching), cache_limit_(cache_limit_bytes), decay_ms_(decay_ms) {}

Allocator::~Allocator() {
  cache_.release_all();
  persistent_cache_.release_all();
}

std::size_t Allocator::bucket_size(std::size_t bytes) {
  if (bytes <= kAlignment) return kAlignment;
  // Powers of two up to 1 MiB keep small-tensor reuse high; above that,
  // multiples of 1 MiB bound the padding to < 1 MiB per block.
  constexpr std::size_t kMiB = std::size_t(1) << 20;
  if (bytes <= kMiB) {
    std::size_t b = kAlignment;
    while (b < bytes) b <<= 1;
    return b;
  }
  return (bytes + kMiB - 1) / kMiB * kMiB;
}

std::byte* Allocator::fresh_block(std::size_t capacity) {
  if (capacity < kMappedMin) return static_cast<std::byte*>(std::aligned_alloc(kAlignment, capacity));
  if (capacity < kHugePage || capacity > kHugeBlockMax) return map_aligned(capacity, kPage);
  // Blocks of 2-16 MiB (weights, activations, their gradients) are aligned
  // to a huge page and offered to the kernel as transparent huge pages: a
  // matmul over 4 MiB of weights then walks 2 pages instead of 1,024. The
  // MLP training step ran 2 % faster on both CPU devices, a Fashion-MNIST
  // training pass 3-6 %. Debian's default THP mode is "madvise", so without
  // the advice no huge page is used; a kernel without THP ignores it.
  // Larger blocks keep 4 KiB pages: with huge pages the Fashion-MNIST test
  // pass (batch 1000: 25-100 MB activations) took 0.9-1.2 s instead of
  // 0.7 s on the 2-core VMs this is developed on, 13 % of all samples in
  // the kernel zeroing new huge pages. Their balloon device reports free
  // 2 MiB blocks to the host, which discards them, so a new huge page is
  // memory the host must fault in again; small pages mostly come from
  // recently freed ones. (Touching 18 GB first made the two equal until
  // the reports caught up.) On a machine without that, huge pages for
  // these blocks may well pay: unmeasured.
  std::byte* p = map_aligned(capacity, kHugePage);
  if (p != nullptr) madvise(p, capacity / kHugePage * kHugePage, MADV_HUGEPAGE);
  return p;
}

void Allocator::free_block(std::size_t capacity, std::byte* block) {
  if (capacity < kMappedMin) {
    std::free(block);
  } else {
    munmap(block, whole_pages(capacity));
  }
}

Allocator::Block Allocator::allocate(std::size_t bytes) {
  Block block;
  block.requested = bytes;
  if (bytes == 0) return block;
  std::size_t capacity = caching_ ? bucket_size(bytes) : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  std::lock_guard lock(mutex_);
  block.persistent = persistent_mode_;
  auto& cache = block.persistent ? persistent_cache_ : cache_;
  // A large request may take a cached block up to twice its size: a pass
  // whose layers shrink (an evaluation batch through conv and pooling)
  // reuses the blocks the earlier layers freed instead of mapping more, so
  // what is reserved stays near the pass's peak in use.
  if (std::byte* cached =
          cache.take(capacity, capacity < kMappedMin ? capacity : 2 * capacity, block.persistent ? 0 : steady_ms())) {
    block.data = cached;
    (block.persistent ? persistent_cached_bytes_ : cached_bytes_) -= capacity;
  } else {
    block.data = fresh_block(capacity);
    if (!block.data && cached_bytes_ > 0) {  // retry after giving the cache back
      release_until(0);
      block.data = fresh_block(capacity);
    }
    if (!block.data)
      throw Error("allocate", fmt::format("out of host memory allocating {} bytes; free tensors or call "
                                          "Device::memory_cleanup()",
                                          capacity));
  }
  block.capacity = capacity;
  ++live_allocs_;
  bytes_in_use_ += bytes;
  bytes_padding_ += capacity - bytes;
  live_capacity_ += capacity;
  auto& stats = block.persistent ? persistent_ : dynamic_;
  stats.live += 1;
  stats.peak = std::max(stats.peak, stats.live);
  stats.largest = std::max<std::uint64_t>(stats.largest, bytes);
  return block;
}

void Allocator::deallocate(const Block& block) {
  if (!block.data) return;
  std::lock_guard lock(mutex_);
  --live_allocs_;
  bytes_in_use_ -= block.requested;
  bytes_padding_ -= block.capacity - block.requested;
  live_capacity_ -= block.capacity;
  (block.persistent ? persistent_ : dynamic_).live -= 1;
  if (block.persistent) {
    persistent_cache_.put(block.capacity, block.data, 0);
    persistent_cached_bytes_ += block.capacity;
    return;
  }
  if (!caching_) {
    free_block(block.capacity, block.data);
    return;
  }
  const std::uint64_t now = steady_ms();
  cache_.put(block.capacity, block.data, now);
  cached_bytes_ += block.capacity;
  if (cached_bytes_ > cache_limit_) release_until(cache_limit_ / 2);
  decay(now);
}

void Allocator::release_until(std::size_t limit) { cache_.release_largest(cached_bytes_, limit); }

void Allocator::decay(std::uint64_t now_ms) {
  if (decay_ms_ == 0 || cached_bytes_ == 0 || now_ms < last_decay_ms_ + decay_ms_ / 4) return;
  last_decay_ms_ = now_ms;
  cache_.release_idle(cached_bytes_, now_ms, decay_ms_, std::max(decay_ms_, kMaxKeepMilliseconds));
}

void Allocator::cleanup() {
  std::lock_guard lock(mutex_);
  release_until(0);
}

void Allocator::prefault(std::size_t bytes) {
  if (!caching_ || bytes == 0) return;
  Block block = allocate(bytes);
  std::memset(block.data, 0, block.capacity);  // fault every page in now
  deallocate(block);
}

void Allocator::set_persistent(bool on) {
  std::lock_guard lock(mutex_);
  persistent_mode_ = on;
}

MemoryPoolUsage Allocator::usage() const {
  std::lock_guard lock(mutex_);
  return {live_allocs_, bytes_in_use_, bytes_padding_, live_capacity_ + cached_bytes_ + persistent_cached_bytes_};
}

std::vector<SlicedPoolReport> Allocator::report() const {
  std::lock_guard lock(mutex_);
  return {SlicedPoolReport{0, dynamic_.live, dynamic_.peak, dynamic_.largest},
          SlicedPoolReport{0, persistent_.live, persistent_.peak, persistent_.largest}};
}

Buffer::Buffer(std::shared_ptr<Allocator> alloc, std::size_t bytes)
    : alloc_(std::move(alloc)), block_(alloc_->allocate(bytes)) {}

Buffer::~Buffer() { alloc_->deallocate(block_); }

}  // namespace burn::host
