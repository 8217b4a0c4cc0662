// burn-info: prints the enumerated devices, physical devices and settings.
#include <burn/burn.hpp>

#include <iostream>

int main() {
  std::cout << "burn-cpp " << BURN_VERSION << "\n\nDevices:\n";
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
