// Counters of a fusion device, for tests and for tuning: how much of the
// work ran fused, and whether steady state reuses its plans.
#pragma once

#include <cstdint>

#include <burn/device.hpp>

namespace burn::fusion {

struct FusionStats {
  std::uint64_t ops_queued = 0;       // ops that entered the lazy queue
  std::uint64_t ops_fused = 0;        // queued ops that ran inside fused groups (2+ ops)
  std::uint64_t fused_groups = 0;     // fused kernels launched
  std::uint64_t ops_eager = 0;        // ops run one by one on the inner backend
  std::uint64_t ops_skipped = 0;      // queued ops whose results nobody needed
  std::uint64_t drains = 0;           // drains of a non-empty queue
  std::uint64_t plans_built = 0;      // explorations of a batch signature not seen before
  std::uint64_t plan_cache_hits = 0;  // drains that reused a cached strategy
};

/// The counters of a fusion device (Device::cpu(), Device::cuda(i)); throws
/// burn::Error for any other device.
FusionStats stats(const Device& device);
void reset_stats(const Device& device);

}  // namespace burn::fusion
