// The Vulkan backend: one instance per device (vulkan:i, wgpu:i), owning the
// logical device, its buffer pool, pipelines and command stream. Kernels
// (kernels.hpp) record work; reads and sync() wait for it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include <burn/backend/backend.hpp>

#include "backends/vulkan/gpu.hpp"
#include "backends/vulkan/memory_pool.hpp"
#include "backends/vulkan/pipelines.hpp"
#include "backends/vulkan/stream.hpp"
#include "backends/vulkan/tensor.hpp"

namespace burn::vulkan {

class VulkanBackend final : public backend::Backend, public backend::Stream, public backend::MemoryManager {
 public:
  /// `api` is "vulkan" or "wgpu" (the name users see); `adapter` indexes Instance::adapters().
  VulkanBackend(std::string api, std::size_t adapter);
  ~VulkanBackend() override;

  std::string name() const override { return api_; }
  std::string description() const override;
  bool supports_dtype(DType dtype) const override;
  bool supports_op(const ir::Op& op) const override;
  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override;
  backend::PrimitivePtr from_data(TensorData data) override;
  TensorData to_data(const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec) override;
  void seed(std::uint64_t seed) override;
  PhysicalIdentity identity() const override { return gpu_->adapter().identity; }
  std::string physical_name() const override;

  // Services: the command stream and the buffer pool.
  backend::Stream* stream() override { return this; }
  backend::MemoryManager* memory() override { return this; }
  void sync() override;
  void flush() override;
  /// Timestamp queries on the queue (profile.cpp); nullptr where the queue has none.
  std::unique_ptr<backend::DeviceClockWindow> open_profile_window() override;
  void cleanup() override;
  std::optional<std::vector<SlicedPoolReport>> pool_report() const override { return pool_->report(); }
  std::optional<MemoryPoolUsage> pool_usage() const override { return pool_->usage(); }
  void set_persistent(bool on) override { pool_->set_persistent(on); }

  // ---- for kernels (called with the backend's lock held) ----
  /// A fresh row-major tensor; throws "[op] ..." when it cannot be allocated.
  VkTensorPtr allocate(const ir::TensorSpec& spec, std::string_view op);
  vulkan::Stream& commands() noexcept { return *stream_; }
  Pipelines& pipelines() noexcept { return *pipelines_; }
  const Gpu& gpu() const noexcept { return *gpu_; }
  /// "vulkan:0"
  const std::string& label() const noexcept { return gpu_->label(); }
  /// The generator Random draws from (seed() resets it).
  std::mt19937_64& rng() noexcept { return rng_; }

  /// Testing: makes the next queue submission fail as a lost device would.
  void fail_next_submit();

  /// Lets profile windows reach the backend while it lives (profile.cpp).
  struct ClockLink {
    std::mutex mutex;
    VulkanBackend* backend = nullptr;
  };
  /// Writes a window's closing timestamp (locks the backend).
  StampPtr stamp_now();
  /// Waits until `end` (written after `begin`) has run, then the time between
  /// them; nullopt when the queue failed first (locks the backend).
  std::optional<std::chrono::nanoseconds> measure(const Stamp& begin, const Stamp& end);

 private:
  /// Throws "[op] <dtype> is not supported by ..." naming the missing feature.
  void require_dtype(DType dtype, std::string_view op) const;

  std::string api_;
  mutable std::mutex mutex_;
  std::shared_ptr<Gpu> gpu_;
  std::shared_ptr<MemoryPool> pool_;
  std::unique_ptr<Pipelines> pipelines_;
  std::unique_ptr<vulkan::Stream> stream_;
  std::mt19937_64 rng_{std::random_device{}()};
  std::shared_ptr<ClockLink> clock_link_ = std::make_shared<ClockLink>();
};

}  // namespace burn::vulkan
