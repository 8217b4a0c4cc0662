// Execution: seed, sync, flush, supports_dtype and profiling (docs/api.md,
// "Execution"). Only "non-negative" and "zero when nothing ran" are asserted
// about times.
#include <gtest/gtest.h>

#include <burn_test.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>

namespace {

using burn::Device;
using burn::DType;
using burn::Tensor;
using namespace std::chrono_literals;

class Execution : public ::testing::TestWithParam<Device> {};

/// Resolves a profile measurement, failing the test if it carries no ticks.
std::chrono::nanoseconds ticks_of(const burn::ProfileDuration& d) {
  std::future<std::optional<burn::ProfileTicks>> f = d.resolve();
  const std::optional<burn::ProfileTicks> ticks = f.get();
  EXPECT_TRUE(ticks.has_value()) << "a closed window resolves to a measurement";
  return ticks ? ticks->duration() : std::chrono::nanoseconds(-1);
}

TEST_P(Execution, SameSeedSameValues) {
  const Device device = GetParam();
  device.seed(42);
  const auto a = Tensor<1>::random({64}, burn::Distribution::Default, device).to_data();
  device.seed(42);
  const auto b = Tensor<1>::random({64}, burn::Distribution::Default, device).to_data();
  a.assert_eq(b);
  device.seed(43);
  const auto c = Tensor<1>::random({64}, burn::Distribution::Default, device).to_data();
  EXPECT_NE(a, c) << "different seeds give different values";
  // Values of the default distribution lie in [0, 1).
  for (float v : a.to_vec<float>()) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

TEST_P(Execution, SeedAppliesToEveryDistribution) {
  const Device device = GetParam();
  for (const auto& dist : {burn::Distribution::uniform(-3.0, 5.0), burn::Distribution::normal(1.0, 2.0),
                           burn::Distribution::bernoulli(0.3)}) {
    device.seed(7);
    const auto a = Tensor<2>::random({4, 8}, dist, device).to_data();
    device.seed(7);
    const auto b = Tensor<2>::random({4, 8}, dist, device).to_data();
    a.assert_eq(b);
  }
  // Seeding one Device value seeds every value naming the same resource.
  device.seed(11);
  const auto a = Tensor<1>::random({16}, burn::Distribution::Default, device).to_data();
#if BURN_HAS_AUTODIFF
  device.autodiff().seed(11);
#else
  device.seed(11);
#endif
  const auto b = Tensor<1>::random({16}, burn::Distribution::Default, Device(device.as_dispatch())).to_data();
  a.assert_eq(b);
}

TEST_P(Execution, SyncAndFlushSucceedOnHealthyDevices) {
  const Device device = GetParam();
  EXPECT_NO_THROW(device.sync());
  EXPECT_NO_THROW(device.flush());
  const auto t = Tensor<2>::ones({8, 8}, device) * 3.0f;
  EXPECT_NO_THROW(device.flush());
  EXPECT_NO_THROW(device.sync());
  burn::testing::expect_values(t.to_data(), std::vector<double>(64, 3.0), burn::Shape{8, 8});
}

TEST_P(Execution, SupportsEveryDType) {
  const Device device = GetParam();
  // LibTorch 1.13 has no unsigned type but u8; the CPU backends have every dtype.
  const bool wide_unsigned = device.type() != burn::DeviceType::LibTorch;
  for (DType d : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I16, DType::I8,
                  DType::U8, DType::Bool})
    EXPECT_TRUE(device.supports_dtype(d)) << burn::dtype_name(d);
  for (DType d : {DType::U64, DType::U32, DType::U16})
    EXPECT_EQ(device.supports_dtype(d), wide_unsigned) << burn::dtype_name(d);
  EXPECT_TRUE(device.supports_dtype(burn::FloatDType::BF16));
  EXPECT_TRUE(device.supports_dtype(burn::FloatDType::F16));
  EXPECT_EQ(device.supports_dtype(burn::IntDType::U16), wide_unsigned);
  EXPECT_TRUE(device.supports_dtype(burn::BoolDType::Bool));
#if BURN_HAS_AUTODIFF
  EXPECT_TRUE(device.autodiff().supports_dtype(DType::F16));
#endif
}

TEST_P(Execution, ProfileReturnsTheResultAndADuration) {
  const Device device = GetParam();
  const auto a = Tensor<2>::ones({64, 64}, device);
  auto [out, duration] = device.profile([&] { return (a + a).to_data(); });
  static_assert(std::is_same_v<decltype(out), burn::TensorData>);
  burn::testing::expect_values(out, std::vector<double>(64 * 64, 2.0), burn::Shape{64, 64});
  EXPECT_GE(ticks_of(duration), 0ns);
  // A measurement can be resolved more than once.
  EXPECT_GE(ticks_of(duration), 0ns);
}

TEST_P(Execution, ProfileOfNothingIsZero) {
  const Device device = GetParam();
  const auto a = Tensor<1>::ones({16}, device);  // runs before the window opens
  auto [value, duration] = device.profile([] { return 42; });
  EXPECT_EQ(value, 42);
  EXPECT_EQ(ticks_of(duration), 0ns);
  // Work on another device does not fall in this device's window.
  for (const Device& other : burn::testing::all_devices()) {
    if (other == device) continue;
    auto [t, d] = device.profile([&] { return (Tensor<1>::ones({16}, other) * 2.0f).to_data(); });
    EXPECT_EQ(t.num_elements(), 16u);
    EXPECT_EQ(ticks_of(d), 0ns) << "work on " << other << " is not " << device << "'s";
  }
}

TEST_P(Execution, ProfileWindowsNest) {
  const Device device = GetParam();
  const auto a = Tensor<2>::ones({128, 128}, device);
  burn::ProfileDuration inner_duration(std::shared_future<std::optional<burn::ProfileTicks>>{});
  auto [sum, outer_duration] = device.profile([&] {
    auto [inner_out, inner_d] = device.profile([&] { return (a * 2.0f).to_data(); });
    inner_duration = inner_d;
    return (a + 1.0f).sum().into_scalar<double>() + inner_out.value_as_double(0);
  });
  EXPECT_EQ(sum, 128.0 * 128.0 * 2.0 + 2.0);
  const auto inner = ticks_of(inner_duration);
  const auto outer = ticks_of(outer_duration);
  EXPECT_GE(inner, 0ns);
  EXPECT_LE(inner, outer) << "an inner window lies inside the outer one";
}

TEST_P(Execution, ProfileVoidAndMoveOnlyResults) {
  const Device device = GetParam();
  const auto a = Tensor<1>::ones({8}, device);
  bool ran = false;
  auto [nothing, duration] = device.profile([&] {
    ran = true;
    (void)(a + a).to_data();
  });
  static_assert(std::is_same_v<decltype(nothing), std::monostate>);
  EXPECT_TRUE(ran);
  EXPECT_GE(ticks_of(duration), 0ns);

  auto [ptr, d2] = device.profile([] { return std::make_unique<int>(5); });
  ASSERT_NE(ptr, nullptr);
  EXPECT_EQ(*ptr, 5);
  EXPECT_EQ(ticks_of(d2), 0ns);
}

TEST_P(Execution, ProfileWithFlush) {
  const Device device = GetParam();
  const auto a = Tensor<1>::ones({32}, device);
  auto [t, duration] = device.profile_with(burn::ProfileOptions{}.flush(true), [&] { return a * 4.0f; });
  burn::testing::expect_values(t.to_data(), std::vector<double>(32, 4.0), burn::Shape{32});
  EXPECT_GE(ticks_of(duration), 0ns);
  auto [n, empty] = device.profile_with(burn::ProfileOptions{}.flush(true), [] { return 1; });
  EXPECT_EQ(n, 1);
  EXPECT_EQ(ticks_of(empty), 0ns);
  burn::ProfileOptions opts;
  EXPECT_FALSE(opts.flush_queue);
  EXPECT_TRUE(opts.flush(true).flush_queue);
}

INSTANTIATE_TEST_SUITE_P(AllDevices, Execution, ::testing::ValuesIn(burn::testing::all_devices()),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return std::string(info.param.type().name());
                         });

}  // namespace
