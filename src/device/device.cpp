#include <burn/device.hpp>

#include <burn/backend/registry.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include <burn/remote.hpp>
#include <burn/tensor_data.hpp>

#include "device/thread_limit.hpp"

#include "device/runtime.hpp"

namespace burn {

// ---- small value types ---------------------------------------------------------------------------------
const DeviceIndex DeviceIndex::Default{};
DeviceIndex::DeviceIndex(int index) {
  if (index < 0) throw Error("DeviceIndex", fmt::format("device index {} is negative", index));
  value_ = static_cast<std::size_t>(index);
}

const DeviceType DeviceType::Cuda{Kind::Cuda}, DeviceType::Rocm{Kind::Rocm}, DeviceType::Metal{Kind::Metal},
    DeviceType::Vulkan{Kind::Vulkan}, DeviceType::WebGpu{Kind::WebGpu}, DeviceType::Wgpu{Kind::Wgpu},
    DeviceType::Cpu{Kind::Cpu}, DeviceType::LibTorch{Kind::LibTorch}, DeviceType::Flex{Kind::Flex},
    DeviceType::NdArray{Kind::NdArray}, DeviceType::Capture{Kind::Capture};

std::string_view DeviceType::name() const noexcept {
  constexpr std::string_view names[] = {"cuda", "rocm",     "metal", "vulkan", "webgpu",  "wgpu",
                                        "cpu",  "libtorch", "flex",  "remote", "ndarray", "capture"};
  return names[static_cast<int>(kind_)];
}

std::string PciAddress::to_string() const {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

std::future<std::optional<ProfileTicks>> ProfileDuration::resolve() const {
  if (!f_.valid())
    throw Error("ProfileDuration::resolve", "this duration is empty: it did not come from Device::profile");
  auto shared = f_;
  return std::async(std::launch::deferred, [shared] { return shared.get(); });
}

// ---- construction --------------------------------------------------------------------------------------------
namespace {

std::optional<DeviceType> type_from_name(std::string_view name) {
  using K = DeviceType::Kind;
  for (int k = 0; k <= static_cast<int>(K::Capture); ++k) {
    DeviceType t{static_cast<K>(k)};
    if (t.name() == name) return t;
  }
  return std::nullopt;
}

Device default_device() {
  if (const char* env = std::getenv("BURN_DEVICE"); env && *env) {
    try {
      return Device::parse(env);
    } catch (const Error& e) {
      throw DeviceError(DeviceErrorKind::NotAvailable, "Device()",
                        fmt::format("BURN_DEVICE={} cannot be used: {}", env, e.what()));
    }
  }
  for (const auto& factory : backend::registered_backends())
    if (factory.rank() >= 0 && factory.device_count() > 0) return Device(DispatchDevice{factory.type, 0});
  throw ConfigurationError("Device()",
                           "no execution backend is available in this build: reconfigure with one of "
                           "-DBURN_FLEX=ON, -DBURN_NDARRAY=ON or -DBURN_LIBTORCH=ON (and rebuild)");
}

}  // namespace

Device::Device() : Device(default_device()) {}

Device::Device(DispatchDevice d) : dispatch_(std::move(d)), runtime_(detail::runtime_for(dispatch_)) {}

// The backend constructors (Device::flex(), Device::vulkan(kind), ...) live in
// their backends' folders, next to their registration.

Device Device::parse(std::string_view text) {
#if BURN_HAS_REMOTE
  // "remote:HOST:PORT" or "remote:HOST:PORT/flex:0"
  if (constexpr std::string_view prefix = "remote:"; text.substr(0, prefix.size()) == prefix) {
    const std::string_view rest = text.substr(prefix.size());
    const auto slash = rest.find('/');
    auto options = Device::remote_options(RemoteHost{std::string(rest.substr(0, slash))});
    if (slash != std::string_view::npos) options.device(std::string(rest.substr(slash + 1)));
    return options.init();
  }
  if (text == "remote")
    throw DeviceError(DeviceErrorKind::NotAvailable, "Device::parse",
                      "'remote' names no server: write remote:HOST:PORT or remote:HOST:PORT/flex:0");
#endif
  std::string_view name = text;
  std::size_t index = 0;
  if (auto colon = text.find(':'); colon != std::string_view::npos) {
    name = text.substr(0, colon);
    const std::string digits(text.substr(colon + 1));
    char* end = nullptr;
    const unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || !std::isdigit(static_cast<unsigned char>(digits[0])))
      throw DeviceError(DeviceErrorKind::NotAvailable, "Device::parse",
                        fmt::format("'{}' is not a device: the index after ':' must be a number", text));
    index = static_cast<std::size_t>(v);
  }
  const auto type = type_from_name(name);
  if (!type)
    throw DeviceError(DeviceErrorKind::NotAvailable, "Device::parse",
                      fmt::format("unknown backend '{}' in '{}'; known: flex, ndarray, cpu, cuda, rocm, vulkan, "
                                  "wgpu, metal, webgpu, libtorch, remote, capture",
                                  name, text));
  try {
    return Device(DispatchDevice{*type, index});
  } catch (const DeviceError& e) {
    throw DeviceError(e.kind(), "Device::parse", fmt::format("'{}': {}", text, e.what()));
  }
}

// ---- autodiff context ---------------------------------------------------------------------------------------
#if BURN_HAS_AUTODIFF
Device Device::autodiff() const {
  Device d = *this;
  d.autodiff_ = true;
  return d;
}
Device Device::gradient_checkpointing() const {
  if (!autodiff_)
    throw Error("Device::gradient_checkpointing",
                fmt::format("autodiff is not enabled on {}; call .autodiff() first", to_string()));
  Device d = *this;
  d.checkpointing_ = GradientCheckpointingStrategy::Balanced;
  return d;
}
#endif

Device Device::without_autodiff() const {
  Device d = *this;
  d.autodiff_ = false;
  d.checkpointing_.reset();
  return d;
}

detail::DeviceRuntime& Device::runtime() const { return *runtime_; }

// ---- execution ---------------------------------------------------------------------------------------------------
void Device::seed(std::uint64_t seed) const { runtime_->backend().seed(seed); }

void Device::sync() const {
  auto* stream = runtime_->backend().stream();
  if (!stream) return;  // a backend without a stream has run every op already
  try {
    stream->sync();
  } catch (const ExecutionError&) {
    throw;
  } catch (const std::exception& e) {
    throw ExecutionError("Device::sync", fmt::format("{}: {}", to_string(), e.what()));
  }
}

void Device::flush() const {
  auto* stream = runtime_->backend().stream();
  if (!stream) return;
  try {
    stream->flush();
  } catch (const ExecutionError&) {
    throw;
  } catch (const std::exception& e) {
    throw ExecutionError("Device::flush", fmt::format("{}: {}", to_string(), e.what()));
  }
}

bool Device::supports_dtype(DType dtype) const { return runtime_->backend().supports_dtype(dtype); }
bool Device::supports_op(const ir::Op& op) const { return runtime_->backend().supports_op(op); }

Device::ProfileWindow Device::profile_begin(const ProfileOptions&) const {
  // A backend with its own clock opens the window on its stream.
  std::shared_ptr<backend::DeviceClockWindow> clock;
  try {
    if (auto* stream = runtime_->backend().stream()) clock = stream->open_profile_window();
  } catch (const ExecutionError&) {
    throw;
  } catch (const std::exception& e) {
    throw ExecutionError("Device::profile", fmt::format("{}: {}", to_string(), e.what()));
  }
  if (clock) return {std::chrono::steady_clock::now(), runtime_->op_count(), std::move(clock)};
  sync();  // work owed from before falls in the window, as on a device clock
  return {std::chrono::steady_clock::now(), runtime_->op_count(), nullptr};
}

ProfileDuration Device::profile_end(const ProfileWindow& w, const ProfileOptions& o) const {
  if (o.flush_queue) flush();
  // A window nothing ran in reads as no time.
  const bool ran = runtime_->op_count() != w.ops_before;
  if (w.clock && ran) {
    try {
      return ProfileDuration(w.clock->close());
    } catch (const ExecutionError&) {
      throw;
    } catch (const std::exception& e) {
      throw ExecutionError("Device::profile", fmt::format("{}: {}", to_string(), e.what()));
    }
  }
  if (!w.clock) sync();
  const auto elapsed = std::chrono::steady_clock::now() - w.start;
  std::promise<std::optional<ProfileTicks>> promise;
  promise.set_value(
      ProfileTicks(ran ? std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed) : std::chrono::nanoseconds(0)));
  return ProfileDuration(promise.get_future().share());
}

