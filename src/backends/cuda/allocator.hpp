// The CUDA device's caching allocator, modelled on PyTorch's: freed blocks
// are kept, by size, for the next request instead of going back to the
// driver (cuMemAlloc and cuMemFree synchronise the device, so calling them
// per tensor would serialise everything).
//
// Sizes round up to 512 bytes below 1 MiB and to 2 MiB above, so nearby
// sizes share blocks; a request takes the smallest cached block that fits
// and is at most twice its size (a small tensor never pins a huge block).
// All work runs on one stream per device, so a block freed by a tensor can
// serve the next request at once: anything that later writes it is queued
// after everything that read it (stream-ordered reuse). When the driver is
// out of memory, the cache is returned and the request tried once more.
//
// The allocator only does bookkeeping; memory itself comes from a
// DeviceMemory (the driver in the backend, a fake in the tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <burn/backend/types.hpp>

namespace burn::cuda {

/// Where device memory comes from.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  /// A new allocation of `bytes`, or 0 when the device is out of memory
  /// (other failures throw).
  virtual std::uint64_t allocate(std::size_t bytes) = 0;
  virtual void release(std::uint64_t address, std::size_t bytes) noexcept = 0;
};

class CachingAllocator : public std::enable_shared_from_this<CachingAllocator> {
 public:
  /// One allocation handed out: returned to the cache when the last
  /// reference goes.
  class Block {
   public:
    Block(std::shared_ptr<CachingAllocator> owner, std::uint64_t address, std::size_t size, std::size_t requested)
        : owner_(std::move(owner)), address_(address), size_(size), requested_(requested) {}
    ~Block();
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;
    std::uint64_t address() const noexcept { return address_; }
    std::size_t size() const noexcept { return size_; }
    std::size_t requested() const noexcept { return requested_; }

   private:
    std::shared_ptr<CachingAllocator> owner_;
    std::uint64_t address_;
    std::size_t size_;
    std::size_t requested_;
  };

  static std::shared_ptr<CachingAllocator> create(std::unique_ptr<DeviceMemory> memory);
  /// Returns every cached block, persistent ones too (no block is in use:
  /// each holds the allocator).
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  /// A block of at least `bytes` (0 gives a 512-byte block, so every tensor
  /// has an address). Throws DeviceError naming `op` when the device has no
  /// memory left even after the cache was returned.
  std::shared_ptr<Block> allocate(std::size_t bytes, std::string_view op);

  /// Returns every cached block to the device.
  void cleanup();
  /// While on, blocks allocated are never returned by cleanup (weights).
  void set_persistent(bool on);

  MemoryPoolUsage usage() const;
  /// One report per size class: small (512 B rounding) and large (2 MiB).
  std::vector<SlicedPoolReport> report() const;

  /// The size a request of `bytes` rounds to.
  static std::size_t rounded_size(std::size_t bytes) noexcept;

 private:
  explicit CachingAllocator(std::unique_ptr<DeviceMemory> memory) : memory_(std::move(memory)) {}
  void give_back(std::uint64_t address, std::size_t size, std::size_t requested) noexcept;
  void release_cached_locked() noexcept;

  struct ClassStats {
    std::uint64_t blocks = 0;  // held from the device, cached or in use
    std::uint64_t blocks_peak = 0;
    std::uint64_t largest = 0;
  };
  ClassStats& stats_for(std::size_t size) noexcept;

  std::unique_ptr<DeviceMemory> memory_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, std::uint64_t> cached_;  // size -> address
  std::map<std::uint64_t, bool> persistent_;          // address -> kept by cleanup
  bool persistent_mode_ = false;
  MemoryPoolUsage usage_;
  ClassStats small_, large_;
};

}  // namespace burn::cuda
