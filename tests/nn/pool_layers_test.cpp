// Pooling layers against PyTorch 1.13 (F.max_pool*/avg_pool*/adaptive_avg_pool*
// in f64 on wave inputs; calls in the comments), their padding rules and errors.
#include <burn/nn/pool.hpp>

#include "../autodiff/grad_check.hpp"
#include "layer_test_support.hpp"

namespace {

using namespace burn;
using burn::layer_test::f32_tol;
using burn::layer_test::wave_tensor;
using burn::testing::all_devices;
using burn::testing::expect_op_error;
using burn::testing::expect_values;

// x = wave(60, .61, .3).reshape(1, 2, 5, 6)
Tensor<4> input_2d(const Device& device) { return wave_tensor<4>({1, 2, 5, 6}, 0.61, 0.3, 1.0, device); }
// x1 = wave(18, .83, .2).reshape(1, 2, 9)
Tensor<3> input_1d(const Device& device) { return wave_tensor<3>({1, 2, 9}, 0.83, 0.2, 1.0, device); }

TEST(PoolLayers, MaxPool2dMatchesPyTorch) {
  // F.max_pool2d(x, 3, stride=2, padding=1)
  const std::vector<double> strided{0.789504, 0.998710, 0.847678, 0.972751, 0.930134, 0.981465,
                                    0.694672, 0.517246, 0.981465, 0.352690, 0.999953, 0.999953,
                                    0.984980, 0.984980, 0.937046, 0.968096, 0.649950, 0.937046};
  // F.max_pool2d(x, (2, 2), stride=(2, 2), dilation=(1, 2), ceil_mode=True)
  const std::vector<double> dilated_ceil{0.998710, 0.998710,  0.390885,  0.972751, 0.914240, 0.914240,
                                         0.694672, -0.436799, -0.994880, 0.825137, 0.825137, 0.814083,
                                         0.906253, 0.906253,  0.568000,  0.968096, 0.097365, -0.901179};
  for (const auto& device : all_devices()) {
    auto pool =
        nn::MaxPool2dConfig{{3, 3}}.with_strides({2, 2}).with_padding(nn::PaddingConfig2d::explicit_(1, 1)).init();
    expect_values(pool.forward(input_2d(device)).to_data(), strided, Shape{1, 2, 3, 3}, f32_tol());
    auto dilated = nn::MaxPool2dConfig{{2, 2}}.with_strides({2, 2}).with_dilation({1, 2}).with_ceil_mode(true).init();
    expect_values(dilated.forward(input_2d(device)).to_data(), dilated_ceil, Shape{1, 2, 3, 3}, f32_tol());
  }
}

TEST(PoolLayers, MaxPool2dSamePaddingWithBurnsDefaultStrideKeepsTheSize) {
  // F.max_pool2d(x, 3, stride=1, padding=1)
  const std::vector<double> expected{
      0.789504, 0.998710, 0.998710, 0.998710, 0.847678, 0.664493, 0.972751, 0.998710, 0.998710, 0.998710,
      0.847678, 0.664493, 0.972751, 0.972751, 0.930134, 0.914240, 0.981465, 0.981465, 0.972751, 0.972751,
      0.930134, 0.914240, 0.981465, 0.981465, 0.694672, 0.694672, 0.517246, 0.914240, 0.981465, 0.981465,
      0.352690, 0.825137, 0.999953, 0.999953, 0.999953, 0.814083, 0.984980, 0.984980, 0.999953, 0.999953,
      0.999953, 0.814083, 0.984980, 0.984980, 0.984980, 0.906253, 0.937046, 0.937046, 0.984980, 0.984980,
      0.984980, 0.906253, 0.937046, 0.937046, 0.968096, 0.968096, 0.649950, 0.568000, 0.937046, 0.937046};
  auto config = nn::MaxPool2dConfig{{3, 3}}.with_padding(nn::PaddingConfig2d::same());
  EXPECT_EQ(config.strides, (std::array<std::size_t, 2>{1, 1}));  // Burn's default, not PyTorch's (= kernel)
  for (const auto& device : all_devices())
    expect_values(config.init().forward(input_2d(device)).to_data(), expected, Shape{1, 2, 5, 6}, f32_tol());
}

TEST(PoolLayers, AvgPool2dMatchesPyTorchWithAndWithoutPaddingInTheCount) {
  // F.avg_pool2d(x, (3, 2), stride=2, padding=1, count_include_pad=True / False)
  const std::vector<double> include{-0.072423, -0.015719, 0.146946,  0.076265,  -0.119522, -0.182111,
                                    0.076004,  0.116415,  -0.044192, -0.161963, -0.072790, 0.037319,
                                    -0.085433, -0.098137, 0.088481,  0.085150,  -0.087044, -0.232375,
                                    -0.051000, 0.078747,  0.000506,  -0.128587, -0.138241, -0.008319};
  const std::vector<double> exclude{-0.217269, -0.023578, 0.220419,  0.228795,  -0.239043, -0.182111,
                                    0.076004,  0.232830,  -0.132576, -0.242945, -0.109186, 0.111956,
                                    -0.256299, -0.147206, 0.132722,  0.255451,  -0.174087, -0.232375,
                                    -0.051000, 0.157494,  0.001519,  -0.192880, -0.207362, -0.024956};
  for (const auto& device : all_devices()) {
    auto config = nn::AvgPool2dConfig{{3, 2}}.with_strides({2, 2}).with_padding(nn::PaddingConfig2d::explicit_(1, 1));
    EXPECT_TRUE(config.count_include_pad);  // the default, as Burn and PyTorch
    expect_values(config.init().forward(input_2d(device)).to_data(), include, Shape{1, 2, 3, 4}, f32_tol());
    expect_values(config.with_count_include_pad(false).init().forward(input_2d(device)).to_data(), exclude,
                  Shape{1, 2, 3, 4}, f32_tol());
  }
}

TEST(PoolLayers, AdaptiveAvgPool2dMatchesPyTorch) {
  // F.adaptive_avg_pool2d(wave(70, .61, .3).reshape(1, 2, 5, 7), (3, 2))
  const std::vector<double> expected{0.086500, 0.373191,  -0.012151, -0.031152, 0.182613, 0.316712,
                                     0.175323, -0.411793, -0.011465, 0.037425,  0.078592, -0.417046};
  for (const auto& device : all_devices()) {
    auto pool = nn::AdaptiveAvgPool2dConfig{{3, 2}}.init();
    auto y = pool.forward(wave_tensor<4>({1, 2, 5, 7}, 0.61, 0.3, 1.0, device));
    expect_values(y.to_data(), expected, Shape{1, 2, 3, 2}, f32_tol());
  }
}

TEST(PoolLayers, OneDimensionalPoolsMatchPyTorch) {
  // F.max_pool1d(x1, 3, stride=2, padding=1)
  const std::vector<double> max{0.857299, 0.958471, 0.436399,  -0.269800, 0.528485,
                                0.983123, 0.798487, -0.670752, 0.791726,  0.985102};
  // F.avg_pool1d(x1, 3, stride=2, padding=1, count_include_pad=False)
  const std::vector<double> avg{0.527984, 0.750723, -0.289365, -0.699167, 0.129342,
                                0.890805, 0.074124, -0.783238, 0.065426,  0.888414};
  // F.adaptive_avg_pool1d(x1, 4)
  const std::vector<double> adaptive{0.671480, 0.341810,  -0.732380, -0.211321,
                                     0.625415, -0.525367, -0.531810, 0.620120};
  for (const auto& device : all_devices()) {
    auto mp = nn::MaxPool1dConfig{3}.with_stride(2).with_padding(nn::PaddingConfig1d::explicit_(1)).init();
    expect_values(mp.forward(input_1d(device)).to_data(), max, Shape{1, 2, 5}, f32_tol());
    auto ap = nn::AvgPool1dConfig{3}
                  .with_stride(2)
                  .with_padding(nn::PaddingConfig1d::explicit_(1))
                  .with_count_include_pad(false)
                  .init();
    expect_values(ap.forward(input_1d(device)).to_data(), avg, Shape{1, 2, 5}, f32_tol());
    expect_values(nn::AdaptiveAvgPool1dConfig{4}.init().forward(input_1d(device)).to_data(), adaptive, Shape{1, 2, 4},
                  f32_tol());
  }
}

TEST(PoolLayers, PoolsHaveNoParameters) {
  auto pool = nn::MaxPool2dConfig{{2, 2}}.init();
  EXPECT_EQ(pool.num_params(), 0u);
  std::size_t tensors = 0;
  module::for_each_tensor(pool, [&](const std::string&, const module::ParamBase&) { ++tensors; });
  EXPECT_EQ(tensors, 0u);
}

TEST(PoolLayers, ConfigsRejectBadValues) {
  expect_op_error([] { nn::MaxPool2dConfig{{0, 2}}.init(); }, "MaxPool2dConfig", "kernel_size");
  expect_op_error([] { nn::MaxPool2dConfig{{2, 2}}.with_strides({2, 0}).init(); }, "MaxPool2dConfig", "stride");
  expect_op_error(
      [] {
        nn::MaxPool2dConfig{{2, 2}}.with_padding(nn::PaddingConfig2d::explicit_(2, 0)).init();
      },
      "MaxPool2dConfig", "at most half the kernel");
  expect_op_error(
      [] {
        nn::MaxPool2dConfig{{2, 2}}.with_padding(nn::PaddingConfig2d::same()).init();
      },
      "MaxPool2dConfig", "odd kernel");
  expect_op_error(
      [] {
        nn::AvgPool2dConfig{{3, 3}}.with_strides({2, 2}).with_padding(nn::PaddingConfig2d::same()).init();
      },
      "AvgPool2dConfig", "stride 1");
  expect_op_error([] { nn::MaxPool1dConfig{3}.with_dilation(0).init(); }, "MaxPool1dConfig", "dilation");
  expect_op_error([] { nn::AvgPool1dConfig{0}.init(); }, "AvgPool1dConfig", "kernel_size");
  expect_op_error([] { nn::AdaptiveAvgPool2dConfig{{0, 1}}.init(); }, "AdaptiveAvgPool2dConfig", "output_size");
  expect_op_error([] { nn::AdaptiveAvgPool1dConfig{0}.init(); }, "AdaptiveAvgPool1dConfig", "output_size");
}

TEST(PoolLayers, AnInputSmallerThanTheWindowIsAClearError) {
  for (const auto& device : all_devices()) {
    auto pool = nn::MaxPool2dConfig{{3, 3}}.init();
    expect_op_error([&] { pool.forward(Tensor<4>::ones({1, 1, 2, 5}, device)); }, "max_pool2d", "does not fit");
  }
}

#if BURN_HAS_AUTODIFF
class PoolLayerGrad : public adtest::AdTest {};

TEST_P(PoolLayerGrad, AvgPool2dExcludingPadding) {
  auto pool = nn::AvgPool2dConfig{{3, 2}}
                  .with_strides({2, 1})
                  .with_padding(nn::PaddingConfig2d::explicit_(1, 1))
                  .with_count_include_pad(false)
                  .init();
  adtest::GradCheck(ad()).run([&](Tensor<4> x) { return pool.forward(x); },
                              adtest::Input<4>{rng.uniform(2 * 2 * 5 * 4, -1, 1), {2, 2, 5, 4}});
}

TEST_P(PoolLayerGrad, MaxPool2dWithDistinctValues) {
  auto pool =
      nn::MaxPool2dConfig{{2, 3}}.with_strides({2, 2}).with_padding(nn::PaddingConfig2d::explicit_(1, 1)).init();
  adtest::GradCheck(ad()).run([&](Tensor<4> x) { return pool.forward(x); },
                              adtest::Input<4>{rng.distinct(2 * 5 * 6, -1, 1), {1, 2, 5, 6}});
}

BURN_AD_MODES(PoolLayerGrad);
#endif

}  // namespace
