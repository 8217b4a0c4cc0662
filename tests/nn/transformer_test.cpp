// TransformerEncoder: forward against PyTorch 1.13 (post-norm and norm_first,
// gelu and relu), masks, training-mode dropout, configs, errors, gradients.
//
// Reference values: two torch.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0,
// activation=act, batch_first=True, norm_first=nf) in float64, applied in turn
// with src_key_padding_mask=pad (layers in train() mode so torch takes its
// plain path; dropout 0 keeps it deterministic). Layer l uses base = 20 + 16 l
// and wave() below, in torch's [out, in] layout:
//   self_attn: W[k] = wave(16, base + k, 0.5).reshape(4, 4), b[k] = wave(4, base + 4 + k, 0.2)
//              (k = q, k, v, out; in_proj = cat of q, k, v)
//   linear1 = (wave(24, base + 8, 0.5).reshape(6, 4), wave(6, base + 9, 0.2))
//   linear2 = (wave(24, base + 10, 0.5).reshape(4, 6), wave(4, base + 11, 0.2))
//   norm1 = (1 + wave(4, base + 12, 0.3), wave(4, base + 13, 0.1)), norm2 likewise with base + 14, + 15
// x = wave(24, 5.0, 1).reshape(2, 3, 4), pad = [[F, F, F], [F, F, T]]; printed with "%.8g".
#include <burn/nn/transformer.hpp>
#include <cmath>

#include "../autodiff/grad_check.hpp"
#include "burn_test.hpp"
#include "seq_test_support.hpp"

namespace {

using namespace burn;
using burn::testing::all_devices;
using burn::testing::expect_op_error;
using burn::testing::expect_values;
using burn::testing::seq::seq_wave;
using burn::testing::seq::tensor;
using nn::Activation;

const Tolerance kTransformerTol = Tolerance::rel_abs(1e-4, 2e-5);

std::vector<double> plus_one(std::vector<double> v) {
  for (auto& x : v) x += 1.0;
  return v;
}

std::vector<double> encoder_values(const Tensor<3>& t) { return t.to_data().convert<double>().to_vec<double>(); }

nn::TransformerEncoderLayer torch_layer(double base, bool norm_first, Activation act, const Device& device,
                                        DType dtype) {
  auto linear = [&](double salt, std::size_t out, std::size_t in) {
    return nn::Linear{
        module::Param(tensor<2>(seq_wave(out * in, salt, 0.5), Shape{out, in}, device, dtype).transpose()),
        module::Param(tensor<1>(seq_wave(out, salt + 1, 0.2), Shape{out}, device, dtype))};
  };
  auto norm = [&](double salt) {
    return nn::LayerNorm{module::Param(tensor<1>(plus_one(seq_wave(4, salt, 0.3)), Shape{4}, device, dtype)),
                         module::Param(tensor<1>(seq_wave(4, salt + 1, 0.1), Shape{4}, device, dtype)), 1e-5};
  };
  auto proj = [&](int k) {
    return nn::Linear{module::Param(tensor<2>(seq_wave(16, base + k, 0.5), Shape{4, 4}, device, dtype).transpose()),
                      module::Param(tensor<1>(seq_wave(4, base + 4 + k, 0.2), Shape{4}, device, dtype))};
  };
  const auto drop = nn::DropoutConfig{0.1}.init();
  nn::MultiHeadAttention mha{proj(0), proj(1), proj(2), proj(3), drop, 2};
  // linear(salt, ...) takes the bias from salt + 1, as linear1/linear2 do in the reference.
  nn::PositionWiseFeedForward pwff{linear(base + 8, 6, 4), linear(base + 10, 4, 6), drop, act};
  return nn::TransformerEncoderLayer{std::move(mha), std::move(pwff), norm(base + 12), norm(base + 14),
                                     drop,           norm_first};
}

nn::TransformerEncoder reference_encoder(bool norm_first, Activation act, const Device& device,
                                         DType dtype = DType::F32) {
  return nn::TransformerEncoder{
      {torch_layer(20.0, norm_first, act, device, dtype), torch_layer(36.0, norm_first, act, device, dtype)}};
}

Tensor<3> reference_x(const Device& device, DType dtype = DType::F32) {
  return tensor<3>(seq_wave(24, 5.0, 1.0), Shape{2, 3, 4}, device, dtype);
}
Tensor<2, Bool> reference_pad(const Device& device) {
  return burn::testing::bool_tensor<2>({false, false, false, false, false, true}, Shape{2, 3}, device);
}

struct Case {
  bool norm_first;
  Activation act;
  std::vector<double> expected;
};

TEST(TransformerEncoder, MatchesPyTorchWithPaddingMask) {
  const std::vector<Case> cases{
      {false, Activation::gelu(), {-1.0761375, -0.81491949, 1.042375,   0.83323618,  -1.059887,  -0.84346086,
                                   1.0442914,  0.83621876,  -1.0383456, -0.87647165, 1.0171512,  0.85781381,
                                   1.490967,   0.21658905,  -1.4468385, -0.50578405, 1.4722214,  0.29426662,
                                   -1.4516854, -0.53789328, 1.4498353,  0.3768107,   -1.4555008, -0.57065904}},
      {false, Activation::relu(), {-1.0583131, -0.84334272, 1.0227306,  0.84987752,  -1.0358156, -0.88045568,
                                   1.0153963,  0.85941274,  -1.0047246, -0.92543467, 0.97748092, 0.88787671,
                                   1.4963642,  0.18076029,  -1.4532791, -0.4818289,  1.4763691,  0.26801094,
                                   -1.4596791, -0.51820911, 1.453701,   0.35604523,  -1.4630073, -0.55480079}},
      {true, Activation::gelu(), {-3.2606161, -0.68767057, 3.9963635,  3.4339963,     -3.6986786, -1.2433757,
                                  3.9981635,  3.6870383,   -3.4391566, -1.2499043,    3.3783237,  3.272429,
                                  2.3140007,  -0.69210771, -3.6178499, -1.5915998,    2.8028085,  0.031004402,
                                  -3.6434871, -1.997273,   2.5055166,  -0.0081758957, -3.2446932, -1.6744947}},
      {true, Activation::relu(), {-3.2384491, -0.69984449, 3.9870437,  3.4367133,   -3.6585602, -1.2554274,
                                  3.9709268,  3.687694,    -3.4709551, -1.268258,   3.4223983,  3.2870322,
                                  2.3284945,  -0.76980505, -3.620825,  -1.5242942,  2.877639,   0.049789077,
                                  -3.6956589, -2.0317509,  2.5672279,  0.015767058, -3.2816746, -1.7130113}},
  };
  for (const auto& device : all_devices()) {
    for (const auto& c : cases) {
      SCOPED_TRACE(device.to_string() + (c.norm_first ? " norm_first" : " post-norm") +
                   (c.act == Activation::gelu() ? " gelu" : " relu"));
      const auto encoder = reference_encoder(c.norm_first, c.act, device);
      const auto y = encoder.forward(nn::TransformerEncoderInput{reference_x(device)}.mask_pad(reference_pad(device)));
      expect_values(y.to_data(), c.expected, Shape{2, 3, 4}, kTransformerTol);
    }
  }
}

TEST(TransformerEncoder, PaddedPositionsDoNotAffectTheOthers) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto encoder = reference_encoder(false, Activation::gelu(), device);
    const auto x = reference_x(device);
    const auto changed = x.slice_fill({Range{1, 2}, Range{2, 3}}, 50.0);  // batch 1, padded position 2
    const auto a = encoder.forward(nn::TransformerEncoderInput{x}.mask_pad(reference_pad(device)));
    const auto b = encoder.forward(nn::TransformerEncoderInput{changed}.mask_pad(reference_pad(device)));
    expect_values(b.narrow(1, 0, 2).to_data(), encoder_values(a.narrow(1, 0, 2)), Shape{2, 2, 4}, kTransformerTol);
    expect_values(b.narrow(0, 0, 1).to_data(), encoder_values(a.narrow(0, 0, 1)), Shape{1, 3, 4}, kTransformerTol);
  }
}

