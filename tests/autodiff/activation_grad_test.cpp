// Every activation in burn::activation against central differences.
// relu, leaky_relu and hard_sigmoid get inputs away from their kinks.
#include "grad_check.hpp"

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

class ActivationGrad : public AdTest {
 protected:
  Input<2> smooth() { return {rng.uniform(12, -3, 3), {3, 4}}; }
  Input<2> away_from_zero() { return {rng.signed_magnitudes(12, 0.1, 3), {3, 4}}; }
};

TEST_P(ActivationGrad, Relu) {
  check([](auto t) { return activation::relu(t); }, away_from_zero());
}
// relu's backward fills its cotangent in place when nothing else holds it;
// here add hands one cotangent to both branches, so neither may overwrite it.
TEST_P(ActivationGrad, ReluBranchesSharingOneCotangent) {
  // Opposite masks: a fill of the shared cotangent would zero the other's.
  check([](auto t) { return activation::relu(t) + activation::relu(t * -3.0); }, away_from_zero());
  check([](auto t) { return activation::relu(activation::relu(t) * 2.0 + 0.5) * activation::relu(t); },
        away_from_zero());
}
TEST_P(ActivationGrad, LeakyRelu) {
  check([](auto t) { return activation::leaky_relu(t); }, away_from_zero());
  check([](auto t) { return activation::leaky_relu(t, 0.3); }, away_from_zero());
}
TEST_P(ActivationGrad, Gelu) {
  check([](auto t) { return activation::gelu(t); }, smooth());
}
TEST_P(ActivationGrad, GeluTanh) {
  check([](auto t) { return activation::gelu_tanh(t); }, smooth());
}
TEST_P(ActivationGrad, Silu) {
  check([](auto t) { return activation::silu(t); }, smooth());
}
TEST_P(ActivationGrad, Sigmoid) {
  check([](auto t) { return activation::sigmoid(t); }, smooth());
}
TEST_P(ActivationGrad, LogSigmoid) {
  check([](auto t) { return activation::log_sigmoid(t); }, smooth());
  // Large magnitudes: the stable form keeps the gradient finite and exact.
  check([](auto t) { return activation::log_sigmoid(t); }, Input<1>{{-40.0, -12.0, 15.0, 40.0}, {4}});
}
TEST_P(ActivationGrad, Softplus) {
  check([](auto t) { return activation::softplus(t); }, smooth());
  check([](auto t) { return activation::softplus(t, 2.0); }, smooth());
  check([](auto t) { return activation::softplus(t, 0.5); }, Input<1>{{-60.0, -3.0, 4.0, 60.0}, {4}});
}
TEST_P(ActivationGrad, Softmax) {
  check([](auto t) { return activation::softmax(t, 1); }, smooth());
  check([](auto t) { return activation::softmax(t, 0); }, smooth());
  check([](auto t) { return activation::softmax(t, -1); }, Input<3>{rng.uniform(12, -3, 3), {2, 2, 3}});
}
TEST_P(ActivationGrad, LogSoftmax) {
  check([](auto t) { return activation::log_softmax(t, 1); }, smooth());
  check([](auto t) { return activation::log_softmax(t, 0); }, smooth());
}
TEST_P(ActivationGrad, HardSigmoid) {
  // Kinks where alpha * x + beta is 0 or 1: x = -2.5 and 2.5 for the defaults.
  const Input<2> x{{-4.0, -2.6, -2.4, -1.0, 0.0, 0.7, 2.4, 2.6, 3.9, -0.3, 1.8, -3.1}, {3, 4}};
  check([](auto t) { return activation::hard_sigmoid(t); }, x);
  check([](auto t) { return activation::hard_sigmoid(t, 0.5, 0.25); }, x);  // kinks at -0.5, 1.5
}
TEST_P(ActivationGrad, Mish) {
  check([](auto t) { return activation::mish(t); }, smooth());
}
TEST_P(ActivationGrad, Tanh) {
  check([](auto t) { return activation::tanh(t); }, smooth());
}

BURN_AD_MODES(ActivationGrad);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
