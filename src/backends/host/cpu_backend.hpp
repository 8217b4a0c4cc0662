// What the CPU backends share: host storage, the allocator as the memory
// service, seeding and the random generator, identity of the host processor.
#pragma once

#include <mutex>
#include <random>

#include <burn/backend/backend.hpp>

#include "backends/host/cpu_tensor.hpp"

namespace burn::host {

/// The memory service over a host Allocator. A caching allocator (flex)
/// reports its pools, keeps persistent allocations apart and warms a buffer
/// when data is staged; a plain one (ndarray) only counts and cleans up.
class HostMemory final : public backend::MemoryManager {
 public:
  explicit HostMemory(std::shared_ptr<Allocator> alloc, bool caching) : alloc_(std::move(alloc)), caching_(caching) {}

  void cleanup() override { alloc_->cleanup(); }
  std::optional<std::vector<SlicedPoolReport>> pool_report() const override {
    if (!caching_) return std::nullopt;
    return alloc_->report();
  }
  std::optional<MemoryPoolUsage> pool_usage() const override { return alloc_->usage(); }
  void set_persistent(bool on) override {
    if (caching_) alloc_->set_persistent(on);
  }
  /// Host data is already host memory; staging warms a cached buffer of the
  /// right size so the upload that follows reuses it without page faults.
  void stage(TensorData& data) override {
    if (caching_) alloc_->prefault(data.bytes().size());
  }

 private:
  std::shared_ptr<Allocator> alloc_;
  bool caching_;
};

class CpuBackendBase : public backend::Backend, public backend::HostAccess {
 public:
  explicit CpuBackendBase(bool caching_allocator);

  bool supports_dtype(DType) const override { return true; }
  backend::PrimitivePtr from_data(TensorData data) override;
  TensorData to_data(const backend::PrimitivePtr& p, const ir::TensorSpec& spec) override;
  void seed(std::uint64_t seed) override;
  PhysicalIdentity identity() const override;
  std::string physical_name() const override;
  backend::MemoryManager* memory() override { return &memory_; }
  backend::HostAccess* host_access() override { return this; }
  Writable allocate_host(const ir::TensorSpec& spec) override;
  std::optional<std::span<const std::byte>> host_bytes(const backend::PrimitivePtr& primitive,
                                                       const ir::TensorSpec& spec) override;

  const std::shared_ptr<Allocator>& allocator() const noexcept { return alloc_; }

 protected:
  /// Fills a fresh tensor from the seeded generator (serial, so one seed gives
  /// the same values on every CPU backend and thread count).
  CpuTensorPtr random(const ir::Random& op, const ir::TensorSpec& spec);

  std::shared_ptr<Allocator> alloc_;
  HostMemory memory_;
  std::mutex rng_mutex_;
  std::mt19937_64 rng_;
};

/// The host CPU's model name ("AMD EPYC ...").
std::string cpu_name();

}  // namespace burn::host
