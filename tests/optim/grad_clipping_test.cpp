// Gradient clipping against PyTorch 1.13: gradients g1 = [3, -4] and
// g2 = [0.5, 1, -2] of two zero parameters, clipped, then one SGD step with
// lr 1, so each parameter ends at minus its clipped gradient.
#include <burn/optim/sgd.hpp>

#include "optim_test_support.hpp"

namespace {

using namespace burn;
using namespace burn::optim;
using burn::testing::all_devices;
using burn::testing::expect_op_error;
using burn::testing::expect_values;

struct Two {
  module::Param<Tensor<1>> a;
  module::Param<Tensor<1>> b;
  BURN_MODULE(a, b)
};

/// {-clipped g1, -clipped g2} after one step with `clipping`.
std::pair<TensorData, TensorData> clipped(const GradientClippingConfig& clipping, const Device& d) {
  Two m{module::Param(Tensor<1>::zeros({2}, {d, DType::F64})), module::Param(Tensor<1>::zeros({3}, {d, DType::F64}))};
  GradientsParams g;
  g.insert(m.a.id(), Tensor<1>::from_data(TensorData(std::vector<double>{3, -4}), {d, DType::F64}));
  g.insert(m.b.id(), Tensor<1>::from_data(TensorData(std::vector<double>{0.5, 1, -2}), {d, DType::F64}));
  auto sgd = SgdConfig{}.with_gradient_clipping(clipping).init();
  m = sgd.step(1.0, m, std::move(g));
  return {(-m.a.val()).to_data(), (-m.b.val()).to_data()};
}

const Tolerance kTight{1e-12, 1e-12};

TEST(GradientClipping, ByValue) {
  for (const auto& d : all_devices()) {
    // torch.nn.utils.clip_grad_value_([a, b], 0.75)
    const auto [a, b] = clipped(GradientClippingConfig::value(0.75), d);
    expect_values(a, {0.75, -0.75}, Shape{2}, kTight);
    expect_values(b, {0.5, 0.75, -0.75}, Shape{3}, kTight);
  }
}

TEST(GradientClipping, ByNormClipsEachParameterOnItsOwn) {
  for (const auto& d : all_devices()) {
    // Burn's per-parameter rule: g * min(1, 2 / (|g| + tiny)) for each parameter.
    const auto [a, b] = clipped(GradientClippingConfig::norm(2.0), d);
    expect_values(a, {1.2000000000000002, -1.6}, Shape{2}, kTight);
    expect_values(b, {0.4364357804719848, 0.8728715609439696, -1.7457431218879391}, Shape{3}, kTight);
  }
}

TEST(GradientClipping, GlobalNormScalesAllGradientsTogether) {
  for (const auto& d : all_devices()) {
    // torch.nn.utils.clip_grad_norm_([a, b], 2.0)
    const auto [a, b] = clipped(GradientClippingConfig::global_norm(2.0), d);
    expect_values(a, {1.0909088925620196, -1.4545451900826927}, Shape{2}, kTight);
    expect_values(b, {0.18181814876033658, 0.36363629752067317, -0.7272725950413463}, Shape{3}, kTight);
    // Under the limit nothing changes.
    const auto [a2, b2] = clipped(GradientClippingConfig::global_norm(100.0), d);
    expect_values(a2, {3, -4}, Shape{2}, kTight);
    expect_values(b2, {0.5, 1, -2}, Shape{3}, kTight);
  }
}

TEST(GradientClipping, ClipAllAndTypedClipMatchTheStep) {
  const Device d = Device::flex();
  GradientsParams g;
  const module::ParamId id;
  g.insert(id, Tensor<1>::from_floats({3.0, -4.0}, d));
  GradientClippingConfig::norm(1.0).clip_all(g);
  expect_values(g.get<1>(id)->to_data(), {0.6, -0.8}, Shape{1 * 2});
  expect_values(GradientClippingConfig::value(1.0).clip(Tensor<2>::from_floats({{3.0, -0.5}}, d)).to_data(),
                {1.0, -0.5}, Shape{1, 2});
}

TEST(GradientClipping, ThresholdsMustBePositive) {
  expect_op_error([] { GradientClippingConfig::value(0.0); }, "GradientClippingConfig", "positive");
  expect_op_error([] { GradientClippingConfig::norm(-1.0); }, "GradientClippingConfig", "positive");
  expect_op_error([] { GradientClippingConfig::global_norm(std::nan("")); }, "GradientClippingConfig", "positive");
}

}  // namespace
