// The examples of Burn's own documentation of Device, translated line by line:
// the book's chapter "Backend and Device" and the API reference of
// burn::tensor::Device ("Device reference" below); then those of docs/api.md.
// This build has only the CPU backends: where an example uses wgpu, cuda or
// metal, Device::flex() or Device::ndarray() stands in, as noted at each spot.
// Parts that need modules or autodiff gradients live in those suites.
#include <gtest/gtest.h>

#include <burn_test.hpp>

#include <cmath>
#include <sstream>
#include <string>

#include "device_support.hpp"

namespace {

using burn::Device;
using burn::DType;
using burn::FloatDType;
using burn::IntDType;
using burn::Tensor;
using burn::device_tests::require;

#if BURN_HAS_FLEX && BURN_HAS_NDARRAY

// Backend and Device, first block:
//   let device = Device::wgpu(Default::default());
//   let tensor = Tensor::<2>::ones([2, 3], &device);
//   let other_device = Device::cuda(0);
//   let tensor = tensor.to_device(&other_device);
TEST(BackendAndDeviceChapter, SameApiOnAnotherBackend) {
  const Device device = Device::flex();  // stands in for Device::wgpu(Default::default())
  const auto tensor = Tensor<2>::ones({2, 3}, device);
  const Device other_device = Device::ndarray();  // stands in for Device::cuda(0)
  const auto moved = tensor.to_device(other_device);
  EXPECT_EQ(moved.device(), other_device);
  EXPECT_EQ(moved.shape(), (burn::Shape{2, 3}));
  moved.to_data().assert_eq(tensor.to_data());
}

// Backend and Device, "Selecting a Device":
//   let automatic = Device::wgpu(Default::default());
//   let metal = Device::metal(Default::default());
TEST(BackendAndDeviceChapter, SeveralBackendsInOneBuild) {
  const Device automatic = Device();                 // the build's automatic choice (wgpu is not built here)
  const Device explicit_device = Device::ndarray();  // an explicit constructor pins its backend (for metal)
  EXPECT_EQ(explicit_device.type(), burn::DeviceType::NdArray);
  EXPECT_NO_THROW(Tensor<1>::ones({1}, automatic).to_data());
  EXPECT_NO_THROW(Tensor<1>::ones({1}, explicit_device).to_data());
}

// Backend and Device: indexed devices accept an integer or DeviceIndex; WGPU-family
// constructors accept a DeviceKind.
//   Device::wgpu(DeviceKind::DiscreteGpu(0)); Device::wgpu(DeviceKind::IntegratedGpu(0));
//   Device::cuda(DeviceIndex::Default); Device::cuda(1);
TEST(BackendAndDeviceChapter, SelectorsForIndexedAndWgpuDevices) {
  // No GPU backend is built, so the selectors are checked as values.
  const burn::DeviceKind default_wgpu{};
  const auto discrete = burn::DeviceKind::discrete_gpu(0);
  const auto integrated = burn::DeviceKind::integrated_gpu(0);
  EXPECT_EQ(default_wgpu.type(), burn::DeviceKind::Type::Default);
  EXPECT_EQ(discrete.type(), burn::DeviceKind::Type::DiscreteGpu);
  EXPECT_EQ(integrated.type(), burn::DeviceKind::Type::IntegratedGpu);
  const burn::DeviceIndex default_cuda = burn::DeviceIndex::Default;
  const burn::DeviceIndex second_cuda = 1;
  EXPECT_TRUE(default_cuda.is_default());
  EXPECT_EQ(second_cuda.value(), 1u);
}

// Backend and Device, "Using a Device":
//   let device = Device::cuda(0);
//   let input = Tensor::<2>::zeros([32, 128], &device);
TEST(BackendAndDeviceChapter, TensorCreationTakesTheDevice) {
  const Device device = Device::flex();  // stands in for Device::cuda(0)
  const auto input = Tensor<2>::zeros({32, 128}, device);
  EXPECT_EQ(input.dims(), (std::array<std::size_t, 2>{32, 128}));
  EXPECT_EQ(input.device(), device);
  EXPECT_EQ(input.sum().into_scalar<float>(), 0.0f);
}

// Backend and Device:
//   let cpu = Device::flex();
//   let gpu = Device::cuda(0);
//   let tensor = Tensor::<2>::ones([2, 3], &cpu);
//   let tensor = tensor.to_device(&gpu);
// "Operations involving multiple tensors require compatible devices, so move
// them explicitly before combining them."
TEST(BackendAndDeviceChapter, MoveExplicitlyBeforeCombining) {
  const Device cpu = Device::flex();
  const Device gpu = Device::ndarray();  // stands in for Device::cuda(0)
  const auto tensor = Tensor<2>::ones({2, 3}, cpu);
  const auto on_gpu = tensor.to_device(gpu);
  EXPECT_EQ(on_gpu.device(), gpu);
  try {
    (void)(tensor + on_gpu);
    ADD_FAILURE() << "combining tensors of two devices must throw";
  } catch (const burn::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("flex:0"), std::string::npos) << m;
    EXPECT_NE(m.find("ndarray:0"), std::string::npos) << m;
    EXPECT_NE(m.find("to_device"), std::string::npos) << m;
  }
  burn::testing::expect_values((tensor.to_device(gpu) + on_gpu).to_data(), std::vector<double>(6, 2.0),
                               burn::Shape{2, 3});
}

