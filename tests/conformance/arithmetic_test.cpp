// Arithmetic: add/sub/mul/div/remainder/pow with broadcasting and scalar
// forms, neg, recip, clamp, abs, sign, max_pair/min_pair.
#include "conformance.hpp"

#include <limits>

namespace burn::conformance {
namespace {

class ArithFloat : public ComboTest {};
class ArithInt : public ComboTest {};
class ArithSignedInt : public ComboTest {};

const std::vector<double> k012345 = {0, 1, 2, 3, 4, 5};

TEST_P(ArithFloat, AddSubMulDivSameShape) {
  auto a = f<2>(k012345, {2, 3});
  auto b = f<2>({6, 7, 8, 9, 10, 11}, {2, 3});
  auto sum = a + b;
  EXPECT_EQ(sum.dtype(), dt());
  expect_tensor(sum, {2, 3}, {6, 8, 10, 12, 14, 16});
  expect_tensor(b - a, {2, 3}, {6, 6, 6, 6, 6, 6});
  expect_tensor(a * b, {2, 3}, {0, 7, 16, 27, 40, 55});
  expect_tensor(a / f<2>({1, 2, 4, 2, 8, 0.5}, {2, 3}), {2, 3}, {0, 0.5, 0.5, 1.5, 0.5, 10});
  expect_tensor(a.add(b), {2, 3}, {6, 8, 10, 12, 14, 16});
  expect_tensor(a.sub(b), {2, 3}, {-6, -6, -6, -6, -6, -6});
}

TEST_P(ArithFloat, Broadcasting) {
  auto a = f<2>(k012345, {2, 3});
  expect_tensor(a + f<2>({1, 2, 3}, {1, 3}), {2, 3}, {1, 3, 5, 4, 6, 8});
  expect_tensor(a * f<2>({2, -1}, {2, 1}), {2, 3}, {0, 2, 4, -3, -4, -5});
  // [2, 1] op [1, 3] broadcasts both sides.
  expect_tensor(f<2>({1, 2}, {2, 1}) - f<2>({0, 1, 2}, {1, 3}), {2, 3}, {1, 0, -1, 2, 1, 0});
  expect_tensor(f<3>({1, 2}, {2, 1, 1}) * f<3>({1, 2, 3}, {1, 1, 3}), {2, 1, 3}, {1, 2, 3, 2, 4, 6});
  expect_tensor(a / f<2>({2}, {1, 1}), {2, 3}, {0, 0.5, 1, 1.5, 2, 2.5});
}

TEST_P(ArithFloat, ScalarForms) {
  auto a = f<2>(k012345, {2, 3});
  expect_tensor(a + 2.0, {2, 3}, {2, 3, 4, 5, 6, 7});
  expect_tensor(a - 1.5, {2, 3}, {-1.5, -0.5, 0.5, 1.5, 2.5, 3.5});
  expect_tensor(a * 2, {2, 3}, {0, 2, 4, 6, 8, 10});
  expect_tensor(a / 4.0, {2, 3}, {0, 0.25, 0.5, 0.75, 1, 1.25});
  expect_tensor(3.0 + a, {2, 3}, {3, 4, 5, 6, 7, 8});
  expect_tensor(2.0 * a, {2, 3}, {0, 2, 4, 6, 8, 10});
  expect_tensor(2.0 - a, {2, 3}, {2, 1, 0, -1, -2, -3});
  expect_tensor(1.0 / f<1>({1, 2, 4, -0.5}, {4}), {4}, {1, 0.5, 0.25, -2});
  expect_tensor(a.add_scalar(1), {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_tensor(a.sub_scalar(1), {2, 3}, {-1, 0, 1, 2, 3, 4});
  expect_tensor(a.mul_scalar(-1), {2, 3}, {0, -1, -2, -3, -4, -5});
  expect_tensor(a.div_scalar(2), {2, 3}, {0, 0.5, 1, 1.5, 2, 2.5});
}

TEST_P(ArithFloat, DivisionByZeroGivesIeeeValues) {
  const double inf = std::numeric_limits<double>::infinity();
  auto out = f<1>({1, -1, 0}, {3}) / f<1>({0, 0, 0}, {3});
  expect_tensor(out, {3}, {inf, -inf, std::numeric_limits<double>::quiet_NaN()});
}

TEST_P(ArithFloat, RemainderTakesTheDivisorsSign) {
  auto lhs = f<1>({-3, -2, -1, 1, 2, 3}, {6});
  expect_tensor(lhs.remainder(f<1>({2, 3, 1, 2, 1, 3}, {6})), {6}, {1, 1, 0, 1, 0, 0});
  expect_tensor(lhs % f<1>({2, 3, 1, 2, 1, 3}, {6}), {6}, {1, 1, 0, 1, 0, 0});
  expect_tensor(lhs.remainder_scalar(2.0), {6}, {1, 0, 1, 1, 0, 1});
  expect_tensor(lhs % 2.0, {6}, {1, 0, 1, 1, 0, 1});
  expect_tensor(f<1>({1, 2, 3, 4, 5}, {5}).remainder_scalar(-1.5), {5}, {-0.5, -1, 0, -0.5, -1});
  expect_tensor(f<1>({-7, -3, 2, 6}, {4}).remainder(f<1>({-2.5, -2.1, -1.5, -3.25}, {4})), {4},
                {-2, rounded(-3, dt()) - rounded(-2.1, dt()) * 1, -1, -0.5});
  expect_tensor(f<1>({-7.5, -2.5, 2.5, 7.5}, {4}).remainder_scalar(3.0), {4}, {1.5, 0.5, 2.5, 1.5});
  expect_tensor(
      f<1>({-1, 1, -1.5, 1.5, -1, 1, -1.5, 1.5}, {8}).remainder(f<1>({10, 10, 10, 10, -10, -10, -10, -10}, {8})), {8},
      {9, 1, 8.5, 1.5, -1, -9, -1.5, -8.5});
  // Broadcast divisor.
  expect_tensor(f<2>({-3, 3, -4, 4}, {2, 2}).remainder(f<2>({2, -2}, {1, 2})), {2, 2}, {1, -1, 0, 0});
}

TEST_P(ArithFloat, Pow) {
  auto a = f<2>(k012345, {2, 3});
  expect_tensor(a.powf(f<2>({1, 1, 2, 3, 4, 2}, {2, 3})), {2, 3}, {0, 1, 4, 27, 256, 25});
  expect_tensor(a.powf_scalar(2.0), {2, 3}, {0, 1, 4, 9, 16, 25});
  expect_tensor(f<1>({1, 4, 9}, {3}).powf_scalar(0.5), {3}, {1, 2, 3});
  // Negative bases with integral exponents are defined (as in PyTorch).
  expect_tensor(f<1>({-2, -1, 3}, {3}).powf_scalar(3.0), {3}, {-8, -1, 27});
  expect_tensor(f<1>({-2, -1, 3}, {3}).powi_scalar(2), {3}, {4, 1, 9});
  expect_tensor(f<1>({2, 2, -3}, {3}).powi(ix<1>({0, 3, 2}, {3})), {3}, {1, 8, 9});
  expect_tensor(f<1>({2, 4}, {2}).powf_scalar(-1.0), {2}, {0.5, 0.25});
  // Broadcast exponent.
  expect_tensor(a.powf(f<2>({2}, {1, 1})), {2, 3}, {0, 1, 4, 9, 16, 25});
}

TEST_P(ArithFloat, NegRecipAbsSign) {
  auto a = f<2>({-2, -0.5, 0, 0.5, 2, 4}, {2, 3});
  expect_tensor(a.neg(), {2, 3}, {2, 0.5, 0, -0.5, -2, -4});
  expect_tensor(-a, {2, 3}, {2, 0.5, 0, -0.5, -2, -4});
  expect_tensor(a.abs(), {2, 3}, {2, 0.5, 0, 0.5, 2, 4});
  expect_tensor(a.sign(), {2, 3}, {-1, -1, 0, 1, 1, 1});
  expect_tensor(f<1>({-2, -0.5, 0.5, 2, 4}, {5}).recip(), {5}, {-0.5, -2, 2, 0.5, 0.25});
  const double inf = std::numeric_limits<double>::infinity();
  expect_tensor(f<1>({0}, {1}).recip(), {1}, {inf});
}

TEST_P(ArithFloat, Clamp) {
  auto a = f<1>({-3, -1, 0, 1.5, 2, 5}, {6});
  expect_tensor(a.clamp(-1, 2), {6}, {-1, -1, 0, 1.5, 2, 2});
  expect_tensor(a.clamp(-0.5, 1.0), {6}, {-0.5, -0.5, 0, 1, 1, 1});
  expect_tensor(a.clamp_min(0), {6}, {0, 0, 0, 1.5, 2, 5});
  expect_tensor(a.clamp_max(1.5), {6}, {-3, -1, 0, 1.5, 1.5, 1.5});
}

TEST_P(ArithFloat, MaxMinPair) {
  auto a = f<2>({1, 5, -2, 0}, {2, 2});
  auto b = f<2>({3, 2, -4, 0}, {2, 2});
  expect_tensor(a.max_pair(b), {2, 2}, {3, 5, -2, 0});
  expect_tensor(a.min_pair(b), {2, 2}, {1, 2, -4, 0});
  expect_tensor(a.max_pair(f<2>({0}, {1, 1})), {2, 2}, {1, 5, 0, 0});
}

TEST_P(ArithFloat, EmptyTensors) {
  auto e = f<2>({}, {0, 3});
  expect_tensor(e + e, {0, 3}, {});
  expect_tensor(e * 2.0, {0, 3}, {});
  expect_tensor(e + f<2>({1, 2, 3}, {1, 3}), {0, 3}, {});
  expect_tensor(e.neg(), {0, 3}, {});
  expect_tensor(e.clamp(0, 1), {0, 3}, {});
}

TEST_P(ArithFloat, Errors) {
  auto a = f<2>(k012345, {2, 3});
  auto b = f<2>(k012345, {3, 2});
  expect_op_error([&] { (void)(a + b); }, "add");
  expect_op_error([&] { (void)(a - b); }, "sub");
  expect_op_error([&] { (void)(a * b); }, "mul");
  expect_op_error([&] { (void)(a / b); }, "div");
  expect_op_error([&] { (void)a.remainder(b); }, "remainder");
  expect_op_error([&] { (void)a.powf(b); }, "pow");
  const DType other = dt() == DType::F32 ? DType::F64 : DType::F32;
  auto c = burn::testing::float_tensor<2>(k012345, {2, 3}, dev(), other);
  expect_op_error([&] { (void)(a + c); }, "add");
  expect_op_error([&] { (void)a.max_pair(c); }, "max_pair");
}

TEST_P(ArithInt, AddSubMulDiv) {
  auto a = in<2>({0, 1, 2, 3, 4, 5}, {2, 3});
  auto b = in<2>({6, 7, 8, 9, 10, 11}, {2, 3});
  auto sum = a + b;
  EXPECT_EQ(sum.dtype(), dt());
  expect_tensor(sum, {2, 3}, {6, 8, 10, 12, 14, 16});
  expect_tensor(b - a, {2, 3}, {6, 6, 6, 6, 6, 6});
  expect_tensor(a * b, {2, 3}, {0, 7, 16, 27, 40, 55});
  expect_tensor(b / in<2>({2, 2, 3, 4, 3, 5}, {2, 3}), {2, 3}, {3, 3, 2, 2, 3, 2});
  expect_tensor(b % in<2>({2, 2, 3, 4, 3, 5}, {2, 3}), {2, 3}, {0, 1, 2, 1, 1, 1});
  expect_tensor(a + in<2>({10, 20, 30}, {1, 3}), {2, 3}, {10, 21, 32, 13, 24, 35});
  expect_tensor(a + 2, {2, 3}, {2, 3, 4, 5, 6, 7});
  expect_tensor(b - 6, {2, 3}, {0, 1, 2, 3, 4, 5});
  expect_tensor(a * 3, {2, 3}, {0, 3, 6, 9, 12, 15});
  expect_tensor(b / 4, {2, 3}, {1, 1, 2, 2, 2, 2});
  expect_tensor(b % 4, {2, 3}, {2, 3, 0, 1, 2, 3});
  expect_tensor(20 - b, {2, 3}, {14, 13, 12, 11, 10, 9});
  expect_tensor(60 / b, {2, 3}, {10, 8, 7, 6, 6, 5});
  expect_tensor(2 * a, {2, 3}, {0, 2, 4, 6, 8, 10});
}

TEST_P(ArithInt, PowClampAbsSign) {
  auto a = in<2>({0, 1, 2, 3, 4, 5}, {2, 3});
  expect_tensor(a.powi(in<2>({1, 1, 2, 3, 2, 2}, {2, 3})), {2, 3}, {0, 1, 4, 27, 16, 25});
  expect_tensor(a.powi_scalar(2), {2, 3}, {0, 1, 4, 9, 16, 25});
  expect_tensor(a.clamp(1, 4), {2, 3}, {1, 1, 2, 3, 4, 4});
  expect_tensor(a.clamp_min(2), {2, 3}, {2, 2, 2, 3, 4, 5});
  expect_tensor(a.clamp_max(3), {2, 3}, {0, 1, 2, 3, 3, 3});
  expect_tensor(a.abs(), {2, 3}, {0, 1, 2, 3, 4, 5});
  expect_tensor(a.sign(), {2, 3}, {0, 1, 1, 1, 1, 1});
  expect_tensor(a.max_pair(in<2>({3, 3, 3, 3, 3, 3}, {2, 3})), {2, 3}, {3, 3, 3, 3, 4, 5});
  expect_tensor(a.min_pair(in<2>({3}, {1, 1})), {2, 3}, {0, 1, 2, 3, 3, 3});
}

TEST_P(ArithInt, DivisionByZeroIsAnError) {
  auto a = in<1>({1, 2, 3}, {3});
  expect_op_error([&] { (void)(a / in<1>({1, 0, 1}, {3})).to_data(); }, "div");
  expect_op_error([&] { (void)(a / 0).to_data(); }, "div");
  expect_op_error([&] { (void)(a % in<1>({1, 1, 0}, {3})).to_data(); }, "remainder");
  expect_op_error([&] { (void)(a % 0).to_data(); }, "remainder");
  expect_op_error([&] { (void)(6 / in<1>({2, 0}, {2})).to_data(); }, "div");
}

TEST_P(ArithSignedInt, NegativeOperands) {
  auto a = in<1>({-7, -3, 2, 6, 7}, {5});
  // Division truncates toward zero; the remainder takes the divisor's sign.
  expect_tensor(a / in<1>({2, 2, -4, 4, -2}, {5}), {5}, {-3, -1, 0, 1, -3});
  expect_tensor(a.remainder(in<1>({3, -2, -4, 4, -2}, {5})), {5}, {2, -1, -2, 2, -1});
  expect_tensor(in<1>({-3, -2, -1, 1, 2, 3}, {6}).remainder_scalar(2), {6}, {1, 0, 1, 1, 0, 1});
  expect_tensor(in<1>({-3, -2, -1, 1, 2, 3}, {6}) % -2, {6}, {-1, 0, -1, -1, 0, -1});
  expect_tensor(a / 2, {5}, {-3, -1, 1, 3, 3});
  expect_tensor(a.neg(), {5}, {7, 3, -2, -6, -7});
  expect_tensor(-a, {5}, {7, 3, -2, -6, -7});
  expect_tensor(a.abs(), {5}, {7, 3, 2, 6, 7});
  expect_tensor(in<1>({-4, 0, 9}, {3}).sign(), {3}, {-1, 0, 1});
  expect_tensor(a.clamp(-3, 3), {5}, {-3, -3, 2, 3, 3});
  expect_tensor(2 - a, {5}, {9, 5, 0, -4, -5});
  expect_tensor(in<1>({-2, 3}, {2}).powi_scalar(3), {2}, {-8, 27});
}

TEST_P(ArithInt, Errors) {
  auto a = in<2>({0, 1, 2, 3, 4, 5}, {2, 3});
  expect_op_error([&] { (void)(a + in<2>({1, 2}, {2, 1}).expand<2>({2, 2})); }, "add");
  const DType other = dt() == DType::I64 ? DType::I32 : DType::I64;
  auto c = burn::testing::int_tensor<2>({0, 1, 2, 3, 4, 5}, {2, 3}, dev(), other);
  expect_op_error([&] { (void)(a * c); }, "mul");
}

TEST(ArithDevices, DeviceMismatchNamesBothDevices) {
  const auto devices = burn::testing::all_devices();
  if (devices.size() < 2) return;  // a single-backend build has nothing to mix
  auto a = Tensor<1>::ones({3}, devices[0]);
  auto b = Tensor<1>::ones({3}, devices[1]);
  try {
    (void)(a + b);
    ADD_FAILURE() << "adding tensors of two devices must throw";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[add]", 0), 0u) << msg;
    EXPECT_NE(msg.find(devices[0].to_string()), std::string::npos) << msg;
    EXPECT_NE(msg.find(devices[1].to_string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("to_device"), std::string::npos) << msg;
  }
  expect_op_error([&] { (void)a.reshape<2>({3, 1}).matmul(b.reshape<2>({1, 3})); }, "matmul");
  expect_op_error([&] { (void)Tensor<1>::cat({a, b}, 0); }, "cat");
}

BURN_FLOAT_SUITE(ArithFloat);
BURN_INT_SUITE(ArithInt);
BURN_SIGNED_INT_SUITE(ArithSignedInt);

}  // namespace
}  // namespace burn::conformance
