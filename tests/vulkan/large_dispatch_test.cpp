// Tensors past 2^24 elements: more than 65,535 workgroups of 256 threads, so
// element-wise dispatches need a 2-D grid and a whole-tensor reduction folds
// a dim longer than any one workgroup covers. Every element must be right.
#include "vk_test.hpp"

#include <cstdint>
#include <vector>

namespace {

using burn::DType;
using burn::Int;
using burn::Tensor;
using namespace burn::vktest;

// 4 * (2^22 + 7) = 2^24 + 28 elements: 65,537 workgroups of 256.
constexpr std::int64_t kLarge = 4 * ((std::int64_t{1} << 22) + 7);

template <class T>
std::size_t count_wrong(const std::vector<T>& got, auto&& want) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want(static_cast<std::int64_t>(i))) ++wrong;
  return wrong;
}

TEST(VulkanLargeDispatch, EveryStepOfAMaskCountIsExact) {
  const auto x = Tensor<1, Int>::arange(0, kLarge, {vk(), DType::I32});
  const auto xs = x.to_data().to_vec<std::int32_t>();
  ASSERT_EQ(xs.size(), static_cast<std::size_t>(kLarge));
  EXPECT_EQ(count_wrong(xs, [](std::int64_t i) { return static_cast<std::int32_t>(i); }), 0u) << "arange";

  const auto r = x.remainder(3);
  EXPECT_EQ(count_wrong(r.to_data().to_vec<std::int32_t>(), [](std::int64_t i) { return static_cast<std::int32_t>(i % 3); }),
            0u)
      << "remainder";

  const auto mask = r.equal_elem(0);
  EXPECT_EQ(count_wrong(mask.to_data().to_vec<bool>(), [](std::int64_t i) { return i % 3 == 0; }), 0u) << "equal_elem";

  const auto f = mask.to_float();
  EXPECT_EQ(count_wrong(f.to_data().to_vec<float>(), [](std::int64_t i) { return i % 3 == 0 ? 1.0f : 0.0f; }), 0u)
      << "bool -> f32";

  // Every partial sum is an integer below 2^24, so f32 is exact. Four rows:
  // one dim of 2^24+28 is past what one reduction folds (see below).
  EXPECT_EQ(f.reshape({std::int64_t{4}, kLarge / 4}).sum_dim(1).sum().into_scalar<double>(),
            static_cast<double>((kLarge + 2) / 3))
      << "sum";
}

TEST(VulkanLargeDispatch, ReductionsUpToTheFoldLimitSeeEveryElement) {
  // 256 x 65,000 elements: the longest dim one reduction folds on vulkan.
  constexpr std::int64_t n = std::int64_t{256} * 65000;
  // i % 7 - 3 in [-3, 3]: small values, so the i32 sum is exact.
  const auto x = Tensor<1, Int>::arange(0, n, {vk(), DType::I32}).remainder(7) - 3;
  std::int64_t want_sum = 0;
  for (std::int64_t i = 0; i < n; ++i) want_sum += i % 7 - 3;
  EXPECT_EQ(x.sum().into_scalar<std::int64_t>(), want_sum);
  EXPECT_EQ(x.max().into_scalar<std::int64_t>(), 3);
  EXPECT_EQ(x.min().into_scalar<std::int64_t>(), -3);
  // The extremes at the very ends: only a reduction that reaches them finds them.
  const auto a = Tensor<1, Int>::arange(0, n, {vk(), DType::I32});
  EXPECT_EQ(a.argmax(0).into_scalar<std::int64_t>(), n - 1);
  EXPECT_EQ(a.max().into_scalar<std::int64_t>(), n - 1);
  EXPECT_TRUE(a.equal_elem(n - 1).any().into_scalar<bool>());
}

TEST(VulkanLargeDispatch, ALongerDimIsRefusedNotSummedWrong) {
  // Past the fold limit lavapipe drops the end of the dim; the backend says so.
  const auto a = Tensor<1, Int>::arange(0, kLarge, {vk(), DType::I32});
  burn::testing::expect_error([&] { a.sum().to_data(); }, "reshape it into [k,");
}

}  // namespace
