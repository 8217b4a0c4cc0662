// Losses against PyTorch 1.13 (torch.nn.functional in f64; each call is in a
// comment), on every device, their gradients by finite differences, and errors.
#include <burn/nn/loss/binary_cross_entropy.hpp>
#include <burn/nn/loss/cross_entropy.hpp>
#include <burn/nn/loss/huber.hpp>
#include <burn/nn/loss/mse.hpp>

#include "../autodiff/grad_check.hpp"
#include "burn_test.hpp"

namespace {

using namespace burn;
using burn::nn::loss::Reduction;
using burn::testing::all_devices;
using burn::testing::expect_op_error;
using burn::testing::expect_values;

const Tolerance kTight{1e-12, 1e-12};

// x = [[0.2, -1.3, 0.8, 2.1], [1.5, 0.3, -0.7, 0.0], [-0.4, 2.2, 1.1, -1.8]], y = [3, 0, 1],
// w = [0.5, 2.0, 1.0, 1.5]
Tensor<2> ce_logits(const Device& d) {
  return Tensor<2>::from_data(
      TensorData(std::vector<double>{0.2, -1.3, 0.8, 2.1, 1.5, 0.3, -0.7, 0.0, -0.4, 2.2, 1.1, -1.8}, Shape{3, 4}),
      {d, DType::F64});
}
Tensor<1, Int> ce_targets(const Device& d) { return Tensor<1, Int>::from_ints({3, 0, 1}, d); }
const std::vector<double> kClassWeights{0.5, 2.0, 1.0, 1.5};

double scalar(const Tensor<1>& t) { return t.into_scalar<double>(); }

TEST(CrossEntropyLoss, ClassIndicesMatchPyTorch) {
  using nn::loss::CrossEntropyLossConfig;
  for (const auto& d : all_devices()) {
    const auto x = ce_logits(d);
    const auto y = ce_targets(d);
    // F.cross_entropy(x, y)
    EXPECT_NEAR(scalar(CrossEntropyLossConfig{}.init(d).forward(x, y)), 0.4071823278879692, 1e-12);
    // F.cross_entropy(x, y, weight=w)
    EXPECT_NEAR(scalar(CrossEntropyLossConfig{}.with_weights(kClassWeights).init(d).forward(x, y)), 0.3794617659408987,
                1e-12);
    // F.cross_entropy(x, y, label_smoothing=0.1)
    EXPECT_NEAR(scalar(CrossEntropyLossConfig{}.with_smoothing(0.1).init(d).forward(x, y)), 0.5671823278879693, 1e-12);
    // F.cross_entropy(x, y, weight=w, label_smoothing=0.2)
    EXPECT_NEAR(scalar(CrossEntropyLossConfig{}.with_weights(kClassWeights).with_smoothing(0.2).init(d).forward(x, y)),
                0.6836660992317132, 1e-12);
  }
}

TEST(CrossEntropyLoss, PadTokensAreLeftOutOfTheMeanAsPyTorchsIgnoreIndex) {
  using nn::loss::CrossEntropyLossConfig;
  for (const auto& d : all_devices()) {
    const auto x = ce_logits(d);
    const auto y = ce_targets(d);
    const auto pad = CrossEntropyLossConfig{}.with_pad_tokens(std::vector<std::int64_t>{1});
    // F.cross_entropy(x, y, ignore_index=1)
    EXPECT_NEAR(scalar(pad.init(d).forward(x, y)), 0.43352610199817093, 1e-12);
    // F.cross_entropy(x, y, weight=w, ignore_index=1)
    EXPECT_NEAR(scalar(pad.with_weights(kClassWeights).init(d).forward(x, y)), 0.40442875221423163, 1e-12);
    // F.cross_entropy(x, y, ignore_index=1, label_smoothing=0.1)
    EXPECT_NEAR(scalar(pad.with_smoothing(0.1).init(d).forward(x, y)), 0.5772761019981709, 1e-12);
    // A pad token outside [0, classes) (PyTorch's -100) is fine too.
    const auto y2 = Tensor<1, Int>::from_ints({3, 0, -100}, d);
    const auto ignore = CrossEntropyLossConfig{}.with_pad_tokens(std::vector<std::int64_t>{-100}).init(d);
    const auto first_two = CrossEntropyLossConfig{}.init(d).forward(x.slice({{0, 2}}), y.slice({{0, 2}}));
    EXPECT_NEAR(scalar(ignore.forward(x, y2)), scalar(first_two), 1e-12);
  }
}

TEST(CrossEntropyLoss, ProbabilityTargetsMatchPyTorch) {
  using nn::loss::CrossEntropyLossConfig;
  for (const auto& d : all_devices()) {
    const auto x = ce_logits(d);
    // P = [[0.1, 0.2, 0.3, 0.4], [1, 0, 0, 0], [0.25, 0.25, 0.5, 0]]
    const auto p = Tensor<2>::from_data(
        TensorData(std::vector<double>{0.1, 0.2, 0.3, 0.4, 1, 0, 0, 0, 0.25, 0.25, 0.5, 0}, Shape{3, 4}),
        {d, DType::F64});
    // F.cross_entropy(x, P)
    EXPECT_NEAR(scalar(CrossEntropyLossConfig{}.init(d).forward_probs(x, p)), 1.2271823278879692, 1e-12);
    // F.cross_entropy(x, P, weight=w)
    EXPECT_NEAR(scalar(CrossEntropyLossConfig{}.with_weights(kClassWeights).init(d).forward_probs(x, p)),
                1.2904548070633104, 1e-12);
    // F.cross_entropy(x, P, label_smoothing=0.3)
    EXPECT_NEAR(scalar(CrossEntropyLossConfig{}.with_smoothing(0.3).init(d).forward_probs(x, p)), 1.4611823278879692,
                1e-12);
  }
}

TEST(CrossEntropyLoss, ProbabilityInputsWithoutLogits) {
  for (const auto& d : all_devices()) {
    const auto p = Tensor<2>::from_data(
        TensorData(std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.6, 0.1, 0.1, 0.2, 0.05, 0.9, 0.03, 0.02}, Shape{3, 4}),
        {d, DType::F64});
    // F.nll_loss(p.log(), y)
    EXPECT_NEAR(scalar(nn::loss::CrossEntropyLossConfig{}.with_logits(false).init(d).forward(p, ce_targets(d))),
                0.5108256237659906, 1e-12);
  }
}

