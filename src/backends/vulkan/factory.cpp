// Registration: the vulkan and wgpu backend families (wgpu picks the graphics
// API itself, and on Linux that is Vulkan, so both serve the same adapters),
// Device::vulkan / Device::wgpu, and a testing hook.
#include <burn/backend/registry.hpp>
#include <burn/device.hpp>

#include "backends/vulkan/backend.hpp"
#include "backends/vulkan/instance.hpp"
#include "device/runtime.hpp"

namespace burn {
namespace {

std::size_t adapter_count() { return vulkan::Instance::get()->adapters().size(); }

/// A Vulkan GPU comes before the CPU backends; a CPU-only Vulkan driver
/// (lavapipe) comes after them, so Device() stays on the host backends there.
int rank_by_adapters(int gpu_rank) {
  for (const auto& a : vulkan::Instance::get()->adapters())
    if (a.type != VK_PHYSICAL_DEVICE_TYPE_CPU) return gpu_rank;
  return backend::default_rank::kAfterHostBackends;
}

}  // namespace

namespace backend {

#if BURN_HAS_VULKAN
BackendFactory vulkan_factory() {
  return {
      DeviceType::Vulkan, [] { return rank_by_adapters(default_rank::kVulkan); }, adapter_count,
      [](std::size_t i) -> std::unique_ptr<Backend> { return std::make_unique<vulkan::VulkanBackend>("vulkan", i); }};
}
#endif

#if BURN_HAS_WGPU
BackendFactory wgpu_factory() {
  // wgpu is Vulkan on Linux: when both are built, the tests run on vulkan only.
  return {DeviceType::Wgpu, [] { return rank_by_adapters(default_rank::kWgpu); }, adapter_count,
          [](std::size_t i) -> std::unique_ptr<Backend> { return std::make_unique<vulkan::VulkanBackend>("wgpu", i); },
          BURN_HAS_VULKAN ? std::optional(DeviceType::Kind::Vulkan) : std::nullopt};
}
#endif

}  // namespace backend

#if BURN_HAS_VULKAN
Device Device::vulkan(DeviceKind kind) {
  return Device(DispatchDevice{DeviceType::Vulkan, burn::vulkan::select_adapter(kind, "vulkan")});
}
#endif
#if BURN_HAS_WGPU
Device Device::wgpu(DeviceKind kind) {
  return Device(DispatchDevice{DeviceType::Wgpu, burn::vulkan::select_adapter(kind, "wgpu")});
}
#endif

namespace vulkan::testing {
/// Makes the next queue submission of `device` fail as a lost device would
/// (tests of ExecutionError at sync). Throws for a non-Vulkan device.
void fail_next_submit(const Device& device) {
  auto* b = dynamic_cast<VulkanBackend*>(&device.runtime().backend());
  if (!b) throw Error("vulkan::testing::fail_next_submit", device.to_string() + " is not a vulkan or wgpu device");
  b->fail_next_submit();
}
}  // namespace vulkan::testing

}  // namespace burn
