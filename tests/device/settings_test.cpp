// Device settings (docs/api.md, "Settings"; Burn's "Device Settings"). Settings
// belong to the compute resource for the whole process and lock once, so
// every scenario that configures runs in a fresh copy of this binary.
#include <gtest/gtest.h>

#include <burn_test.hpp>

#include <string>

#include "device_support.hpp"

namespace {

using burn::Bool;
using burn::BoolDType;
using burn::Device;
using burn::DeviceConfig;
using burn::DeviceError;
using burn::DeviceErrorKind;
using burn::DeviceSettings;
using burn::DType;
using burn::FloatDType;
using burn::Int;
using burn::IntDType;
using burn::Tensor;
using burn::device_tests::require;

/// Calls `configure` and requires a DeviceError of `kind` naming the device.
void require_configure_fails(Device& device, const DeviceConfig& config, DeviceErrorKind kind) {
  try {
    device.configure(config);
  } catch (const DeviceError& e) {
    require(e.kind() == kind, std::string("wrong DeviceError kind: ") + e.what());
    const std::string m = e.what();
    require(m.rfind("[Device::configure]", 0) == 0, "message starts with the op: " + m);
    require(m.find(device.to_string()) != std::string::npos, "message names the device: " + m);
    return;
  }
  require(false, "configure did not throw");
}

TEST(DeviceSettings, Defaults) {
  // Reading settings never locks or changes them, so this runs in-process.
  for (const Device& d : burn::testing::all_devices()) {
    const DeviceSettings s = d.settings();
    EXPECT_EQ(s.float_dtype, FloatDType::F32) << d;
    EXPECT_EQ(s.int_dtype, IntDType::I64) << d;
    EXPECT_EQ(s.bool_dtype, BoolDType::Bool) << d;
    EXPECT_EQ(s, DeviceSettings{});
  }
  EXPECT_EQ(Tensor<1>::zeros({1}, burn::testing::all_devices().front()).dtype(), DType::F32);
}

TEST(DeviceSettings, DeviceConfigBuilder) {
  const DeviceConfig empty;
  EXPECT_FALSE(empty.float_dtype().has_value());
  EXPECT_FALSE(empty.int_dtype().has_value());
  EXPECT_FALSE(empty.bool_dtype().has_value());
  const DeviceConfig c = DeviceConfig{}.float_dtype(FloatDType::F16).int_dtype(IntDType::I32);
  EXPECT_EQ(c.float_dtype(), FloatDType::F16);
  EXPECT_EQ(c.int_dtype(), IntDType::I32);
  EXPECT_FALSE(c.bool_dtype().has_value());
  EXPECT_FALSE(empty.float_dtype().has_value()) << "the builder returns copies";
  const DeviceConfig pair(FloatDType::BF16, IntDType::U8);  // Burn's (FloatDType, IntDType) tuple
  EXPECT_EQ(pair.float_dtype(), FloatDType::BF16);
  EXPECT_EQ(pair.int_dtype(), IntDType::U8);
}

#if BURN_HAS_FLEX && BURN_HAS_NDARRAY

TEST(DeviceSettings, ConfigureBeforeFirstTensorChangesDefaults) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::flex();
    device.configure(DeviceConfig{}.float_dtype(FloatDType::F16).int_dtype(IntDType::I32));
    const DeviceSettings s = device.settings();
    require(s.float_dtype == FloatDType::F16, "float default is F16");
    require(s.int_dtype == IntDType::I32, "int default is I32");
    require(s.bool_dtype == BoolDType::Bool, "bool default unchanged");
    require(Tensor<2>::zeros({2, 3}, device).dtype() == DType::F16, "Tensor<2>::zeros gets F16");
    require(Tensor<2, Int>::zeros({2, 3}, device).dtype() == DType::I32, "Tensor<2, Int>::zeros gets I32");
    require(Tensor<1, Bool>::from_bools({true}, device).dtype() == DType::Bool, "bool tensors stay Bool");
    require(Tensor<1>::from_floats({1.0, 2.0}, device).dtype() == DType::F16, "from_floats gets F16");
    require(Tensor<1, Int>::from_ints({1, 2}, device).dtype() == DType::I32, "from_ints gets I32");
    require(Tensor<1>::arange(0, 4, device).dtype() == DType::F16, "arange gets F16");
    // An explicit dtype still wins, and neither it nor a cast moves the defaults.
    const auto f32 = Tensor<2>::zeros({2, 3}, {device, DType::F32});
    require(f32.dtype() == DType::F32, "explicit dtype honoured");
    require(f32.cast(FloatDType::BF16).dtype() == DType::BF16, "cast to BF16");
    require(device.settings().float_dtype == FloatDType::F16, "defaults unchanged by explicit dtypes");
    // The other CPU backend is another resource with its own settings.
    require(Device::ndarray().settings() == DeviceSettings{}, "ndarray keeps its defaults");
    require(Tensor<1>::zeros({1}, Device::ndarray()).dtype() == DType::F32, "ndarray tensors are F32");
  });
}