#if BURN_HAS_AUTODIFF
// Backend and Device, "Autodiff and Execution":
//   let device = Device::wgpu(Default::default());
//   let training_device = device.autodiff();
//   assert!(training_device.is_autodiff());
//   let inference_device = training_device.without_autodiff();
//   assert!(!inference_device.is_autodiff());
TEST(BackendAndDeviceChapter, AutodiffOnTheDevice) {
  const Device device = Device::flex();  // stands in for Device::wgpu(Default::default())
  const Device training_device = device.autodiff();
  EXPECT_TRUE(training_device.is_autodiff());
  const Device inference_device = training_device.without_autodiff();
  EXPECT_FALSE(inference_device.is_autodiff());
  // "The historical inner() method is equivalent to without_autodiff()."
  EXPECT_FALSE(training_device.inner().is_autodiff());
  // "Chain autodiff().gradient_checkpointing() to enable autodiff with the
  // balanced checkpointing strategy."
  EXPECT_EQ(device.autodiff().gradient_checkpointing().gradient_checkpointing_strategy(),
            burn::GradientCheckpointingStrategy::Balanced);
  // "Device equality compares compute resources and ignores autodiff."
  EXPECT_EQ(training_device, inference_device);
  // "equality with an autodiff device does not establish that the tensor has
  // autodiff enabled"
  const auto t = Tensor<1>::ones({1}, device);
  EXPECT_EQ(t.device(), training_device);
  EXPECT_FALSE(t.is_autodiff());
}
#endif

// Backend and Device, "Device Settings":
//   let mut device = Device::cuda(0);
//   device.configure(DeviceConfig::default().float_dtype(FloatDType::F16).int_dtype(IntDType::I32))?;
//   let settings = device.settings();
TEST(BackendAndDeviceChapter, ConfigureThenInspect) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::flex();  // stands in for Device::cuda(0)
    device.configure(burn::DeviceConfig{}.float_dtype(FloatDType::F16).int_dtype(IntDType::I32));
    const burn::DeviceSettings settings = device.settings();
    require(settings.float_dtype == FloatDType::F16 && settings.int_dtype == IntDType::I32, "settings applied");
  });
}

// Backend and Device:
//   let tensor = Tensor::<2>::zeros([2, 3], (&device, DType::F32));
//   let tensor = tensor.cast(FloatDType::F16);
// "Neither choice changes the device's defaults."
TEST(BackendAndDeviceChapter, ExplicitDTypeAndCast) {
  const Device device = Device::flex();
  const burn::DeviceSettings before = device.settings();
  const auto tensor = Tensor<2>::zeros({2, 3}, {device, DType::F32});
  EXPECT_EQ(tensor.dtype(), DType::F32);
  const auto half = tensor.cast(FloatDType::F16);
  EXPECT_EQ(half.dtype(), DType::F16);
  EXPECT_EQ(half.shape(), (burn::Shape{2, 3}));
  EXPECT_EQ(device.settings(), before);
}

// Backend and Device, "Enumerating Devices":
//   let devices = Device::enumerate(DeviceFilter::new().with(DeviceType::Cuda).with(DeviceType::Wgpu));
//   let devices = devices.into_vec();
TEST(BackendAndDeviceChapter, EnumerateWithAFilter) {
  // The chapter's filter (CUDA, wgpu) lists nothing in a CPU-only build ...
  const auto gpus = Device::enumerate(burn::DeviceFilter{}.with(burn::DeviceType::Cuda).with(burn::DeviceType::Wgpu));
#if !BURN_HAS_CUDA && !BURN_HAS_WGPU
  EXPECT_TRUE(gpus.empty());
#else
  for (const Device& d : gpus) EXPECT_TRUE(d.type() == burn::DeviceType::Cuda || d.type() == burn::DeviceType::Wgpu);
#endif
  // ... the same call with the CPU backends lists both.
  const auto devices =
      Device::enumerate(burn::DeviceFilter{}.with(burn::DeviceType::Flex).with(burn::DeviceType::NdArray));
  const std::vector<Device> v = devices.into_vec();
  EXPECT_EQ(v.size(), 2u);
}

