// MultiHeadAttention: forward against PyTorch 1.13, masks, training-mode
// dropout, config and shape errors, and finite-difference gradients.
//
// Reference values: torch.nn.MultiheadAttention(4, 2, dropout=0.0,
// batch_first=True) in float64 with every weight set from wave() below
// (torch's [out, in] layout; ours is its transpose):
//   W[k] = wave(16, 0.1 + k, 0.5).reshape(4, 4), b[k] = wave(4, 4.1 + k, 0.2),  k = q, k, v, out
//   in_proj_weight = cat(W[0..2]), in_proj_bias = cat(b[0..2]), out_proj = (W[3], b[3])
//   ctx, w = mha(q, k, v, key_padding_mask=pad, attn_mask=attn.repeat_interleave(2, 0),
//                need_weights=True, average_attn_weights=False)
// printed with "%.8g".
#include <burn/nn/attention.hpp>
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

const Tolerance kAttentionTol = Tolerance::rel_abs(1e-4, 1e-5);

/// A Linear from torch's layout: weight [out, in] (transposed into ours) and bias [out].
nn::Linear torch_linear(const std::vector<double>& w, const std::vector<double>& b, std::size_t out, std::size_t in,
                        const Device& device, DType dtype) {
  return nn::Linear{module::Param(tensor<2>(w, Shape{out, in}, device, dtype).transpose()),
                    module::Param(tensor<1>(b, Shape{out}, device, dtype))};
}

/// d_model 4, 2 heads, weights as in the reference script (base salt 0.1).
nn::MultiHeadAttention reference_mha(const Device& device, DType dtype = DType::F32) {
  auto proj = [&](int k) {
    return torch_linear(seq_wave(16, 0.1 + k, 0.5), seq_wave(4, 4.1 + k, 0.2), 4, 4, device, dtype);
  };
  return nn::MultiHeadAttention{proj(0), proj(1), proj(2), proj(3), nn::DropoutConfig{0.1}.init(), 2};
}

Tensor<3> self_input(const Device& device, DType dtype = DType::F32) {
  return tensor<3>(seq_wave(24, 1.0, 1.0), Shape{2, 3, 4}, device, dtype);
}

// Batch 0: padding hides key 2, a causal attention mask on top. Batch 1:
// padding hides key 2, the attention mask hides other single pairs.
Tensor<2, Bool> reference_pad(const Device& device) {
  return burn::testing::bool_tensor<2>({false, false, true, false, false, true}, Shape{2, 3}, device);
}
Tensor<3, Bool> reference_attn(const Device& device) {
  return burn::testing::bool_tensor<3>({false, true, true, false, false, true, false, false, false,  //
                                        false, true, false, false, false, false, true, false, false},
                                       Shape{2, 3, 3}, device);
}

TEST(MultiHeadAttention, SelfAttentionMatchesPyTorch) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto out = reference_mha(device).forward(nn::MhaInput::self_attention(self_input(device)));
    expect_values(out.context.to_data(), {-0.49754337, -0.20816319, 0.23377167,  0.44906654,  -0.51439584, -0.20932014,
                                          0.24954004,  0.46499897,  -0.17300096, -0.35610821, -0.22940016, 0.16300411,
                                          0.56424649,  0.37522845,  -0.28136077, -0.61702138, 0.55278114,  0.3875767,
                                          -0.2583247,  -0.60778407, 0.21593653,  0.5178282,   0.2005699,   -0.30803602},
                  Shape{2, 3, 4}, kAttentionTol);
    expect_values(
        out.weights.to_data(),
        {0.44313877, 0.29615383, 0.2607074,   0.48053524, 0.34602041, 0.17344436,  0.32620726, 0.3855926,  0.28820014,
         0.65211214, 0.24276352, 0.10512434,  0.5411572,  0.30712221, 0.15172059,  0.17700841, 0.33039331, 0.49259828,
         0.54176858, 0.29707611, 0.16115531,  0.56401071, 0.32962399, 0.10636531,  0.39838599, 0.39927852, 0.20233549,
         0.75633044, 0.1876482,  0.056021353, 0.63268401, 0.26876885, 0.098547144, 0.24436754, 0.36755951, 0.38807296},
        Shape{2, 2, 3, 3}, kAttentionTol);
  }
}

