// The contract a backend implements. Application code never needs this file;
// backend authors do. A backend is one folder under src/backends/ with one
// registration function (see src/device/registry.cpp).
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <burn/device.hpp>
#include <burn/ir/op.hpp>
#include <burn/tensor_data.hpp>

namespace burn::backend {

/// A backend's own tensor storage (a CPU buffer with strides, a GPU buffer, ...).
class Primitive {
 public:
  virtual ~Primitive() = default;
  /// References to this primitive the backend itself holds for work it has
  /// accepted but not yet run (a lazy backend's queued readers). Dispatch
  /// discounts them when it decides whether an input may be overwritten in
  /// place; the backend must then run those readers before any write.
  virtual std::size_t backend_references() const noexcept { return 0; }
};
using PrimitivePtr = std::shared_ptr<Primitive>;

/// One input of an operation.
struct Input {
  PrimitivePtr primitive;
  ir::TensorSpec spec;
  /// True when nobody else holds this tensor: the backend may write the
  /// output into its storage (in-place execution).
  bool reusable = false;
};

// ---- device clock (issue 7) ----
/// A profile window opened on a backend's own device clock (see
/// Backend::open_profile_window).
class DeviceClockWindow {
 public:
  virtual ~DeviceClockWindow() = default;
  /// Closes the window where the device's stream is now. The answer is the
  /// device time between the two ends, resolved once the device has run both
  /// (resolving may wait for the device; closing must not).
  virtual std::shared_future<std::optional<ProfileTicks>> close() = 0;
};
// ---- end device clock ----

/// One device of a backend (flex:0). Implementations must be thread-safe for
/// concurrent calls from different threads on different tensors.
class Backend {
 public:
  virtual ~Backend() = default;

  /// The backend's name ("flex") and human description.
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;

  virtual bool supports_dtype(DType dtype) const = 0;
  /// Whether `execute` implements this op (other ops throw "[op] not supported
  /// by backend ..."). Checked before execution so users can query it.
  virtual bool supports_op(const ir::Op& op) const = 0;
  virtual DeviceSettings default_settings() const { return {}; }

  /// Runs `op` (already validated by ir::infer_outputs) and returns one
  /// primitive per entry of `outputs`.
  virtual std::vector<PrimitivePtr> execute(const ir::Op& op, std::span<const Input> inputs,
                                            std::span<const ir::TensorSpec> outputs) = 0;

  /// Host data -> device storage (the data's dtype and shape are kept).
  virtual PrimitivePtr from_data(TensorData data) = 0;
  /// Device storage -> host data.
  virtual TensorData to_data(const PrimitivePtr& primitive, const ir::TensorSpec& spec) = 0;

  virtual void seed(std::uint64_t seed) = 0;
  virtual void sync() {}
  virtual void flush() {}
  // ---- device clock (issue 7) ----
  /// Opens a profile window on the device clock, where the stream is now (work
  /// still owed from before falls in), without waiting for the device. nullptr
  /// (the default): no device clock, Device::profile measures wall-clock time
  /// between two syncs instead.
  virtual std::unique_ptr<DeviceClockWindow> open_profile_window() { return nullptr; }
  // ---- end device clock ----

  virtual void memory_cleanup() {}
  virtual std::optional<std::vector<SlicedPoolReport>> memory_pool_report() const { return std::nullopt; }
  virtual std::optional<MemoryPoolUsage> memory_pool_usage() const { return std::nullopt; }
  virtual void set_persistent_allocations(bool /*on*/) {}
  /// Prepares host data for a later from_data (e.g. pinned or aligned memory).
  virtual void stage(TensorData& /*data*/) {}

  /// Intra-op threads this device computes with (1 for serial backends).
  virtual std::size_t num_threads() const { return 1; }
  /// Throws burn::Error where the backend's thread count is fixed.
  virtual void set_num_threads(std::size_t n);

  virtual PhysicalIdentity identity() const = 0;
  /// The physical device's human name (CPU model, GPU name).
  virtual std::string physical_name() const = 0;
};

/// A backend family registered with the device registry.
struct BackendFactory {
  DeviceType type;
  /// Number of devices this backend has on this machine (0: none available).
  std::size_t (*device_count)();
  /// Creates device `index` (< device_count()).
  std::unique_ptr<Backend> (*create)(std::size_t index);
};

}  // namespace burn::backend
