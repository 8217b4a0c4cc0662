// The harness itself: a comparison that cannot fail proves nothing, so the
// value and statistics checks must catch planted disagreements, and the views
// must present the values they claim to.
#include "runner.hpp"
#include "statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace burn::differential {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TensorData f32(const std::vector<double>& v) { return TensorData(v, Shape{v.size()}).convert(DType::F32); }

TEST(DifferentialHarness, FloatComparisonFollowsTheTolerance) {
  const Errors same = compare_values(f32({1, kNaN, kInf, -kInf, 2.0001}), f32({1, kNaN, kInf, -kInf, 2}));
  EXPECT_EQ(same.mismatches, 0u);
  EXPECT_NEAR(same.abs, 1e-4, 1e-6);

  const Errors off = compare_values(f32({1, 2, 3}), f32({1, 2.1, 3}));
  EXPECT_EQ(off.mismatches, 1u);
  EXPECT_NEAR(off.abs, 0.1, 1e-6);
  EXPECT_NE(off.examples.find("flat 1"), std::string::npos);

  // NaN against a number and mismatched infinities are errors of infinite size.
  const Errors nan = compare_values(f32({kNaN, kInf}), f32({0, -kInf}));
  EXPECT_EQ(nan.mismatches, 2u);
  EXPECT_EQ(nan.abs, kInf);

  // Half dtypes get their looser default tolerance.
  const TensorData h1 = TensorData(std::vector<double>{100.0}, Shape{1}).convert(DType::BF16);
  const TensorData h2 = TensorData(std::vector<double>{101.0}, Shape{1}).convert(DType::BF16);
  EXPECT_EQ(compare_values(h1, h2).mismatches, 0u);
}

TEST(DifferentialHarness, IntAndBoolComparisonIsExact) {
  const TensorData a(std::vector<std::int64_t>{5, 7, -3}, Shape{3});
  EXPECT_EQ(compare_values(a, a).mismatches, 0u);
  const Errors e = compare_values(a, TensorData(std::vector<std::int64_t>{5, 8, -3}, Shape{3}));
  EXPECT_EQ(e.mismatches, 1u);
  EXPECT_EQ(e.abs, 1.0);
  // 64-bit values beyond double precision still differ.
  const TensorData big(std::vector<std::uint64_t>{(1ull << 60) + 1}, Shape{1});
  EXPECT_EQ(compare_values(big, TensorData(std::vector<std::uint64_t>{1ull << 60}, Shape{1})).mismatches, 1u);
  const TensorData t(std::vector<bool>{true, false}, Shape{2});
  EXPECT_EQ(compare_values(t, TensorData(std::vector<bool>{true, true}, Shape{2})).mismatches, 1u);
}

TEST(DifferentialHarness, StatisticsCatchAWrongDistribution) {
  const ir::Random uniform{Shape{4096}, ir::DistributionKind::Uniform, -1.0, 3.0, DType::F32};
  Rng rng(7);
  const TensorData a = random_data(uniform.shape, DType::F32, Dist::range(-1, 3), rng);
  const TensorData b = random_data(uniform.shape, DType::F32, Dist::range(-1, 3), rng);
  EXPECT_EQ(compare_statistics(uniform, a, b).problems, "");
  // Right mean, wrong spread; and the right spread shifted.
  const TensorData narrow = random_data(uniform.shape, DType::F32, Dist::range(0, 2), rng);
  EXPECT_NE(compare_statistics(uniform, narrow, b).problems, "");
  const TensorData shifted = random_data(uniform.shape, DType::F32, Dist::range(-0.9, 3.1), rng);
  EXPECT_NE(compare_statistics(uniform, a, shifted).problems.find("oracle: values"), std::string::npos);
  // Integers must be integral and below the open bound.
  const ir::Random ints{Shape{4096}, ir::DistributionKind::Uniform, 0.0, 4.0, DType::I32};
  const TensorData in_range = random_data(ints.shape, DType::I32, Dist::range(0, 3), rng);
  const TensorData too_high = random_data(ints.shape, DType::I32, Dist::range(0, 4), rng);
  EXPECT_EQ(compare_statistics(ints, in_range, in_range).problems, "");
  EXPECT_NE(compare_statistics(ints, too_high, in_range).problems, "");
}

Device any_device() {
#if BURN_HAS_NDARRAY
  return Device::ndarray();
#else
  return Device();
#endif
}

/// The view of an upload of 0, 1, 2, ... as the device presents it.
std::vector<float> through_view(const Shape& logical, View view) {
  const ViewPlan plan = plan_view(logical, view);
  std::vector<float> values(plan.base.num_elements());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  burn::detail::TensorRef t =
      burn::detail::from_data(TensorData(values, plan.base), {any_device(), DType::F32}, TensorKind::Float);
  for (const auto& op : plan.ops) t = burn::detail::execute1(op, {t});
  EXPECT_EQ(t->spec.shape, logical) << view_name(view);
  return burn::detail::to_data(t).to_vec<float>();
}

TEST(DifferentialHarness, ViewsPresentTheLogicalShape) {
  // Permuted: the upload is [3, 2], read transposed.
  EXPECT_EQ(through_view({2, 3}, View::Permuted), (std::vector<float>{0, 2, 4, 1, 3, 5}));
  // Strided: dim 0 takes odd rows forwards, dim 1 even columns backwards, of a [5, 5] upload.
  EXPECT_EQ(through_view({2, 2}, View::Strided), (std::vector<float>{9, 7, 19, 17}));
  EXPECT_EQ(through_view({2, 3}, View::Expanded), (std::vector<float>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(through_view({2, 2}, View::Flipped), (std::vector<float>{3, 2, 1, 0}));
  EXPECT_TRUE(through_view({0, 3}, View::Strided).empty());
  // Rank 1 cannot be permuted: it is strided instead.
  EXPECT_EQ(through_view({3}, View::Permuted), (std::vector<float>{1, 3, 5}));
}

TEST(DifferentialHarness, UniqueIndicesAreDistinctAlongTheDim) {
  Rng rng(3);
  const Input in = unique_index_input({3, 4}, 1, DType::I64, 6, View::Contiguous, rng);
  const auto v = in.base.to_vec<std::int64_t>();
  for (std::size_t row = 0; row < 3; ++row)
    for (std::size_t a = 0; a < 4; ++a)
      for (std::size_t b = a + 1; b < 4; ++b) EXPECT_NE(v[row * 4 + a], v[row * 4 + b]);
  for (auto x : v) EXPECT_TRUE(x >= 0 && x < 6);
}

}  // namespace
}  // namespace burn::differential
