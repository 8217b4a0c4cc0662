// Device: a cheap value naming a compute resource, plus the autodiff context
// that newly created tensors inherit (docs/api.md, "Devices").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <burn/backend/types.hpp>
#include <burn/config.hpp>
#include <burn/dtype.hpp>
#include <burn/error.hpp>
#include <burn/ir/op.hpp>
#include <burn/profile.hpp>

namespace burn {

class TensorData;
namespace detail {
class DeviceRuntime;
}
namespace backend {
class DeviceClockWindow;
}

/// An index for indexed backends (CUDA, ROCm): `DeviceIndex::Default` or an integer.
class DeviceIndex {
 public:
  static const DeviceIndex Default;
  DeviceIndex(int index);  // NOLINT: plain integers convert, as in Burn
  bool is_default() const noexcept { return !value_; }
  /// The index; 0 for Default.
  std::size_t value() const noexcept { return value_.value_or(0); }
  friend bool operator==(const DeviceIndex&, const DeviceIndex&) = default;

 private:
  DeviceIndex() = default;
  std::optional<std::size_t> value_;
};

/// Which adapter a wgpu-family constructor selects.
class DeviceKind {
 public:
  enum class Type : std::uint8_t { Default, DiscreteGpu, IntegratedGpu, VirtualGpu, Cpu, BestAvailable };
  DeviceKind() = default;
  static DeviceKind default_device() { return {}; }
  static DeviceKind discrete_gpu(std::size_t i) { return {Type::DiscreteGpu, i}; }
  static DeviceKind integrated_gpu(std::size_t i) { return {Type::IntegratedGpu, i}; }
  static DeviceKind virtual_gpu(std::size_t i) { return {Type::VirtualGpu, i}; }
  static DeviceKind cpu() { return {Type::Cpu, 0}; }
  static DeviceKind best_available() { return {Type::BestAvailable, 0}; }
  Type type() const noexcept { return type_; }
  std::size_t index() const noexcept { return index_; }
  friend bool operator==(const DeviceKind&, const DeviceKind&) = default;

 private:
  DeviceKind(Type t, std::size_t i) : type_(t), index_(i) {}
  Type type_ = Type::Default;
  std::size_t index_ = 0;
};

class Devices;
class RemoteOptions;

/// Where a remote server listens: RemoteHost("127.0.0.1:7878").
struct RemoteHost {
  std::string address;
#if BURN_HAS_REMOTE
  /// Every device the server hosts (Device::enumerate(DeviceType::remote(*this))).
  /// Throws DeviceError (NotAvailable) when the server cannot be reached.
  Devices devices() const;
#endif
  friend bool operator==(const RemoteHost&, const RemoteHost&) = default;
};

class DeviceFilter;

/// A family of devices, for enumeration and for naming a backend.
class DeviceType {
 public:
  enum class Kind : std::uint8_t {
    Cuda,
    Rocm,
    Metal,
    Vulkan,
    WebGpu,
    Wgpu,
    Cpu,
    LibTorch,
    Flex,
    Remote,
    NdArray,
    Capture
  };
  static const DeviceType Cuda, Rocm, Metal, Vulkan, WebGpu, Wgpu, Cpu, LibTorch, Flex, NdArray, Capture;
  static DeviceType remote(RemoteHost host) { return DeviceType(Kind::Remote, std::move(host)); }

  constexpr explicit DeviceType(Kind k) : kind_(k) {}
  Kind kind() const noexcept { return kind_; }
  const std::optional<RemoteHost>& host() const noexcept { return host_; }
  /// "flex", "ndarray", "cuda", ... (the prefix of Device::to_string()).
  std::string_view name() const noexcept;
  friend bool operator==(const DeviceType&, const DeviceType&) = default;

 private:
  DeviceType(Kind k, RemoteHost h) : kind_(k), host_(std::move(h)) {}
  Kind kind_;
  std::optional<RemoteHost> host_;
};

/// A set of device types; `DeviceFilter{}.with(DeviceType::Flex)` or `a | b`.
class DeviceFilter {
 public:
  DeviceFilter() = default;
  DeviceFilter(DeviceType t) { types_.push_back(std::move(t)); }  // NOLINT
  DeviceFilter with(DeviceType t) const {
    DeviceFilter f = *this;
    f.types_.push_back(std::move(t));
    return f;
  }
  const std::vector<DeviceType>& types() const noexcept { return types_; }
  friend DeviceFilter operator|(const DeviceFilter& a, DeviceType b) { return a.with(std::move(b)); }

 private:
  std::vector<DeviceType> types_;
};
inline DeviceFilter operator|(DeviceType a, DeviceType b) { return DeviceFilter(std::move(a)).with(std::move(b)); }

/// What `Device::configure` changes; unset fields keep the backend default.
class DeviceConfig {
 public:
  DeviceConfig() = default;
  DeviceConfig(FloatDType f, IntDType i) : float_(f), int_(i) {}
  DeviceConfig float_dtype(FloatDType d) const {
    auto c = *this;
    c.float_ = d;
    return c;
  }
  DeviceConfig int_dtype(IntDType d) const {
    auto c = *this;
    c.int_ = d;
    return c;
  }
  DeviceConfig bool_dtype(BoolDType d) const {
    auto c = *this;
    c.bool_ = d;
    return c;
  }
  std::optional<FloatDType> float_dtype() const { return float_; }
  std::optional<IntDType> int_dtype() const { return int_; }
  std::optional<BoolDType> bool_dtype() const { return bool_; }

