// Reductions: sum, prod, mean, max, min, argmax, argmin, var/var_bias,
// var_mean, max/min_dim_with_indices; whole-tensor ([1]) and per dim (kept).
#include "conformance.hpp"

#include <limits>

namespace burn::conformance {
namespace {

class ReduceFloat : public ComboTest {};
class ReduceInt : public ComboTest {};

const std::vector<double> k012345 = {0, 1, 2, 3, 4, 5};

TEST_P(ReduceFloat, SumMeanWholeAndPerDim) {
  auto a = f<2>(k012345, {2, 3});
  auto s = a.sum();
  EXPECT_EQ(s.dtype(), dt());
  expect_tensor(s, {1}, {15});
  expect_tensor(a.sum_dim(0), {1, 3}, {3, 5, 7});
  expect_tensor(a.sum_dim(1), {2, 1}, {3, 12});
  expect_tensor(a.sum_dim(-1), {2, 1}, {3, 12});
  expect_tensor(a.mean(), {1}, {2.5});
  expect_tensor(a.mean_dim(0), {1, 3}, {1.5, 2.5, 3.5});
  expect_tensor(a.mean_dim(1), {2, 1}, {1, 4});
  EXPECT_DOUBLE_EQ(a.sum().into_scalar<double>(), 15.0);
}

TEST_P(ReduceFloat, Prod) {
  auto a = f<2>({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_tensor(a.prod(), {1}, {720});
  expect_tensor(a.prod_dim(0), {1, 3}, {4, 10, 18});
  expect_tensor(a.prod_dim(1), {2, 1}, {6, 120});
  expect_tensor(f<1>({-2, 0.5, 3}, {3}).prod(), {1}, {-3});
}

TEST_P(ReduceFloat, MaxMinArg) {
  auto a = f<2>({1, 3, 3, 2, 2, -1}, {2, 3});
  expect_tensor(a.max(), {1}, {3});
  expect_tensor(a.min(), {1}, {-1});
  expect_tensor(a.max_dim(0), {1, 3}, {2, 3, 3});
  expect_tensor(a.max_dim(1), {2, 1}, {3, 2});
  expect_tensor(a.min_dim(0), {1, 3}, {1, 2, -1});
  expect_tensor(a.min_dim(1), {2, 1}, {1, -1});
  // First occurrence on ties.
  auto am = a.argmax(1);
  EXPECT_TRUE(is_int(am.dtype()));
  expect_tensor(am, {2, 1}, {1, 0});
  expect_tensor(a.argmin(1), {2, 1}, {0, 2});
  expect_tensor(a.argmax(0), {1, 3}, {1, 0, 0});
  expect_tensor(a.argmin(0), {1, 3}, {0, 1, 1});
  expect_tensor(f<1>({4, 4, 4}, {3}).argmax(0), {1}, {0});
  expect_tensor(f<1>({4, 4, 4}, {3}).argmin(0), {1}, {0});
}

TEST_P(ReduceFloat, MaxMinWithIndices) {
  auto a = f<2>({1, 3, 3, 2, 2, -1}, {2, 3});
  auto [mv, mi] = a.max_dim_with_indices(1);
  expect_tensor(mv, {2, 1}, {3, 2});
  expect_tensor(mi, {2, 1}, {1, 0});
  auto [nv, ni] = a.min_dim_with_indices(0);
  expect_tensor(nv, {1, 3}, {1, 2, -1});
  expect_tensor(ni, {1, 3}, {0, 1, 1});
  auto [v3, i3] = f<3>({0, 5, 2, 7, 1, 1, 9, 3}, {2, 2, 2}).max_dim_with_indices(-1);
  expect_tensor(v3, {2, 2, 1}, {5, 7, 1, 9});
  expect_tensor(i3, {2, 2, 1}, {1, 1, 0, 0});
}

TEST_P(ReduceFloat, Variance) {
  auto a = f<2>({0.5, 1.75, 0.25, -2, 3, -4, 5, 0}, {2, 4});
  expect_tensor(a.var(1), {2, 1}, {2.4375, 15.333333});
  expect_tensor(a.var_bias(1), {2, 1}, {1.828125, 11.5});
  expect_tensor(a.var(0), {1, 4}, {3.125, 16.53125, 11.28125, 2.0});
  expect_tensor(a.var_bias(0), {1, 4}, {1.5625, 8.265625, 5.640625, 1.0});
  auto [v, m] = a.var_mean(1);
  expect_tensor(v, {2, 1}, {2.4375, 15.333333});
  expect_tensor(m, {2, 1}, {0.125, 1.0});
  auto [vb, mb] = a.var_mean_bias(-1);
  expect_tensor(vb, {2, 1}, {1.828125, 11.5});
  expect_tensor(mb, {2, 1}, {0.125, 1.0});
}

TEST_P(ReduceFloat, NanPropagatesThroughMaxAndSum) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto a = f<1>({1, nan, 3}, {3});
  expect_tensor(a.sum(), {1}, {nan});
  expect_tensor(a.max(), {1}, {nan});
  expect_tensor(a.min(), {1}, {nan});
}

TEST_P(ReduceFloat, ThreeDims) {
  std::vector<double> v(24);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  auto a = f<3>(v, {2, 3, 4});
  expect_tensor(a.sum_dim(1), {2, 1, 4}, {12, 15, 18, 21, 48, 51, 54, 57});
  expect_tensor(a.max_dim(0), {1, 3, 4}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
  expect_tensor(a.argmax(2), {2, 3, 1}, {3, 3, 3, 3, 3, 3});
  expect_tensor(a.mean_dim(2), {2, 3, 1}, {1.5, 5.5, 9.5, 13.5, 17.5, 21.5});
}

TEST_P(ReduceFloat, EmptyTensors) {
  auto e = f<2>({}, {2, 0});
  // As PyTorch: the sum of nothing is 0, the product 1, the float mean NaN.
  expect_tensor(e.sum(), {1}, {0});
  expect_tensor(e.prod(), {1}, {1});
  expect_tensor(e.mean(), {1}, {std::numeric_limits<double>::quiet_NaN()});
  expect_tensor(e.sum_dim(1), {2, 1}, {0, 0});
  expect_tensor(e.prod_dim(1), {2, 1}, {1, 1});
  expect_tensor(e.sum_dim(0), {1, 0}, {});
  expect_tensor(e.max_dim(0), {1, 0}, {});
  expect_op_error([&] { (void)e.max(); }, "max");
  expect_op_error([&] { (void)e.min(); }, "min");
  expect_op_error([&] { (void)e.argmax(1); }, "argmax");
}

TEST_P(ReduceFloat, OutOfRangeDims) {
  auto a = f<2>(k012345, {2, 3});
  expect_op_error([&] { (void)a.sum_dim(2); }, "sum_dim");
  expect_op_error([&] { (void)a.mean_dim(-3); }, "mean_dim");
  expect_op_error([&] { (void)a.max_dim(7); }, "max_dim");
  expect_op_error([&] { (void)a.argmax(2); }, "argmax");
  expect_op_error([&] { (void)a.argmin(-5); }, "argmin");
  expect_op_error([&] { (void)a.var(2); }, "var");
  expect_op_error([&] { (void)a.max_dim_with_indices(3); }, "max_dim_with_indices");
}

TEST_P(ReduceInt, SumProdMeanMaxMin) {
  auto a = in<2>({0, 1, 2, 3, 4, 5}, {2, 3});
  auto s = a.sum();
  EXPECT_EQ(s.dtype(), dt());
  expect_tensor(s, {1}, {15});
  expect_tensor(a.sum_dim(0), {1, 3}, {3, 5, 7});
  expect_tensor(a.sum_dim(1), {2, 1}, {3, 12});
  // Int mean truncates.
  expect_tensor(a.mean(), {1}, {2});
  expect_tensor(a.mean_dim(0), {1, 3}, {1, 2, 3});
  expect_tensor(a.mean_dim(1), {2, 1}, {1, 4});
  auto p = in<2>({1, 2, 3, 1, 2, 1}, {2, 3});
  expect_tensor(p.prod(), {1}, {12});
  expect_tensor(p.prod_dim(1), {2, 1}, {6, 2});
  expect_tensor(a.max(), {1}, {5});
  expect_tensor(a.min(), {1}, {0});
  expect_tensor(a.max_dim(0), {1, 3}, {3, 4, 5});
  expect_tensor(a.min_dim(1), {2, 1}, {0, 3});
  auto t = in<2>({1, 3, 3, 2, 2, 0}, {2, 3});
  expect_tensor(t.argmax(1), {2, 1}, {1, 0});
  expect_tensor(t.argmin(1), {2, 1}, {0, 2});
  auto [v, i] = t.max_dim_with_indices(0);
  expect_tensor(v, {1, 3}, {2, 3, 3});
  expect_tensor(i, {1, 3}, {1, 0, 0});
  auto [nv, ni] = t.min_dim_with_indices(1);
  expect_tensor(nv, {2, 1}, {1, 0});
  expect_tensor(ni, {2, 1}, {0, 2});
  auto e = in<2>({}, {0, 3});
  expect_tensor(e.sum(), {1}, {0});
  expect_tensor(e.prod(), {1}, {1});
  expect_tensor(e.sum_dim(0), {1, 3}, {0, 0, 0});
}

BURN_FLOAT_SUITE(ReduceFloat);
BURN_INT_SUITE(ReduceInt);

}  // namespace
}  // namespace burn::conformance
