// Unary float math, clamp and cast against central differences.
// Inputs stay inside each function's domain and away from points where it is
// not differentiable (abs and sign at 0, the jumps of round/floor/ceil/trunc).
#include "grad_check.hpp"

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

class UnaryGrad : public AdTest {
 protected:
  /// Checks t -> op(t) on a [2, 3] input drawn from [lo, hi].
  template <class F>
  void check_unary(F&& op, double lo, double hi) {
    check([&](auto x) { return op(x); }, Input<2>{rng.uniform(6, lo, hi), {2, 3}});
  }
};

TEST_P(UnaryGrad, Neg) {
  check_unary([](auto x) { return x.neg(); }, -2, 2);
}
TEST_P(UnaryGrad, NegOperator) {
  check_unary([](auto x) { return -x; }, -2, 2);
}
TEST_P(UnaryGrad, Abs) {
  check([](auto x) { return x.abs(); }, Input<2>{rng.signed_magnitudes(6, 0.2, 2.0), {2, 3}});
}
TEST_P(UnaryGrad, SignHasZeroGradient) {
  check([](auto x) { return x.sign() * 3.0 + x; }, Input<2>{rng.signed_magnitudes(6, 0.2, 2.0), {2, 3}});
}
TEST_P(UnaryGrad, Recip) {
  check([](auto x) { return x.recip(); }, Input<2>{rng.signed_magnitudes(6, 0.5, 2.0), {2, 3}});
}
TEST_P(UnaryGrad, Exp) {
  check_unary([](auto x) { return x.exp(); }, -2, 2);
}
TEST_P(UnaryGrad, Log) {
  check_unary([](auto x) { return x.log(); }, 0.2, 3);
}
TEST_P(UnaryGrad, Log1p) {
  check_unary([](auto x) { return x.log1p(); }, -0.5, 3);
}
TEST_P(UnaryGrad, Expm1) {
  check_unary([](auto x) { return x.expm1(); }, -2, 2);
}
TEST_P(UnaryGrad, Sqrt) {
  check_unary([](auto x) { return x.sqrt(); }, 0.2, 3);
}
TEST_P(UnaryGrad, Rsqrt) {
  check_unary([](auto x) { return x.rsqrt(); }, 0.2, 3);
}
TEST_P(UnaryGrad, Sin) {
  check_unary([](auto x) { return x.sin(); }, -3, 3);
}
TEST_P(UnaryGrad, Cos) {
  check_unary([](auto x) { return x.cos(); }, -3, 3);
}
TEST_P(UnaryGrad, Tan) {
  check_unary([](auto x) { return x.tan(); }, -1.2, 1.2);
}
TEST_P(UnaryGrad, Asin) {
  check_unary([](auto x) { return x.asin(); }, -0.9, 0.9);
}
TEST_P(UnaryGrad, Acos) {
  check_unary([](auto x) { return x.acos(); }, -0.9, 0.9);
}
TEST_P(UnaryGrad, Atan) {
  check_unary([](auto x) { return x.atan(); }, -3, 3);
}
TEST_P(UnaryGrad, Sinh) {
  check_unary([](auto x) { return x.sinh(); }, -2, 2);
}
TEST_P(UnaryGrad, Cosh) {
  check_unary([](auto x) { return x.cosh(); }, -2, 2);
}
TEST_P(UnaryGrad, Tanh) {
  check_unary([](auto x) { return x.tanh(); }, -2, 2);
}
TEST_P(UnaryGrad, Asinh) {
  check_unary([](auto x) { return x.asinh(); }, -3, 3);
}
TEST_P(UnaryGrad, Acosh) {
  check_unary([](auto x) { return x.acosh(); }, 1.2, 3);
}
TEST_P(UnaryGrad, Atanh) {
  check_unary([](auto x) { return x.atanh(); }, -0.9, 0.9);
}
TEST_P(UnaryGrad, Erf) {
  check_unary([](auto x) { return x.erf(); }, -2, 2);
}
// Piecewise constant: the gradient is zero away from the jumps; `+ x` keeps a
// non-zero path so the leaf is reached either way.
TEST_P(UnaryGrad, Round) {
  check_unary([](auto x) { return x.round() * 2.0 + x; }, -3, 3);
}
TEST_P(UnaryGrad, Floor) {
  check_unary([](auto x) { return x.floor() * 2.0 + x; }, -3, 3);
}
TEST_P(UnaryGrad, Ceil) {
  check_unary([](auto x) { return x.ceil() * 2.0 + x; }, -3, 3);
}
TEST_P(UnaryGrad, Trunc) {
  check_unary([](auto x) { return x.trunc() * 2.0 + x; }, -3, 3);
}

TEST_P(UnaryGrad, Clamp) {
  // Values at least 0.05 away from the bounds on either side.
  const std::vector<double> v{-1.3, -0.45, -0.2, 0.1, 0.44, 0.55, 0.7, -0.56, 1.9};
  check([](auto x) { return x.clamp(-0.5, 0.5); }, Input<2>{v, {3, 3}});
  check([](auto x) { return x.clamp_min(0.0); }, Input<2>{v, {3, 3}});
  check([](auto x) { return x.clamp_max(0.3); }, Input<2>{v, {3, 3}});
}

TEST_P(UnaryGrad, ZeroSizeInputGetsAnEmptyGradient) {
  const auto x = leaf<2>({}, {0, 3});
  const Gradients grads = (x.exp() * 2.0).sum().backward();
  const auto g = x.grad(grads);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->shape(), Shape({0, 3}));
}

// f64 -> f32 -> f64 rounds, so finite differences at 1e-6 would only see
// rounding noise; the chain is linear, so its gradient is the weights exactly
// (rounded through f32) and keeps the leaf's f64 dtype.
TEST_P(UnaryGrad, CastRoundTrip) {
  const auto x = leaf<2>(rng.uniform(6, -2, 2), {2, 3});
  const std::vector<double> w{0.5, -1.25, 2.0, 0.75, -3.5, 1.0};
  const auto y = x.cast(DType::F32);
  EXPECT_EQ(y.dtype(), DType::F32);
  const auto z = y.cast(FloatDType::F64) * constant<2>(w, {2, 3});
  const Gradients grads = z.sum().backward();
  const auto g = x.grad(grads);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->dtype(), DType::F64);
  expect_grad(g, {2, 3}, w);

  // And the other way round: an f32 leaf through f64 gets an f32 gradient.
  const auto x32 = Tensor<1>::from_data(TensorData(std::vector<float>{1.5f, -2.0f}), {ad(), DType::F32}).require_grad();
  const Gradients g2 = (x32.cast(DType::F64) * 3.0).exp().sum().backward();
  const auto gx = x32.grad(g2);
  ASSERT_TRUE(gx.has_value());
  EXPECT_EQ(gx->dtype(), DType::F32);
  expect_grad(gx, {2}, {3.0 * std::exp(4.5), 3.0 * std::exp(-6.0)}, Tolerance::rel_abs(1e-5, 1e-6));
}

BURN_AD_MODES(UnaryGrad);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
