// Buffers for one Vulkan device, pooled: requests are rounded up to size
// classes (four per power of two); small ones are slots of shared 4 MiB pages
// (one page per class), large ones are buffers of their own kept in a cache
// after use. Persistent allocations (weights) have a cache memory_cleanup
// leaves alone. The host pool (staging and parameters) has no pages and maps
// its memory.
//
// Freed blocks are reused at once: every command is ordered after the ones
// recorded before it by a barrier (stream.hpp), so a later dispatch cannot
// overtake an earlier reader. Vulkan objects are only destroyed by cleanup(),
// which the caller runs when the device is idle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <vulkan/vulkan.h>

#include <burn/device.hpp>

#include "backends/vulkan/gpu.hpp"

namespace burn::vulkan {

/// A byte range of one VkBuffer.
struct Block {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize capacity = 0;    ///< the size class
  VkDeviceSize requested = 0;   ///< what was asked for
  std::byte* mapped = nullptr;  ///< host pools: the block's bytes
  // Where it came from, for release().
  VkDeviceMemory memory = VK_NULL_HANDLE;
  std::uint32_t page = UINT32_MAX;  ///< slab page id, or UINT32_MAX for a buffer of its own
  bool persistent = false;
};

/// vkAllocateMemory ran out; the caller may sync, clean up and retry.
struct OutOfDeviceMemory {
  VkResult result;
};

class MemoryPool {
 public:
  enum class Kind { Device, Upload, Readback };
  static constexpr VkDeviceSize kPageSize = VkDeviceSize(4) << 20;
  static constexpr VkDeviceSize kSlabMax = VkDeviceSize(256) << 10;
  static constexpr VkDeviceSize kAlignment = 256;  ///< >= every minStorageBufferOffsetAlignment

  MemoryPool(std::shared_ptr<Gpu> gpu, Kind kind);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  /// Throws OutOfDeviceMemory when the device has no room, burn::Error otherwise.
  Block allocate(VkDeviceSize bytes);
  /// Thread-safe; the block is reusable at once (see the file comment).
  void release(const Block& block);
  /// Frees cached buffers and empty pages. The device must be idle.
  void cleanup();
  void set_persistent(bool on);

  MemoryPoolUsage usage() const;
  /// [0] small blocks (pages), [1] large blocks, [2] persistent blocks.
  std::vector<SlicedPoolReport> report() const;

  static VkDeviceSize size_class(VkDeviceSize bytes);
  const std::shared_ptr<Gpu>& gpu() const noexcept { return gpu_; }

 private:
  struct Raw {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    std::byte* mapped = nullptr;
    VkDeviceSize size = 0;
  };
  struct Page {
    Raw raw;
    VkDeviceSize slot_size = 0;
    std::vector<std::uint32_t> free_slots;
    std::uint32_t used = 0;
  };
  struct Stats {
    std::uint64_t live = 0, peak = 0, largest = 0;
    void add(std::uint64_t bytes) {
      peak = std::max(peak, ++live);
      largest = std::max(largest, bytes);
    }
  };

  Raw create(VkDeviceSize size);
  void destroy(Raw& raw);
  Block from_page(std::uint32_t id, VkDeviceSize bytes);

  std::shared_ptr<Gpu> gpu_;
  const Kind kind_;
  mutable std::mutex mutex_;
  std::vector<Page> pages_;  // indexed by Block::page; a freed page keeps its slot with raw.buffer null
  std::multimap<VkDeviceSize, Raw> cache_, persistent_cache_;
  bool persistent_mode_ = false;
  std::uint64_t in_use_ = 0, padding_ = 0, live_ = 0, direct_reserved_ = 0;
  Stats small_, large_, persistent_;
  std::uint64_t pages_peak_ = 0;
};

/// A pool block owned by a tensor (or a staging copy); released on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer(std::shared_ptr<MemoryPool> pool, Block block) : pool_(std::move(pool)), block_(block) {}
  ~DeviceBuffer() { pool_->release(block_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  const Block& block() const noexcept { return block_; }

 private:
  std::shared_ptr<MemoryPool> pool_;
  Block block_;
};
using DeviceBufferPtr = std::shared_ptr<DeviceBuffer>;

}  // namespace burn::vulkan