TEST(DeviceSettings, SharedByEveryValueNamingTheResource) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::flex();
    device.configure(DeviceConfig{}.int_dtype(IntDType::I16));
    require(Device::flex().settings().int_dtype == IntDType::I16, "Device::flex() sees it");
    require(Device::parse("flex:0").settings().int_dtype == IntDType::I16, "a parsed value sees it");
    require(Device(device.as_dispatch()).settings().int_dtype == IntDType::I16, "Device(DispatchDevice) sees it");
#if BURN_HAS_AUTODIFF
    require(Device::flex().autodiff().settings().int_dtype == IntDType::I16, "the autodiff value sees it");
    require(Tensor<1, Int>::zeros({2}, Device::flex().autodiff()).dtype() == DType::I16,
            "tensors on the autodiff value use it");
#endif
    require(device.settings().float_dtype == FloatDType::F32, "unset fields keep the backend default");
    Device other = Device::flex();
    require_configure_fails(other, DeviceConfig{}.int_dtype(IntDType::I32), DeviceErrorKind::AlreadyInitialized);
  });
}

TEST(DeviceSettings, SettingsQueryDoesNotLock) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::ndarray();
    require(device.settings() == DeviceSettings{}, "snapshot of the backend defaults");
    (void)device.settings();
    (void)Device::ndarray().settings();
    require(device.supports_dtype(DType::BF16), "supports_dtype does not lock either");
    device.configure(DeviceConfig{}.float_dtype(FloatDType::BF16));
    require(device.settings().float_dtype == FloatDType::BF16, "configure after settings() works");
    require(Tensor<1>::ones({3}, device).dtype() == DType::BF16, "new tensors use BF16");
  });
}

TEST(DeviceSettings, TensorCreationLocks) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::flex();
    (void)Tensor<2>::zeros({2, 3}, device);
    require_configure_fails(device, DeviceConfig{}.float_dtype(FloatDType::F16), DeviceErrorKind::AlreadyInitialized);
    require(device.settings() == DeviceSettings{}, "a refused configure changes nothing");
    require(Tensor<2>::zeros({2, 3}, device).dtype() == DType::F32, "tensors keep the locked defaults");
  });
}

TEST(DeviceSettings, TensorCreationWithExplicitDTypeLocks) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::flex();
    (void)Tensor<2>::zeros({2, 3}, {device, DType::F64});
    require_configure_fails(device, DeviceConfig{}.float_dtype(FloatDType::F16), DeviceErrorKind::AlreadyInitialized);
  });
}

TEST(DeviceSettings, FromDataLocks) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::ndarray();
    (void)Tensor<1, Int>::from_data(burn::TensorData(std::vector<std::int32_t>{1}), {device, DType::I32});
    require_configure_fails(device, DeviceConfig{}.int_dtype(IntDType::I32), DeviceErrorKind::AlreadyInitialized);
  });
}

TEST(DeviceSettings, TransferToTheDeviceLocks) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    const auto t = Tensor<1>::ones({2}, Device::ndarray());
    Device flex = Device::flex();
    (void)t.to_device(flex);
    require_configure_fails(flex, DeviceConfig{}.float_dtype(FloatDType::F16), DeviceErrorKind::AlreadyInitialized);
  });
}

