// The one place that lists the compiled-in backends. Adding a backend = its
// folder + one line here.
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "device/runtime.hpp"

namespace burn::backend {
#if BURN_HAS_CPU
BackendFactory cpu_factory();
#endif
#if BURN_HAS_LIBTORCH
BackendFactory libtorch_factory();
#endif
#if BURN_HAS_FLEX
BackendFactory flex_factory();
#endif
#if BURN_HAS_NDARRAY
BackendFactory ndarray_factory();
#endif
// ---- vulkan / wgpu (issue 7) ----
#if BURN_HAS_VULKAN
BackendFactory vulkan_factory();
#endif
#if BURN_HAS_WGPU
BackendFactory wgpu_factory();
#endif
#if BURN_HAS_VULKAN || BURN_HAS_WGPU
bool vulkan_has_gpu_adapter();
#endif
// ---- end vulkan / wgpu ----
}  // namespace burn::backend

namespace burn::detail {

const std::vector<backend::BackendFactory>& backend_factories() {
  // Device() default order: CUDA, Metal, ROCm, Vulkan, WebGPU, wgpu, CPU,
  // LibTorch, Flex, Remote, NdArray.
  static const std::vector<backend::BackendFactory> factories = [] {
    std::vector<backend::BackendFactory> f;
    // ---- vulkan / wgpu (issue 7) ----
    // A Vulkan GPU comes before the CPU backends; a CPU-only Vulkan driver
    // (lavapipe) comes after them, so Device() stays on flex/ndarray there.
#if BURN_HAS_VULKAN || BURN_HAS_WGPU
    std::vector<backend::BackendFactory> vulkan_family;
#if BURN_HAS_VULKAN
    vulkan_family.push_back(backend::vulkan_factory());
#endif
#if BURN_HAS_WGPU
    vulkan_family.push_back(backend::wgpu_factory());
#endif
    const bool vulkan_first = backend::vulkan_has_gpu_adapter();
    if (vulkan_first) f.insert(f.end(), vulkan_family.begin(), vulkan_family.end());
#endif
    // ---- end vulkan / wgpu ----
#if BURN_HAS_CPU
    f.push_back(backend::cpu_factory());
#endif
#if BURN_HAS_LIBTORCH
    f.push_back(backend::libtorch_factory());
#endif
#if BURN_HAS_FLEX
    f.push_back(backend::flex_factory());
#endif
#if BURN_HAS_NDARRAY
    f.push_back(backend::ndarray_factory());
#endif
#if BURN_HAS_VULKAN || BURN_HAS_WGPU  // vulkan / wgpu (issue 7), see above
    if (!vulkan_first) f.insert(f.end(), vulkan_family.begin(), vulkan_family.end());
#endif
    return f;
  }();
  return factories;
}

const backend::BackendFactory* find_factory(const DeviceType& type) {
  for (const auto& f : backend_factories())
    if (f.type.kind() == type.kind()) return &f;
  return nullptr;
}

std::shared_ptr<DeviceRuntime> runtime_for(const DispatchDevice& id) {
  static std::mutex mutex;
  static std::map<std::pair<int, std::size_t>, std::shared_ptr<DeviceRuntime>> runtimes;
  const auto key = std::make_pair(static_cast<int>(id.type.kind()), id.index);
  std::lock_guard lock(mutex);
  if (auto it = runtimes.find(key); it != runtimes.end()) return it->second;
  const auto* factory = find_factory(id.type);
  if (!factory)
    throw DeviceError(DeviceErrorKind::NotAvailable, "Device",
                      fmt::format("the {} backend is not part of this build; reconfigure with -DBURN_{}=ON",
                                  id.type.name(), [&] {
                                    std::string n(id.type.name());
                                    for (auto& c : n) c = static_cast<char>(std::toupper(c));
                                    return n;
                                  }()));
  const std::size_t count = factory->device_count();
  if (id.index >= count)
    throw DeviceError(DeviceErrorKind::NotAvailable, "Device",
                      fmt::format("{}:{} does not exist: this machine has {} {} device(s)", id.type.name(), id.index,
                                  count, id.type.name()));
  auto runtime = std::make_shared<DeviceRuntime>(id, factory->create(id.index));
  runtimes.emplace(key, runtime);
  return runtime;
}

}  // namespace burn::detail
