// The LibTorch device: its identity and numbering, the dtypes LibTorch lacks,
// the accelerators this LibTorch build does not have, threads, and that torch's
// autograd never interferes with burn's.
#include <burn_test.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "device_support.hpp"

#if BURN_HAS_LIBTORCH

namespace {

using burn::Device;
using burn::DeviceError;
using burn::DeviceErrorKind;
using burn::DType;
using burn::Tensor;
using burn::TensorData;
using burn::device_tests::device_error_of;
using burn::testing::expect_error;
using burn::testing::expect_op_error;

TEST(LibTorch, CpuDeviceIsLibtorchZero) {
  const Device d = Device::libtorch();
  EXPECT_EQ(d.type(), burn::DeviceType::LibTorch);
  EXPECT_EQ(d.to_string(), "libtorch:0");
  EXPECT_EQ(Device::parse("libtorch"), d);
  EXPECT_EQ(Device::parse("libtorch:0"), d);
  const burn::Devices all = Device::enumerate(burn::DeviceType::LibTorch);
  ASSERT_GE(all.size(), 1u);
  EXPECT_EQ(*all.begin(), d);
}

TEST(LibTorch, DefaultsAreBurnTchs) {
  const burn::DeviceSettings s = Device::libtorch().settings();
  EXPECT_EQ(s.float_dtype, burn::FloatDType::F32);
  EXPECT_EQ(s.int_dtype, burn::IntDType::I64);
}

TEST(LibTorch, HasEveryDTypeButWideUnsignedInts) {
  const Device d = Device::libtorch();
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I16, DType::I8,
                  DType::U8, DType::Bool})
    EXPECT_TRUE(d.supports_dtype(t)) << t;
  for (DType t : {DType::U16, DType::U32, DType::U64}) EXPECT_FALSE(d.supports_dtype(t)) << t;
}

TEST(LibTorch, UnsupportedDTypesAreClearErrors) {
  const Device d = Device::libtorch();
  const auto ints = Tensor<1, burn::Int>::from_ints({1, 2}, d);
  // An op producing one: dispatch names the op, the device and the dtype.
  expect_op_error([&] { (void)ints.cast(DType::U32); }, "cast", "libtorch:0 does not support dtype u32");
  expect_op_error([&] { (void)ints.argmax(0).cast(DType::U64); }, "cast", "u64");
  // Creation with an explicit dtype, and data moved in.
  expect_op_error([&] { (void)Tensor<1, burn::Int>::zeros({2}, {d, DType::U16}); }, "full", "u16");
  const auto u32 = TensorData(std::vector<std::uint32_t>{1, 2}, burn::Shape{2});
  expect_op_error([&] { (void)Tensor<1, burn::Int>::from_data(u32, {d, DType::U32}); }, "from_data", "u32");
#if BURN_HAS_NDARRAY
  const auto elsewhere = Tensor<1, burn::Int>::from_data(u32, {Device::ndarray(), DType::U32});
  expect_op_error([&] { (void)elsewhere.to_device(d); }, "to_device", "does not support dtype u32");
  // Cast first, as the message says.
  EXPECT_EQ(elsewhere.cast(DType::I64).to_device(d).to_data().to_vec<std::int64_t>(),
            (std::vector<std::int64_t>{1, 2}));
#endif
}