// ---- threads ----------------------------------------------------------------------------------------------
std::size_t Device::num_threads() const {
  const auto* threads = std::as_const(runtime_->backend()).threads();
  return threads ? threads->num_threads() : 1;
}
void Device::set_num_threads(std::size_t n) const {
  if (const auto problem = detail::thread_count_problem(n, fmt::format("set_num_threads({})", n)); !problem.empty())
    throw Error("Device::set_num_threads", problem);
  auto* threads = runtime_->backend().threads();
  if (!threads)
    throw Error("Device::set_num_threads", fmt::format("the {} backend computes on a fixed number of threads ({})",
                                                       runtime_->backend().name(), num_threads()));
  threads->set_num_threads(n);
}

// ---- float32 precision ------------------------------------------------------------------------------------------
Float32Precision Device::float32_precision() const {
  const auto* precision = std::as_const(runtime_->backend()).precision();
  return precision ? precision->float32_precision() : Float32Precision::Highest;
}
void Device::set_float32_precision(Float32Precision precision) const {
  if (auto* control = runtime_->backend().precision()) control->set_float32_precision(precision);
}

// ---- memory ----------------------------------------------------------------------------------------------------
void Device::memory_cleanup() const {
  if (auto* memory = runtime_->backend().memory()) memory->cleanup();
}
std::optional<std::vector<SlicedPoolReport>> Device::memory_pool_report() const {
  const auto* memory = std::as_const(runtime_->backend()).memory();
  return memory ? memory->pool_report() : std::nullopt;
}
std::optional<MemoryPoolUsage> Device::memory_pool_usage() const {
  const auto* memory = std::as_const(runtime_->backend()).memory();
  return memory ? memory->pool_usage() : std::nullopt;
}
Device::PersistentScope::PersistentScope(const Device& d) : device_(d) { device_.runtime_->enter_persistent(); }
Device::PersistentScope::~PersistentScope() { device_.runtime_->leave_persistent(); }
void Device::stage(TensorData& data) const {
  if (auto* memory = runtime_->backend().memory()) memory->stage(data);
}

