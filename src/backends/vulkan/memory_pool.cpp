#include "backends/vulkan/memory_pool.hpp"

#include <bit>
#include <optional>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/vulkan/vk_check.hpp"

namespace burn::vulkan {

VkDeviceSize MemoryPool::size_class(VkDeviceSize bytes) {
  bytes = std::max(bytes, kAlignment);
  if (bytes <= 4096) return (bytes + kAlignment - 1) / kAlignment * kAlignment;
  // Four classes per power of two: at most 25% padding, and sizes that recur
  // in training loops land in the same class.
  const VkDeviceSize step = std::bit_floor(bytes) / 4;
  return (bytes + step - 1) / step * step;
}

MemoryPool::MemoryPool(std::shared_ptr<Gpu> gpu, Kind kind) : gpu_(std::move(gpu)), kind_(kind) {}

MemoryPool::~MemoryPool() {
  // Only runs once no block is alive (each holds the pool).
  for (auto& page : pages_) destroy(page.raw);
  for (auto& [size, raw] : cache_) destroy(raw);
  for (auto& [size, raw] : persistent_cache_) destroy(raw);
}

MemoryPool::Raw MemoryPool::create(VkDeviceSize size) {
  VkDevice dev = gpu_->device();
  Raw raw;
  raw.size = size;
  auto info = make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(dev, &info, nullptr, &raw.buffer), gpu_->label(), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, raw.buffer, &req);
  auto alloc = make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.allocationSize = req.size;
  try {
    alloc.memoryTypeIndex = kind_ == Kind::Device ? gpu_->device_memory_type(req.memoryTypeBits)
                                                  : gpu_->host_memory_type(req.memoryTypeBits, kind_ == Kind::Readback);
  } catch (...) {
    vkDestroyBuffer(dev, raw.buffer, nullptr);
    throw;
  }
  if (VkResult r = vkAllocateMemory(dev, &alloc, nullptr, &raw.memory); r != VK_SUCCESS) {
    vkDestroyBuffer(dev, raw.buffer, nullptr);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) throw OutOfDeviceMemory{r};
    check(r, gpu_->label(), "vkAllocateMemory");
  }
  vkBindBufferMemory(dev, raw.buffer, raw.memory, 0);
  if (kind_ != Kind::Device) {
    void* p = nullptr;
    if (VkResult r = vkMapMemory(dev, raw.memory, 0, VK_WHOLE_SIZE, 0, &p); r != VK_SUCCESS) {
      destroy(raw);
      check(r, gpu_->label(), "vkMapMemory");
    }
    raw.mapped = static_cast<std::byte*>(p);
  }
  return raw;
}

void MemoryPool::destroy(Raw& raw) {
  if (!raw.buffer) return;
  vkDestroyBuffer(gpu_->device(), raw.buffer, nullptr);
  vkFreeMemory(gpu_->device(), raw.memory, nullptr);  // unmaps too
  raw = Raw{};
}

Block MemoryPool::from_page(std::uint32_t id, VkDeviceSize bytes) {
  Page& page = pages_[id];
  const std::uint32_t slot = page.free_slots.back();
  page.free_slots.pop_back();
  ++page.used;
  Block b;
  b.buffer = page.raw.buffer;
  b.memory = page.raw.memory;
  b.offset = slot * page.slot_size;
  b.capacity = page.slot_size;
  b.requested = bytes;
  b.mapped = page.raw.mapped ? page.raw.mapped + b.offset : nullptr;
  b.page = id;
  return b;
}

Block MemoryPool::allocate(VkDeviceSize bytes) {
  const VkDeviceSize cls = size_class(bytes);
  std::lock_guard lock(mutex_);
  Block b;
  if (kind_ == Kind::Device && cls <= kSlabMax && !persistent_mode_) {
    std::optional<std::uint32_t> found, empty;
    for (std::uint32_t i = 0; i < pages_.size() && !found; ++i) {
      if (!pages_[i].raw.buffer) empty = empty.value_or(i);
      else if (pages_[i].slot_size == cls && !pages_[i].free_slots.empty()) found = i;
    }
    if (!found) {
      Page page;
      page.raw = create(kPageSize);
      page.slot_size = cls;
      const auto slots = static_cast<std::uint32_t>(kPageSize / cls);
      for (std::uint32_t s = slots; s-- > 0;) page.free_slots.push_back(s);  // slot 0 first
      if (empty) pages_[*empty] = std::move(page);
      else pages_.push_back(std::move(page));
      found = empty ? *empty : static_cast<std::uint32_t>(pages_.size() - 1);
      std::uint64_t held = 0;
      for (const auto& p : pages_) held += p.raw.buffer ? 1 : 0;
      pages_peak_ = std::max(pages_peak_, held);
    }
    b = from_page(*found, bytes);
    small_.add(bytes);
  } else {
    auto& cache = persistent_mode_ ? persistent_cache_ : cache_;
    Raw raw;
    if (auto it = cache.find(cls); it != cache.end()) {
      raw = it->second;
      cache.erase(it);
    } else {
      raw = create(cls);
      direct_reserved_ += cls;
    }
    b.buffer = raw.buffer;
    b.memory = raw.memory;
    b.mapped = raw.mapped;
    b.capacity = cls;
    b.requested = bytes;
    b.persistent = persistent_mode_;
    (persistent_mode_ ? persistent_ : large_).add(bytes);
  }
  ++live_;
  in_use_ += bytes;
  padding_ += b.capacity - bytes;
  return b;
}

void MemoryPool::release(const Block& b) {
  std::lock_guard lock(mutex_);
  --live_;
  in_use_ -= b.requested;
  padding_ -= b.capacity - b.requested;
  if (b.page != UINT32_MAX) {
    Page& page = pages_[b.page];
    page.free_slots.push_back(static_cast<std::uint32_t>(b.offset / page.slot_size));
    --page.used;
    --small_.live;
  } else {
    Raw raw{b.buffer, b.memory, b.mapped, b.capacity};
    (b.persistent ? persistent_cache_ : cache_).emplace(b.capacity, raw);
    --(b.persistent ? persistent_ : large_).live;
  }
}

void MemoryPool::cleanup() {
  std::lock_guard lock(mutex_);
  for (auto& [size, raw] : cache_) {
    direct_reserved_ -= size;
    destroy(raw);
  }
  cache_.clear();
  for (auto& page : pages_)
    if (page.raw.buffer && page.used == 0) destroy(page.raw);
}

void MemoryPool::set_persistent(bool on) {
  std::lock_guard lock(mutex_);
  persistent_mode_ = on;
}

MemoryPoolUsage MemoryPool::usage() const {
  std::lock_guard lock(mutex_);
  std::uint64_t pages = 0;
  for (const auto& p : pages_) pages += p.raw.buffer ? 1 : 0;
  return MemoryPoolUsage{live_, in_use_, padding_, direct_reserved_ + pages * kPageSize};
}

std::vector<SlicedPoolReport> MemoryPool::report() const {
  std::lock_guard lock(mutex_);
  std::uint64_t pages = 0;
  for (const auto& p : pages_) pages += p.raw.buffer ? 1 : 0;
  return {SlicedPoolReport{kPageSize, pages, pages_peak_, small_.largest},
          SlicedPoolReport{0, large_.live, large_.peak, large_.largest},
          SlicedPoolReport{0, persistent_.live, persistent_.peak, persistent_.largest}};
}

}  // namespace burn::vulkan
