// Adapters, DeviceKind selection, enumeration, identity and capabilities of
// the vulkan and wgpu devices (run on Mesa's lavapipe in CI).
#include "vk_test.hpp"

#include <algorithm>
#include <utility>
#include <variant>

namespace {

using burn::Device;
using burn::DeviceKind;
using burn::DeviceType;
using burn::DType;
using burn::vktest::vk;

TEST(VulkanDevice, EnumeratesAdapters) {
  const auto devices = Device::enumerate(DeviceType::Vulkan).into_vec();
  ASSERT_FALSE(devices.empty()) << "lavapipe (mesa-vulkan-drivers) provides at least one adapter";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(devices[i].type(), DeviceType::Vulkan);
    EXPECT_EQ(devices[i].index(), i);
    EXPECT_EQ(devices[i].to_string(), "vulkan:" + std::to_string(i));
  }
#if BURN_HAS_WGPU
  // wgpu picks Vulkan on Linux: the same adapters under its own name.
  const auto wgpu = Device::enumerate(DeviceType::Wgpu).into_vec();
  EXPECT_EQ(wgpu.size(), devices.size());
  const auto both = Device::enumerate(DeviceType::Vulkan | DeviceType::Wgpu);
  EXPECT_EQ(both.size(), 2 * devices.size());
#endif
}

TEST(VulkanDevice, DefaultKindIsTheBestAdapter) {
  EXPECT_EQ(Device::vulkan(), Device::enumerate(DeviceType::Vulkan).into_vec().front());
  EXPECT_EQ(Device::vulkan(DeviceKind::best_available()), Device::vulkan());
  EXPECT_EQ(Device::parse("vulkan:0"), Device::vulkan());
  EXPECT_EQ(Device::parse("vulkan"), Device::vulkan());
  EXPECT_EQ(Device::vulkan().to_string(), "vulkan:0");
}

TEST(VulkanDevice, MissingKindIsAClearError) {
  // Nobody has eight virtual GPUs: the error lists what exists.
  burn::testing::expect_op_error([] { (void)Device::vulkan(DeviceKind::virtual_gpu(7)); }, "Device::vulkan",
                                 "no virtual GPU 7");
  burn::testing::expect_error([] { (void)Device::vulkan(DeviceKind::virtual_gpu(7)); }, "vulkan:0 = ");
  try {
    (void)Device::vulkan(DeviceKind::virtual_gpu(7));
  } catch (const burn::DeviceError& e) {
    EXPECT_EQ(e.kind(), burn::DeviceErrorKind::NotAvailable);
  }
#if BURN_HAS_WGPU
  burn::testing::expect_op_error([] { (void)Device::wgpu(DeviceKind::virtual_gpu(7)); }, "Device::wgpu", "wgpu:0 = ");
#endif
  burn::testing::expect_error([] { (void)Device::parse("vulkan:99"); }, "does not exist");
}

/// The lavapipe adapter, when this machine has one (it is a CPU adapter).
std::optional<Device> cpu_adapter() {
  try {
    return Device::vulkan(DeviceKind::cpu());
  } catch (const burn::DeviceError&) {
    return std::nullopt;
  }
}

TEST(VulkanDevice, CpuAdapterBelongsToTheHostCpu) {
  const auto lavapipe = cpu_adapter();
  if (!lavapipe) GTEST_SKIP() << "no CPU Vulkan adapter on this machine";
  EXPECT_EQ(lavapipe->identity().label, "host-cpu");
  EXPECT_FALSE(lavapipe->identity().pci_address.has_value());
  // One physical entry for the host CPU holds the CPU backends and lavapipe.
  const auto physical = Device::enumerate_physical();
  const auto host = std::find_if(physical.begin(), physical.end(),
                                 [](const burn::PhysicalDevice& p) { return p.physical.label == "host-cpu"; });
  ASSERT_NE(host, physical.end());
  auto holds = [&](const Device& d) {
    return std::find(host->devices.begin(), host->devices.end(), d) != host->devices.end();
  };
  EXPECT_TRUE(holds(*lavapipe));
#if BURN_HAS_FLEX
  EXPECT_TRUE(holds(Device::flex()));
#endif
#if BURN_HAS_WGPU
  EXPECT_TRUE(holds(Device(burn::DispatchDevice{DeviceType::Wgpu, lavapipe->index()})));
#endif
}

TEST(VulkanDevice, CpuAdapterIsNotTheDefaultDevice) {
  // With only a software adapter, Device() stays on the CPU backends, which
  // are faster there; an explicit request still reaches Vulkan.
  bool has_gpu = false;
  for (const auto& d : Device::enumerate(DeviceType::Vulkan)) has_gpu = has_gpu || d.identity().label != "host-cpu";
  if (has_gpu || std::getenv("BURN_DEVICE")) GTEST_SKIP() << "a hardware adapter (or BURN_DEVICE) decides";
  EXPECT_NE(Device().type(), DeviceType::Vulkan);
}

TEST(VulkanDevice, DtypesFollowTheAdapterFeatures) {
  const Device d = vk();
  // f32 and 32-bit ints need no optional feature.
  EXPECT_TRUE(d.supports_dtype(DType::F32));
  EXPECT_TRUE(d.supports_dtype(DType::I32));
  EXPECT_TRUE(d.supports_dtype(DType::U32));
  if (auto lavapipe = cpu_adapter()) {
    // lavapipe offers shaderFloat64, shaderInt64 and 8/16-bit storage.
    for (DType t : {DType::F64, DType::F16, DType::BF16, DType::I64, DType::I16, DType::I8, DType::U64, DType::U16,
                    DType::U8, DType::Bool})
      EXPECT_TRUE(lavapipe->supports_dtype(t)) << t;
  }
  EXPECT_EQ(d.settings().float_dtype, burn::FloatDType::F32);
}

// Every IR op but the optional ones (layer norm, softmax, gelu, batch norm),
// which their frontends run here as composites (tests/nn/norm_layers_test.cpp
// and tests/nn/activation_ops_test.cpp check their values on every device).
TEST(VulkanDevice, EveryRequiredIrOpIsSupported) {
  const Device d = vk();
  const auto ops = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::vector<burn::ir::Op>{burn::ir::Op(std::in_place_index<I>)...};
  }
  (std::make_index_sequence<std::variant_size_v<burn::ir::Op>>());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (std::holds_alternative<burn::ir::LayerNorm>(ops[i]) || std::holds_alternative<burn::ir::Softmax>(ops[i]) ||
        std::holds_alternative<burn::ir::Gelu>(ops[i]) || std::holds_alternative<burn::ir::BatchNorm>(ops[i]))
      continue;
    EXPECT_TRUE(d.supports_op(ops[i])) << "ir::Op alternative " << i << " (" << burn::ir::op_name(ops[i]) << ")";
  }
}

#if BURN_HAS_WGPU
TEST(VulkanDevice, WgpuIsItsOwnDevice) {
  EXPECT_NE(Device::wgpu(), Device::vulkan()) << "separate runtimes, like two backends on one card";
  EXPECT_EQ(Device::wgpu().to_string(), "wgpu:0");
  const auto x = burn::Tensor<1>::from_floats({1, 2}, Device::wgpu());
  EXPECT_EQ((x * 2.0f).to_data().to_vec<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(x.sort(0).to_data().to_vec<float>(), (std::vector<float>{1, 2}));
}
#endif

}  // namespace
