// Registration: the vulkan and wgpu backend families (wgpu picks the graphics
// API itself, and on Linux that is Vulkan, so both serve the same adapters),
// Device::vulkan / Device::wgpu, and a testing hook.
#include <burn/device.hpp>

#include "backends/vulkan/backend.hpp"
#include "backends/vulkan/instance.hpp"
#include "device/runtime.hpp"

namespace burn::backend {

BackendFactory vulkan_factory() {
  return {DeviceType::Vulkan, [] { return vulkan::Instance::get()->adapters().size(); },
          [](std::size_t i) -> std::unique_ptr<Backend> { return std::make_unique<vulkan::VulkanBackend>("vulkan", i); }};
}

BackendFactory wgpu_factory() {
  return {DeviceType::Wgpu, [] { return vulkan::Instance::get()->adapters().size(); },
          [](std::size_t i) -> std::unique_ptr<Backend> { return std::make_unique<vulkan::VulkanBackend>("wgpu", i); }};
}

bool vulkan_has_gpu_adapter() {
  for (const auto& a : vulkan::Instance::get()->adapters())
    if (a.type != VK_PHYSICAL_DEVICE_TYPE_CPU) return true;
  return false;
}

}  // namespace burn::backend

namespace burn {

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