TEST(MultiHeadAttention, CrossAttentionMatchesPyTorch) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto input = nn::MhaInput::cross(tensor<3>(seq_wave(16, 1.1, 1.0), Shape{2, 2, 4}, device),
                                           tensor<3>(seq_wave(24, 1.2, 1.0), Shape{2, 3, 4}, device),
                                           tensor<3>(seq_wave(24, 1.3, 1.0), Shape{2, 3, 4}, device));
    const auto out = reference_mha(device).forward(input);
    expect_values(out.context.to_data(),
                  {-0.59995777, -0.055246744, 0.47947388, 0.52638125, -0.62136243, -0.065734321, 0.49105132, 0.54771728,
                   0.37124399, 0.41965423, -0.046729842, -0.44159015, 0.6484255, 0.21546284, -0.51524549, -0.67641354},
                  Shape{2, 2, 4}, kAttentionTol);
    expect_values(out.weights.to_data(),
                  {0.44274858, 0.29559936, 0.26165205, 0.4562983,  0.35999073, 0.18371097, 0.62866736, 0.26412826,
                   0.10720439, 0.54287118, 0.31745341, 0.13967542, 0.32883044, 0.28026787, 0.39090169, 0.51610793,
                   0.31137384, 0.17251823, 0.49103754, 0.29529068, 0.21367178, 0.73020182, 0.21335131, 0.056446879},
                  Shape{2, 2, 2, 3}, kAttentionTol);
  }
}

TEST(MultiHeadAttention, PaddingAndAttentionMasksMatchPyTorchWithExactZeros) {
  const std::vector<double> context{-0.95942397, 0.14637427,  1.0278657,   0.83862165,  -0.731446,  -0.13330905,
                                    0.53781513,  0.65911125,  -0.61868156, -0.27607164, 0.29127737, 0.57085975,
                                    0.9192608,   0.1220107,   -0.87364855, -0.91879703, 0.69566313, 0.34831852,
                                    -0.43799292, -0.73688099, 0.25896478,  0.79153898,  0.41401778, -0.38173902};
  const std::vector<double> weights{1, 0, 0, 0.5813707,  0.4186293,  0, 0.45828509, 0.54171491, 0,
                                    1, 0, 0, 0.63794688, 0.36205312, 0, 0.34885259, 0.65114741, 0,
                                    1, 0, 0, 0.63114236, 0.36885764, 0, 0,          1,          0,
                                    1, 0, 0, 0.70184925, 0.29815075, 0, 0,          1,          0};
  // f16 too: the masked fill must underflow to exact zeros there as well.
  for (const auto& device : all_devices()) {
    for (DType dtype : {DType::F32, DType::F64, DType::F16}) {
      SCOPED_TRACE(device.to_string() + " " + std::string(dtype_name(dtype)));
      const auto input = nn::MhaInput::self_attention(self_input(device, dtype))
                             .mask_pad(reference_pad(device))
                             .mask_attn(reference_attn(device));
      const auto out = reference_mha(device, dtype).forward(input);
      const Tolerance tol = dtype == DType::F16 ? Tolerance::default_for(dtype) : kAttentionTol;
      expect_values(out.context.to_data(), context, Shape{2, 3, 4}, tol);
      expect_values(out.weights.to_data(), weights, Shape{2, 2, 3, 3}, tol);
      const auto got = out.weights.to_data().convert<double>().to_vec<double>();
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (weights[i] == 0.0) {
          EXPECT_EQ(got[i], 0.0) << "masked weight " << i;
        }
      }
    }
  }
}

