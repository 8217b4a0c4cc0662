// The contract a backend implements. Application code never needs this file;
// backend authors do (CONTRIBUTING.md, "Add a backend").
//
// A backend is one device of one kind (flex:0, vulkan:1). It must describe
// itself, say which dtypes and ops it supports, and implement three
// operations: execute an IR op, and move data in (from_data) and out
// (to_data). Everything else is an optional service, asked for through an
// accessor that returns nullptr when the backend does not offer it:
//
//   stream()         asynchronous execution: flush, sync, device-clock profiling
//   memory()         an allocator with reports, cleanup and persistent scopes
//   threads()        an intra-op thread pool whose size can change
//   precision()      faster, less exact float32 algorithms on request
//   single_output()  a faster entry point for ops with one output
//
// A wrapper (fusion) then forwards a service by returning the inner backend's
// pointer instead of re-implementing every method.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <burn/backend/types.hpp>
#include <burn/dtype.hpp>
#include <burn/ir/op.hpp>
#include <burn/profile.hpp>
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

// ---- optional services ----------------------------------------------------------------

/// A profile window opened on a backend's own device clock (see
/// Stream::open_profile_window).
class DeviceClockWindow {
 public:
  virtual ~DeviceClockWindow() = default;
  /// Closes the window where the device's stream is now. The answer is the
  /// device time between the two ends, resolved once the device has run both
  /// (resolving may wait for the device; closing must not).
  virtual std::shared_future<std::optional<ProfileTicks>> close() = 0;
};

/// Asynchronous execution. A backend without a stream runs every op before
/// execute returns; Device::sync and flush are then no-ops.
class Stream {
 public:
  /// Waits until everything submitted so far has run; errors the device
  /// reported since the last sync surface here.
  virtual void sync() = 0;
  /// Submits queued work without waiting for it.
  virtual void flush() = 0;
  /// Opens a profile window on the device clock, where the stream is now (work
  /// still owed from before falls in), without waiting for the device. nullptr
  /// (the default): no device clock, Device::profile measures wall-clock time
  /// between two syncs instead.
  virtual std::unique_ptr<DeviceClockWindow> open_profile_window() { return nullptr; }

 protected:
  ~Stream() = default;
};

/// A device allocator that reports and can be told what to keep.
class MemoryManager {
 public:
  /// Returns cached, unused memory to the system.
  virtual void cleanup() = 0;
  virtual std::optional<std::vector<SlicedPoolReport>> pool_report() const { return std::nullopt; }
  virtual std::optional<MemoryPoolUsage> pool_usage() const { return std::nullopt; }
  /// While on, new allocations are never returned by cleanup (weights).
  virtual void set_persistent(bool /*on*/) {}
  /// Prepares host data for a later from_data (e.g. pinned or aligned memory).
  virtual void stage(TensorData& /*data*/) {}

 protected:
  ~MemoryManager() = default;
};

/// Tensors in this process's memory, filled or read in place: burn-server
/// assembles an upload straight into the new tensor as its chunks arrive,
/// and sends a download from the tensor itself, instead of going through a
/// whole-tensor TensorData copy at either end.
class HostAccess {
 public:
  struct Writable {
    PrimitivePtr primitive;
    std::span<std::byte> bytes;  ///< row-major; fill before any op reads the tensor
  };
  /// A new tensor of `spec` with uninitialised contents.
  virtual Writable allocate_host(const ir::TensorSpec& spec) = 0;
  /// The tensor's bytes in row-major order where they lie that way in
  /// memory (else nullopt: use to_data); valid while the primitive lives.
  /// A backend with queued work finishes what writes the tensor first, as
  /// to_data does.
  virtual std::optional<std::span<const std::byte>> host_bytes(const PrimitivePtr& primitive,
                                                               const ir::TensorSpec& spec) = 0;

 protected:
  ~HostAccess() = default;
};

/// An intra-op thread pool of adjustable size.
class ThreadControl {
 public:
  virtual std::size_t num_threads() const = 0;
  /// n >= 1 (Device::set_num_threads checks).
  virtual void set_num_threads(std::size_t n) = 0;

 protected:
  ~ThreadControl() = default;
};

