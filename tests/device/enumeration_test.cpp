// Device enumeration, physical devices and identity (docs/api.md, "Enumeration").
#include <gtest/gtest.h>

#include <burn_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using burn::Device;
using burn::DeviceFilter;
using burn::DeviceType;

bool contains(const std::vector<Device>& v, const Device& d) { return std::find(v.begin(), v.end(), d) != v.end(); }

#if BURN_HAS_FLEX && BURN_HAS_NDARRAY

TEST(Enumerate, SingleType) {
  const burn::Devices flex = Device::enumerate(DeviceFilter{}.with(DeviceType::Flex));
  ASSERT_EQ(flex.size(), 1u);
  EXPECT_EQ(*flex.begin(), Device::flex());
  EXPECT_FALSE(flex.begin()->is_autodiff());
  const burn::Devices nd = Device::enumerate(DeviceType::NdArray);  // a DeviceType converts to a filter
  ASSERT_EQ(nd.size(), 1u);
  EXPECT_EQ(*nd.begin(), Device::ndarray());
}

TEST(Enumerate, CombinedWithOr) {
  const std::vector<Device> both = Device::enumerate(DeviceType::Flex | DeviceType::NdArray).into_vec();
  EXPECT_EQ(both.size(), 2u);
  EXPECT_TRUE(contains(both, Device::flex()));
  EXPECT_TRUE(contains(both, Device::ndarray()));
  const auto three = DeviceType::Flex | DeviceType::NdArray | DeviceType::Cuda;
  EXPECT_EQ(three.types().size(), 3u);
  EXPECT_EQ(Device::enumerate(three).size(), 2u + (BURN_HAS_CUDA ? Device::enumerate(DeviceType::Cuda).size() : 0u));
  // Naming a type twice lists its devices once.
  EXPECT_EQ(Device::enumerate(DeviceFilter{}.with(DeviceType::Flex).with(DeviceType::Flex)).size(), 1u);
}

TEST(Enumerate, EmptyFilterListsEveryDevice) {
  const burn::Devices all = Device::enumerate(DeviceFilter{});
  std::vector<Device> seen;
  for (const Device& d : all) seen.push_back(d);  // Devices is iterable
  EXPECT_EQ(seen.size(), all.size());
  EXPECT_FALSE(all.empty());
  EXPECT_TRUE(contains(seen, Device::flex()));
  EXPECT_TRUE(contains(seen, Device::ndarray()));
  const std::vector<Device> v = all.into_vec();  // from an lvalue: a copy
  EXPECT_EQ(v, seen);
  EXPECT_EQ(all.size(), seen.size());
  EXPECT_EQ(Device::enumerate(DeviceFilter{}).into_vec(), seen);
  // Every device listed is usable.
  for (const Device& d : seen) EXPECT_NO_THROW(burn::Tensor<1>::ones({1}, d).to_data()) << d;
}

TEST(Enumerate, BackendsNotInTheBuildListNothing) {
#if !BURN_HAS_CUDA
  EXPECT_TRUE(Device::enumerate(DeviceType::Cuda).empty());
#endif
#if !BURN_HAS_WGPU
  EXPECT_TRUE(Device::enumerate(DeviceFilter{}.with(DeviceType::Wgpu)).into_vec().empty());
#endif
#if !BURN_HAS_REMOTE
  EXPECT_TRUE(Device::enumerate(DeviceType::remote(burn::RemoteHost{"localhost:3000"})).empty());
#endif
}

TEST(Enumerate, DevicesFromAVector) {
  const burn::Devices d(std::vector<Device>{Device::ndarray(), Device::flex()});
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(std::vector<Device>(d.begin(), d.end()), (std::vector<Device>{Device::ndarray(), Device::flex()}));
  EXPECT_TRUE(burn::Devices{}.empty());
}

TEST(EnumeratePhysical, HostCpuIsOneEntryHoldingBothCpuBackends) {
  const std::vector<burn::PhysicalDevice> physical = Device::enumerate_physical();
  ASSERT_FALSE(physical.empty());
  const auto holds_flex = [](const burn::PhysicalDevice& p) { return contains(p.devices, Device::flex()); };
  ASSERT_EQ(std::count_if(physical.begin(), physical.end(), holds_flex), 1) << "flex is on one physical device";
  const burn::PhysicalDevice& cpu = *std::find_if(physical.begin(), physical.end(), holds_flex);
  EXPECT_TRUE(contains(cpu.devices, Device::ndarray())) << "ndarray computes on the same host CPU";
  EXPECT_FALSE(cpu.name.empty());
  EXPECT_FALSE(cpu.physical.pci_address.has_value());
  EXPECT_EQ(cpu.physical, Device::flex().identity());
  // No device is listed twice across entries.
  std::size_t listed = 0;
  for (const auto& p : physical) listed += p.devices.size();
  EXPECT_EQ(listed, Device::enumerate(DeviceFilter{}).size());
}

TEST(Identity, SameForBothCpuBackends) {
  const burn::PhysicalIdentity flex = Device::flex().identity();
  EXPECT_EQ(flex, Device::ndarray().identity());
  EXPECT_FALSE(flex.pci_address.has_value());
  EXPECT_FALSE(flex.luid.has_value());
  EXPECT_FALSE(flex.label.empty()) << "a processor with neither PCI address nor LUID carries a label";
#if BURN_HAS_AUTODIFF
  EXPECT_EQ(Device::flex().autodiff().identity(), flex);
#endif
}

#endif  // BURN_HAS_FLEX && BURN_HAS_NDARRAY

}  // namespace
