// The process-wide Vulkan instance and the adapters (physical devices) it
// offers, with what each can do. vulkan:i and wgpu:i both name adapters()[i].
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <vulkan/vulkan.h>

#include <burn/device.hpp>

namespace burn::vulkan {

/// One usable physical device and the capabilities the backend relies on.
struct AdapterInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  std::uint32_t api_version = 0;
  std::uint32_t queue_family = 0;    ///< a family with compute
  std::uint32_t timestamp_bits = 0;  ///< the family's timestampValidBits (0: no device clock)
  PhysicalIdentity identity;
  // Features the backend enables when present (they decide supports_dtype).
  bool float64 = false;    ///< shaderFloat64: F64
  bool int64 = false;      ///< shaderInt64: I64, U64
  bool storage16 = false;  ///< storageBuffer16BitAccess: F16, BF16, I16, U16
  bool storage8 = false;   ///< storageBuffer8BitAccess: I8, U8, Bool
  bool pci_bus_info = false;
  VkPhysicalDeviceLimits limits{};
};

class Instance {
 public:
  /// The shared instance, created on first use. Never throws: a machine
  /// without Vulkan has an instance with no adapters and a reason.
  static std::shared_ptr<Instance> get();
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const noexcept { return instance_; }
  /// Usable adapters, best first (discrete, integrated, virtual, CPU).
  const std::vector<AdapterInfo>& adapters() const noexcept { return adapters_; }
  /// Why there are no adapters (or which ones were skipped, and why).
  const std::string& notes() const noexcept { return notes_; }

  Instance();

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  std::vector<AdapterInfo> adapters_;
  std::string notes_;
};

/// "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other".
std::string_view adapter_type_name(VkPhysicalDeviceType type) noexcept;

/// The adapter index `kind` selects; `api` ("vulkan" or "wgpu") names the
/// constructor in errors. Throws DeviceError listing the adapters that exist.
std::size_t select_adapter(const DeviceKind& kind, std::string_view api);

}  // namespace burn::vulkan