 private:
  std::optional<FloatDType> float_;
  std::optional<IntDType> int_;
  std::optional<BoolDType> bool_;
};

enum class GradientCheckpointingStrategy : std::uint8_t { Balanced };

class Device;

/// One card (or the host CPU) with every device that computes on it.
struct PhysicalDevice {
  std::string name;
  PhysicalIdentity physical;
  std::vector<Device> devices;
};

/// The backend-level device value: which backend and which instance.
struct DispatchDevice {
  DeviceType type;
  std::size_t index = 0;
  friend bool operator==(const DispatchDevice&, const DispatchDevice&) = default;
};

class Device {
 public:
  /// The default device: BURN_DEVICE if set, else the first enabled backend
  /// with a device on this machine (CUDA, Metal, ROCm, Vulkan, WebGPU, wgpu,
  /// CPU, LibTorch, Flex, Remote, NdArray). Throws ConfigurationError when the
  /// build has no execution backend.
  Device();
  explicit Device(DispatchDevice d);

  // One constructor per backend of the API. Each is declared when its backend
  // is part of the build (BURN_HAS_<NAME> in <burn/config.hpp>) and defined in
  // that backend's folder, so a new backend finds its constructor here.

#if BURN_HAS_FLEX
  /// Eager, optimised CPU backend.
  static Device flex();
#endif
#if BURN_HAS_NDARRAY
  /// Simple reference CPU backend (the oracle the tests compare with).
  static Device ndarray();
#endif
#if BURN_HAS_CPU
  static Device cpu();
#endif
#if BURN_HAS_CUDA
  static Device cuda(DeviceIndex index = DeviceIndex::Default);
#endif
#if BURN_HAS_ROCM
  static Device rocm(DeviceIndex index = DeviceIndex::Default);
#endif
#if BURN_HAS_LIBTORCH
  static Device libtorch();
  static Device libtorch_cuda(DeviceIndex index = DeviceIndex::Default);
  static Device libtorch_mps();
  static Device libtorch_vulkan();
#endif
#if BURN_HAS_WGPU
  static Device wgpu(DeviceKind kind = {});
#endif
#if BURN_HAS_VULKAN
  static Device vulkan(DeviceKind kind = {});
#endif
#if BURN_HAS_METAL
  static Device metal(DeviceKind kind = {});
#endif
#if BURN_HAS_WEBGPU
  static Device webgpu(DeviceKind kind = {});
#endif
#if BURN_HAS_CAPTURE
  static Device capture();
#endif
#if BURN_HAS_REMOTE
  /// A device of a burn-server: Device::remote_options(host).init()
  /// (<burn/remote.hpp> has the options).
  static RemoteOptions remote_options(const RemoteHost& host);
#endif

  /// Parses "flex", "flex:0", "ndarray", "cuda:1"...; throws DeviceError if
  /// the backend is not in this build or has no such device. A remote device
  /// is "remote:HOST:PORT" (the server's first device) or
  /// "remote:HOST:PORT/flex:0".
  static Device parse(std::string_view text);

  // ---- autodiff context -------------------------------------------------------
#if BURN_HAS_AUTODIFF
  /// A device whose new tensors have autodiff enabled (idempotent).
  Device autodiff() const;
  /// autodiff() with Balanced gradient checkpointing; throws burn::Error if
  /// autodiff is not enabled on this device.
  Device gradient_checkpointing() const;
#endif
  Device without_autodiff() const;
  Device inner() const { return without_autodiff(); }
  bool is_autodiff() const noexcept { return autodiff_; }
  std::optional<GradientCheckpointingStrategy> gradient_checkpointing_strategy() const noexcept {
    return checkpointing_;
  }

  // ---- execution ------------------------------------------------------------------
  void seed(std::uint64_t seed) const;
  void sync() const;
  void flush() const;
  bool supports_dtype(DType dtype) const;
  /// Whether this device's backend implements a primitive operation
  /// (others throw "[op] not supported by the X backend").
  bool supports_op(const ir::Op& op) const;
  bool supports_dtype(FloatDType d) const { return supports_dtype(to_dtype(d)); }
  bool supports_dtype(IntDType d) const { return supports_dtype(to_dtype(d)); }
  bool supports_dtype(BoolDType d) const { return supports_dtype(to_dtype(d)); }

