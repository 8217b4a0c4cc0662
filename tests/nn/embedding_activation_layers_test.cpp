// Embedding and the activation layers against PyTorch 1.13 (F.embedding and
// torch.nn.functional activations in f64 on wave inputs; calls in the
// comments), the Activation value type, embedding gradients, errors.
#include <burn/nn/activation.hpp>
#include <burn/nn/embedding.hpp>

#include "../autodiff/grad_check.hpp"
#include "layer_test_support.hpp"

namespace {

using namespace burn;
using burn::layer_test::f32_tol;
using burn::layer_test::values_of;
using burn::layer_test::wave_tensor;
using burn::testing::all_devices;
using burn::testing::expect_op_error;
using burn::testing::expect_values;

TEST(EmbeddingLayer, LooksUpRowsLikePyTorch) {
  // F.embedding(torch.tensor([[0, 4], [2, 0]]), wave(15, .7, .1).reshape(5, 3))
  const std::vector<double> expected{0.099833,  0.717356,  0.997495,  0.798487, 0.222890, -0.457536,
                                     -0.916166, -0.958924, -0.550686, 0.099833, 0.717356, 0.997495};
  for (const auto& device : all_devices()) {
    auto emb = nn::EmbeddingConfig{5, 3}.init(device);
    ASSERT_EQ(emb.weight->shape(), (Shape{5, 3}));
    emb.weight.set(wave_tensor<2>({5, 3}, 0.7, 0.1, 1.0, device));
    auto y = emb.forward(Tensor<2, Int>::from_ints({{0, 4}, {2, 0}}, device));
    expect_values(y.to_data(), expected, Shape{2, 2, 3}, f32_tol());
  }
}

TEST(EmbeddingLayer, DefaultInitialiserIsStandardNormal) {
  auto emb = nn::EmbeddingConfig{1000, 16}.init(Device::flex());
  const auto [var, mean] = emb.weight->reshape(std::array<std::size_t, 1>{16000}).var_mean(0);
  EXPECT_NEAR(mean.into_scalar<double>(), 0.0, 0.05);
  EXPECT_NEAR(var.into_scalar<double>(), 1.0, 0.05);
  EXPECT_EQ(emb.num_params(), 16000u);
}

TEST(EmbeddingLayer, ErrorsAreClear) {
  const Device d = Device::flex();
  expect_op_error([&] { nn::EmbeddingConfig{0, 4}.init(d); }, "EmbeddingConfig", "positive");
  for (const auto& device : all_devices()) {
    auto emb = nn::EmbeddingConfig{5, 3}.init(device);
    burn::testing::expect_error(
        [&] {
          emb.forward(Tensor<2, Int>::from_ints({{0, 5}}, device));
        },
        "index 5 is out of bounds");
    burn::testing::expect_error([&] { emb.forward(Tensor<2, Int>::from_ints({{-1, 0}}, device)); }, "out of bounds");
  }
}

#if BURN_HAS_AUTODIFF
class EmbeddingGrad : public adtest::AdTest {};

TEST_P(EmbeddingGrad, WeightGradientByFiniteDifferences) {
  const auto indices = ints<2>({0, 3, 3, 1, 4, 0}, {2, 3});
  adtest::GradCheck(ad()).run([&](Tensor<2> w) { return nn::Embedding{module::Param(w)}.forward(indices); },
                              adtest::Input<2>{rng.uniform(5 * 4, -1, 1), {5, 4}});
}

TEST_P(EmbeddingGrad, OnlyLookedUpRowsGetGradientSummedOverRepeats) {
  auto emb = nn::Embedding{module::Param(constant<2>(std::vector<double>(4 * 2, 0.5), {4, 2}))};
  auto grads = emb.forward(ints<2>({1, 1, 3}, {1, 3})).sum().backward();
  auto g = emb.weight.grad(grads);
  ASSERT_TRUE(g.has_value());
  expect_values(g->to_data(), {0, 0, 2, 2, 0, 0, 1, 1}, Shape{4, 2});
}

BURN_AD_MODES(EmbeddingGrad);
#endif

// x = wave(8, .9, .3, 3).reshape(2, 4)
Tensor<2> act_input(const Device& device) { return wave_tensor<2>({2, 4}, 0.9, 0.3, 3.0, device); }

struct ActivationCase {
  nn::Activation activation;
  std::vector<double> expected;
};

// The PyTorch call for each case is in its comment.
std::vector<ActivationCase> activation_cases() {
  return {
      // F.relu(x)
      {nn::Activation::relu(), {0.886561, 2.796117, 2.589628, 0.423360, 0.000000, 0.000000, 0.000000, 0.934624}},
      // F.leaky_relu(x, 0.2)
      {nn::Activation::leaky_relu(0.2),
       {0.886561, 2.796117, 2.589628, 0.423360, -0.412660, -0.597699, -0.330411, 0.934624}},
      // F.gelu(x)
      {nn::Activation::gelu(), {0.720191, 2.788886, 2.577188, 0.281104, -0.040321, -0.004189, -0.081383, 0.771073}},
      // torch.sigmoid(x)
      {nn::Activation::sigmoid(), {0.708180, 0.942466, 0.930191, 0.604287, 0.112716, 0.047948, 0.160831, 0.718012}},
      // torch.tanh(x)
      {nn::Activation::tanh(), {0.709691, 0.992574, 0.988799, 0.399757, -0.968237, -0.994940, -0.929139, 0.732743}},
      // F.silu(x)
      {nn::Activation::silu(), {0.627844, 2.635244, 2.408849, 0.255831, -0.232566, -0.143293, -0.265702, 0.671072}},
      // torch.clamp(0.2 * x + 0.5, 0, 1)   (Burn's hard sigmoid; PyTorch's F.hardsigmoid uses x / 6)
      {nn::Activation::hard_sigmoid(),
       {0.677312, 1.000000, 1.000000, 0.584672, 0.087340, 0.000000, 0.169589, 0.686925}},
      // F.mish(x)
      {nn::Activation::mish(), {0.747413, 2.777667, 2.564511, 0.308724, -0.245579, -0.146725, -0.286745, 0.796936}},
      // F.softplus(x, beta=2)
      {nn::Activation::softplus(2.0), {0.964978, 2.797977, 2.592436, 0.601784, 0.008004, 0.001267, 0.018037, 1.006345}},
  };
}

TEST(ActivationLayers, ActivationValuesMatchPyTorch) {
  for (const auto& device : all_devices())
    for (const auto& c : activation_cases()) {
      SCOPED_TRACE(c.activation.name() + " on " + device.to_string());
      expect_values(c.activation.forward(act_input(device)).to_data(), c.expected, Shape{2, 4}, f32_tol());
    }
}

template <class Layer>
void expect_same_as(const Layer& layer, const nn::Activation& activation, const Device& device) {
  SCOPED_TRACE(activation.name());
  EXPECT_EQ(layer.num_params(), 0u);
  const auto x = act_input(device);
  expect_values(layer.forward(x).to_data(), values_of(activation.forward(x).to_data()), Shape{2, 4},
                Tolerance::rel_abs(0, 0));
}

TEST(ActivationLayers, ModulesMatchTheActivationValues) {
  for (const auto& device : all_devices()) {
    expect_same_as(nn::Relu{}, nn::Activation::relu(), device);
    expect_same_as(nn::LeakyRelu{0.2}, nn::Activation::leaky_relu(0.2), device);
    expect_same_as(nn::Gelu{}, nn::Activation::gelu(), device);
    expect_same_as(nn::Sigmoid{}, nn::Activation::sigmoid(), device);
    expect_same_as(nn::Tanh{}, nn::Activation::tanh(), device);
    expect_same_as(nn::Silu{}, nn::Activation::silu(), device);
    expect_same_as(nn::HardSigmoid{}, nn::Activation::hard_sigmoid(0.2, 0.5), device);
    expect_same_as(nn::Mish{}, nn::Activation::mish(), device);
    expect_same_as(nn::Softplus{2.0}, nn::Activation::softplus(2.0), device);
  }
  // Defaults as Burn's.
  EXPECT_EQ(nn::LeakyRelu{}.negative_slope, 0.01);
  EXPECT_EQ(nn::Softplus{}.beta, 1.0);
}

TEST(ActivationLayers, ActivationIsAComparableNamedValue) {
  EXPECT_EQ(nn::Activation::gelu(), nn::Activation::gelu());
  EXPECT_NE(nn::Activation::leaky_relu(0.1), nn::Activation::leaky_relu(0.2));
  EXPECT_EQ(nn::Activation::relu().kind(), nn::Activation::Kind::Relu);
  EXPECT_EQ(nn::Activation::leaky_relu(0.2).name(), "leaky_relu(0.2)");
  EXPECT_EQ(nn::Activation::softplus().name(), "softplus(1)");
  // Higher ranks go through the same path.
  auto x = Tensor<4>::full({1, 2, 1, 2}, -1.0, Device::flex());
  expect_values(nn::Activation::relu().forward(x).to_data(), {0, 0, 0, 0}, Shape{1, 2, 1, 2});
}

TEST(ActivationLayers, SoftplusRejectsANonPositiveBeta) {
  expect_op_error([] { nn::Activation::softplus(0.0); }, "Activation", "beta must be positive");
  expect_op_error([] { nn::Softplus{-1.0}.forward(Tensor<1>::ones({2}, Device::flex())); }, "Softplus",
                  "beta must be positive");
}

}  // namespace
