// sort / argsort / topk: stable on ties in both directions, NaN largest.
#include "conformance.hpp"

#include <limits>

namespace burn::conformance {
namespace {

class SortFloat : public ComboTest {};
class SortInt : public ComboTest {};

// Values with ties; every value fits every int dtype.
const std::vector<std::int64_t> kTies = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};

TEST_P(SortInt, StableWithTies) {
  auto t = in<1>(kTies, {10});
  auto sorted = t.sort(0);
  EXPECT_EQ(sorted.dtype(), dt());
  expect_tensor(sorted, {10}, {1, 1, 2, 3, 3, 4, 5, 5, 6, 9});
  expect_tensor(t.argsort(0), {10}, {1, 3, 6, 0, 9, 2, 4, 8, 7, 5});
  auto [v, i] = t.sort_with_indices(0);
  expect_tensor(v, {10}, {1, 1, 2, 3, 3, 4, 5, 5, 6, 9});
  expect_tensor(i, {10}, {1, 3, 6, 0, 9, 2, 4, 8, 7, 5});
  // Descending keeps equal elements in their original order too.
  expect_tensor(t.sort_descending(0), {10}, {9, 6, 5, 5, 4, 3, 3, 2, 1, 1});
  expect_tensor(t.argsort_descending(0), {10}, {5, 7, 4, 8, 2, 0, 9, 6, 1, 3});
  auto [dv, di] = t.sort_descending_with_indices(0);
  expect_tensor(dv, {10}, {9, 6, 5, 5, 4, 3, 3, 2, 1, 1});
  expect_tensor(di, {10}, {5, 7, 4, 8, 2, 0, 9, 6, 1, 3});
}

TEST_P(SortInt, AlongEachDim) {
  auto t = in<3>({1, 4, 7, 2, 5, 6, 3, 0, 9, 8, 2, 8}, {2, 2, 3});
  expect_tensor(t.sort(0), {2, 2, 3}, {1, 0, 7, 2, 2, 6, 3, 4, 9, 8, 5, 8});
  expect_tensor(t.sort(1), {2, 2, 3}, {1, 4, 6, 2, 5, 7, 3, 0, 8, 8, 2, 9});
  expect_tensor(t.sort(2), {2, 2, 3}, {1, 4, 7, 2, 5, 6, 0, 3, 9, 2, 8, 8});
  expect_tensor(t.argsort(0), {2, 2, 3}, {0, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0, 1});
  expect_tensor(t.argsort(1), {2, 2, 3}, {0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0});
  // Ties (8, 8) keep their order.
  expect_tensor(t.argsort(2), {2, 2, 3}, {0, 1, 2, 0, 1, 2, 1, 0, 2, 1, 0, 2});
  auto [v, i] = t.sort_descending_with_indices(1);
  expect_tensor(v, {2, 2, 3}, {2, 5, 7, 1, 4, 6, 8, 2, 9, 3, 0, 8});
  expect_tensor(i, {2, 2, 3}, {1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1});
}

TEST_P(SortInt, Topk) {
  auto t = in<1>(kTies, {10});
  auto top = t.topk(3, 0);
  EXPECT_EQ(top.dtype(), dt());
  expect_tensor(top, {3}, {9, 6, 5});
  auto [v, i] = t.topk_with_indices(4, 0);
  expect_tensor(v, {4}, {9, 6, 5, 5});
  expect_tensor(i, {4}, {5, 7, 4, 8});
  auto m = in<2>({1, 7, 3, 9, 2, 8}, {2, 3});
  auto [mv, mi] = m.topk_with_indices(2, 1);
  expect_tensor(mv, {2, 2}, {7, 3, 9, 8});
  expect_tensor(mi, {2, 2}, {1, 2, 0, 2});
  expect_tensor(m.topk(1, 0), {1, 3}, {9, 7, 8});
  expect_tensor(m.topk(0, 1), {2, 0}, {});
}

TEST_P(SortFloat, SortAndArgsort) {
  auto t = f<1>({0.5, 1.2, -0.21, 0., 2.1, 0.94, -0.3, 2.3, 199.412, 4., 0.99, 3., -8.1}, {13});
  expect_tensor(t.sort(0), {13}, {-8.1, -0.3, -0.21, 0., 0.5, 0.94, 0.99, 1.2, 2.1, 2.3, 3., 4., 199.412});
  expect_tensor(t.argsort(0), {13}, {12, 6, 2, 3, 0, 5, 10, 1, 4, 7, 11, 9, 8});
  auto [v, i] = t.sort_descending_with_indices(0);
  expect_tensor(v, {13}, {199.412, 4., 3., 2.3, 2.1, 1.2, 0.99, 0.94, 0.5, 0., -0.21, -0.3, -8.1});
  expect_tensor(i, {13}, {8, 9, 11, 7, 4, 1, 10, 5, 0, 3, 2, 6, 12});
}

TEST_P(SortFloat, AlongEachDim) {
  auto t = f<3>({-0.5, 1.2, -0.21, 0., 2.1, 0.94, -0.3, 2.3, 4., 0.99, 3., -8.1}, {2, 2, 3});
  auto [v0, i0] = t.sort_with_indices(0);
  expect_tensor(v0, {2, 2, 3}, {-0.5, 1.2, -0.21, 0., 2.1, -8.1, -0.3, 2.3, 4., 0.99, 3., 0.94});
  expect_tensor(i0, {2, 2, 3}, {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0});
  auto [v1, i1] = t.sort_with_indices(1);
  expect_tensor(v1, {2, 2, 3}, {-0.5, 1.2, -0.21, 0., 2.1, 0.94, -0.3, 2.3, -8.1, 0.99, 3., 4.});
  expect_tensor(i1, {2, 2, 3}, {0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0});
  auto [v2, i2] = t.sort_with_indices(2);
  expect_tensor(v2, {2, 2, 3}, {-0.5, -0.21, 1.2, 0., 0.94, 2.1, -0.3, 2.3, 4., -8.1, 0.99, 3.});
  expect_tensor(i2, {2, 2, 3}, {0, 2, 1, 0, 2, 1, 0, 1, 2, 2, 0, 1});
  auto [dv, di] = t.sort_descending_with_indices(1);
  expect_tensor(dv, {2, 2, 3}, {0., 2.1, 0.94, -0.5, 1.2, -0.21, 0.99, 3., 4., -0.3, 2.3, -8.1});
  expect_tensor(di, {2, 2, 3}, {1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1});
}

TEST_P(SortFloat, StableTiesAndNanLargest) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto t = f<1>({2, -1, 2, nan, -1, 0}, {6});
  expect_tensor(t.sort(0), {6}, {-1, -1, 0, 2, 2, nan});
  expect_tensor(t.argsort(0), {6}, {1, 4, 5, 0, 2, 3});
  expect_tensor(t.sort_descending(0), {6}, {nan, 2, 2, 0, -1, -1});
  expect_tensor(t.argsort_descending(0), {6}, {3, 0, 2, 5, 1, 4});
  auto n = f<2>({-0.5, nan, 0., 0.94, -0.3, nan}, {3, 2});
  expect_tensor(n.sort(0), {3, 2}, {-0.5, 0.94, -0.3, nan, 0., nan});
  auto [tv, ti] = f<1>({1, 3, 3, 2}, {4}).topk_with_indices(2, 0);
  expect_tensor(tv, {2}, {3, 3});
  expect_tensor(ti, {2}, {1, 2});
}

TEST_P(SortFloat, EmptyAndErrors) {
  auto e = f<2>({}, {2, 0});
  expect_tensor(e.sort(1), {2, 0}, {});
  expect_tensor(e.argsort(0), {2, 0}, {});
  auto t = f<2>({1, 2, 3, 4}, {2, 2});
  expect_op_error([&] { (void)t.sort(2); }, "sort");
  expect_op_error([&] { (void)t.topk(3, 1); }, "topk");
  expect_op_error([&] { (void)t.topk(1, -3); }, "topk");
}

BURN_FLOAT_SUITE(SortFloat);
BURN_INT_SUITE(SortInt);

}  // namespace
}  // namespace burn::conformance