  template <class F>
  auto profile(F&& f) const {
    return profile_with(ProfileOptions{}, std::forward<F>(f));
  }
  /// Runs f and measures the device time it used. Returns {f's result (or
  /// std::monostate for void), duration}.
  template <class F>
  auto profile_with(ProfileOptions options, F&& f) const {
    using R = std::invoke_result_t<F>;
    auto window = profile_begin(options);
    if constexpr (std::is_void_v<R>) {
      std::forward<F>(f)();
      return std::pair<std::monostate, ProfileDuration>{std::monostate{}, profile_end(window, options)};
    } else {
      R out = std::forward<F>(f)();
      return std::pair<R, ProfileDuration>{std::move(out), profile_end(window, options)};
    }
  }

  // ---- threads ------------------------------------------------------------------------------------
  /// Intra-op threads of this device (flex: its OpenMP pool, set at start-up
  /// from BURN_NUM_THREADS when given; ndarray: 1).
  std::size_t num_threads() const;
  /// Changes the thread count (flex); throws burn::Error on backends whose
  /// count is fixed, or for 0.
  void set_num_threads(std::size_t n) const;

  // ---- float32 precision ------------------------------------------------------------------------
  /// What float32 convolutions and products may trade for speed on this
  /// device (Float32Precision::Highest unless set).
  Float32Precision float32_precision() const;
  /// Allows (High) or forbids (Highest) the faster, less exact algorithms,
  /// as torch.set_float32_matmul_precision. A permission, not a demand: a
  /// device without such algorithms keeps computing at Highest, and
  /// float32_precision() then still says Highest.
  void set_float32_precision(Float32Precision precision) const;

  // ---- memory -------------------------------------------------------------------------
  void memory_cleanup() const;
  std::optional<std::vector<SlicedPoolReport>> memory_pool_report() const;
  std::optional<MemoryPoolUsage> memory_pool_usage() const;
  /// Runs f(input) with allocations marked persistent: they are never returned
  /// to the system by memory_cleanup (weights that live for the whole run).
  template <class I, class F>
  auto memory_persistent_allocations(I input, F f) const {
    PersistentScope scope(*this);
    return f(std::move(input));
  }
  /// Prepares host data for transfer to this device (pinned or aligned memory).
  template <class R>
  void staging(R&& data) const {
    for (TensorData* d : data) stage(*d);
  }

  // ---- settings ---------------------------------------------------------------------------
  DeviceSettings settings() const;
  /// Throws DeviceError (UnsupportedDType or AlreadyInitialized).
  void configure(const DeviceConfig& config);

  // ---- enumeration ---------------------------------------------------------------------------
  static Devices enumerate(const DeviceFilter& filter);
  static std::vector<PhysicalDevice> enumerate_physical();
  PhysicalIdentity identity() const;

  // ---- identity ------------------------------------------------------------------------------
  const DispatchDevice& as_dispatch() const noexcept { return dispatch_; }
  DeviceType type() const noexcept { return dispatch_.type; }
  std::size_t index() const noexcept { return dispatch_.index; }
  /// "flex:0", "cuda:1", ...
  std::string to_string() const;
  /// Equal when both name the same compute resource (autodiff is ignored).
  friend bool operator==(const Device& a, const Device& b) noexcept { return a.dispatch_ == b.dispatch_; }

  /// Internal: the backend state this device names.
  detail::DeviceRuntime& runtime() const;

 private:
  struct ProfileWindow {
    std::chrono::steady_clock::time_point start;
    std::uint64_t ops_before = 0;
    /// Set when the backend measures on its own device clock.
    std::shared_ptr<backend::DeviceClockWindow> clock;
  };
  class PersistentScope {
   public:
    explicit PersistentScope(const Device& d);
    ~PersistentScope();
    PersistentScope(const PersistentScope&) = delete;
    PersistentScope& operator=(const PersistentScope&) = delete;

   private:
    const Device& device_;
  };
  ProfileWindow profile_begin(const ProfileOptions& o) const;
  ProfileDuration profile_end(const ProfileWindow& w, const ProfileOptions& o) const;
  void stage(TensorData& data) const;

  DispatchDevice dispatch_{DeviceType::Flex, 0};
  std::shared_ptr<detail::DeviceRuntime> runtime_;
  bool autodiff_ = false;
  std::optional<GradientCheckpointingStrategy> checkpointing_;
};

std::ostream& operator<<(std::ostream& os, const Device& d);

/// The result of Device::enumerate: iterable, convertible to a vector.
class Devices {
 public:
  Devices() = default;
  explicit Devices(std::vector<Device> d) : devices_(std::move(d)) {}
  auto begin() const { return devices_.begin(); }
  auto end() const { return devices_.end(); }
  std::size_t size() const noexcept { return devices_.size(); }
  bool empty() const noexcept { return devices_.empty(); }
  std::vector<Device> into_vec() && { return std::move(devices_); }
  std::vector<Device> into_vec() const& { return devices_; }

 private:
  std::vector<Device> devices_;
};

}  // namespace burn

template <>
struct std::hash<burn::Device> {
  std::size_t operator()(const burn::Device& d) const noexcept {
    return std::hash<int>{}(static_cast<int>(d.type().kind())) * 31u + d.index();
  }
};
