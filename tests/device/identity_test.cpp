// Device values: constructors, default selection, equality, hashing,
// printing and parsing, and the small selector types (DeviceIndex,
// DeviceKind, DeviceType).
#include <gtest/gtest.h>

#include <burn_test.hpp>

#include <sstream>
#include <string>
#include <unordered_set>

#include "device_support.hpp"

namespace {

using burn::Device;
using burn::DeviceError;
using burn::DeviceType;
using burn::DispatchDevice;
using burn::device_tests::device_error_of;
using burn::device_tests::ScopedEnv;
using burn::testing::expect_error;

void expect_mentions(const std::optional<DeviceError>& e, const std::string& text) {
  if (!e) return;  // already reported
  EXPECT_NE(std::string(e->what()).find(text), std::string::npos) << e->what() << " lacks " << text;
}

#if BURN_HAS_FLEX
TEST(DeviceIdentity, FlexConstructor) {
  const Device d = Device::flex();
  EXPECT_EQ(d.type(), DeviceType::Flex);
  EXPECT_EQ(d.index(), 0u);
  EXPECT_EQ(d.to_string(), "flex:0");
  EXPECT_FALSE(d.is_autodiff());
  EXPECT_EQ(d.as_dispatch(), (DispatchDevice{DeviceType::Flex, 0}));
}
#endif

#if BURN_HAS_NDARRAY
TEST(DeviceIdentity, NdArrayConstructor) {
  const Device d = Device::ndarray();
  EXPECT_EQ(d.type(), DeviceType::NdArray);
  EXPECT_EQ(d.index(), 0u);
  EXPECT_EQ(d.to_string(), "ndarray:0");
  EXPECT_FALSE(d.is_autodiff());
}
#endif

#if BURN_HAS_FLEX && BURN_HAS_NDARRAY
TEST(DeviceIdentity, FromDispatchDeviceRoundTrips) {
  const Device d(DispatchDevice{DeviceType::Flex, 0});
  EXPECT_EQ(d, Device::flex());
  EXPECT_EQ(Device(Device::ndarray().as_dispatch()), Device::ndarray());
}

TEST(DeviceIdentity, UnavailableDispatchDeviceThrows) {
  // flex has exactly one device on every machine.
  auto e = device_error_of([] { Device(DispatchDevice{DeviceType::Flex, 3}); });
  expect_mentions(e, "flex:3");
  if (e) {
    EXPECT_EQ(e->kind(), burn::DeviceErrorKind::NotAvailable);
  }
  // A backend that is not in this build names the CMake option to turn on.
  expect_mentions(device_error_of([] { Device(DispatchDevice{DeviceType::Rocm, 0}); }), "BURN_ROCM");
}

TEST(DeviceIdentity, EqualityIgnoresAutodiff) {
  EXPECT_EQ(Device::flex(), Device::flex());
  EXPECT_EQ(Device::ndarray(), Device::ndarray());
  EXPECT_NE(Device::flex(), Device::ndarray());
#if BURN_HAS_AUTODIFF
  EXPECT_EQ(Device::flex(), Device::flex().autodiff());
  EXPECT_EQ(Device::flex().autodiff().gradient_checkpointing(), Device::flex());
  EXPECT_NE(Device::flex().autodiff(), Device::ndarray().autodiff());
  EXPECT_FALSE(Device::flex().autodiff() != Device::flex());
#endif
}

TEST(DeviceIdentity, CopiesAreEqual) {
  const Device a = Device::ndarray();
  Device b = Device::flex();
  b = a;
  EXPECT_EQ(a, b);
  const Device c(b);  // NOLINT: the copy is the point
  EXPECT_EQ(c, a);
}

TEST(DeviceIdentity, Hash) {
  const std::hash<Device> h;
  EXPECT_EQ(h(Device::flex()), h(Device(DispatchDevice{DeviceType::Flex, 0})));
#if BURN_HAS_AUTODIFF
  EXPECT_EQ(h(Device::flex()), h(Device::flex().autodiff()));
#endif
  std::unordered_set<Device> set{Device::flex(), Device::ndarray(), Device::flex()};
#if BURN_HAS_AUTODIFF
  set.insert(Device::ndarray().autodiff());
#endif
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(set.count(Device::flex()), 1u);
}

TEST(DeviceIdentity, PrintsAsNameColonIndex) {
  std::ostringstream os;
  os << Device::flex() << " " << Device::ndarray();
  EXPECT_EQ(os.str(), "flex:0 ndarray:0");
#if BURN_HAS_AUTODIFF
  EXPECT_EQ(Device::flex().autodiff().to_string(), "flex:0");
#endif
}

TEST(DeviceParse, Accepts) {
  EXPECT_EQ(Device::parse("flex"), Device::flex());
  EXPECT_EQ(Device::parse("flex:0"), Device::flex());
  EXPECT_EQ(Device::parse("ndarray"), Device::ndarray());
  EXPECT_EQ(Device::parse("ndarray:0"), Device::ndarray());
  EXPECT_FALSE(Device::parse("flex").is_autodiff());
  EXPECT_EQ(Device::parse(Device::ndarray().to_string()), Device::ndarray());
}

TEST(DeviceParse, Rejects) {
  for (const char* text : {"flex:x", "flex:", "flex:-1", "nosuch", "nosuch:0", "flex:3", "cuda:1", ""}) {
    SCOPED_TRACE(text);
    auto e = device_error_of([&] { (void)Device::parse(text); });
    EXPECT_EQ(std::string(e ? e->what() : "").rfind("[", 0), 0u);
  }
  expect_mentions(device_error_of([] { (void)Device::parse("flex:x"); }), "flex:x");
  expect_mentions(device_error_of([] { (void)Device::parse("nosuch"); }), "nosuch");
  expect_mentions(device_error_of([] { (void)Device::parse("flex:3"); }), "flex:3");
}

TEST(DefaultDevice, FirstEnabledBackendWithADevice) {
  const ScopedEnv env("BURN_DEVICE", std::nullopt);
  // CPU (fusion) comes before LibTorch, LibTorch before Flex, and Flex before
  // NdArray, in the default order.
#if BURN_HAS_CPU
  EXPECT_EQ(Device(), Device::cpu());
#elif BURN_HAS_LIBTORCH
  EXPECT_EQ(Device(), Device::libtorch());
#else
  EXPECT_EQ(Device(), Device::flex());
#endif
  EXPECT_FALSE(Device().is_autodiff());
}

TEST(DefaultDevice, BurnDeviceOverrides) {
  {
    const ScopedEnv env("BURN_DEVICE", "ndarray");
    EXPECT_EQ(Device(), Device::ndarray());
  }
  {
    const ScopedEnv env("BURN_DEVICE", "flex:0");
    EXPECT_EQ(Device(), Device::flex());
  }
  {
    const ScopedEnv env("BURN_DEVICE", "ndarray:0");
    EXPECT_EQ(Device(), Device::ndarray());
  }
}

TEST(DefaultDevice, UnavailableBurnDeviceFailsLoudly) {
  for (const char* value : {"nosuch", "flex:3", "cuda", "flex:x"}) {
    SCOPED_TRACE(value);
    const ScopedEnv env("BURN_DEVICE", value);
    expect_mentions(device_error_of([] { Device d; }), value);
  }
}
#endif

TEST(DeviceIndex, Values) {
  using burn::DeviceIndex;
  EXPECT_TRUE(DeviceIndex::Default.is_default());
  EXPECT_EQ(DeviceIndex::Default.value(), 0u);
  const DeviceIndex one = 1;  // plain integers convert, as in Burn
  EXPECT_FALSE(one.is_default());
  EXPECT_EQ(one.value(), 1u);
  EXPECT_FALSE(DeviceIndex(0).is_default());
  EXPECT_NE(DeviceIndex(0), DeviceIndex::Default);
  EXPECT_EQ(DeviceIndex(2), DeviceIndex(2));
  expect_error([] { DeviceIndex bad(-1); }, "[DeviceIndex]");
}

TEST(DeviceKind, Values) {
  using burn::DeviceKind;
  using T = DeviceKind::Type;
  EXPECT_EQ(DeviceKind{}.type(), T::Default);
  EXPECT_EQ(DeviceKind::default_device(), DeviceKind{});
  EXPECT_EQ(DeviceKind::discrete_gpu(3).type(), T::DiscreteGpu);
  EXPECT_EQ(DeviceKind::discrete_gpu(3).index(), 3u);
  EXPECT_EQ(DeviceKind::integrated_gpu(1).type(), T::IntegratedGpu);
  EXPECT_EQ(DeviceKind::integrated_gpu(1).index(), 1u);
  EXPECT_EQ(DeviceKind::virtual_gpu(2).type(), T::VirtualGpu);
  EXPECT_EQ(DeviceKind::cpu().type(), T::Cpu);
  EXPECT_EQ(DeviceKind::best_available().type(), T::BestAvailable);
  EXPECT_NE(DeviceKind::discrete_gpu(0), DeviceKind::discrete_gpu(1));
  EXPECT_NE(DeviceKind::discrete_gpu(0), DeviceKind::integrated_gpu(0));
}

TEST(DeviceType, Names) {
  EXPECT_EQ(DeviceType::Cuda.name(), "cuda");
  EXPECT_EQ(DeviceType::Rocm.name(), "rocm");
  EXPECT_EQ(DeviceType::Metal.name(), "metal");
  EXPECT_EQ(DeviceType::Vulkan.name(), "vulkan");
  EXPECT_EQ(DeviceType::WebGpu.name(), "webgpu");
  EXPECT_EQ(DeviceType::Wgpu.name(), "wgpu");
  EXPECT_EQ(DeviceType::Cpu.name(), "cpu");
  EXPECT_EQ(DeviceType::LibTorch.name(), "libtorch");
  EXPECT_EQ(DeviceType::Flex.name(), "flex");
  EXPECT_EQ(DeviceType::NdArray.name(), "ndarray");
  EXPECT_EQ(DeviceType::Capture.name(), "capture");
  const auto remote = DeviceType::remote(burn::RemoteHost{"localhost:3000"});
  EXPECT_EQ(remote.name(), "remote");
  EXPECT_EQ(remote.kind(), DeviceType::Kind::Remote);
  ASSERT_TRUE(remote.host().has_value());
  EXPECT_EQ(remote.host()->address, "localhost:3000");
  EXPECT_FALSE(DeviceType::Flex.host().has_value());
  EXPECT_NE(remote, DeviceType::remote(burn::RemoteHost{"other:1"}));
  EXPECT_EQ(DeviceType::Flex, DeviceType(DeviceType::Kind::Flex));
  EXPECT_NE(DeviceType::Flex, DeviceType::NdArray);
}

TEST(PciAddress, ToString) {
  burn::PciAddress a;
  a.domain = 0;
  a.bus = 0x3b;
  a.device = 0;
  a.function = 1;
  EXPECT_EQ(a.to_string(), "0000:3b:00.1");
}

}  // namespace