TEST(CrossEntropyLoss, LargeLogitsStayFinite) {
  for (const auto& d : all_devices()) {
    for (DType dtype : {DType::F32, DType::F64}) {
      const auto x = burn::testing::float_tensor<2>({1000, 0, -1000, 1000, 0, -1000}, Shape{2, 3}, d, dtype);
      // F.cross_entropy(big, [0, 2]) = mean(0, 2000)
      expect_values(
          nn::loss::CrossEntropyLossConfig{}.init(d).forward(x, Tensor<1, Int>::from_ints({0, 2}, d)).to_data(),
          {1000.0}, Shape{1});
    }
  }
}

TEST(CrossEntropyLoss, FloatDTypesAgreeWithF64) {
  for (const auto& d : all_devices())
    for (DType dtype : burn::testing::float_dtypes()) {
      const auto x = ce_logits(d).cast(dtype);
      const auto loss =
          nn::loss::CrossEntropyLossConfig{}.with_weights(kClassWeights).with_smoothing(0.2).init({d, dtype});
      const auto out = loss.forward(x, ce_targets(d));
      EXPECT_EQ(out.dtype(), dtype);
      expect_values(out.to_data(), {0.6836660992317132}, Shape{1});
    }
}

TEST(CrossEntropyLoss, BadInputsAreClearErrors) {
  using nn::loss::CrossEntropyLossConfig;
  for (const auto& d : all_devices()) {
    const auto ce = CrossEntropyLossConfig{}.init(d);
    expect_op_error(
        [&] {
          ce.forward(ce_logits(d), Tensor<1, Int>::from_ints({0, 1}, d));
        },
        "cross_entropy", "one class index per row");
    expect_op_error(
        [&] {
          ce.forward(ce_logits(d), Tensor<1, Int>::from_ints({0, 4, 1}, d));
        },
        "cross_entropy", "target 4 at row 1 is out of range for 4 classes");
    expect_op_error(
        [&] {
          ce.forward(ce_logits(d), Tensor<1, Int>::from_ints({0, 1, -1}, d));
        },
        "cross_entropy", "out of range");
    expect_op_error(
        [&] {
          ce.forward_probs(ce_logits(d), Tensor<2>::zeros({3, 3}, d));
        },
        "cross_entropy", "same shape");
    expect_op_error(
        [&] {
          CrossEntropyLossConfig{}.with_weights(std::vector<double>{1, 2}).init(d).forward(ce_logits(d), ce_targets(d));
        },
        "cross_entropy", "2 class weights given for 4 classes");
    expect_op_error(
        [&] {
          CrossEntropyLossConfig{}
              .with_pad_tokens(std::vector<std::int64_t>{0, 1, 3})
              .init(d)
              .forward(ce_logits(d), ce_targets(d));
        },
        "cross_entropy", "every target is a pad token");
    expect_op_error(
        [&] {
          ce.forward(Tensor<2>::zeros({0, 4}, d), Tensor<1, Int>::zeros({0}, d));
        },
        "cross_entropy", "empty");
  }
  expect_op_error([] { CrossEntropyLossConfig{}.with_smoothing(1.5).init(Device::flex()); }, "CrossEntropyLossConfig",
                  "[0, 1]");
  expect_op_error(
      [] {
        CrossEntropyLossConfig{}.with_weights(std::vector<double>{1, 0}).init(Device::flex());
      },
      "CrossEntropyLossConfig", "positive");
}