// ---- settings ----------------------------------------------------------------------------------------------------
DeviceSettings Device::settings() const { return runtime_->settings(); }
void Device::configure(const DeviceConfig& config) { runtime_->configure(config); }

// ---- enumeration ------------------------------------------------------------------------------------------------
Devices Device::enumerate(const DeviceFilter& filter) {
  std::vector<Device> out;
  for (const auto& factory : backend::registered_backends()) {
    // A recording family (capture) computes nothing: listed only when named.
    bool wanted = filter.types().empty() && !factory.records_only;
    std::vector<DeviceType> hosts;  // the hosts named for a family that lives elsewhere (remote)
    for (const auto& t : filter.types()) {
      if (t.kind() != factory.type.kind()) continue;
      if (t.host() && factory.hosted_device_count) {
        if (std::find(hosts.begin(), hosts.end(), t) == hosts.end()) hosts.push_back(t);
      } else {
        wanted = true;
      }
    }
    for (const auto& host : hosts) {
      const std::size_t n = factory.hosted_device_count(host);
      for (std::size_t i = 0; i < n; ++i) out.emplace_back(DispatchDevice{host, i});
    }
    if (!wanted) continue;
    const std::size_t n = factory.device_count();
    for (std::size_t i = 0; i < n; ++i) out.emplace_back(DispatchDevice{factory.type, i});
  }
  return Devices(std::move(out));
}

std::vector<PhysicalDevice> Device::enumerate_physical() {
  std::vector<PhysicalDevice> out;
  for (const Device& d : enumerate(DeviceFilter{})) {
    const PhysicalIdentity id = d.identity();
    // A card is recognised by PCI address, else LUID; one reporting neither is
    // its own entry unless it carries the same label (the host CPU).
    auto same = [&](const PhysicalDevice& p) {
      if (id.pci_address || p.physical.pci_address) return id.pci_address == p.physical.pci_address;
      if (id.luid || p.physical.luid) return id.luid == p.physical.luid;
      return !id.label.empty() && id.label == p.physical.label;
    };
    auto it = std::find_if(out.begin(), out.end(), same);
    if (it == out.end()) out.push_back(PhysicalDevice{d.runtime().backend().physical_name(), id, {d}});
    else it->devices.push_back(d);
  }
  return out;
}

PhysicalIdentity Device::identity() const { return runtime_->backend().identity(); }

std::string Device::to_string() const {
  if (dispatch_.type.host())  // a device on another machine names its host
    if (std::string name = runtime_->backend().display_name(); !name.empty()) return name;
  return fmt::format("{}:{}", dispatch_.type.name(), dispatch_.index);
}
std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.to_string(); }

}  // namespace burn
