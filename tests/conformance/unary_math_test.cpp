// Float unary math (expected values from Python's math module / PyTorch,
// inputs representable in bf16), rounding, atan2, is_nan and is_inf.
#include "conformance.hpp"

#include <limits>

namespace burn::conformance {
namespace {

class UnaryFloat : public ComboTest {};

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST_P(UnaryFloat, ExpLog) {
  auto out = f<2>({-1, 0, 0.5, 2}, {2, 2}).exp();
  EXPECT_EQ(out.dtype(), dt());
  expect_tensor(out, {2, 2}, {0.367879, 1.0, 1.64872, 7.38906});
  expect_tensor(f<1>({0.5, 1, 2, 10}, {4}).log(), {4}, {-0.693147, 0.0, 0.693147, 2.30259});
  expect_tensor(f<1>({0, 0.5, 1, 3}, {4}).log1p(), {4}, {0.0, 0.405465, 0.693147, 1.38629});
  expect_tensor(f<1>({-1, 0, 0.5, 2}, {4}).expm1(), {4}, {-0.632121, 0.0, 0.648721, 6.38906});
  expect_tensor(f<1>({0, -1}, {2}).log(), {2}, {-kInf, kNaN});
}

TEST_P(UnaryFloat, SqrtRsqrt) {
  expect_tensor(f<1>({0, 0.25, 2, 9}, {4}).sqrt(), {4}, {0.0, 0.5, 1.41421, 3.0});
  expect_tensor(f<1>({0.25, 1, 2, 4}, {4}).rsqrt(), {4}, {2.0, 1.0, 0.707107, 0.5});
  expect_tensor(f<1>({-1}, {1}).sqrt(), {1}, {kNaN});
  expect_tensor(f<1>({0}, {1}).rsqrt(), {1}, {kInf});
}

TEST_P(UnaryFloat, Trigonometric) {
  expect_tensor(f<1>({0, 0.5, 1, -2}, {4}).sin(), {4}, {0.0, 0.479426, 0.841471, -0.909297});
  expect_tensor(f<1>({0, 0.5, 1, -2}, {4}).cos(), {4}, {1.0, 0.877583, 0.540302, -0.416147});
  expect_tensor(f<1>({0, 0.5, 1, -1}, {4}).tan(), {4}, {0.0, 0.546302, 1.55741, -1.55741});
  expect_tensor(f<1>({0, 0.5, -0.25, 1}, {4}).asin(), {4}, {0.0, 0.523599, -0.25268, 1.5708});
  expect_tensor(f<1>({0, 0.5, -0.25, 1}, {4}).acos(), {4}, {1.5708, 1.0472, 1.82348, 0.0});
  expect_tensor(f<1>({0, 0.5, -1, 4}, {4}).atan(), {4}, {0.0, 0.463648, -0.785398, 1.32582});
  expect_tensor(f<1>({2}, {1}).asin(), {1}, {kNaN});
}

TEST_P(UnaryFloat, Hyperbolic) {
  expect_tensor(f<1>({0, 0.5, -1, 2}, {4}).sinh(), {4}, {0.0, 0.521095, -1.1752, 3.62686});
  expect_tensor(f<1>({0, 0.5, -1, 2}, {4}).cosh(), {4}, {1.0, 1.12763, 1.54308, 3.7622});
  expect_tensor(f<1>({0, 0.5, -1, 2}, {4}).tanh(), {4}, {0.0, 0.462117, -0.761594, 0.964028});
  expect_tensor(f<1>({0, 0.5, -1, 2}, {4}).asinh(), {4}, {0.0, 0.481212, -0.881374, 1.44364});
  expect_tensor(f<1>({1, 1.5, 2, 4}, {4}).acosh(), {4}, {0.0, 0.962424, 1.31696, 2.06344});
  expect_tensor(f<1>({0, 0.5, -0.25, 0.75}, {4}).atanh(), {4}, {0.0, 0.549306, -0.255413, 0.972955});
  expect_tensor(f<1>({1, -1}, {2}).atanh(), {2}, {kInf, -kInf});
}

TEST_P(UnaryFloat, Erf) { expect_tensor(f<1>({0, 0.5, -1, 2}, {4}).erf(), {4}, {0.0, 0.5205, -0.842701, 0.995322}); }

TEST_P(UnaryFloat, Atan2) {
  auto y = f<1>({1, 1, -1, 0, 2, -0.5}, {6});
  auto x = f<1>({1, -1, -1, -1, 0.5, 2}, {6});
  expect_tensor(y.atan2(x), {6}, {0.785398, 2.35619, -2.35619, 3.14159, 1.32582, -0.244979});
  // Broadcast x.
  expect_tensor(f<2>({1, -1}, {2, 1}).atan2(f<2>({1, -1}, {1, 2})), {2, 2}, {0.785398, 2.35619, -0.785398, -2.35619});
}

TEST_P(UnaryFloat, RoundingHalfToEven) {
  auto a = f<1>({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.25, -1.75}, {8});
  expect_tensor(a.round(), {8}, {-2, -2, -0.0, 0, 2, 2, 0, -2});
  auto b = f<1>({-1.5, -0.5, 0.5, 1.5, 2.0, -2.0}, {6});
  expect_tensor(b.floor(), {6}, {-2, -1, 0, 1, 2, -2});
  expect_tensor(b.ceil(), {6}, {-1, -0.0, 1, 2, 2, -2});
  expect_tensor(b.trunc(), {6}, {-1, -0.0, 0, 1, 2, -2});
  expect_tensor(f<1>({3.5, 4.5, -3.5}, {3}).round(), {3}, {4, 4, -4});
}

TEST_P(UnaryFloat, IsNanIsInf) {
  auto a = f<1>({1, kNaN, kInf, -kInf, 0}, {5});
  auto nan = a.is_nan();
  EXPECT_EQ(nan.dtype(), DType::Bool);
  expect_tensor(nan, {5}, {0, 1, 0, 0, 0});
  expect_tensor(a.is_inf(), {5}, {0, 0, 1, 1, 0});
}

TEST_P(UnaryFloat, NanPropagates) {
  auto a = f<1>({kNaN}, {1});
  for (auto out : {a.exp(), a.log(), a.sqrt(), a.sin(), a.tanh(), a.abs(), a.round(), a.floor(), a.neg()})
    expect_tensor(out, {1}, {kNaN});
}

TEST_P(UnaryFloat, EmptyTensors) {
  auto e = f<2>({}, {2, 0});
  expect_tensor(e.exp(), {2, 0}, {});
  expect_tensor(e.log(), {2, 0}, {});
  expect_tensor(e.is_nan(), {2, 0}, {});
}

TEST_P(UnaryFloat, Errors) {
  expect_op_error([&] { (void)f<1>({1, 2}, {2}).atan2(f<1>({1, 2, 3}, {3})); }, "atan2");
}

TEST(UnaryInt, FloatOnlyOpsRejectIntDTypes) {
  // The typed API forbids them at compile time; the IR still refuses an int
  // tensor reaching a float op through the untyped layer.
  for (const auto& d : burn::testing::all_devices()) {
    auto t = burn::testing::int_tensor<1>({1, 2}, {2}, d);
    expect_op_error([&] { (void)burn::detail::unary(ir::UnaryOp::Exp, t.ref()); }, "exp");
    expect_op_error([&] { (void)burn::detail::unary(ir::UnaryOp::Sqrt, t.ref()); }, "sqrt");
  }
}

BURN_FLOAT_SUITE(UnaryFloat);

}  // namespace
}  // namespace burn::conformance