TEST(MseLoss, MatchesPyTorch) {
  for (const auto& d : all_devices()) {
    const auto a = Tensor<2>::from_data(TensorData(std::vector<double>{1, 2, 3, 4}, Shape{2, 2}), {d, DType::F64});
    const auto b = Tensor<2>::from_data(TensorData(std::vector<double>{1.5, 1.5, 2, 5}, Shape{2, 2}), {d, DType::F64});
    nn::loss::MseLoss mse;
    // F.mse_loss(a, b), reduction='sum', reduction='none'
    expect_values(mse.forward(a, b).to_data(), {0.625}, Shape{1}, kTight);
    expect_values(mse.forward(a, b, Reduction::Sum).to_data(), {2.5}, Shape{1}, kTight);
    expect_values(mse.forward_no_reduction(a, b).to_data(), {0.25, 0.25, 1.0, 1.0}, Shape{2, 2}, kTight);
    expect_op_error([&] { mse.forward(a, b, Reduction::None); }, "mse_loss", "forward_no_reduction");
    expect_op_error([&] { mse.forward(a, Tensor<2>::zeros({2, 1}, d)); }, "mse_loss", "same shape");
  }
}

TEST(HuberLoss, MatchesPyTorch) {
  const std::vector<double> h{0.2, -1.5, 3.0, 0.4, -0.1, 2.0}, t{0.0, 0.5, 1.0, 0.4, 0.6, -0.5};
  for (const auto& d : all_devices()) {
    const auto pred = Tensor<2>::from_data(TensorData(h, Shape{3, 2}), {d, DType::F64});
    const auto target = Tensor<2>::from_data(TensorData(t, Shape{3, 2}), {d, DType::F64});
    const auto huber = nn::loss::HuberLossConfig{}.init();
    // F.huber_loss(h, t, delta=1.0) with reduction mean / sum / none
    expect_values(huber.forward(pred, target).to_data(), {0.8775}, Shape{1}, kTight);
    expect_values(huber.forward(pred, target, Reduction::Sum).to_data(), {5.265}, Shape{1}, kTight);
    expect_values(huber.forward_no_reduction(pred, target).to_data(), {0.02, 1.5, 1.5, 0.0, 0.245, 2.0}, Shape{3, 2},
                  kTight);
    // F.huber_loss(h, t, delta=0.5)
    expect_values(nn::loss::HuberLossConfig{}.with_delta(0.5).init().forward(pred, target).to_data(), {0.52}, Shape{1},
                  kTight);
  }
  expect_op_error([] { nn::loss::HuberLossConfig{}.with_delta(0.0).init(); }, "HuberLossConfig", "positive");
}

