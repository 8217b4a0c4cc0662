// The layers' pytorch_defaults(): the defaults of PyTorch's modules where
// Burn's differ (docs/pytorch.md, "Defaults"). Pools stride by their kernel,
// as nn.MaxPool2d(2) does; the encoder uses relu; attention has no dropout.
#include <burn/nn/attention.hpp>
#include <burn/nn/pool.hpp>
#include <burn/nn/transformer.hpp>

#include "layer_test_support.hpp"

namespace {

using namespace burn;
using burn::testing::all_devices;
using burn::testing::expect_values;

TEST(LayerPyTorchDefaults, PoolsStrideByTheirKernel) {
  EXPECT_EQ(nn::MaxPool2dConfig::pytorch_defaults({2, 3}).strides, (std::array<std::size_t, 2>{2, 3}));
  EXPECT_EQ(nn::AvgPool2dConfig::pytorch_defaults({3, 3}).strides, (std::array<std::size_t, 2>{3, 3}));
  EXPECT_EQ(nn::MaxPool1dConfig::pytorch_defaults(4).stride, 4u);
  EXPECT_EQ(nn::AvgPool1dConfig::pytorch_defaults(5).stride, 5u);
  const nn::MaxPool2dConfig burns{{2, 2}};
  EXPECT_EQ(burns.strides, (std::array<std::size_t, 2>{1, 1}));  // Burn's own default

  // x = arange(16).reshape(1, 1, 4, 4): nn.MaxPool2d(2)(x) = [[5, 7], [13, 15]],
  // nn.AvgPool2d(2)(x) = [[2.5, 4.5], [10.5, 12.5]].
  std::vector<float> values(16);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  for (const auto& device : all_devices()) {
    const auto x = Tensor<4>::from_data(TensorData(values, {1, 1, 4, 4}), device);
    expect_values(nn::MaxPool2dConfig::pytorch_defaults({2, 2}).init().forward(x).to_data(), {5, 7, 13, 15},
                  Shape{1, 1, 2, 2}, Tolerance::absolute_only(0.0));
    expect_values(nn::AvgPool2dConfig::pytorch_defaults({2, 2}).init().forward(x).to_data(), {2.5, 4.5, 10.5, 12.5},
                  Shape{1, 1, 2, 2}, Tolerance::absolute_only(0.0));
  }
}

TEST(LayerPyTorchDefaults, TransformerAndAttentionTakeTorchsChoices) {
  const auto enc = nn::TransformerEncoderConfig::pytorch_defaults(64, 4, 2);
  EXPECT_EQ(enc.d_model, 64u);
  EXPECT_EQ(enc.n_heads, 4u);
  EXPECT_EQ(enc.n_layers, 2u);
  EXPECT_EQ(enc.d_ff, 2048u);  // dim_feedforward's default
  EXPECT_EQ(enc.activation.kind(), nn::Activation::Kind::Relu);
  EXPECT_EQ(enc.dropout, 0.1);
  EXPECT_EQ(enc.layer_norm_eps, 1e-5);
  EXPECT_FALSE(enc.norm_first);
  EXPECT_EQ(nn::TransformerEncoderConfig{}.activation.kind(), nn::Activation::Kind::Gelu);  // Burn's own

  const auto mha = nn::MultiHeadAttentionConfig::pytorch_defaults(32, 8);
  EXPECT_EQ(mha.d_model, 32u);
  EXPECT_EQ(mha.n_heads, 8u);
  EXPECT_EQ(mha.dropout, 0.0);
  EXPECT_EQ(nn::MultiHeadAttentionConfig{}.dropout, 0.1);

  // They build working modules: the layer keeps the relu it was given.
  const auto device = Device::flex();
  const auto model = nn::TransformerEncoderConfig::pytorch_defaults(16, 2, 1, 32).init(device);
  ASSERT_EQ(model.layers.size(), 1u);
  EXPECT_EQ(model.layers[0].pwff.activation.kind(), nn::Activation::Kind::Relu);
  EXPECT_EQ(model.layers[0].pwff.linear_inner.weight.val().shape(), Shape({16, 32}));
}

}  // namespace