TEST(DeviceSettings, TensorOnAnotherValueOfTheResourceLocks) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::flex();
    (void)Tensor<1>::ones({2}, Device::parse("flex:0"));
    require_configure_fails(device, DeviceConfig{}.float_dtype(FloatDType::F16), DeviceErrorKind::AlreadyInitialized);
    // Another resource is still free to configure.
    Device nd = Device::ndarray();
    nd.configure(DeviceConfig{}.float_dtype(FloatDType::F64));
    require(Tensor<1>::ones({2}, nd).dtype() == DType::F64, "ndarray configured independently");
  });
}

TEST(DeviceSettings, ConfigureTwiceFails) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::flex();
    device.configure(DeviceConfig(FloatDType::F64, IntDType::I32));
    require_configure_fails(device, DeviceConfig(FloatDType::F16, IntDType::I64), DeviceErrorKind::AlreadyInitialized);
    require(device.settings().float_dtype == FloatDType::F64, "the first configuration stays");
    require(device.settings().int_dtype == IntDType::I32, "the first configuration stays");
  });
}

TEST(DeviceSettings, TransferKeepsTheTensorsDType) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device nd = Device::ndarray();
    nd.configure(DeviceConfig(FloatDType::F16, IntDType::I32));
    const auto f = Tensor<1>::ones({2}, Device::flex());
    const auto i = Tensor<1, Int>::ones({2}, Device::flex());
    require(f.to_device(nd).dtype() == DType::F32, "a moved tensor keeps its float dtype");
    require(i.to_device(nd).dtype() == DType::I64, "a moved tensor keeps its int dtype");
    require(Tensor<1>::ones({2}, nd).to_device(Device::flex()).dtype() == DType::F16, "and the other way round");
  });
}

TEST(DeviceSettings, ExplicitCreationDTypesWithKindEnums) {
  BURN_EXPECT_IN_FRESH_PROCESS([] {
    Device device = Device::flex();
    device.configure(DeviceConfig{}.float_dtype(FloatDType::BF16));
    require(Tensor<1>::zeros({2}, {device, FloatDType::F64}).dtype() == DType::F64, "FloatDType option");
    require(Tensor<1, Int>::zeros({2}, {device, IntDType::U16}).dtype() == DType::U16, "IntDType option");
    require(Tensor<1>::zeros({2}, device).dtype() == DType::BF16, "default still BF16");
  });
}

// Every float and int dtype is supported on the CPU backends, so configure
// accepts each of them there; LibTorch has no u16/u32/u64, and configure
// refuses those with DeviceErrorKind::UnsupportedDType.
TEST(DeviceSettings, EveryFloatDTypeCanBeTheDefault) {
  for (FloatDType f : {FloatDType::F64, FloatDType::F32, FloatDType::F16, FloatDType::BF16}) {
    SCOPED_TRACE(burn::dtype_name(burn::to_dtype(f)));
    BURN_EXPECT_IN_FRESH_PROCESS([f] {
      for (Device device : burn::testing::all_devices()) {
        device.configure(DeviceConfig{}.float_dtype(f));
        require(Tensor<2>::ones({2, 2}, device).dtype() == burn::to_dtype(f), "float default applied");
      }
    });
  }
}

TEST(DeviceSettings, EveryIntDTypeCanBeTheDefault) {
  for (IntDType i : {IntDType::I64, IntDType::I32, IntDType::I16, IntDType::I8, IntDType::U64, IntDType::U32,
                     IntDType::U16, IntDType::U8}) {
    SCOPED_TRACE(burn::dtype_name(burn::to_dtype(i)));
    BURN_EXPECT_IN_FRESH_PROCESS([i] {
      for (Device device : burn::testing::all_devices()) {
        if (!device.supports_dtype(i)) {
          require_configure_fails(device, DeviceConfig{}.int_dtype(i), DeviceErrorKind::UnsupportedDType);
          continue;
        }
        device.configure(DeviceConfig{}.int_dtype(i));
        require(Tensor<2, Int>::ones({2, 2}, device).dtype() == burn::to_dtype(i), "int default applied");
        // Kind conversion picks the configured default too.
        require(Tensor<1>::ones({2}, {device, DType::F32}).to_int().dtype() == burn::to_dtype(i),
                "to_int uses the int default");
      }
    });
  }
}

#endif  // BURN_HAS_FLEX && BURN_HAS_NDARRAY

}  // namespace