TEST(LibTorch, AcceleratorsThisBuildLacksSaySo) {
  // Debian's LibTorch is a CPU build: libtorch:0 is then its only device.
  if (Device::enumerate(burn::DeviceType::LibTorch).size() > 1) GTEST_SKIP() << "this LibTorch has accelerators";
  struct Case {
    Device (*make)();
    const char* what;
  };
  const Case cases[] = {{[] { return Device::libtorch_cuda(); }, "CUDA"},
                        {[] { return Device::libtorch_cuda(1); }, "CUDA"},
                        {[] { return Device::libtorch_mps(); }, "MPS"},
                        {[] { return Device::libtorch_vulkan(); }, "Vulkan"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto e = device_error_of([&] { (void)c.make(); });
    if (!e) continue;
    EXPECT_EQ(e->kind(), DeviceErrorKind::NotAvailable);
    const std::string msg = e->what();
    EXPECT_EQ(msg.rfind("[Device::libtorch_", 0), 0u) << msg;
    EXPECT_NE(msg.find(std::string(c.what) + " is not available in this LibTorch build"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Device::libtorch()"), std::string::npos) << msg;
  }
  expect_error([] { (void)Device::parse("libtorch:1"); }, "'libtorch:1'");
}

TEST(LibTorch, SharesTheHostCpuEntry) {
  EXPECT_EQ(Device::libtorch().identity().label, "host-cpu");
#if BURN_HAS_FLEX
  EXPECT_EQ(Device::libtorch().identity(), Device::flex().identity());
  for (const auto& p : Device::enumerate_physical()) {
    if (p.physical.label == "host-cpu") {
      EXPECT_NE(std::find(p.devices.begin(), p.devices.end(), Device::libtorch()), p.devices.end());
    }
  }
#endif
  EXPECT_FALSE(Device::libtorch().memory_pool_usage().has_value()) << "CPU LibTorch exposes no allocator figures";
  EXPECT_FALSE(Device::libtorch().memory_pool_report().has_value());
}

TEST(LibTorch, ChangesItsThreadCountWithoutChangingResults) {
  const Device d = Device::libtorch();
  const std::size_t original = d.num_threads();
  ASSERT_GE(original, 1u);
  d.seed(5);
  const auto x = Tensor<2>::random({256, 512}, burn::Distribution::Default, d);
  const auto before = x.matmul(x.transpose()).sum_dim(1).to_data();
  d.set_num_threads(1);
  EXPECT_EQ(d.num_threads(), 1u);
  x.matmul(x.transpose()).sum_dim(1).to_data().assert_approx_eq(before, burn::Tolerance::default_for(DType::F32));
  d.set_num_threads(2);
  EXPECT_EQ(d.num_threads(), 2u);
  d.set_num_threads(original);
  EXPECT_EQ(d.num_threads(), original);
  expect_op_error([&] { d.set_num_threads(0); }, "Device::set_num_threads", "at least 1");
}

TEST(LibTorch, NanSignAndZeroSignSurviveSign) {
  // ATen's sign maps NaN and -0.0 to 0; burn keeps both (as the other backends).
  const auto t = Tensor<1>::from_floats({std::nanf(""), -0.0f, 2.0f}, Device::libtorch()).sign().to_data();
  const auto v = t.to_vec<float>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_TRUE(std::signbit(v[1]));
  EXPECT_EQ(v[2], 1.0f);
}

TEST(LibTorch, IntegerEdgeCasesFollowTheIr) {
  const Device d = Device::libtorch();
  using L = std::numeric_limits<std::int64_t>;
  const auto a = Tensor<1, burn::Int>::from_ints({L::min(), 7, -7}, d);
  // Division by -1 would trap in a machine division: the minimum wraps instead.
  EXPECT_EQ((a / -1).to_data().to_vec<std::int64_t>(), (std::vector<std::int64_t>{L::min(), -7, 7}));
  EXPECT_EQ((a % -1).to_data().to_vec<std::int64_t>(), (std::vector<std::int64_t>{0, 0, 0}));
  // Shifts by the width or more: 0, or -1 for negative values shifted right.
  const auto s = Tensor<1, burn::Int>::from_ints({64, 70, 1}, d);
  EXPECT_EQ(a.bitwise_left_shift(s).to_data().to_vec<std::int64_t>(), (std::vector<std::int64_t>{0, 0, -14}));
  EXPECT_EQ(a.bitwise_right_shift(s).to_data().to_vec<std::int64_t>(), (std::vector<std::int64_t>{-1, 0, -4}));
  // Float -> int saturates and maps NaN to 0.
  const auto f = Tensor<1>::from_floats({1e30f, -1e30f, std::nanf(""), -2.7f}, d);
  const auto to_int = [&](DType dt) { return Tensor<1, burn::Int>(burn::detail::cast(f.ref(), dt)).to_data(); };
  EXPECT_EQ(to_int(DType::I32).to_vec<std::int32_t>(),
            (std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::max(),
                                       std::numeric_limits<std::int32_t>::min(), 0, -2}));
  EXPECT_EQ(to_int(DType::U8).to_vec<std::uint8_t>(), (std::vector<std::uint8_t>{255, 0, 0, 0}));
}

#if BURN_HAS_AUTODIFF
TEST(LibTorch, TorchAutogradNeverSeesBurnsGraph) {
  // burn's autodiff records the graph; ATen tensors never require grad, so a
  // tracked tensor computes and differentiates like on any backend.
  const Device d = Device::libtorch().autodiff();
  const auto w = Tensor<2>::from_floats({{1, 2}, {3, 4}}, d).require_grad();
  const auto loss = (w * w).sum();
  auto grads = loss.backward();
  EXPECT_EQ(w.grad(grads)->to_data().to_vec<float>(), (std::vector<float>{2, 4, 6, 8}));
  // The inner device's values are plain tensors: moving them elsewhere works.
  EXPECT_EQ(w.grad(grads)->to_device(Device::libtorch()).to_data().to_vec<float>(), (std::vector<float>{2, 4, 6, 8}));
}
#endif

}  // namespace

#endif  // BURN_HAS_LIBTORCH