// Backend and Device:
//   for gpu in Device::enumerate_physical() {
//       let address = gpu.physical.pci_address.map(|address| address.to_string());
//       println!("{} at {address:?}: {:?}", gpu.name, gpu.devices);
//   }
TEST(BackendAndDeviceChapter, EnumeratePhysical) {
  std::ostringstream out;
  for (const burn::PhysicalDevice& gpu : Device::enumerate_physical()) {
    const std::string address = gpu.physical.pci_address ? gpu.physical.pci_address->to_string() : "-";
    out << gpu.name << " at " << address << ":";
    for (const Device& d : gpu.devices) out << " " << d;
    out << "\n";
  }
  const std::string text = out.str();
  EXPECT_NE(text.find("flex:0"), std::string::npos) << text;
  EXPECT_NE(text.find("ndarray:0"), std::string::npos) << text;
  // "Device::identity says which card a device is on"
  EXPECT_EQ(Device::flex().identity(), Device::ndarray().identity());
}

// Device reference, "Implementations": Device::new(dispatch) and as_dispatch() are inverses.
TEST(DeviceReference, NewAndAsDispatch) {
  const burn::DispatchDevice dispatch = Device::flex().as_dispatch();
  const Device device(dispatch);
  EXPECT_EQ(device, Device::flex());
  EXPECT_EQ(device.as_dispatch(), dispatch);
}

#if BURN_HAS_AUTODIFF
// Device reference, autodiff():
//   let device = Device::default().autodiff();
//   let x = Tensor::<1>::from_floats([1.0, 2.0, 3.0], &device).require_grad();
// (require_grad/backward belong to the autodiff suite; the context is checked here.)
TEST(DeviceReference, DefaultAutodiff) {
  const Device device = Device().autodiff();
  EXPECT_TRUE(device.is_autodiff());
  const auto x = Tensor<1>::from_floats({1.0, 2.0, 3.0}, device);
  EXPECT_TRUE(x.is_autodiff());
  // "Calling this method on a device that already has autodiff enabled returns it unchanged"
  EXPECT_TRUE(device.autodiff().is_autodiff());
  EXPECT_EQ(device.autodiff(), device);
}

// Device reference, gradient_checkpointing():
//   let device = Device::default().autodiff().gradient_checkpointing();
// "Panics if autodiff is not enabled on this device." (C++: throws burn::Error)
TEST(DeviceReference, GradientCheckpointing) {
  const Device device = Device().autodiff().gradient_checkpointing();
  EXPECT_EQ(device.gradient_checkpointing_strategy(), burn::GradientCheckpointingStrategy::Balanced);
  EXPECT_THROW((void)Device().gradient_checkpointing(), burn::Error);
}

// Device reference, without_autodiff():
//   let device = Device::default().autodiff();
//   let inference_device = device.without_autodiff();
//   assert!(!inference_device.is_autodiff());
TEST(DeviceReference, WithoutAutodiff) {
  const Device device = Device().autodiff();
  const Device inference_device = device.without_autodiff();
  EXPECT_FALSE(inference_device.is_autodiff());
  EXPECT_FALSE(Device().without_autodiff().is_autodiff());  // "returned unchanged"
}

// Device reference, is_autodiff():
//   let device = Default::default(); assert!(!device.is_autodiff());
//   let ad_device = device.autodiff(); assert!(ad_device.is_autodiff());
TEST(DeviceReference, IsAutodiff) {
  const Device device;
  EXPECT_FALSE(device.is_autodiff());
  const Device ad_device = device.autodiff();
  EXPECT_TRUE(ad_device.is_autodiff());
}
#endif

// Device reference, profile():
//   let (output, duration) = device.profile(|| model.forward(input))?;
//   let ticks = duration.resolve().await.expect("the window carried work");
//   println!("forward: {:?}", ticks.duration());
TEST(DeviceReference, Profile) {
  const Device device = Device::flex();
  const auto input = Tensor<2>::ones({16, 32}, device);
  const auto weight = Tensor<2>::ones({32, 8}, device);
  auto [output, duration] = device.profile([&] { return input.matmul(weight).to_data(); });  // model.forward(input)
  burn::testing::expect_values(output, std::vector<double>(16 * 8, 32.0), burn::Shape{16, 8});
  const std::optional<burn::ProfileTicks> ticks = duration.resolve().get();
  ASSERT_TRUE(ticks.has_value()) << "the window carried work";
  EXPECT_GE(ticks->duration().count(), 0);
}

