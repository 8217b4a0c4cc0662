// The backend registry. Which backends exist is decided by the build: each
// backend's cmake/backends/<name>.cmake registers its factory function, and
// CMake writes the list into registered_backends.inc. This file only orders
// them and creates devices on first use.
#include <burn/backend/registry.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "device/runtime.hpp"

namespace burn::backend {

// Declares each registered factory function and lists them in
// kRegisteredFactories (generated; see cmake/backends/README.md).
#include "registered_backends.inc"

std::span<const BackendFactory> registered_backends() {
  static const std::vector<BackendFactory> factories = [] {
    // Each backend's rank is read once: it may look at the machine (a Vulkan
    // GPU ranks before the CPU backends, a CPU-only driver after them).
    // Never-default backends go last; they are still enumerated and parsed.
    std::vector<std::pair<int, BackendFactory>> ranked;
    for (auto* make : kRegisteredFactories) {
      BackendFactory f = make();
      const int rank = f.rank();
      ranked.emplace_back(rank < 0 ? default_rank::kAfterHostBackends + 1 : rank, f);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return std::pair(a.first, a.second.type.name()) < std::pair(b.first, b.second.type.name());
    });
    std::vector<BackendFactory> sorted;
    sorted.reserve(ranked.size());
    for (auto& [rank, f] : ranked) sorted.push_back(std::move(f));
    return sorted;
  }();
  return factories;
}

const BackendFactory* find_backend(DeviceType::Kind kind) {
  for (const auto& f : registered_backends())
    if (f.type.kind() == kind) return &f;
  return nullptr;
}

}  // namespace burn::backend

namespace burn::detail {

namespace {

// Runtimes by (kind, index, host): a remote device's type names its host.
using RuntimeKey = std::tuple<int, std::size_t, std::string>;

RuntimeKey key_of(const DispatchDevice& id) {
  return {static_cast<int>(id.type.kind()), id.index, id.type.host() ? id.type.host()->address : std::string()};
}

std::mutex& runtimes_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<RuntimeKey, std::shared_ptr<DeviceRuntime>>& runtimes() {
  static std::map<RuntimeKey, std::shared_ptr<DeviceRuntime>> map;
  return map;
}

std::string option_name(const DeviceType& type) {
  std::string n(type.name());
  for (auto& c : n) c = static_cast<char>(std::toupper(c));
  return n;
}

}  // namespace

std::shared_ptr<DeviceRuntime> runtime_for(const DispatchDevice& id) {
  const RuntimeKey key = key_of(id);
  {
    std::lock_guard lock(runtimes_mutex());
    if (auto it = runtimes().find(key); it != runtimes().end() && !it->second->backend().connection_lost())
      return it->second;
  }
  const auto* factory = backend::find_backend(id.type.kind());
  if (!factory)
    throw DeviceError(DeviceErrorKind::NotAvailable, "Device",
                      fmt::format("the {} backend is not part of this build; reconfigure with -DBURN_{}=ON",
                                  id.type.name(), option_name(id.type)));
  std::unique_ptr<backend::Backend> created;
  if (id.type.host() && factory->create_hosted) {
    // Connecting may take a while: not under the lock.
    created = factory->create_hosted(id.type, id.index);
  } else {
    const std::size_t count = factory->device_count();
    if (id.index >= count) {
      // A backend that knows why it has no device (a missing driver) says so.
      const std::string why = count == 0 && factory->why_no_device ? factory->why_no_device() : std::string();
      throw DeviceError(DeviceErrorKind::NotAvailable, "Device",
                        fmt::format("{}:{} does not exist: this machine has {} {} device(s){}", id.type.name(),
                                    id.index, count, id.type.name(), why.empty() ? "" : " (" + why + ")"));
    }
    std::lock_guard lock(runtimes_mutex());
    if (auto it = runtimes().find(key); it != runtimes().end()) return it->second;
    auto runtime = std::make_shared<DeviceRuntime>(id, factory->create(id.index));
    runtimes().emplace(key, runtime);
    return runtime;
  }
  return install_runtime(id, std::move(created));
}

std::shared_ptr<DeviceRuntime> install_runtime(const DispatchDevice& id, std::unique_ptr<backend::Backend> backend) {
  std::lock_guard lock(runtimes_mutex());
  const RuntimeKey key = key_of(id);
  auto it = runtimes().find(key);
  if (it != runtimes().end() && !it->second->backend().connection_lost()) return it->second;
  auto runtime = std::make_shared<DeviceRuntime>(id, std::move(backend));
  if (it != runtimes().end()) it->second = runtime;  // a lost connection's, replaced
  else runtimes().emplace(key, runtime);
  return runtime;
}

}  // namespace burn::detail
