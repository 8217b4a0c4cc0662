// burn-info: prints the backends of this build, the enumerated devices,
// physical devices and settings.
#include <burn/backend/registry.hpp>
#include <burn/burn.hpp>

#include <iostream>
#include <string>

int main() {
  std::cout << "burn-cpp " << BURN_VERSION << "\n\nBackends, in default order:\n";
  for (const auto& b : burn::backend::registered_backends()) {
    std::cout << "  " << b.type.name() << ": " << b.device_count() << " device(s)";
    if (b.rank() < 0) std::cout << ", never the default";
    if (b.records_only) std::cout << ", records operations instead of computing them";
    if (b.alias_of) std::cout << ", same backend as " << burn::DeviceType(*b.alias_of).name();
    if (b.why_no_device) {
      if (const std::string why = b.why_no_device(); !why.empty()) std::cout << " (" << why << ")";
    }
    std::cout << "\n";
  }
  std::cout << "\nDevices:\n";
  for (const burn::Device& d : burn::Device::enumerate(burn::DeviceFilter{})) {
    const auto s = d.settings();
    std::cout << "  " << d << "  float " << s.float_dtype << ", int " << s.int_dtype << ", bool\n";
  }
  std::cout << "\nPhysical devices:\n";
  for (const auto& p : burn::Device::enumerate_physical()) {
    std::cout << "  " << p.name << " at "
              << (p.physical.pci_address ? p.physical.pci_address->to_string() : p.physical.label) << ":";
    for (const auto& d : p.devices) std::cout << " " << d;
    std::cout << "\n";
  }
  try {
    std::cout << "\nDefault device: " << burn::Device() << "\n";
  } catch (const burn::Error& e) {
    std::cout << "\nDefault device: none (" << e.what() << ")\n";
  }
  return 0;
}
