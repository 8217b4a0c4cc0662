#include "backends/vulkan/instance.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "backends/vulkan/vk_check.hpp"

namespace burn::vulkan {
namespace {

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

bool has_extension(VkPhysicalDevice pd, const char* name) {
  std::uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  return std::any_of(exts.begin(), exts.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

/// The adapter's description, or why it cannot be used.
std::optional<AdapterInfo> describe(VkPhysicalDevice pd, std::string& why) {
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(pd, &props);
  AdapterInfo a;
  a.handle = pd;
  a.name = props.deviceName;
  a.type = props.deviceType;
  a.api_version = props.apiVersion;
  a.limits = props.limits;
  // Vulkan 1.2 makes 8-bit storage and the feature structs core.
  if (VK_API_VERSION_MAJOR(props.apiVersion) == 1 && VK_API_VERSION_MINOR(props.apiVersion) < 2) {
    why = fmt::format("{} supports only Vulkan {}.{} (1.2 is needed)", a.name, VK_API_VERSION_MAJOR(props.apiVersion),
                      VK_API_VERSION_MINOR(props.apiVersion));
    return std::nullopt;
  }
  std::uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, families.data());
  // Prefer a compute family with timestamps; any compute family will do.
  std::optional<std::uint32_t> family;
  for (std::uint32_t i = 0; i < nq; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (!family || (families[i].timestampValidBits > 0 && families[*family].timestampValidBits == 0)) family = i;
  }
  if (!family) {
    why = fmt::format("{} has no compute queue", a.name);
    return std::nullopt;
  }
  a.queue_family = *family;
  // timestampValidBits is 0 when the family cannot write timestamps: profile
  // then falls back to the wall clock.
  a.timestamp_bits = families[*family].timestampValidBits;

  auto f12 = make<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  auto f11 = make<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  f11.pNext = &f12;
  auto f2 = make<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  f2.pNext = &f11;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  a.float64 = f2.features.shaderFloat64;
  a.int64 = f2.features.shaderInt64;
  a.storage16 = f11.storageBuffer16BitAccess;
  a.storage8 = f12.storageBuffer8BitAccess;

  // Identity: the PCI address where the driver offers it; a CPU adapter
  // (lavapipe, SwiftShader) computes on the host CPU, so it joins that entry;
  // otherwise the device UUID (or LUID) names the card.
  auto id = make<VkPhysicalDeviceIDProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES);
  auto pci =
      make<VkPhysicalDevicePCIBusInfoPropertiesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT);
  a.pci_bus_info = has_extension(pd, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
  if (a.pci_bus_info) id.pNext = &pci;
  auto p2 = make<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  p2.pNext = &id;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  if (a.pci_bus_info) {
    a.identity.pci_address =
        PciAddress{pci.pciDomain, static_cast<std::uint8_t>(pci.pciBus), static_cast<std::uint8_t>(pci.pciDevice),
                   static_cast<std::uint8_t>(pci.pciFunction)};
  } else if (a.type == VK_PHYSICAL_DEVICE_TYPE_CPU) {
    a.identity.label = "host-cpu";
  } else if (id.deviceLUIDValid) {
    std::uint64_t luid = 0;
    std::memcpy(&luid, id.deviceLUID, sizeof luid);
    a.identity.luid = luid;
  } else {
    std::string hex;
    for (auto byte : id.deviceUUID) hex += fmt::format("{:02x}", byte);
    a.identity.label = "uuid:" + hex;
  }
  return a;
}

}  // namespace

Instance::Instance() {
  auto app = make<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "burn";
  app.pEngineName = "burn";
  app.apiVersion = VK_API_VERSION_1_2;
  auto info = make<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  info.pApplicationInfo = &app;
  if (VkResult r = vkCreateInstance(&info, nullptr, &instance_); r != VK_SUCCESS) {
    instance_ = VK_NULL_HANDLE;
    notes_ = fmt::format(
        "vkCreateInstance failed ({}): no Vulkan driver is installed "
        "(on Debian: apt-get install mesa-vulkan-drivers)",
        result_name(r));
    return;
  }
  std::uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(instance_, &n, devices.data());
  for (VkPhysicalDevice pd : devices) {
    std::string why;
    if (auto a = describe(pd, why)) adapters_.push_back(std::move(*a));
    else notes_ += (notes_.empty() ? "skipped: " : "; ") + why;
  }
  // Best first, so vulkan:0 is the fastest adapter; otherwise driver order.
  std::stable_sort(adapters_.begin(), adapters_.end(),
                   [](const AdapterInfo& a, const AdapterInfo& b) { return type_rank(a.type) < type_rank(b.type); });
  if (adapters_.empty() && notes_.empty()) notes_ = "the Vulkan driver reports no physical device";
}

Instance::~Instance() {
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

std::shared_ptr<Instance> Instance::get() {
  // Never destroyed: destroying the last instance makes the loader unload the
  // driver, whose one-time allocations then look leaked to LeakSanitizer, and
  // nothing is gained by tearing Vulkan down during static destruction, just
  // before the process ends.
  static const auto* instance = new std::shared_ptr<Instance>(std::make_shared<Instance>());
  return *instance;
}

std::string_view adapter_type_name(VkPhysicalDeviceType type) noexcept {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

std::size_t select_adapter(const DeviceKind& kind, std::string_view api) {
  const auto instance = Instance::get();
  const auto& adapters = instance->adapters();
  const std::string op = fmt::format("Device::{}", api);
  if (adapters.empty())
    throw DeviceError(DeviceErrorKind::NotAvailable, op,
                      fmt::format("no Vulkan adapter is available: {}", instance->notes()));
  using T = DeviceKind::Type;
  VkPhysicalDeviceType wanted{};
  std::string_view what;
  switch (kind.type()) {
    case T::Default:
    case T::BestAvailable: return 0;  // adapters are sorted best first
    case T::DiscreteGpu:
      wanted = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
      what = "discrete GPU";
      break;
    case T::IntegratedGpu:
      wanted = VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
      what = "integrated GPU";
      break;
    case T::VirtualGpu:
      wanted = VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
      what = "virtual GPU";
      break;
    case T::Cpu:
      wanted = VK_PHYSICAL_DEVICE_TYPE_CPU;
      what = "CPU adapter";
      break;
  }
  std::size_t seen = 0;
  for (std::size_t i = 0; i < adapters.size(); ++i)
    if (adapters[i].type == wanted && seen++ == kind.index()) return i;
  std::string list;
  for (std::size_t i = 0; i < adapters.size(); ++i)
    list +=
        fmt::format("{}{}:{} = {} ({})", i ? ", " : "", api, i, adapters[i].name, adapter_type_name(adapters[i].type));
  const std::string asked = kind.type() == T::Cpu ? std::string(what) : fmt::format("{} {}", what, kind.index());
  throw DeviceError(DeviceErrorKind::NotAvailable, op,
                    fmt::format("this machine has no {} ({} of them); the adapters are: {}. Choose one of "
                                "those kinds or DeviceKind::best_available()",
                                asked, seen, list));
}

}  // namespace burn::vulkan
