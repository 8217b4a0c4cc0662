// Tensors past 2^24 elements: more than 65,535 workgroups of 256 threads, so
// element-wise dispatches need a 2-D grid, and reductions over dims that long
// take several passes (lavapipe ends a shader after 65,535 loop iterations,
// which once cut a sum of 2^24 ones to 131,070). Every element must count.
#include "vk_test.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using burn::DType;
using burn::Int;
using burn::Shape;
using burn::Tensor;
using burn::TensorData;
using namespace burn::vktest;

// 4 * (2^22 + 7) = 2^24 + 28 elements: 65,537 workgroups of 256.
constexpr std::int64_t kLarge = 4 * ((std::int64_t{1} << 22) + 7);
// The elements one reduction workgroup folds (reduce.cpp's kChunk).
constexpr std::int64_t kChunk = 256 * 32;

template <class T>
std::size_t count_wrong(const std::vector<T>& got, auto&& want) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want(static_cast<std::int64_t>(i))) ++wrong;
  return wrong;
}

Tensor<1, Int> arange_i32(std::int64_t n) { return Tensor<1, Int>::arange(0, n, {vk(), DType::I32}); }

TEST(VulkanLargeDispatch, EveryStepOfAMaskCountIsExact) {
  const auto x = arange_i32(kLarge);
  const auto xs = x.to_data().to_vec<std::int32_t>();
  ASSERT_EQ(xs.size(), static_cast<std::size_t>(kLarge));
  EXPECT_EQ(count_wrong(xs, [](std::int64_t i) { return static_cast<std::int32_t>(i); }), 0u) << "arange";

  const auto r = x.remainder(3);
  EXPECT_EQ(
      count_wrong(r.to_data().to_vec<std::int32_t>(), [](std::int64_t i) { return static_cast<std::int32_t>(i % 3); }),
      0u)
      << "remainder";

  const auto mask = r.equal_elem(0);
  EXPECT_EQ(count_wrong(mask.to_data().to_vec<bool>(), [](std::int64_t i) { return i % 3 == 0; }), 0u) << "equal_elem";

  const auto f = mask.to_float();
  EXPECT_EQ(count_wrong(f.to_data().to_vec<float>(), [](std::int64_t i) { return i % 3 == 0 ? 1.0f : 0.0f; }), 0u)
      << "bool -> f32";
  // Every partial sum is an integer below 2^24, so f32 is exact.
  EXPECT_EQ(f.sum().into_scalar<double>(), static_cast<double>((kLarge + 2) / 3)) << "sum";
}

TEST(VulkanLargeDispatch, IntReductionsPast2To24SeeEveryElement) {
  const std::int64_t n = kLarge;
  // i % 7 - 3 in [-3, 3]: small values, so the i32 sum is exact.
  const auto x = arange_i32(n).remainder(7) - 3;
  std::int64_t want_sum = 0;
  for (std::int64_t i = 0; i < n; ++i) want_sum += i % 7 - 3;
  EXPECT_EQ(x.sum().into_scalar<std::int64_t>(), want_sum);
  EXPECT_EQ(x.mean().into_scalar<std::int64_t>(), want_sum / n);  // an int mean truncates toward zero
  EXPECT_EQ(x.max().into_scalar<std::int64_t>(), 3);
  EXPECT_EQ(x.min().into_scalar<std::int64_t>(), -3);

  // The extremes at the very ends: only a reduction that reaches them finds them.
  const auto a = arange_i32(n);
  EXPECT_EQ(a.argmax(0).into_scalar<std::int64_t>(), n - 1);
  EXPECT_EQ(a.max().into_scalar<std::int64_t>(), n - 1);
  EXPECT_EQ(a.argmin(0).into_scalar<std::int64_t>(), 0);
  EXPECT_EQ((-a).argmin(0).into_scalar<std::int64_t>(), n - 1);
  EXPECT_TRUE(a.equal_elem(n - 1).any().into_scalar<bool>());
  EXPECT_FALSE(a.not_equal_elem(n - 1).all().into_scalar<bool>());
  EXPECT_TRUE(a.greater_equal_elem(0).all().into_scalar<bool>());
  const auto ones = Tensor<1, Int>::ones(Shape{static_cast<std::size_t>(n)}, {vk(), DType::I32});
  EXPECT_EQ(ones.sum().into_scalar<std::int64_t>(), n);
  EXPECT_EQ(ones.mask_fill(a.equal_elem(n - 1), -1).prod().into_scalar<std::int64_t>(), -1);

  // A tie spanning several workgroups' chunks and the partials between
  // them: the first index wins, as in one pass.
  const std::int64_t top = n - 3 * kChunk - 5;
  const auto clamped = a.clamp_max(top);
  EXPECT_EQ(clamped.argmax(0).into_scalar<std::int64_t>(), top);
  EXPECT_EQ(clamped.max().into_scalar<std::int64_t>(), top);
  EXPECT_EQ((-clamped).argmin(0).into_scalar<std::int64_t>(), top);
  EXPECT_EQ((-clamped).min().into_scalar<std::int64_t>(), -top);
}