TEST(MultiHeadAttention, PaddedKeysDoNotAffectTheResult) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto mha = reference_mha(device);
    const auto query = tensor<3>(seq_wave(16, 1.1, 1.0), Shape{2, 2, 4}, device);
    const auto memory = tensor<3>(seq_wave(24, 1.2, 1.0), Shape{2, 3, 4}, device);
    // Whatever sits in the padded position (key 2 of each batch) is ignored.
    const auto garbage = memory.slice_fill({Range::all(), Range{2, 3}}, 1000.0);
    const auto pad = reference_pad(device);
    const auto a = mha.forward(nn::MhaInput::cross(query, memory, memory).mask_pad(pad));
    const auto b = mha.forward(nn::MhaInput::cross(query, garbage, garbage).mask_pad(pad));
    expect_values(b.context.to_data(), a.context.to_data().convert<double>().to_vec<double>(), Shape{2, 2, 4},
                  kAttentionTol);
    expect_values(b.weights.to_data(), a.weights.to_data().convert<double>().to_vec<double>(), Shape{2, 2, 2, 3},
                  kAttentionTol);
    // The same as attending over the unpadded prefix alone.
    const auto prefix = memory.narrow(1, 0, 2);
    const auto c = mha.forward(nn::MhaInput::cross(query, prefix, prefix));
    expect_values(a.context.to_data(), c.context.to_data().convert<double>().to_vec<double>(), Shape{2, 2, 4},
                  kAttentionTol);
  }
}

TEST(MultiHeadAttention, AFullyMaskedRowGetsUniformWeightsNotNaN) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    auto all_masked = Tensor<2, Bool>::full(Shape{2, 3}, true, device);
    const auto out =
        reference_mha(device).forward(nn::MhaInput::self_attention(self_input(device)).mask_pad(all_masked));
    expect_values(out.weights.to_data(), std::vector<double>(36, 1.0 / 3.0), Shape{2, 2, 3, 3}, kAttentionTol);
    EXPECT_FALSE(out.context.is_nan().any().into_scalar<bool>());
  }
}

TEST(MultiHeadAttention, DropoutActsOnlyInTraining) {
  const Device device = Device::flex();
  const auto mha = reference_mha(device);  // dropout 0.1, Auto mode: evaluation on a plain device
  const auto input = nn::MhaInput::self_attention(self_input(device));
  const auto eval = mha.forward(input).context.to_data().convert<double>().to_vec<double>();
  expect_values(mha.eval().forward(input).context.to_data(), eval, Shape{2, 3, 4}, Tolerance{0.0, 0.0});
  auto train = mha.train();
  train.dropout.prob = 0.5;
  const auto trained = train.forward(input);
  EXPECT_NE(trained.context.to_data().convert<double>().to_vec<double>(), eval);
  // The returned weights are those before dropout.
  expect_values(trained.weights.to_data(), mha.forward(input).weights.to_data().convert<double>().to_vec<double>(),
                Shape{2, 2, 3, 3}, Tolerance{0.0, 0.0});
}

TEST(MultiHeadAttention, ConfigBuildsTheProjections) {
  for (const auto& device : all_devices()) {
    const auto mha = nn::MultiHeadAttentionConfig{8, 2}.init(device);
    EXPECT_EQ(mha.d_model(), 8u);
    EXPECT_EQ(mha.n_heads, 2u);
    EXPECT_EQ(mha.dropout.prob, 0.1);  // Burn's default
    EXPECT_EQ(mha.num_params(), 4u * (8u * 8u + 8u));
    EXPECT_TRUE(mha.query.weight.is_pytorch_transposed());
    std::vector<std::string> paths;
    module::for_each_param(mha, [&](const std::string& p, const module::ParamBase&) { paths.push_back(p); });
    EXPECT_EQ(paths.front(), "query.weight");
    EXPECT_EQ(paths.back(), "output.bias");
    const auto out = mha.forward(nn::MhaInput::self_attention(Tensor<3>::ones(Shape{3, 5, 8}, device)));
    EXPECT_EQ(out.context.shape(), (Shape{3, 5, 8}));
    EXPECT_EQ(out.weights.shape(), (Shape{3, 2, 5, 5}));
  }
}

