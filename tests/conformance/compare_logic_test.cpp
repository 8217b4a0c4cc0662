// Comparisons (tensor and _elem forms) and boolean logic (and/or/xor/not,
// any/all, any_dim/all_dim).
#include "conformance.hpp"

#include <limits>

namespace burn::conformance {
namespace {

class CompareFloat : public ComboTest {};
class CompareInt : public ComboTest {};

template <class T>
void check_six(const T& a, const T& b) {
  auto eq = a.equal(b);
  EXPECT_EQ(eq.dtype(), DType::Bool);
  // a = [[0, 1, 2], [3, 4, 5]], b = [[0, 2, 1], [3, 3, 6]]
  expect_tensor(eq, {2, 3}, {1, 0, 0, 1, 0, 0});
  expect_tensor(a.not_equal(b), {2, 3}, {0, 1, 1, 0, 1, 1});
  expect_tensor(a.greater(b), {2, 3}, {0, 0, 1, 0, 1, 0});
  expect_tensor(a.greater_equal(b), {2, 3}, {1, 0, 1, 1, 1, 0});
  expect_tensor(a.lower(b), {2, 3}, {0, 1, 0, 0, 0, 1});
  expect_tensor(a.lower_equal(b), {2, 3}, {1, 1, 0, 1, 0, 1});
  expect_tensor(a.equal_elem(2), {2, 3}, {0, 0, 1, 0, 0, 0});
  expect_tensor(a.not_equal_elem(2), {2, 3}, {1, 1, 0, 1, 1, 1});
  expect_tensor(a.greater_elem(2), {2, 3}, {0, 0, 0, 1, 1, 1});
  expect_tensor(a.greater_equal_elem(2), {2, 3}, {0, 0, 1, 1, 1, 1});
  expect_tensor(a.lower_elem(2), {2, 3}, {1, 1, 0, 0, 0, 0});
  expect_tensor(a.lower_equal_elem(2), {2, 3}, {1, 1, 1, 0, 0, 0});
}

TEST_P(CompareFloat, SixComparisons) { check_six(f<2>({0, 1, 2, 3, 4, 5}, {2, 3}), f<2>({0, 2, 1, 3, 3, 6}, {2, 3})); }

TEST_P(CompareFloat, BroadcastAndFractionalScalars) {
  auto a = f<2>({0, 1, 2, 3, 4, 5}, {2, 3});
  expect_tensor(a.greater(f<2>({1, 1, 1}, {1, 3})), {2, 3}, {0, 0, 1, 1, 1, 1});
  expect_tensor(a.lower(f<2>({1, 4}, {2, 1})), {2, 3}, {1, 0, 0, 1, 0, 0});
  expect_tensor(a.greater_elem(1.5), {2, 3}, {0, 0, 1, 1, 1, 1});
  expect_tensor(a.lower_equal_elem(-0.5), {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST_P(CompareFloat, NanComparesUnequal) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto a = f<1>({nan, 1}, {2});
  expect_tensor(a.equal(a), {2}, {0, 1});
  expect_tensor(a.not_equal(a), {2}, {1, 0});
  expect_tensor(a.greater_elem(0), {2}, {0, 1});
  expect_tensor(a.lower_equal_elem(5), {2}, {0, 1});
}

TEST_P(CompareFloat, EmptyAndErrors) {
  auto e = f<2>({}, {0, 2});
  expect_tensor(e.equal(e), {0, 2}, {});
  expect_tensor(e.greater_elem(1), {0, 2}, {});
  expect_op_error([&] { (void)f<1>({1, 2}, {2}).equal(f<1>({1, 2, 3}, {3})); }, "equal");
  expect_op_error([&] { (void)f<1>({1, 2}, {2}).lower(f<1>({1, 2, 3}, {3})); }, "lower");
}

TEST_P(CompareInt, SixComparisons) {
  check_six(in<2>({0, 1, 2, 3, 4, 5}, {2, 3}), in<2>({0, 2, 1, 3, 3, 6}, {2, 3}));
  expect_tensor(in<2>({0, 1, 2, 3, 4, 5}, {2, 3}).greater_equal(in<2>({3}, {1, 1})), {2, 3}, {0, 0, 0, 1, 1, 1});
}

class LogicTest : public ::testing::TestWithParam<DeviceDType> {
 protected:
  const Device& dev() const { return GetParam().device; }
  template <std::size_t D>
  Tensor<D, Bool> bl(const std::vector<bool>& v, Shape s) const {
    return burn::testing::bool_tensor<D>(v, std::move(s), dev());
  }
};

TEST_P(LogicTest, AndOrXorNot) {
  auto a = bl<2>({true, true, false, false}, {2, 2});
  auto b = bl<2>({true, false, true, false}, {2, 2});
  auto both = a.bool_and(b);
  EXPECT_EQ(both.dtype(), DType::Bool);
  expect_tensor(both, {2, 2}, {1, 0, 0, 0});
  expect_tensor(a.bool_or(b), {2, 2}, {1, 1, 1, 0});
  expect_tensor(a.bool_xor(b), {2, 2}, {0, 1, 1, 0});
  expect_tensor(a.bool_not(), {2, 2}, {0, 0, 1, 1});
  expect_tensor(a.equal(b), {2, 2}, {1, 0, 0, 1});
  expect_tensor(a.not_equal(b), {2, 2}, {0, 1, 1, 0});
  expect_tensor(a.equal_elem(true), {2, 2}, {1, 1, 0, 0});
  // Broadcast.
  expect_tensor(a.bool_and(bl<2>({true, false}, {1, 2})), {2, 2}, {1, 0, 0, 0});
  expect_op_error([&] { (void)a.bool_or(bl<2>({true, false, true}, {1, 3})); }, "bool_or");
}

TEST_P(LogicTest, AnyAll) {
  auto t = bl<2>({true, false, false, false, true, true}, {2, 3});
  auto any = t.any();
  EXPECT_EQ(any.dtype(), DType::Bool);
  expect_tensor(any, {1}, {1});
  expect_tensor(t.all(), {1}, {0});
  expect_tensor(bl<1>({false, false}, {2}).any(), {1}, {0});
  expect_tensor(bl<1>({true, true}, {2}).all(), {1}, {1});
  expect_tensor(t.any_dim(0), {1, 3}, {1, 1, 1});
  expect_tensor(t.all_dim(0), {1, 3}, {0, 0, 0});
  expect_tensor(t.any_dim(1), {2, 1}, {1, 1});
  expect_tensor(t.all_dim(1), {2, 1}, {0, 0});
  expect_tensor(bl<2>({true, false, true, true}, {2, 2}).all_dim(-1), {2, 1}, {0, 1});
  expect_op_error([&] { (void)t.any_dim(2); }, "any_dim");
  expect_op_error([&] { (void)t.all_dim(-3); }, "all_dim");
}

TEST_P(LogicTest, AnyAllOfNumbers) {
  auto f = burn::testing::float_tensor<2>({0, 0.5, 0, 0}, {2, 2}, dev(), DType::F32);
  expect_tensor(f.any(), {1}, {1});
  expect_tensor(f.all(), {1}, {0});
  expect_tensor(f.any_dim(1), {2, 1}, {1, 0});
  auto i = burn::testing::int_tensor<1>({3, -1, 2}, {3}, dev());
  expect_tensor(i.all(), {1}, {1});
  expect_tensor(i.any_dim(0), {1}, {1});
}

TEST_P(LogicTest, EmptyReductions) {
  // As PyTorch: any of nothing is false, all of nothing is true.
  auto e = bl<2>({}, {2, 0});
  expect_tensor(e.any(), {1}, {0});
  expect_tensor(e.all(), {1}, {1});
  expect_tensor(e.any_dim(1), {2, 1}, {0, 0});
  expect_tensor(e.all_dim(1), {2, 1}, {1, 1});
  expect_tensor(e.any_dim(0), {1, 0}, {});
}

std::vector<DeviceDType> bool_combos() { return burn::testing::combos({DType::Bool}); }

BURN_FLOAT_SUITE(CompareFloat);
BURN_INT_SUITE(CompareInt);
INSTANTIATE_TEST_SUITE_P(Bool, LogicTest, ::testing::ValuesIn(bool_combos()), burn::testing::combo_name);

}  // namespace
}  // namespace burn::conformance