TEST(VulkanLargeDispatch, FloatReductionsPast2To24AndTheFirstNaN) {
  const std::int64_t n = kLarge;
  const auto a = arange_i32(n);
  // Every other element 1: the sum (2^23 + 14) and every partial are exact in f32.
  const auto f = a.remainder(2).equal_elem(1).to_float();
  EXPECT_EQ(f.sum().into_scalar<double>(), static_cast<double>(n / 2));
  EXPECT_EQ(f.mean().into_scalar<double>(), 0.5);  // 2^24 + 28 is even, so exact in f32 too
  EXPECT_EQ(f.argmax(0).into_scalar<std::int64_t>(), 1);
  EXPECT_EQ(f.argmin(0).into_scalar<std::int64_t>(), 0);

  const auto last = f.mask_fill(a.equal_elem(n - 1), 7.0);
  EXPECT_EQ(last.max().into_scalar<double>(), 7.0);
  EXPECT_EQ(last.argmax(0).into_scalar<std::int64_t>(), n - 1);

  // NaN wins max and min, the first NaN the arg ops, whatever else is there.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::int64_t p1 = n - 2 * kChunk - 100, p2 = n - 3;
  const auto g =
      last.mask_fill(a.equal_elem(p1), nan).mask_fill(a.equal_elem(p2), nan).mask_fill(a.equal_elem(3), -9.0);
  EXPECT_EQ(g.argmax(0).into_scalar<std::int64_t>(), p1);
  EXPECT_EQ(g.argmin(0).into_scalar<std::int64_t>(), p1);
  EXPECT_TRUE(std::isnan(g.max().into_scalar<double>()));
  EXPECT_TRUE(std::isnan(g.min().into_scalar<double>()));
}

TEST(VulkanLargeDispatch, StridedReductionsOfSeveralLongColumns) {
  // [n, 3] i16 (96 MiB): three outputs, each folding a strided column of
  // 2^24 + 28 elements. Column j holds i % 5 + 10 j, 9 at row n - 2 and -1
  // at row n - 7.
  const std::int64_t n = kLarge;
  const auto a = arange_i32(n);
  const auto base = a.remainder(5).mask_fill(a.equal_elem(n - 2), 9).mask_fill(a.equal_elem(n - 7), -1);
  const auto cols =
      Tensor<2, Int>::from_data(TensorData(std::vector<std::int16_t>{0, 10, 20}, Shape{1, 3}), {vk(), DType::I16});
  const auto x = base.cast(DType::I16).unsqueeze_dim<2>(1) + cols;
  std::int64_t s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += i == n - 2 ? 9 : i == n - 7 ? -1 : i % 5;
  const auto sums = x.sum_dim(0).to_data().to_vec<std::int16_t>();
  const auto means = x.mean_dim(0).to_data().to_vec<std::int16_t>();
  const auto maxes = x.max_dim(0).to_data().to_vec<std::int16_t>();
  const auto argmaxes = x.argmax(0).cast(DType::I64).to_data().to_vec<std::int64_t>();
  const auto argmins = x.argmin(0).cast(DType::I64).to_data().to_vec<std::int64_t>();
  for (std::size_t j = 0; j < 3; ++j) {
    const std::int64_t total = s + 10 * static_cast<std::int64_t>(j) * n;
    SCOPED_TRACE(j);
    EXPECT_EQ(sums[j], static_cast<std::int16_t>(static_cast<std::uint16_t>(total & 0xffff)));  // i16 sums wrap
    EXPECT_EQ(means[j], static_cast<std::int16_t>(total / n));                                  // summed in 64 bits
    EXPECT_EQ(maxes[j], 9 + 10 * static_cast<std::int16_t>(j));
    EXPECT_EQ(argmaxes[j], n - 2);
    EXPECT_EQ(argmins[j], n - 7);
  }
}

TEST(VulkanLargeDispatch, ThreePassReductionsOfOneByteTensors) {
  // 2^26 + 77 one-byte elements (64 MiB): the first pass leaves 8,193
  // partials per output, the second 2, the third folds those.
  const std::size_t n = (std::size_t{1} << 26) + 77;
  const auto zeros = Tensor<1, Int>::zeros(Shape{n}, {vk(), DType::U8});
  const auto seven = Tensor<1, Int>::full(Shape{1}, 7, {vk(), DType::U8});
  const auto x = Tensor<1, Int>::cat({zeros, seven, Tensor<1, Int>::zeros(Shape{3}, {vk(), DType::U8})}, 0);
  EXPECT_EQ(x.argmax(0).into_scalar<std::int64_t>(), static_cast<std::int64_t>(n));
  EXPECT_EQ(x.max().into_scalar<std::int64_t>(), 7);
  EXPECT_EQ((zeros + 1).sum().into_scalar<std::int64_t>(), 77);  // u8 sums wrap: (2^26 + 77) mod 256
  EXPECT_TRUE(x.equal_elem(7).any().into_scalar<bool>());
  EXPECT_FALSE(x.equal_elem(0).all().into_scalar<bool>());
  EXPECT_TRUE(x.lower_equal_elem(7).all().into_scalar<bool>());
}

}  // namespace