// Device reference, seed():
//   let device = Default::default();
//   device.seed(42);
//   let t = Tensor::<1>::random([8], Distribution::Default, &device);
TEST(DeviceReference, Seed) {
  const Device device;
  device.seed(42);
  const auto t = Tensor<1>::random({8}, burn::Distribution::Default, device);
  device.seed(42);
  t.to_data().assert_eq(Tensor<1>::random({8}, burn::Distribution::Default, device).to_data());
}

// Device reference, supports_dtype():
//   let dtype = if device.supports_dtype(FloatDType::BF16) { FloatDType::BF16 } else { FloatDType::F32 };
TEST(DeviceReference, SupportsDtypeChoosesAPrecision) {
  for (const Device& device : burn::testing::all_devices()) {
    const FloatDType dtype = device.supports_dtype(FloatDType::BF16) ? FloatDType::BF16 : FloatDType::F32;
    EXPECT_EQ(dtype, FloatDType::BF16) << device << ": the CPU backends compute in bf16";
    const auto t = Tensor<1>::ones({4}, {device, dtype}) * 2.0f;
    burn::testing::expect_values(t.to_data(), {2, 2, 2, 2}, burn::Shape{4});
  }
}

// Device reference, configure():
//   let mut device = Device::cuda(0);
//   device.configure((FloatDType::F16, IntDType::I32))?;
//   let floats = Tensor::<2>::zeros([2, 3], &device);      // F16
//   let ints = Tensor::<2, Int>::zeros([2, 3], &device);   // I32
TEST(DeviceReference, ConfigureWithATuple) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::flex();  // stands in for Device::cuda(0)
    device.configure(burn::DeviceConfig(FloatDType::F16, IntDType::I32));
    const auto floats = Tensor<2>::zeros({2, 3}, device);
    const auto ints = Tensor<2, burn::Int>::zeros({2, 3}, device);
    require(floats.dtype() == DType::F16, "floats use F16");
    require(ints.dtype() == DType::I32, "ints use I32");
  });
}

// Device reference, enumerate():
//   let local = Device::enumerate(DeviceType::Cuda);
//   let both = Device::enumerate(DeviceType::Cuda | DeviceType::Remote(host));
TEST(DeviceReference, EnumerateCombinators) {
  const auto local = Device::enumerate(burn::DeviceType::Cuda);
  for (const Device& d : local) EXPECT_EQ(d.type(), burn::DeviceType::Cuda);
#if !BURN_HAS_CUDA
  EXPECT_TRUE(local.empty());
#endif
  const burn::RemoteHost host{"localhost:3000"};
  const burn::DeviceFilter filter = burn::DeviceType::Cuda | burn::DeviceType::remote(host);
  EXPECT_EQ(filter.types().size(), 2u);
  EXPECT_EQ(filter.types()[1].host(), host);
#if !BURN_HAS_CUDA && !BURN_HAS_REMOTE
  EXPECT_TRUE(Device::enumerate(filter).empty());
#endif
}

// Device reference, trait implementations: Clone, Debug, Default, Eq/PartialEq (ne),
// From<&Device> for TensorCreationOptions, FromIterator<Device> for Devices.
TEST(DeviceReference, TraitImplementations) {
  const Device a = Device::flex();
  const Device cloned = a;  // NOLINT: Clone
  EXPECT_EQ(cloned, a);
  std::ostringstream debug;
  debug << a;  // Debug
  EXPECT_EQ(debug.str(), "flex:0");
  {
    const burn::device_tests::ScopedEnv env("BURN_DEVICE", std::nullopt);
#if BURN_HAS_CPU
    EXPECT_EQ(Device(), Device::cpu());  // Default: CPU (fusion) precedes LibTorch and Flex
#elif BURN_HAS_LIBTORCH
    EXPECT_EQ(Device(), Device::libtorch());  // Default: LibTorch precedes Flex in the order
#else
    EXPECT_EQ(Device(), Device::flex());  // Default
#endif
  }
  EXPECT_FALSE(a != Device::flex());  // ne
  EXPECT_TRUE(a != Device::ndarray());
  const burn::TensorCreationOptions options = a;  // From<&Device>
  EXPECT_EQ(options.device, a);
  EXPECT_FALSE(options.dtype.has_value());
  const burn::Devices devices(std::vector<Device>{a, Device::ndarray()});  // FromIterator
  EXPECT_EQ(devices.size(), 2u);
}