TEST(MultiHeadAttention, BadConfigsAndShapesGiveClearErrors) {
  const Device device = Device::flex();
  expect_op_error(
      [&] {
        nn::MultiHeadAttentionConfig{10, 3}.init(device);
      },
      "MultiHeadAttentionConfig", "not divisible by n_heads");
  expect_op_error([&] { nn::MultiHeadAttentionConfig{0, 1}.init(device); }, "MultiHeadAttentionConfig", "positive");
  expect_op_error(
      [&] {
        nn::MultiHeadAttentionConfig{4, 2}.with_dropout(1.5).init(device);
      },
      "MultiHeadAttentionConfig", "dropout");

  const auto mha = reference_mha(device);
  const auto x = self_input(device);
  auto three_heads = mha;
  three_heads.n_heads = 3;
  expect_op_error([&] { three_heads.forward(nn::MhaInput::self_attention(x)); }, "MultiHeadAttention",
                  "not divisible by n_heads 3");
  expect_op_error(
      [&] {
        mha.forward(nn::MhaInput::self_attention(Tensor<3>::ones(Shape{2, 3, 5}, device)));
      },
      "MultiHeadAttention", "d_model is 4");
  expect_op_error([&] { mha.forward(nn::MhaInput::cross(x, x, x.narrow(1, 0, 2))); }, "MultiHeadAttention",
                  "key and value have sequence lengths 3 and 2");
  expect_op_error([&] { mha.forward(nn::MhaInput::cross(x, x.narrow(0, 0, 1), x.narrow(0, 0, 1))); },
                  "MultiHeadAttention", "batch sizes");
  expect_op_error(
      [&] {
        mha.forward(nn::MhaInput::self_attention(x).mask_pad(Tensor<2, Bool>::full(Shape{2, 4}, false, device)));
      },
      "MultiHeadAttention", "padding mask has shape [2, 4]");
  expect_op_error(
      [&] {
        mha.forward(nn::MhaInput::self_attention(x).mask_attn(Tensor<3, Bool>::full(Shape{2, 3, 2}, false, device)));
      },
      "MultiHeadAttention", "attention mask has shape [2, 3, 2]");
}

#if BURN_HAS_AUTODIFF
class MultiHeadAttentionGrad : public burn::adtest::AdTest {};

// Gradients of the inputs and of every projection's weight and bias, through
// both masks, against central differences (f64, d_model 4, 2 heads).
TEST_P(MultiHeadAttentionGrad, MatchesFiniteDifferences) {
  using burn::adtest::Input;
  const Device device = ad();
  const auto pad = reference_pad(device);
  const auto attn = reference_attn(device);
  auto linear = [](const Tensor<2>& w, const Tensor<1>& b) { return nn::Linear{module::Param(w), module::Param(b)}; };
  check(
      [&](const Tensor<3>& q, const Tensor<3>& kv, const Tensor<2>& wq, const Tensor<2>& wk, const Tensor<2>& wv,
          const Tensor<2>& wo, const Tensor<1>& bq, const Tensor<1>& bk, const Tensor<1>& bv, const Tensor<1>& bo) {
        const nn::MultiHeadAttention mha{
            linear(wq, bq), linear(wk, bk), linear(wv, bv), linear(wo, bo), nn::DropoutConfig{0.1}.init(), 2};
        // eval(): dropout off even though the autodiff device would mean training.
        const auto out = mha.eval().forward(nn::MhaInput::cross(q, kv, kv).mask_pad(pad).mask_attn(attn));
        return out.context;
      },
      Input<3>{rng.uniform(24, -1, 1), {2, 3, 4}}, Input<3>{rng.uniform(24, -1, 1), {2, 3, 4}},
      Input<2>{rng.uniform(16, -0.6, 0.6), {4, 4}}, Input<2>{rng.uniform(16, -0.6, 0.6), {4, 4}},
      Input<2>{rng.uniform(16, -0.6, 0.6), {4, 4}}, Input<2>{rng.uniform(16, -0.6, 0.6), {4, 4}},
      Input<1>{rng.uniform(4, -0.2, 0.2), {4}}, Input<1>{rng.uniform(4, -0.2, 0.2), {4}},
      Input<1>{rng.uniform(4, -0.2, 0.2), {4}}, Input<1>{rng.uniform(4, -0.2, 0.2), {4}});
}

BURN_AD_MODES(MultiHeadAttentionGrad);

TEST(MultiHeadAttention, ModuleParametersReceiveGradients) {
  const Device device = Device::flex().autodiff();
  const auto mha = nn::MultiHeadAttentionConfig{4, 2}.init(device);
  const auto grads = mha.forward(nn::MhaInput::self_attention(self_input(device))).context.sum().backward();
  module::for_each_param(mha, [&](const std::string& path, const module::ParamBase& p) {
    EXPECT_TRUE(burn::detail::grad(p.ref(), grads).has_value()) << path;
  });
}
#endif

}  // namespace
