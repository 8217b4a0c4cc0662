// The state behind a Device value: one per compute resource (flex:0), shared by
// every Device naming it. Holds the backend instance and the settings.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include <burn/backend/backend.hpp>
#include <burn/device.hpp>

namespace burn::detail {

// Always owned by a shared_ptr (runtime_for, install_runtime): a traced
// function keys what it prepared for a runtime by a weak reference to it.
class DeviceRuntime : public std::enable_shared_from_this<DeviceRuntime> {
 public:
  DeviceRuntime(DispatchDevice id, std::unique_ptr<backend::Backend> backend);

  const DispatchDevice& id() const noexcept { return id_; }
  backend::Backend& backend() noexcept { return *backend_; }

  /// A snapshot; does not lock the settings.
  DeviceSettings settings() const;
  /// Locks the settings (first tensor creation) and returns them.
  DeviceSettings lock_settings();
  void configure(const DeviceConfig& config);

  /// Counts executed operations so profile windows know whether work ran.
  void count_op() noexcept { ops_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t op_count() const noexcept { return ops_.load(std::memory_order_relaxed); }

  /// Nested persistent-allocation scopes.
  void enter_persistent();
  void leave_persistent();

 private:
  DispatchDevice id_;
  std::unique_ptr<backend::Backend> backend_;
  mutable std::mutex mutex_;
  DeviceSettings settings_;
  bool locked_ = false;
  int persistent_depth_ = 0;
  std::atomic<std::uint64_t> ops_{0};
};

/// The runtime of a device; created on first use. Throws DeviceError if the
/// backend is not built or has no such device.
std::shared_ptr<DeviceRuntime> runtime_for(const DispatchDevice& id);

/// The runtime of `id` if one exists and its connection is not lost, else a
/// new one around `backend` (a backend created outside the registry: a
/// remote device connected with options).
std::shared_ptr<DeviceRuntime> install_runtime(const DispatchDevice& id, std::unique_ptr<backend::Backend> backend);

}  // namespace burn::detail