TEST(BinaryCrossEntropyLoss, MatchesPyTorch) {
  using nn::loss::BinaryCrossEntropyLossConfig;
  // z = [[0.3, -1.2, 2.5], [-0.7, 0.0, 1.1]], zt = [[1, 0, 1], [0, 0, 1]], bw = [0.5, 1.0, 2.0]
  for (const auto& d : all_devices()) {
    const auto z = Tensor<2>::from_data(TensorData(std::vector<double>{0.3, -1.2, 2.5, -0.7, 0.0, 1.1}, Shape{2, 3}),
                                        {d, DType::F64});
    const auto zt = Tensor<2, Int>::from_ints({{1, 0, 1}, {0, 0, 1}}, d);
    const auto logits = BinaryCrossEntropyLossConfig{}.with_logits(true);
    // F.binary_cross_entropy_with_logits(z, zt)
    EXPECT_NEAR(scalar(logits.init(d).forward(z, zt)), 0.3800326667766569, 1e-12);
    // F.binary_cross_entropy_with_logits(z, zt, weight=bw)
    EXPECT_NEAR(scalar(logits.with_weights(std::vector<double>{0.5, 1.0, 2.0}).init(d).forward(z, zt)),
                0.36127506889848826, 1e-12);
    // F.binary_cross_entropy_with_logits(z, zt * 0.9 + 0.1 / 3)  (Burn's smoothing over 3 classes)
    EXPECT_NEAR(scalar(logits.with_smoothing(0.1).init(d).forward(z, zt)), 0.4339215556655458, 1e-12);
    // F.binary_cross_entropy(q, zt), q = [[0.7, 0.2, 0.9], [0.4, 0.5, 0.6]]
    const auto q = Tensor<2>::from_data(TensorData(std::vector<double>{0.7, 0.2, 0.9, 0.4, 0.5, 0.6}, Shape{2, 3}),
                                        {d, DType::F64});
    EXPECT_NEAR(scalar(BinaryCrossEntropyLossConfig{}.init(d).forward(q, zt)), 0.3999962398337826, 1e-12);
  }
}

TEST(BinaryCrossEntropyLoss, RankOneWeighsEachElementByItsTarget) {
  using nn::loss::BinaryCrossEntropyLossConfig;
  for (const auto& d : all_devices()) {
    const auto z = Tensor<1>::from_data(TensorData(std::vector<double>{0.3, -1.2, 2.5, -0.4}), {d, DType::F64});
    const auto t = Tensor<1, Int>::from_ints({1, 0, 1, 0}, d);
    const auto logits = BinaryCrossEntropyLossConfig{}.with_logits(true);
    // F.binary_cross_entropy_with_logits(z1, t1, weight=w1[t1]), w1 = [0.25, 3.0]
    EXPECT_NEAR(scalar(logits.with_weights(std::vector<double>{0.25, 3.0}).init(d).forward(z, t)), 0.5234523415544314,
                1e-12);
    // F.binary_cross_entropy_with_logits(z1, t1 * 0.8 + 0.2 / 2)
    EXPECT_NEAR(scalar(logits.with_smoothing(0.2).init(d).forward(z, t)), 0.46238567462476504, 1e-12);
    // Extreme logits: F.binary_cross_entropy_with_logits([200, -200], [0, 1]) = 200
    const auto big = Tensor<1>::from_floats({200.0, -200.0}, d);
    EXPECT_NEAR(scalar(logits.init(d).forward(big, Tensor<1, Int>::from_ints({0, 1}, d))), 200.0, 1e-3);
  }
}