TEST(TransformerEncoder, CausalAttentionMaskHidesTheFuture) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto encoder = reference_encoder(true, Activation::relu(), device);
    const auto causal = burn::testing::bool_tensor<3>({false, true, true, false, false, true, false, false, false,
                                                       false, true, true, false, false, true, false, false, false},
                                                      Shape{2, 3, 3}, device);
    const auto x = reference_x(device);
    const auto a = encoder.forward(nn::TransformerEncoderInput{x}.mask_attn(causal));
    // Changing the last step changes only the last step's output.
    const auto b =
        encoder.forward(nn::TransformerEncoderInput{x.slice_fill({Range::all(), Range{2, 3}}, -7.0)}.mask_attn(causal));
    expect_values(b.narrow(1, 0, 2).to_data(), encoder_values(a.narrow(1, 0, 2)), Shape{2, 2, 4}, kTransformerTol);
    EXPECT_NE(encoder_values(b.narrow(1, 2, 1)), encoder_values(a.narrow(1, 2, 1)));
    // The first step sees only itself: the same as a length-1 sequence.
    const auto first = encoder.forward(nn::TransformerEncoderInput{x.narrow(1, 0, 1)});
    expect_values(a.narrow(1, 0, 1).to_data(), encoder_values(first), Shape{2, 1, 4}, kTransformerTol);
  }
}

