#include "backends/cuda/allocator.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <burn/error.hpp>

namespace burn::cuda {
namespace {

constexpr std::size_t kSmallRounding = 512;
constexpr std::size_t kLargeThreshold = std::size_t{1} << 20;
constexpr std::size_t kLargeRounding = std::size_t{2} << 20;

std::size_t round_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }

}  // namespace

CachingAllocator::Block::~Block() { owner_->give_back(address_, size_, requested_); }

std::shared_ptr<CachingAllocator> CachingAllocator::create(std::unique_ptr<DeviceMemory> memory) {
  return std::shared_ptr<CachingAllocator>(new CachingAllocator(std::move(memory)));
}

CachingAllocator::~CachingAllocator() {
  for (const auto& [size, address] : cached_) memory_->release(address, size);
}

std::size_t CachingAllocator::rounded_size(std::size_t bytes) noexcept {
  if (bytes == 0) return kSmallRounding;
  return bytes < kLargeThreshold ? round_up(bytes, kSmallRounding) : round_up(bytes, kLargeRounding);
}

CachingAllocator::ClassStats& CachingAllocator::stats_for(std::size_t size) noexcept {
  return size < kLargeThreshold ? small_ : large_;
}

std::shared_ptr<CachingAllocator::Block> CachingAllocator::allocate(std::size_t bytes, std::string_view op) {
  if (bytes > std::size_t{1} << 50)
    throw DeviceError(DeviceErrorKind::NotAvailable, op,
                      fmt::format("{} bytes is more than any CUDA device has", bytes));
  const std::size_t size = rounded_size(bytes);
  std::unique_lock lock(mutex_);
  std::uint64_t address = 0;
  std::size_t got = size;
  // The smallest cached block that fits and wastes at most half of itself.
  if (auto it = cached_.lower_bound(size); it != cached_.end() && it->first <= 2 * size) {
    got = it->first;
    address = it->second;
    cached_.erase(it);
  } else {
    address = memory_->allocate(size);
    if (address == 0) {
      release_cached_locked();
      address = memory_->allocate(size);
    }
    if (address == 0)
      throw DeviceError(DeviceErrorKind::NotAvailable, op,
                        fmt::format("the CUDA device is out of memory: {} bytes were asked for with {} bytes in use "
                                    "by tensors (free tensors, or use a smaller batch)",
                                    bytes, usage_.bytes_in_use));
    ClassStats& s = stats_for(size);
    s.blocks += 1;
    s.blocks_peak = std::max(s.blocks_peak, s.blocks);
    persistent_[address] = persistent_mode_;
    usage_.bytes_reserved += size;
  }
  ClassStats& s = stats_for(got);
  s.largest = std::max<std::uint64_t>(s.largest, bytes);
  usage_.number_allocs += 1;
  usage_.bytes_in_use += bytes;
  usage_.bytes_padding += got - bytes;
  lock.unlock();
  return std::make_shared<Block>(shared_from_this(), address, got, bytes);
}

void CachingAllocator::give_back(std::uint64_t address, std::size_t size, std::size_t requested) noexcept {
  std::lock_guard lock(mutex_);
  usage_.number_allocs -= 1;
  usage_.bytes_in_use -= requested;
  usage_.bytes_padding -= size - requested;
  cached_.emplace(size, address);
}

void CachingAllocator::release_cached_locked() noexcept {
  for (auto it = cached_.begin(); it != cached_.end();) {
    if (persistent_[it->second]) {
      ++it;
      continue;
    }
    memory_->release(it->second, it->first);
    usage_.bytes_reserved -= it->first;
    stats_for(it->first).blocks -= 1;
    persistent_.erase(it->second);
    it = cached_.erase(it);
  }
}

void CachingAllocator::cleanup() {
  std::lock_guard lock(mutex_);
  release_cached_locked();
}

void CachingAllocator::set_persistent(bool on) {
  std::lock_guard lock(mutex_);
  persistent_mode_ = on;
}

MemoryPoolUsage CachingAllocator::usage() const {
  std::lock_guard lock(mutex_);
  return usage_;
}

std::vector<SlicedPoolReport> CachingAllocator::report() const {
  std::lock_guard lock(mutex_);
  return {SlicedPoolReport{kSmallRounding, small_.blocks, small_.blocks_peak, small_.largest},
          SlicedPoolReport{kLargeRounding, large_.blocks, large_.blocks_peak, large_.largest}};
}

}  // namespace burn::cuda
