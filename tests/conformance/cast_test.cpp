// Casts between dtypes, kind conversions (to_float/to_int/to_bool) and
// to_device between the CPU backends (keeping the autodiff context).
#include "any_kind.hpp"

#include <limits>

namespace burn::conformance {
namespace {

class CastFloat : public ComboTest {};
class CastInt : public ComboTest {};
class ToDevice : public ComboTest {};

TEST_P(CastFloat, BetweenFloatDTypes) {
  auto a = f<2>({1.5, -2.25, 3, 0.125}, {2, 2});
  for (DType target : burn::testing::float_dtypes()) {
    SCOPED_TRACE(std::string(dtype_name(target)));
    auto out = a.cast(target);
    EXPECT_EQ(out.dtype(), target);
    EXPECT_EQ(out.device(), dev());
    expect_tensor(out, {2, 2}, {1.5, -2.25, 3, 0.125});
  }
  // Rounding to the narrower type.
  auto wide = burn::testing::float_tensor<1>({1.0 / 3.0}, {1}, dev(), DType::F64);
  expect_tensor(wide.cast(dt()), {1}, {rounded(1.0 / 3.0, dt())}, Tolerance::absolute_only(0.0));
  expect_tensor(a.cast(FloatDType::F32), {2, 2}, {1.5, -2.25, 3, 0.125});
}

TEST_P(CastFloat, KindConversions) {
  auto a = f<1>({1.75, -1.75, 2.5, 0, -0.5}, {5});
  auto i = a.to_int();
  EXPECT_TRUE(is_int(i.dtype()));
  // Float -> int truncates toward zero.
  expect_tensor(i, {5}, {1, -1, 2, 0, 0});
  auto b = a.to_bool();
  EXPECT_EQ(b.dtype(), DType::Bool);
  expect_tensor(b, {5}, {1, 1, 1, 0, 1});
  // NaN is non-zero, so true (as in PyTorch).
  expect_tensor(f<1>({std::numeric_limits<double>::quiet_NaN()}, {1}).to_bool(), {1}, {1});
  auto back = b.to_float();
  EXPECT_TRUE(is_float(back.dtype()));
  expect_tensor(back, {5}, {1, 1, 1, 0, 1});
  EXPECT_EQ(a.to_float().dtype(), dt());  // same kind: unchanged
  expect_tensor(i.to_float(), {5}, {1, -1, 2, 0, 0});
}

TEST_P(CastFloat, NanAndOutOfRangeToInt) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto a = f<1>({nan, inf, -inf, 3}, {4});
  // Defined for every input: NaN -> 0, out of range saturates.
  auto i32 = Tensor<1, Int>(burn::detail::cast(a.ref(), DType::I32));
  i32.to_data().assert_eq(TensorData(std::vector<std::int32_t>{0, std::numeric_limits<std::int32_t>::max(),
                                                               std::numeric_limits<std::int32_t>::min(), 3},
                                     Shape{4}));
  auto u8 = Tensor<1, Int>(burn::detail::cast(f<1>({-5, 300, 7}, {3}).ref(), DType::U8));
  u8.to_data().assert_eq(TensorData(std::vector<std::uint8_t>{0, 255, 7}, Shape{3}));
}

TEST_P(CastInt, BetweenIntDTypesAndKinds) {
  auto a = in<1>({0, 1, 100, 7}, {4});
  for (DType target : burn::testing::int_dtypes()) {
    SCOPED_TRACE(std::string(dtype_name(target)));
    if (!dev().supports_dtype(target)) {  // LibTorch has no u16/u32/u64: a clear error
      expect_op_error([&] { (void)a.cast(target); }, "cast", "does not support dtype");
      continue;
    }
    auto out = a.cast(target);
    EXPECT_EQ(out.dtype(), target);
    expect_tensor(out, {4}, {0, 1, 100, 7});
  }
  expect_tensor(a.cast(IntDType::I64), {4}, {0, 1, 100, 7});
  auto fl = a.to_float();
  EXPECT_TRUE(is_float(fl.dtype()));
  expect_tensor(fl, {4}, {0, 1, 100, 7});
  auto b = a.to_bool();
  EXPECT_EQ(b.dtype(), DType::Bool);
  expect_tensor(b, {4}, {0, 1, 1, 1});
  expect_tensor(b.to_int(), {4}, {0, 1, 1, 1});
  EXPECT_EQ(a.to_int().dtype(), dt());
  for (DType target : burn::testing::float_dtypes()) {
    auto out = Tensor<1>(burn::detail::cast(a.ref(), target));
    EXPECT_EQ(out.dtype(), target);
    expect_tensor(out, {4}, {0, 1, 100, 7});
  }
  expect_tensor(a.cast(dt()), {4}, {0, 1, 100, 7});
  expect_tensor(in<1>({}, {0}).to_float(), {0}, {});
}

TEST_P(ToDevice, EveryDTypeBothWays) {
  with_kind(GetParam(), [](auto c) {
    auto a = c.template m<2>({0, 1, 2, 3, 4, 5}, {2, 3});
    for (const auto& target : burn::testing::all_devices()) {
      SCOPED_TRACE(c.dev.to_string() + " -> " + target.to_string());
      if (!target.supports_dtype(c.dt)) {  // LibTorch has no u16/u32/u64
        burn::testing::expect_error([&] { (void)a.to_device(target); }, "does not support dtype");
        continue;
      }
      auto moved = a.to_device(target);
      EXPECT_EQ(moved.device(), target);
      EXPECT_EQ(moved.dtype(), c.dt);
      expect_tensor(moved, {2, 3}, {0, 1, 2, 3, 4, 5});
      // ... and it computes there, then comes back unchanged.
      auto back = moved.slice({{1, 2}}).to_device(c.dev);
      EXPECT_EQ(back.device(), c.dev);
      expect_tensor(back, {1, 3}, {3, 4, 5});
      // Non-contiguous sources move their logical values.
      expect_tensor(a.transpose().to_device(target), {3, 2}, {0, 3, 1, 4, 2, 5});
      expect_tensor(c.template m<2>({}, {0, 3}).to_device(target), {0, 3}, {});
    }
  });
}

#if BURN_HAS_AUTODIFF
TEST_P(ToDevice, KeepsTheTensorsAutodiffContext) {
  with_kind(GetParam(), [](auto c) {
    auto plain = c.template m<1>({1, 2}, {2});
    for (const auto& target : burn::testing::all_devices()) {
      SCOPED_TRACE(c.dev.to_string() + " -> " + target.to_string());
      if (!target.supports_dtype(c.dt)) continue;  // EveryDTypeBothWays checks the error
      auto tracked = plain.autodiff();
      EXPECT_TRUE(tracked.is_autodiff());
      // The destination's defaults do not matter: the tensor's context is kept.
      auto moved = tracked.to_device(target);
      EXPECT_TRUE(moved.is_autodiff());
      EXPECT_EQ(moved.device(), target);
      expect_tensor(moved, {2}, {1, 2});
      auto still_plain = plain.to_device(target.autodiff());
      EXPECT_FALSE(still_plain.is_autodiff());
      expect_tensor(still_plain, {2}, {1, 2});
    }
  });
}
#endif

BURN_FLOAT_SUITE(CastFloat);
BURN_INT_SUITE(CastInt);
BURN_ALL_DTYPES_SUITE(ToDevice);

}  // namespace
}  // namespace burn::conformance
