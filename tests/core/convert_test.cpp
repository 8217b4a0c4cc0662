// convert_element: float -> int is defined for every input (NaN -> 0,
// out-of-range saturates, the rest truncates toward zero); halves round
// through f32; -> bool is "!= 0".
#include <burn/burn.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace {

using burn::convert_element;

template <class T>
using lim = std::numeric_limits<T>;

constexpr double kNaN = lim<double>::quiet_NaN();
constexpr double kInf = lim<double>::infinity();

TEST(ConvertElement, FloatToIntTruncatesTowardZero) {
  EXPECT_EQ(convert_element<std::int32_t>(2.9), 2);
  EXPECT_EQ(convert_element<std::int32_t>(-2.9), -2);
  EXPECT_EQ(convert_element<std::int64_t>(-0.5f), 0);
  EXPECT_EQ(convert_element<std::uint8_t>(255.9f), 255);
  EXPECT_EQ(convert_element<std::int8_t>(-128.7), -128);
}

TEST(ConvertElement, NaNBecomesZero) {
  EXPECT_EQ(convert_element<std::int32_t>(kNaN), 0);
  EXPECT_EQ(convert_element<std::int64_t>(static_cast<float>(kNaN)), 0);
  EXPECT_EQ(convert_element<std::uint8_t>(kNaN), 0);
  EXPECT_EQ(convert_element<std::int16_t>(burn::f16(static_cast<float>(kNaN))), 0);
  EXPECT_EQ(convert_element<std::int32_t>(burn::bf16(static_cast<float>(kNaN))), 0);
}

TEST(ConvertElement, OutOfRangeSaturates) {
  EXPECT_EQ(convert_element<std::int32_t>(1e10), lim<std::int32_t>::max());
  EXPECT_EQ(convert_element<std::int32_t>(-1e10), lim<std::int32_t>::lowest());
  EXPECT_EQ(convert_element<std::int32_t>(kInf), lim<std::int32_t>::max());
  EXPECT_EQ(convert_element<std::int32_t>(-kInf), lim<std::int32_t>::lowest());
  EXPECT_EQ(convert_element<std::uint8_t>(300.0f), 255);
  EXPECT_EQ(convert_element<std::uint8_t>(-5.0f), 0);
  EXPECT_EQ(convert_element<std::uint64_t>(-1.0), 0u);
  EXPECT_EQ(convert_element<std::int8_t>(1000.0), 127);
  EXPECT_EQ(convert_element<std::int8_t>(-1000.0), -128);
  EXPECT_EQ(convert_element<std::int64_t>(1e19), lim<std::int64_t>::max());
  EXPECT_EQ(convert_element<std::int64_t>(-1e19), lim<std::int64_t>::lowest());
  EXPECT_EQ(convert_element<std::uint64_t>(1e20f), lim<std::uint64_t>::max());
  EXPECT_EQ(convert_element<std::int16_t>(burn::f16(static_cast<float>(kInf))), lim<std::int16_t>::max());
  EXPECT_EQ(convert_element<std::int16_t>(burn::f16(60000.0f)), lim<std::int16_t>::max());
  // The largest double below 2^63 is exactly representable in int64.
  const double below = std::nextafter(9223372036854775808.0, 0.0);
  EXPECT_EQ(convert_element<std::int64_t>(below), static_cast<std::int64_t>(below));
}

TEST(ConvertElement, HalfTypes) {
  EXPECT_EQ(convert_element<burn::f16>(1.0).bits, 0x3C00);
  EXPECT_EQ(convert_element<burn::bf16>(1.0).bits, 0x3F80);
  EXPECT_EQ(convert_element<burn::f16>(std::int64_t{70000}).bits, 0x7C00);  // beyond the half range
  EXPECT_EQ(convert_element<std::int32_t>(burn::f16(-3.75f)), -3);
  EXPECT_EQ(convert_element<float>(burn::bf16(2.5f)), 2.5f);
  // f16 -> bf16 goes through f32.
  EXPECT_EQ(convert_element<burn::bf16>(burn::f16(1.5f)).bits, burn::bf16(1.5f).bits);
}

TEST(ConvertElement, ToBoolIsNonZero) {
  EXPECT_FALSE(convert_element<bool>(0.0));
  EXPECT_FALSE(convert_element<bool>(-0.0f));
  EXPECT_TRUE(convert_element<bool>(0.5f));
  EXPECT_TRUE(convert_element<bool>(kNaN));  // NaN != 0, as in PyTorch
  EXPECT_TRUE(convert_element<bool>(std::int64_t{-3}));
  EXPECT_FALSE(convert_element<bool>(std::uint8_t{0}));
  EXPECT_TRUE(convert_element<bool>(burn::f16(2.0f)));
  EXPECT_FALSE(convert_element<bool>(burn::bf16(0.0f)));
  EXPECT_EQ(convert_element<float>(true), 1.0f);
  EXPECT_EQ(convert_element<std::int32_t>(false), 0);
}

TEST(ConvertElement, IntToFloat) {
  EXPECT_EQ(convert_element<double>(std::int64_t{-7}), -7.0);
  EXPECT_EQ(convert_element<float>(std::uint8_t{200}), 200.0f);
  EXPECT_EQ(convert_element<double>(std::int64_t{1} << 53), 9007199254740992.0);
}

TEST(ConvertElement, TensorDataConvertUsesTheSameRules) {
  burn::TensorData d(std::vector<double>{kNaN, 1e10, -1e10, 2.9, -2.9}, burn::Shape{5});
  EXPECT_EQ(d.convert(burn::DType::I32).to_vec<std::int32_t>(),
            (std::vector<std::int32_t>{0, lim<std::int32_t>::max(), lim<std::int32_t>::lowest(), 2, -2}));
  EXPECT_EQ(d.convert(burn::DType::U8).to_vec<std::uint8_t>(), (std::vector<std::uint8_t>{0, 255, 0, 2, 0}));
}

}  // namespace