TEST(TransformerEncoder, ConfigBuildsTheStack) {
  for (const auto& device : all_devices()) {
    const auto encoder = nn::TransformerEncoderConfig{8, 16, 2, 3}.init(device);
    ASSERT_EQ(encoder.layers.size(), 3u);
    const auto& layer = encoder.layers[0];
    EXPECT_FALSE(layer.norm_first);
    EXPECT_EQ(layer.pwff.activation, Activation::gelu());  // Burn's default
    EXPECT_EQ(layer.dropout.prob, 0.1);
    EXPECT_EQ(layer.pwff.linear_inner.weight->shape(), (Shape{8, 16}));
    // Per layer: 4 attention projections, two feed-forward linears, two norms.
    const std::size_t per_layer = 4 * (8 * 8 + 8) + (8 * 16 + 16) + (16 * 8 + 8) + 2 * (8 + 8);
    EXPECT_EQ(encoder.num_params(), 3 * per_layer);
    std::vector<std::string> paths;
    module::for_each_param(encoder, [&](const std::string& p, const module::ParamBase&) { paths.push_back(p); });
    EXPECT_EQ(paths.front(), "layers.0.mha.query.weight");
    EXPECT_EQ(paths.back(), "layers.2.norm_2.bias");
    const auto y = encoder.forward(nn::TransformerEncoderInput{Tensor<3>::ones(Shape{2, 5, 8}, device)});
    EXPECT_EQ(y.shape(), (Shape{2, 5, 8}));

    const auto custom = nn::TransformerEncoderConfig{8, 16, 4, 1}
                            .with_norm_first(true)
                            .with_activation(Activation::relu())
                            .with_dropout(0.0)
                            .with_layer_norm_eps(1e-6)
                            .init(device);
    EXPECT_TRUE(custom.layers[0].norm_first);
    EXPECT_EQ(custom.layers[0].mha.n_heads, 4u);
    EXPECT_EQ(custom.layers[0].norm_1.epsilon, 1e-6);
    EXPECT_EQ(custom.layers[0].pwff.activation, Activation::relu());
  }
}

TEST(TransformerEncoder, DropoutActsOnlyInTraining) {
  const Device device = Device::flex();
  const auto encoder = nn::TransformerEncoderConfig{8, 16, 2, 2}.with_dropout(0.5).init(device);
  const auto input = nn::TransformerEncoderInput{reference_x(device).repeat_dim(2, 2)};
  const auto eval = encoder_values(encoder.forward(input));  // Auto mode on a plain device: evaluation
  expect_values(encoder.forward(input).to_data(), eval, Shape{2, 3, 8}, Tolerance{0.0, 0.0});
  EXPECT_NE(encoder_values(encoder.train().forward(input)), eval);
  expect_values(encoder.train().eval().forward(input).to_data(), eval, Shape{2, 3, 8}, Tolerance{0.0, 0.0});
}

TEST(TransformerEncoder, BadConfigsAndShapesGiveClearErrors) {
  const Device device = Device::flex();
  expect_op_error(
      [&] {
        nn::TransformerEncoderConfig{6, 8, 4, 1}.init(device);
      },
      "TransformerEncoderConfig", "not divisible by n_heads");
  expect_op_error(
      [&] {
        nn::TransformerEncoderConfig{4, 8, 2, 0}.init(device);
      },
      "TransformerEncoderConfig", "positive");
  expect_op_error(
      [&] {
        nn::TransformerEncoderConfig{4, 8, 2, 1}.with_dropout(-0.1).init(device);
      },
      "TransformerEncoderConfig", "dropout");
  expect_op_error(
      [&] {
        nn::TransformerEncoderConfig{4, 8, 2, 1}.with_layer_norm_eps(0.0).init(device);
      },
      "TransformerEncoderConfig", "layer_norm_eps");
  const auto encoder = reference_encoder(false, Activation::gelu(), device);
  expect_op_error(
      [&] {
        encoder.forward(nn::TransformerEncoderInput{Tensor<3>::ones(Shape{2, 3, 5}, device)});
      },
      "TransformerEncoder", "d_model = 4");
  expect_op_error(
      [&] {
        encoder.forward(nn::TransformerEncoderInput{reference_x(device)}.mask_pad(
            Tensor<2, Bool>::full(Shape{2, 2}, false, device)));
      },
      "MultiHeadAttention", "padding mask");
}

#if BURN_HAS_AUTODIFF
class TransformerGrad : public burn::adtest::AdTest {};

// The input gradient through a whole post-norm and a pre-norm layer (f64).
TEST_P(TransformerGrad, InputGradientMatchesFiniteDifferences) {
  using burn::adtest::Input;
  const Device device = ad();
  const auto pad = reference_pad(device);
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(norm_first ? "norm_first" : "post-norm");
    const auto layer = torch_layer(20.0, norm_first, Activation::gelu(), device, DType::F64).eval();
    check([&](const Tensor<3>& x) { return layer.forward(x, pad); }, Input<3>{rng.uniform(24, -1, 1), {2, 3, 4}});
  }
}

BURN_AD_MODES(TransformerGrad);

TEST(TransformerEncoder, EveryParameterReceivesAGradient) {
  const Device device = Device::flex().autodiff();
  const auto encoder = nn::TransformerEncoderConfig{4, 8, 2, 2}.init(device);
  const auto grads = encoder.forward(nn::TransformerEncoderInput{reference_x(device)}).sum().backward();
  std::size_t n = 0;
  module::for_each_param(encoder, [&](const std::string& path, const module::ParamBase& p) {
    EXPECT_TRUE(burn::detail::grad(p.ref(), grads).has_value()) << path;
    ++n;
  });
  EXPECT_EQ(n, 2u * 16u);
}
#endif

}  // namespace
