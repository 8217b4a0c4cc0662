// Conv1d, Conv2d, ConvTranspose2d: init shapes and defaults, forward against
// PyTorch 1.13 (F.conv1d / F.conv2d / F.conv_transpose2d in f64 with the same
// wave weights; script in the comments), gradients by finite differences,
// config and shape errors.
#include <burn/nn/conv1d.hpp>
#include <burn/nn/conv2d.hpp>
#include <burn/nn/conv_transpose2d.hpp>

#include "../autodiff/grad_check.hpp"
#include "layer_test_support.hpp"

namespace {

using namespace burn;
using burn::layer_test::f32_tol;
using burn::layer_test::wave;
using burn::layer_test::wave_tensor;
using burn::testing::all_devices;
using burn::testing::expect_op_error;
using burn::testing::expect_values;

TEST(PaddingConfig, ResolvesValidSameAndExplicit) {
  using P2 = nn::PaddingConfig2d;
  using A2 = std::array<std::size_t, 2>;
  EXPECT_EQ(P2::valid().resolve({3, 3}, {2, 2}, {1, 1}, "t"), (A2{0, 0}));
  EXPECT_EQ(P2::explicit_(2, 1).resolve({3, 3}, {2, 2}, {1, 1}, "t"), (A2{2, 1}));
  // Same: dilation * (kernel - 1) / 2 per side, as PyTorch's padding="same".
  EXPECT_EQ(P2::same().resolve({5, 3}, {1, 1}, {1, 3}, "t"), (A2{2, 3}));
  EXPECT_EQ(nn::PaddingConfig1d::same().resolve({7}, {1}, {1}, "t"), (std::array<std::size_t, 1>{3}));
  EXPECT_EQ(nn::PaddingConfig1d::explicit_(4).explicit_padding(), (std::array<std::size_t, 1>{4}));
  EXPECT_EQ(P2::same().kind(), P2::Kind::Same);
  EXPECT_NE(P2::same(), P2::valid());
  expect_op_error([] { P2::same().resolve({3, 3}, {1, 2}, {1, 1}, "Who"); }, "Who", "stride 1");
  // Kernel 2 with dilation 2 spans 3 elements, so same padding is symmetric: 1 per side.
  EXPECT_EQ(P2::same().resolve({2, 3}, {1, 1}, {2, 1}, "t"), (A2{1, 1}));
  expect_op_error([] { P2::same().resolve({2, 3}, {1, 1}, {1, 1}, "Who"); }, "Who", "odd kernel");
}

TEST(Conv1dLayer, InitShapesAndPyTorchDefaultBounds) {
  auto conv = nn::Conv1dConfig{4, 6, 3}.with_groups(2).init(Device::flex());
  EXPECT_EQ(conv.weight->shape(), (Shape{6, 2, 3}));
  ASSERT_TRUE(conv.bias.has_value());
  EXPECT_EQ((*conv.bias)->shape(), Shape{6});
  EXPECT_EQ(conv.num_params(), 6u * 2 * 3 + 6);
  // kaiming_uniform with gain 1/sqrt(3): |w| <= 1/sqrt(fan_in), fan_in = 4/2 * 3.
  const double bound = 1.0 / std::sqrt(6.0);
  EXPECT_LE(conv.weight->abs().max().into_scalar<double>(), bound);
  EXPECT_LE((*conv.bias)->abs().max().into_scalar<double>(), bound);
  EXPECT_FALSE((nn::Conv1dConfig{4, 6, 3}.with_bias(false).init(Device::flex()).bias.has_value()));
  auto f64 = nn::Conv1dConfig{1, 1, 1}.init({Device::flex(), DType::F64});
  EXPECT_EQ(f64.weight->dtype(), DType::F64);
}

TEST(Conv1dLayer, ForwardMatchesPyTorch) {
  // x = wave(28, .37, .1).reshape(2, 2, 7); w = wave(12, .53, .7, .5).reshape(4, 1, 3); b = wave(4, 1.1, .3, .2)
  // F.conv1d(x, w, b, stride=2, padding=1, groups=2)
  const std::vector<double> expected{0.328552,  1.015351,  1.287890,  0.703390,  0.166016,  0.388342,  0.610967,
                                     0.662253,  -0.128305, 0.526063,  1.214312,  0.919286,  -0.139516, -0.153116,
                                     0.133056,  0.406341,  -0.628821, -0.201736, 0.677625,  0.742447,  0.125047,
                                     -0.077637, 0.232223,  0.627144,  -0.808819, -0.748957, 0.080954,  0.512230,
                                     -0.115025, -0.474103, -0.290770, 0.103414};
  for (const auto& device : all_devices()) {
    auto conv = nn::Conv1dConfig{2, 4, 3}
                    .with_stride(2)
                    .with_padding(nn::PaddingConfig1d::explicit_(1))
                    .with_groups(2)
                    .init(device);
    conv.weight.set(wave_tensor<3>({4, 1, 3}, 0.53, 0.7, 0.5, device));
    conv.bias->set(wave_tensor<1>({4}, 1.1, 0.3, 0.2, device));
    auto y = conv.forward(wave_tensor<3>({2, 2, 7}, 0.37, 0.1, 1.0, device));
    expect_values(y.to_data(), expected, Shape{2, 4, 4}, f32_tol());
  }
}

TEST(Conv1dLayer, SamePaddingKeepsTheLengthWithDilation) {
  // x = wave(12, .41, .2).reshape(1, 2, 6); w = wave(18, .29, .5, .5).reshape(3, 2, 3)
  // F.conv1d(x, w, None, padding=2, dilation=2)   (what padding="same" resolves to)
  const std::vector<double> expected{0.522799,  0.359642,  0.411438,  0.063785,  -0.072274, -0.317717,
                                     0.219056,  0.489173,  0.763430,  0.980603,  0.722723,  0.728674,
                                     -0.596576, -0.524393, -0.668557, -0.394047, -0.171136, 0.072303};
  for (const auto& device : all_devices()) {
    auto conv = nn::Conv1dConfig{2, 3, 3}
                    .with_dilation(2)
                    .with_padding(nn::PaddingConfig1d::same())
                    .with_bias(false)
                    .init(device);
    conv.weight.set(wave_tensor<3>({3, 2, 3}, 0.29, 0.5, 0.5, device));
    auto y = conv.forward(wave_tensor<3>({1, 2, 6}, 0.41, 0.2, 1.0, device));
    expect_values(y.to_data(), expected, Shape{1, 3, 6}, f32_tol());
  }
}

TEST(Conv2dLayer, InitShapesAndPyTorchDefaultBounds) {
  auto conv = nn::Conv2dConfig{{3, 8}, {3, 2}}.init(Device::flex());
  EXPECT_EQ(conv.weight->shape(), (Shape{8, 3, 3, 2}));
  EXPECT_EQ((*conv.bias)->shape(), Shape{8});
  const double bound = 1.0 / std::sqrt(3.0 * 3 * 2);
  EXPECT_LE(conv.weight->abs().max().into_scalar<double>(), bound);
  EXPECT_GT(conv.weight->abs().max().into_scalar<double>(), bound / 2);  // spread over the range
  std::vector<std::string> paths;
  module::for_each_param(conv, [&](const std::string& p, const module::ParamBase&) { paths.push_back(p); });
  EXPECT_EQ(paths, (std::vector<std::string>{"weight", "bias"}));  // PyTorch's state_dict names
}

TEST(Conv2dLayer, ForwardMatchesPyTorchWithStrideDilationPaddingAndGroups) {
  // x = wave(120, .37, .1).reshape(2, 2, 5, 6); w = wave(24, .53, .7, .5).reshape(4, 1, 3, 2); b = wave(4, 1.1, .3, .2)
  // F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
  const std::vector<double> expected{
      0.495528,  0.731845,  0.877108,  0.911659,  -0.492111, -0.623504, -0.662508, -0.603846, 0.750807,  0.576109,
      0.331437,  0.049906,  -0.214366, -0.459079, -0.614983, -0.660977, 0.748380,  0.896014,  0.949051,  0.900315,
      -0.508988, -0.344488, -0.106689, 0.172226,  -0.607042, -0.390015, -0.104000, 0.212290,  0.614883,  0.362426,
      0.077117,  -0.202430, 0.484494,  0.707557,  0.851054,  0.895566,  0.657169,  0.447648,  0.165562,  -0.150911,
      -0.626971, -0.370509, -0.075879, 0.217043,  -0.422959, -0.653687, -0.807920, -0.864783, -0.520265, -0.708409,
      -0.792674, -0.761655, 0.695064,  0.775728,  0.759400,  0.648291,  -0.544242, -0.326441, -0.056459, 0.229164,
      0.755879,  0.953850,  1.049397,  1.029588,  -0.448259, -0.544175, -0.539764, -0.435624, 0.820903,  0.611568,
      0.346135,  0.060530,  0.734402,  0.474115,  0.165859,  -0.148646, -0.239198, 0.036405,  0.323280,  0.582602,
      -0.379228, -0.560479, -0.649672, -0.634734, -0.726775, -0.472071, -0.165454, 0.151579,  0.312109,  0.029385,
      -0.269295, -0.543506, 0.383951,  0.574758,  0.675796,  0.673390};
  for (const auto& device : all_devices()) {
    auto conv = nn::Conv2dConfig{{2, 4}, {3, 2}}
                    .with_stride({2, 1})
                    .with_padding(nn::PaddingConfig2d::explicit_(1, 0))
                    .with_dilation({1, 2})
                    .with_groups(2)
                    .init(device);
    ASSERT_EQ(conv.weight->shape(), (Shape{4, 1, 3, 2}));
    conv.weight.set(wave_tensor<4>({4, 1, 3, 2}, 0.53, 0.7, 0.5, device));
    conv.bias->set(wave_tensor<1>({4}, 1.1, 0.3, 0.2, device));
    auto y = conv.forward(wave_tensor<4>({2, 2, 5, 6}, 0.37, 0.1, 1.0, device));
    expect_values(y.to_data(), expected, Shape{2, 4, 3, 4}, f32_tol());
  }
}

TEST(Conv2dLayer, SamePaddingMatchesPyTorch) {
  // x = wave(48, .23, .4).reshape(1, 3, 4, 4); w = wave(54, .31, .9, .3).reshape(2, 3, 3, 3); b = wave(2, .7, .1, .1)
  // F.conv2d(x, w, b, padding=1)
  const std::vector<double> expected{1.590519,  2.728418,  2.703894,  1.970359,  2.315158,  3.318932,  2.943904,
                                     1.656678,  1.143772,  1.009922,  0.209005,  -0.396238, -0.518591, -1.207218,
                                     -1.893844, -1.455319, -2.258503, -3.154782, -2.979659, -1.762038, -1.246928,
                                     -1.095093, -0.425618, 0.259288,  0.617314,  1.593966,  2.152485,  1.697144,
                                     0.565147,  0.893327,  1.030684,  0.490725};
  for (const auto& device : all_devices()) {
    auto conv = nn::Conv2dConfig{{3, 2}, {3, 3}}.with_padding(nn::PaddingConfig2d::same()).init(device);
    conv.weight.set(wave_tensor<4>({2, 3, 3, 3}, 0.31, 0.9, 0.3, device));
    conv.bias->set(wave_tensor<1>({2}, 0.7, 0.1, 0.1, device));
    auto y = conv.forward(wave_tensor<4>({1, 3, 4, 4}, 0.23, 0.4, 1.0, device));
    expect_values(y.to_data(), expected, Shape{1, 2, 4, 4}, f32_tol());
  }
}

TEST(ConvTranspose2dLayer, InitShapes) {
  auto up = nn::ConvTranspose2dConfig{{4, 6}, {3, 2}}.with_groups(2).init(Device::flex());
  EXPECT_EQ(up.weight->shape(), (Shape{4, 3, 3, 2}));
  EXPECT_EQ((*up.bias)->shape(), Shape{6});
  const double bound = 1.0 / std::sqrt(3.0 * 3 * 2);  // fan_in = out / groups * kh * kw, as PyTorch
  EXPECT_LE(up.weight->abs().max().into_scalar<double>(), bound);
}

TEST(ConvTranspose2dLayer, ForwardMatchesPyTorch) {
  // x = wave(18, .37, .1).reshape(1, 2, 3, 3); w = wave(36, .53, .7, .5).reshape(2, 2, 3, 3); b = wave(4, 1.1, .3, .2)
  // F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)
  const std::vector<double> expected{
      0.074882,  0.219136,  0.130678,  0.292361,  0.176787,  -0.017930, 0.452356,  0.639608,  0.314160,  0.378170,
      0.141443,  0.152576,  0.206968,  0.338463,  0.217136,  0.305100,  0.205916,  -0.036998, -0.042418, -0.233029,
      -0.212539, -0.500068, -0.345894, -0.353372, 0.174825,  0.147512,  0.128072,  0.044616,  0.071985,  0.050673,
      -0.290400, -0.444441, -0.149195, -0.180898, 0.020202,  0.019404,  0.245277,  0.403990,  0.415689,  0.676570,
      0.556514,  0.556315,  0.078474,  0.092524,  0.112265,  0.178554,  0.157536,  0.205810,  0.648692,  0.998934,
      0.679749,  1.005088,  0.645480,  0.645232,  0.208161,  0.346157,  0.257287,  0.405046,  0.298266,  0.076355,
      0.550523,  0.703288,  0.407731,  0.436181,  0.236429,  0.236408,  0.285815,  0.246719,  0.249969,  0.164203,
      0.206966,  0.185624,  0.148835,  0.279932,  0.182382,  0.310013,  0.207444,  -0.016490, 0.460075,  0.581983,
      0.296957,  0.283413,  0.109848,  0.118585,  0.220630,  0.292313,  0.220155,  0.246928,  0.206083,  -0.014376,
      -0.075929, -0.336795, -0.235229, -0.574490, -0.346492, -0.328220, 0.180318,  0.112970,  0.146349,  0.042528,
      0.108772,  0.136646,  -0.170996, -0.256983, -0.008113, 0.037361,  0.172069,  0.169898,  0.052138,  0.281619,
      0.214046,  0.528781,  0.335005,  0.308989,  -0.152479, -0.097090, -0.130941, -0.042651, -0.103658, -0.106123,
      0.398644,  0.750321,  0.396350,  0.694714,  0.328434,  0.302821,  -0.074325, 0.041082,  -0.046910, 0.059043,
      -0.025125, -0.271733, 0.204086,  0.287359,  0.040138,  -0.009255, -0.141221, -0.137983, -0.050281, -0.124130,
      -0.071699, -0.171876, -0.095391, -0.067724};
  for (const auto& device : all_devices()) {
    auto up = nn::ConvTranspose2dConfig{{2, 4}, {3, 3}}
                  .with_stride({2, 2})
                  .with_padding({1, 1})
                  .with_padding_out({1, 1})
                  .with_groups(2)
                  .init(device);
    ASSERT_EQ(up.weight->shape(), (Shape{2, 2, 3, 3}));
    up.weight.set(wave_tensor<4>({2, 2, 3, 3}, 0.53, 0.7, 0.5, device));
    up.bias->set(wave_tensor<1>({4}, 1.1, 0.3, 0.2, device));
    auto y = up.forward(wave_tensor<4>({1, 2, 3, 3}, 0.37, 0.1, 1.0, device));
    expect_values(y.to_data(), expected, Shape{1, 4, 6, 6}, f32_tol());
  }
}

TEST(ConvLayers, ConfigsRejectBadValues) {
  const Device d = Device::flex();
  expect_op_error([&] { nn::Conv1dConfig{0, 4, 3}.init(d); }, "Conv1dConfig", "positive");
  expect_op_error([&] { nn::Conv1dConfig{2, 4, 0}.init(d); }, "Conv1dConfig", "kernel_size");
  expect_op_error([&] { nn::Conv1dConfig{3, 4, 3}.with_groups(2).init(d); }, "Conv1dConfig", "divisible by groups");
  expect_op_error(
      [&] {
        nn::Conv1dConfig{2, 4, 2}.with_padding(nn::PaddingConfig1d::same()).init(d);
      },
      "Conv1dConfig", "odd kernel");
  expect_op_error([&] { nn::Conv2dConfig{{2, 4}, {3, 3}}.with_stride({0, 1}).init(d); }, "Conv2dConfig", "stride");
  expect_op_error([&] { nn::Conv2dConfig{{2, 4}, {3, 3}}.with_groups(0).init(d); }, "Conv2dConfig", "groups");
  expect_op_error(
      [&] {
        nn::Conv2dConfig{{4, 6}, {3, 3}}.with_groups(4).init(d);
      },
      "Conv2dConfig", "divisible by groups");
  expect_op_error(
      [&] {
        nn::Conv2dConfig{{2, 4}, {3, 3}}.with_stride({2, 2}).with_padding(nn::PaddingConfig2d::same()).init(d);
      },
      "Conv2dConfig", "stride 1");
  expect_op_error(
      [&] {
        nn::Conv2dConfig{{2, 4}, {3, 4}}.with_padding(nn::PaddingConfig2d::same()).init(d);
      },
      "Conv2dConfig", "odd kernel");
  expect_op_error(
      [&] {
        nn::ConvTranspose2dConfig{{2, 4}, {3, 3}}.with_padding_out({1, 0}).init(d);
      },
      "ConvTranspose2dConfig", "padding_out");
  expect_op_error(
      [&] {
        nn::ConvTranspose2dConfig{{2, 3}, {3, 3}}.with_groups(2).init(d);
      },
      "ConvTranspose2dConfig", "divisible");
}

TEST(ConvLayers, WrongChannelCountIsAClearError) {
  for (const auto& device : all_devices()) {
    auto c1 = nn::Conv1dConfig{4, 2, 3}.with_groups(2).init(device);
    expect_op_error(
        [&] {
          c1.forward(Tensor<3>::ones({1, 3, 8}, device));
        },
        "Conv1d", "has 3 channels (dim 1) but the layer expects 4");
    auto c2 = nn::Conv2dConfig{{3, 8}, {3, 3}}.init(device);
    expect_op_error(
        [&] {
          c2.forward(Tensor<4>::ones({2, 1, 8, 8}, device));
        },
        "Conv2d", "has 1 channels (dim 1) but the layer expects 3");
    auto t = nn::ConvTranspose2dConfig{{3, 8}, {3, 3}}.init(device);
    expect_op_error([&] { t.forward(Tensor<4>::ones({2, 4, 8, 8}, device)); }, "ConvTranspose2d", "expects 3");
    // An input smaller than the kernel is reported by the op.
    expect_op_error([&] { c2.forward(Tensor<4>::ones({1, 3, 2, 2}, device)); }, "conv2d", "does not fit");
  }
}

#if BURN_HAS_AUTODIFF
class ConvLayerGrad : public adtest::AdTest {};

TEST_P(ConvLayerGrad, Conv1dInputWeightAndBias) {
  adtest::GradCheck(ad()).run(
      [](Tensor<3> x, Tensor<3> w, Tensor<1> b) {
        nn::Conv1d conv{module::Param(w), module::Param(b), 2, 3, 1, 2, nn::PaddingConfig1d::explicit_(1)};
        return conv.forward(x);
      },
      adtest::Input<3>{rng.uniform(2 * 4 * 7, -1, 1), {2, 4, 7}},
      adtest::Input<3>{rng.uniform(6 * 2 * 3, -1, 1), {6, 2, 3}}, adtest::Input<1>{rng.uniform(6, -1, 1), {6}});
}

TEST_P(ConvLayerGrad, Conv2dInputWeightAndBias) {
  adtest::GradCheck(ad()).run(
      [](Tensor<4> x, Tensor<4> w, Tensor<1> b) {
        nn::Conv2d conv{
            module::Param(w), module::Param(b), {2, 1}, {3, 2}, {1, 2}, 1, nn::PaddingConfig2d::explicit_(1, 1)};
        return conv.forward(x);
      },
      adtest::Input<4>{rng.uniform(2 * 2 * 5 * 6, -1, 1), {2, 2, 5, 6}},
      adtest::Input<4>{rng.uniform(3 * 2 * 3 * 2, -1, 1), {3, 2, 3, 2}}, adtest::Input<1>{rng.uniform(3, -1, 1), {3}});
}

TEST_P(ConvLayerGrad, ConvTranspose2dInputWeightAndBias) {
  adtest::GradCheck(ad()).run(
      [](Tensor<4> x, Tensor<4> w, Tensor<1> b) {
        nn::ConvTranspose2d up{module::Param(w), module::Param(b), {2, 2}, {3, 3}, {1, 1}, 1, {1, 1}, {1, 1}};
        return up.forward(x);
      },
      adtest::Input<4>{rng.uniform(2 * 2 * 3 * 3, -1, 1), {2, 2, 3, 3}},
      adtest::Input<4>{rng.uniform(2 * 3 * 3 * 3, -1, 1), {2, 3, 3, 3}}, adtest::Input<1>{rng.uniform(3, -1, 1), {3}});
}

BURN_AD_MODES(ConvLayerGrad);

TEST(ConvLayers, LayerGradientsReachTheParameters) {
  const Device device = Device::flex().autodiff();
  auto conv = nn::Conv2dConfig{{1, 2}, {3, 3}}.with_padding(nn::PaddingConfig2d::same()).init(device);
  auto grads = conv.forward(Tensor<4>::ones({2, 1, 4, 4}, device)).sum().backward();
  auto gb = conv.bias->grad(grads);
  ASSERT_TRUE(gb.has_value());
  // d(sum y)/d(bias) = the number of output positions: 2 * 4 * 4.
  expect_values(gb->to_data(), {32.0, 32.0}, Shape{2});
  ASSERT_TRUE(conv.weight.grad(grads).has_value());
}
#endif

}  // namespace
