// What the CPU backends share: host storage, the allocator, seeding and the
// random generator, identity of the host processor.
#pragma once

#include <mutex>
#include <random>

#include <burn/backend/backend.hpp>

#include "backends/cpu_common/cpu_tensor.hpp"

namespace burn::cpu {

class CpuBackendBase : public backend::Backend {
 public:
  explicit CpuBackendBase(bool caching_allocator);

  bool supports_dtype(DType) const override { return true; }
  backend::PrimitivePtr from_data(TensorData data) override;
  TensorData to_data(const backend::PrimitivePtr& p, const ir::TensorSpec& spec) override;
  void seed(std::uint64_t seed) override;
  PhysicalIdentity identity() const override;
  std::string physical_name() const override;

  const std::shared_ptr<Allocator>& allocator() const noexcept { return alloc_; }

 protected:
  /// Fills a fresh tensor from the seeded generator (serial, so one seed gives
  /// the same values on every CPU backend and thread count).
  CpuTensorPtr random(const ir::Random& op, const ir::TensorSpec& spec);

  std::shared_ptr<Allocator> alloc_;
  std::mutex rng_mutex_;
  std::mt19937_64 rng_;
};

/// The host CPU's model name ("AMD EPYC ...").
std::string host_cpu_name();

}  // namespace burn::cpu