TEST(BinaryCrossEntropyLoss, BadInputsAreClearErrors) {
  using nn::loss::BinaryCrossEntropyLossConfig;
  for (const auto& d : all_devices()) {
    const auto bce = BinaryCrossEntropyLossConfig{}.with_logits(true).init(d);
    const auto z = Tensor<2>::zeros({2, 3}, d);
    expect_op_error([&] { bce.forward(z, Tensor<2, Int>::zeros({3, 2}, d)); }, "binary_cross_entropy", "same shape");
    expect_op_error(
        [&] {
          bce.forward(z, Tensor<2, Int>::from_ints({{0, 1, 2}, {0, 0, 0}}, d));
        },
        "binary_cross_entropy", "must be 0 or 1, got 2 at flat index 2");
    expect_op_error(
        [&] {
          BinaryCrossEntropyLossConfig{}
              .with_weights(std::vector<double>{1, 2})
              .init(d)
              .forward(z, Tensor<2, Int>::zeros({2, 3}, d));
        },
        "binary_cross_entropy", "2 weights given for 3 classes");
  }
  expect_op_error([] { BinaryCrossEntropyLossConfig{}.with_smoothing(-0.1).init(Device::flex()); },
                  "BinaryCrossEntropyLossConfig", "[0, 1]");
}

#if BURN_HAS_AUTODIFF
class LossGrad : public adtest::AdTest {};

TEST_P(LossGrad, CrossEntropyWithWeightsSmoothingAndPadding) {
  const auto loss = nn::loss::CrossEntropyLossConfig{}
                        .with_weights(kClassWeights)
                        .with_smoothing(0.2)
                        .with_pad_tokens(std::vector<std::int64_t>{2})
                        .init(ad());
  const auto targets = ints<1>({3, 0, 2, 1, 1}, {5});
  adtest::GradCheck(ad()).run([&](Tensor<2> x) { return loss.forward(x, targets); },
                              adtest::Input<2>{rng.uniform(5 * 4, -2, 2), {5, 4}});
}

TEST_P(LossGrad, CrossEntropyPlainAndWithProbabilityTargets) {
  const auto loss = nn::loss::CrossEntropyLossConfig{}.init(ad());
  const auto targets = ints<1>({3, 0, 2}, {3});
  adtest::GradCheck(ad()).run([&](Tensor<2> x) { return loss.forward(x, targets); },
                              adtest::Input<2>{rng.uniform(3 * 4, -2, 2), {3, 4}});
  adtest::GradCheck(ad()).run([&](Tensor<2> x, Tensor<2> p) { return loss.forward_probs(x, p); },
                              adtest::Input<2>{rng.uniform(3 * 4, -2, 2), {3, 4}},
                              adtest::Input<2>{rng.uniform(3 * 4, 0, 1), {3, 4}});
}

TEST_P(LossGrad, BinaryCrossEntropyWithLogitsAndProbabilities) {
  const auto targets = ints<2>({1, 0, 1, 0, 0, 1}, {2, 3});
  const auto logits = nn::loss::BinaryCrossEntropyLossConfig{}
                          .with_logits(true)
                          .with_weights(std::vector<double>{0.5, 1, 2})
                          .init(ad());
  adtest::GradCheck(ad()).run([&](Tensor<2> x) { return logits.forward(x, targets); },
                              adtest::Input<2>{rng.uniform(6, -3, 3), {2, 3}});
  const auto probs = nn::loss::BinaryCrossEntropyLossConfig{}.with_smoothing(0.1).init(ad());
  adtest::GradCheck(ad()).run([&](Tensor<2> p) { return probs.forward(p, targets); },
                              adtest::Input<2>{rng.uniform(6, 0.1, 0.9), {2, 3}});
}

TEST_P(LossGrad, MseAndHuber) {
  const auto huber = nn::loss::HuberLossConfig{}.with_delta(0.7).init();
  // Residuals kept away from +-delta, where the Huber loss has a kink in its second derivative.
  adtest::GradCheck(ad()).run([&](Tensor<2> a, Tensor<2> b) { return huber.forward(a, b); },
                              adtest::Input<2>{{0.1, -1.5, 2.0, 0.3, -0.2, 0.9}, {2, 3}},
                              adtest::Input<2>{{0.4, 0.1, -0.3, 0.2, 1.1, -0.5}, {2, 3}});
  adtest::GradCheck(ad()).run(
      [&](Tensor<3> a, Tensor<3> b) { return nn::loss::MseLoss{}.forward(a, b, Reduction::Sum); },
      adtest::Input<3>{rng.uniform(12, -1, 1), {2, 3, 2}}, adtest::Input<3>{rng.uniform(12, -1, 1), {2, 3, 2}});
}

BURN_AD_MODES(LossGrad);
#endif

}  // namespace