// docs/api.md, "Tensors" example (the parts outside autodiff gradients):
//   auto a = Tensor<2>::zeros({32, 128}, device);
//   auto b = Tensor<2>::zeros({2, 3}, {device, burn::DType::F32});
//   auto c = b.cast(burn::FloatDType::F16);
//   auto i = Tensor<2, burn::Int>::from_ints({{1, 2}, {3, 4}}, device);
//   auto m = Tensor<1, burn::Bool>::from_bools({true, false}, device);
//   auto d = Tensor<2>::from_data(burn::TensorData(std::vector<float>{1, 2, 3, 4}, {2, 2}), device);
//   auto y = (x * 2.0f + 1.0f).exp().sum();   // sum() -> Tensor<1> of one element
TEST(ApiDocExamples, TensorBlock) {
  for (const Device& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    auto a = Tensor<2>::zeros({32, 128}, device);
    auto b = Tensor<2>::zeros({2, 3}, {device, burn::DType::F32});
    auto c = b.cast(burn::FloatDType::F16);
    auto i = Tensor<2, burn::Int>::from_ints({{1, 2}, {3, 4}}, device);
    auto m = Tensor<1, burn::Bool>::from_bools({true, false}, device);
    auto d = Tensor<2>::from_data(burn::TensorData(std::vector<float>{1, 2, 3, 4}, {2, 2}), device);
    EXPECT_EQ(a.shape(), (burn::Shape{32, 128}));
    EXPECT_EQ(c.dtype(), DType::F16);
    EXPECT_EQ(i.dtype(), DType::I64);
    EXPECT_EQ(m.dtype(), DType::Bool);
    d.to_data().assert_eq(burn::TensorData(std::vector<float>{1, 2, 3, 4}, {2, 2}));
#if BURN_HAS_AUTODIFF
    auto x = Tensor<1>::from_floats({1.0, 2.0, 3.0}, device.autodiff());
#else
    auto x = Tensor<1>::from_floats({1.0, 2.0, 3.0}, device);
#endif
    auto y = (x * 2.0f + 1.0f).exp().sum();
    static_assert(std::is_same_v<decltype(y), Tensor<1>>);
    EXPECT_EQ(y.shape(), (burn::Shape{1}));
    EXPECT_NEAR(y.into_scalar<double>(), std::exp(3.0) + std::exp(5.0) + std::exp(7.0), 1e-3 * std::exp(7.0));
  }
}

// docs/api.md, "Autodiff context" example.
#if BURN_HAS_AUTODIFF
TEST(ApiDocExamples, AutodiffContextBlock) {
  auto training = Device::flex().autodiff();
  EXPECT_TRUE(training.is_autodiff());
  auto inference = training.without_autodiff();
  EXPECT_FALSE(inference.is_autodiff());
  EXPECT_FALSE(training.inner().is_autodiff());
  auto ckpt = Device::flex().autodiff().gradient_checkpointing();
  std::optional<burn::GradientCheckpointingStrategy> s = ckpt.gradient_checkpointing_strategy();
  EXPECT_EQ(s, burn::GradientCheckpointingStrategy::Balanced);
  EXPECT_THROW((void)Device::flex().gradient_checkpointing(), burn::Error);
  EXPECT_EQ(Device::flex(), Device::flex().autodiff());
}
#endif

// docs/api.md, "Enumeration" example.
TEST(ApiDocExamples, EnumerationBlock) {
  auto devices = Device::enumerate(burn::DeviceFilter{}.with(burn::DeviceType::Flex).with(burn::DeviceType::NdArray));
  std::vector<Device> v = devices.into_vec();
  EXPECT_EQ(v.size(), 2u);
  auto both = Device::enumerate(burn::DeviceType::Flex | burn::DeviceType::NdArray);
  EXPECT_EQ(both.size(), 2u);
  std::ostringstream out;
  for (const burn::PhysicalDevice& gpu : Device::enumerate_physical())
    out << gpu.name << " at " << (gpu.physical.pci_address ? gpu.physical.pci_address->to_string() : "-");
  EXPECT_NE(out.str().find(" at -"), std::string::npos) << out.str();
  burn::PhysicalIdentity id = Device::flex().identity();
  EXPECT_EQ(id, Device::ndarray().identity());
}

#endif  // BURN_HAS_FLEX && BURN_HAS_NDARRAY

}  // namespace
