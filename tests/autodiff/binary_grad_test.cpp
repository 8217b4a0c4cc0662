// Binary arithmetic (tensor-tensor with broadcasting, tensor-scalar,
// scalar-tensor), pow, remainder, max/min pairs and atan2 against central
// differences.
#include "grad_check.hpp"

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

class BinaryGrad : public AdTest {
 protected:
  /// Checks op on equal shapes and on three broadcasting layouts.
  template <class F>
  void check_broadcasting(F&& op, double lo_a, double hi_a, double lo_b, double hi_b, bool b_signed = false) {
    auto b_values = [&](std::size_t n) {
      return b_signed ? rng.signed_magnitudes(n, lo_b, hi_b) : rng.uniform(n, lo_b, hi_b);
    };
    {
      SCOPED_TRACE("[2, 3] with [2, 3]");
      check(op, Input<2>{rng.uniform(6, lo_a, hi_a), {2, 3}}, Input<2>{b_values(6), {2, 3}});
    }
    {
      SCOPED_TRACE("[2, 3] with [1, 3]");
      check(op, Input<2>{rng.uniform(6, lo_a, hi_a), {2, 3}}, Input<2>{b_values(3), {1, 3}});
    }
    {
      SCOPED_TRACE("[2, 1] with [2, 3]");
      check(op, Input<2>{rng.uniform(2, lo_a, hi_a), {2, 1}}, Input<2>{b_values(6), {2, 3}});
    }
    {
      SCOPED_TRACE("[1, 3, 1] with [2, 1, 2]: both sides broadcast");
      check(op, Input<3>{rng.uniform(3, lo_a, hi_a), {1, 3, 1}}, Input<3>{b_values(4), {2, 1, 2}});
    }
  }
};

TEST_P(BinaryGrad, Add) {
  check_broadcasting([](auto a, auto b) { return a + b; }, -2, 2, -2, 2);
}
TEST_P(BinaryGrad, Sub) {
  check_broadcasting([](auto a, auto b) { return a - b; }, -2, 2, -2, 2);
}
TEST_P(BinaryGrad, Mul) {
  check_broadcasting([](auto a, auto b) { return a * b; }, -2, 2, -2, 2);
}
TEST_P(BinaryGrad, Div) {
  check_broadcasting([](auto a, auto b) { return a / b; }, -2, 2, 0.5, 2, true);
}
TEST_P(BinaryGrad, Powf) {
  check_broadcasting([](auto a, auto b) { return a.powf(b); }, 0.5, 2, -2, 2);
}
TEST_P(BinaryGrad, Atan2) {
  check_broadcasting([](auto a, auto b) { return a.atan2(b); }, -2, 2, 0.3, 2, true);
}
TEST_P(BinaryGrad, Remainder) {
  // a / b stays at least 0.05 away from an integer, where remainder jumps.
  const std::vector<double> a{2.3, -1.7, 0.4, 5.1, -3.3, 0.9};
  const std::vector<double> b{1.5, 0.8, -0.7, 2.0, -1.2, 0.6};
  check([](auto x, auto y) { return x.remainder(y); }, Input<2>{a, {2, 3}}, Input<2>{b, {2, 3}});
  check([](auto x, auto y) { return x % y; }, Input<2>{a, {2, 3}}, Input<2>{{1.5, -0.8, 0.7}, {1, 3}});
}
TEST_P(BinaryGrad, MaxPairMinPair) {
  // One distinct set split between a and b: no ties.
  const auto v = rng.distinct(12, -3, 3);
  const Input<2> a{{v.begin(), v.begin() + 6}, {2, 3}};
  const Input<2> b{{v.begin() + 6, v.end()}, {2, 3}};
  check([](auto x, auto y) { return x.max_pair(y); }, a, b);
  check([](auto x, auto y) { return x.min_pair(y); }, a, b);
  const Input<2> row{{v.begin() + 6, v.begin() + 9}, {1, 3}};
  check([](auto x, auto y) { return x.max_pair(y); }, a, row);
  check([](auto x, auto y) { return x.min_pair(y); }, a, row);
}

TEST_P(BinaryGrad, SameTensorOnBothSides) {
  check([](auto x) { return x * x + x / x.exp() - x; }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  check([](auto x) { return x.powf(x); }, Input<1>{rng.uniform(4, 0.5, 2), {4}});
}

TEST_P(BinaryGrad, ScalarRightHandSide) {
  const Input<2> x{rng.uniform(6, -2, 2), {2, 3}};
  check([](auto t) { return t + 1.5; }, x);
  check([](auto t) { return t - 0.5; }, x);
  check([](auto t) { return t * -2.5; }, x);
  check([](auto t) { return t / 4.0; }, x);
  check([](auto t) { return t.add_scalar(2).mul_scalar(3).sub_scalar(1).div_scalar(-2); }, x);
  check([](auto t) { return t.remainder_scalar(0.7); }, Input<2>{{2.3, -1.75, 0.4, 5.1, -3.3, 0.95}, {2, 3}});
}

TEST_P(BinaryGrad, ScalarLeftHandSide) {
  const Input<2> x{rng.signed_magnitudes(6, 0.5, 2), {2, 3}};
  check([](auto t) { return 2.0 - t; }, x);
  check([](auto t) { return 3.0 / t; }, x);
  check([](auto t) { return 1.5 + t; }, x);
  check([](auto t) { return -0.5 * t; }, x);
}

TEST_P(BinaryGrad, PowScalar) {
  const Input<2> pos{rng.uniform(6, 0.3, 2), {2, 3}};
  check([](auto t) { return t.powf_scalar(2.5); }, pos);
  check([](auto t) { return t.powf_scalar(-1.5); }, pos);
  check([](auto t) { return t.powf_scalar(0.5); }, pos);
  // Integer exponents are defined on negative bases too.
  const Input<2> any{rng.signed_magnitudes(6, 0.3, 2), {2, 3}};
  check([](auto t) { return t.powi_scalar(3); }, any);
  check([](auto t) { return t.powi_scalar(2); }, any);
  check([](auto t) { return t.powi_scalar(-2); }, any);
}

TEST_P(BinaryGrad, PowiWithIntExponentTensor) {
  // The exponent is an Int tensor: only the (possibly negative) base gets a gradient.
  const auto e = ints<2>({2, 3, 0, -1, 1, 4}, {2, 3});
  check([e](auto t) { return t.powi(e); }, Input<2>{rng.signed_magnitudes(6, 0.4, 1.8), {2, 3}});
}

TEST_P(BinaryGrad, OnlyTrackedInputsGetGradients) {
  const auto a = leaf<2>({1, 2, 3, 4}, {2, 2});
  const auto b = constant<2>({5, 6, 7, 8}, {2, 2});
  const Gradients grads = (a * b).sum().backward();
  expect_grad(a.grad(grads), {2, 2}, {5, 6, 7, 8});
  EXPECT_FALSE(b.grad(grads).has_value());
  EXPECT_EQ(grads.size(), 1u);
}

BURN_AD_MODES(BinaryGrad);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