/// The float32 precision setting (Device::set_float32_precision).
class PrecisionControl {
 public:
  virtual Float32Precision float32_precision() const = 0;
  virtual void set_float32_precision(Float32Precision precision) = 0;

 protected:
  ~PrecisionControl() = default;
};

/// Ops with one output (nearly all) can return that output's primitive
/// directly instead of a one-element std::vector, which is a heap allocation
/// and free on every op. Dispatch uses this entry point when it exists.
class SingleOutputExecution {
 public:
  /// Runs `op` (validated by ir::infer_outputs, which gave it exactly one
  /// output, `output`) and returns that output's primitive.
  virtual PrimitivePtr execute_single(const ir::Op& op, std::span<const Input> inputs,
                                      const ir::TensorSpec& output) = 0;

 protected:
  ~SingleOutputExecution() = default;
};

// ---- the backend ------------------------------------------------------------------------

/// One device of a backend (flex:0). Implementations must be thread-safe for
/// concurrent calls from different threads on different tensors.
class Backend {
 public:
  virtual ~Backend() = default;

  // Description.
  /// The backend's name ("flex") and human description.
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual PhysicalIdentity identity() const = 0;
  /// The physical device's human name (CPU model, GPU name).
  virtual std::string physical_name() const = 0;
  virtual bool supports_dtype(DType dtype) const = 0;
  /// Whether `execute` implements this op (other ops throw "[op] not supported
  /// by backend ..."). Checked before execution so users can query it.
  /// Backends built on the kernel convention derive it
  /// (<burn/backend/kernel_dispatch.hpp>).
  virtual bool supports_op(const ir::Op& op) const = 0;
  /// Whether chains of elementwise ops, and the row reductions they feed,
  /// run as one kernel each (the fusion layer). A value such a chain can
  /// recompute from tensors it reads anyway is then cheaper recomputed in
  /// each chain than stored once and read back (autodiff rules use this).
  virtual bool fuses_elementwise() const { return false; }
  /// Whether, with BURN_PROFILE_OPS set, the backend records the time of
  /// what it runs itself instead of dispatch timing each op (the fusion
  /// layer: a queued op returns before it runs, and syncing after every op
  /// would profile the program unfused).
  virtual bool times_own_ops() const { return false; }
  virtual DeviceSettings default_settings() const { return {}; }
  /// What Device::to_string() says for a device of a family that lives on
  /// another machine (a remote device: "remote:host:port/flex:0"); local
  /// families keep "<type>:<index>" and need not override it.
  virtual std::string display_name() const { return {}; }
  /// True once the backend can no longer serve at all (a remote device
  /// whose connection was lost). The registry then connects afresh when the
  /// device is asked for again, as after its server restarted; tensors made
  /// before keep their failed backend.
  virtual bool connection_lost() const { return false; }

  // The three operations.
  /// Runs `op` (already validated by ir::infer_outputs) and returns one
  /// primitive per entry of `outputs`.
  virtual std::vector<PrimitivePtr> execute(const ir::Op& op, std::span<const Input> inputs,
                                            std::span<const ir::TensorSpec> outputs) = 0;
  /// Host data -> device storage (the data's dtype and shape are kept).
  virtual PrimitivePtr from_data(TensorData data) = 0;
  /// Device storage -> host data.
  virtual TensorData to_data(const PrimitivePtr& primitive, const ir::TensorSpec& spec) = 0;

  /// Reseeds the generator that ir::Random ops draw from.
  virtual void seed(std::uint64_t seed) = 0;

  // Optional services (nullptr: not offered).
  virtual Stream* stream() { return nullptr; }
  virtual MemoryManager* memory() { return nullptr; }
  const MemoryManager* memory() const { return const_cast<Backend*>(this)->memory(); }
  virtual ThreadControl* threads() { return nullptr; }
  virtual HostAccess* host_access() { return nullptr; }
  const ThreadControl* threads() const { return const_cast<Backend*>(this)->threads(); }
  virtual PrecisionControl* precision() { return nullptr; }
  const PrecisionControl* precision() const { return const_cast<Backend*>(this)->precision(); }
  virtual SingleOutputExecution* single_output() { return nullptr; }
};

}  // namespace burn::backend
