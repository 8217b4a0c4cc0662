// Optimiser steps against PyTorch 1.13's torch.optim: a 2-element f64
// parameter [1, -2] is fed the gradients [0.5, -1], [0.1, 0.3], [-0.2, 0.4]
// (p.grad = g; opt.step()), and w is recorded after each step. The torch
// call producing each reference is in a comment.
#include <burn/optim/adam.hpp>
#include <burn/optim/adamw.hpp>
#include <burn/optim/rmsprop.hpp>
#include <burn/optim/sgd.hpp>

#include "optim_test_support.hpp"

namespace {

using namespace burn;
using namespace burn::optim;
using burn::optim_test::expect_trajectory;
using burn::optim_test::trajectory;
using burn::testing::all_devices;

constexpr double kTol = 1e-12;

TEST(OptimizerValues, Sgd) {
  for (const auto& d : all_devices()) {
    // SGD(lr=0.1)
    auto plain = SgdConfig{}.init();
    expect_trajectory(trajectory(plain, d, 0.1), {{0.95, -1.9}, {0.94, -1.93}, {0.96, -1.97}}, kTol);
    // SGD(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)
    auto momentum =
        SgdConfig{}.with_momentum(MomentumConfig{0.9, 0.1, false}).with_weight_decay(WeightDecayConfig{0.01}).init();
    expect_trajectory(trajectory(momentum, d, 0.1),
                      {{0.949, -1.898}, {0.8932458999999999, -1.8314918}, {0.8602632886899999, -1.80598607738}}, kTol);
    // SGD(lr=0.1, momentum=0.9, dampening=0, nesterov=True)
    auto nesterov = SgdConfig{}.with_momentum(MomentumConfig{0.9, 0.0, true}).init();
    expect_trajectory(trajectory(nesterov, d, 0.1), {{0.905, -1.81}, {0.8455, -1.786}, {0.83895, -1.8134000000000001}},
                      kTol);
  }
}

TEST(OptimizerValues, Adam) {
  for (const auto& d : all_devices()) {
    // Adam(lr=0.01, betas=(0.9, 0.999), eps=1e-5)
    auto adam = AdamConfig{}.init();
    expect_trajectory(trajectory(adam, d, 0.01),
                      {{0.9900001999960001, -1.990000099999},
                       {0.9819700129804458, -1.985721672050402},
                       {0.9785265843455143, -1.9849210940494026}},
                      kTol);
    // Adam(lr=0.01, betas=(0.8, 0.9), eps=1e-5, weight_decay=0.1, amsgrad=True)
    auto ams = AdamConfig{}
                   .with_beta_1(0.8)
                   .with_beta_2(0.9)
                   .with_weight_decay(WeightDecayConfig{0.1})
                   .with_amsgrad(true)
                   .init();
    expect_trajectory(trajectory(ams, d, 0.01),
                      {{0.9900001666638889, -1.990000083332639},
                       {0.9813773011186651, -1.984518434264982},
                       {0.9764394101703819, -1.9817879941064962}},
                      kTol);
    EXPECT_EQ(adam.name(), "adam");
  }
}

TEST(OptimizerValues, AdamWDecaysTheWeightsDirectly) {
  for (const auto& d : all_devices()) {
    // AdamW(lr=0.01, betas=(0.9, 0.999), eps=1e-5, weight_decay=0.1)
    auto adamw = AdamWConfig{}.with_weight_decay(0.1).init();
    const auto got = trajectory(adamw, d, 0.01);
    expect_trajectory(got,
                      {{0.9890001999960001, -1.988000099999},
                       {0.9799810127804498, -1.981733671950403},
                       {0.9755576031327379, -1.9789513602774533}},
                      kTol);
    // Decoupled: unlike Adam with an L2 penalty, the first step is exactly Adam's plus -lr * wd * w.
    auto adam = AdamConfig{}.init();
    EXPECT_NEAR(got[0][0], trajectory(adam, d, 0.01)[0][0] - 0.01 * 0.1 * 1.0, kTol);
  }
}

TEST(OptimizerValues, RmsProp) {
  for (const auto& d : all_devices()) {
    // RMSprop(lr=0.01, alpha=0.99, eps=1e-5)
    auto plain = RmsPropConfig{}.init();
    expect_trajectory(trajectory(plain, d, 0.01),
                      {{0.9000199960007998, -1.9000099990001},
                       {0.8803172931675061, -1.9288747349490696},
                       {0.917138179527443, -1.9649500012406944}},
                      kTol);
    // RMSprop(lr=0.01, alpha=0.9, eps=1e-5, centered=True, momentum=0.9, weight_decay=0.1)
    auto centered = RmsPropConfig{}
                        .with_alpha(0.9)
                        .with_centered(true)
                        .with_momentum(0.9)
                        .with_weight_decay(WeightDecayConfig{0.1})
                        .init();
    expect_trajectory(trajectory(centered, d, 0.01),
                      {{0.9666685184156436, -1.966667592566873},
                       {0.9254721407468712, -1.9396373801753228},
                       {0.8945267779229187, -1.921325387650968}},
                      kTol);
  }
}

TEST(OptimizerValues, F32AndHalfParametersFollowTheF64Trajectory) {
  // Same Adam run in lower precision: state and arithmetic stay in the
  // parameter's dtype, so the result is within that dtype's rounding.
  const std::vector<std::vector<double>> want{{0.9900001999960001, -1.990000099999},
                                              {0.9819700129804458, -1.985721672050402},
                                              {0.9785265843455143, -1.9849210940494026}};
  for (const auto& d : all_devices()) {
    auto f32 = AdamConfig{}.init();
    expect_trajectory(trajectory(f32, d, 0.01, DType::F32), want, 1e-6);
    auto f16 = AdamConfig{}.init();
    expect_trajectory(trajectory(f16, d, 0.01, DType::F16), want, 5e-3);
  }
}

TEST(OptimizerValues, StateSlotsAndStepCounters) {
  const Device d = Device::flex();
  auto adam = AdamConfig{}.with_amsgrad(true).init();
  optim_test::Vec m{module::Param(Tensor<1>::from_floats({1.0, -2.0}, d))};
  for (int i = 0; i < 2; ++i) {
    GradientsParams g;
    g.insert(m.w.id(), Tensor<1>::from_floats({0.5, -1.0}, d));
    m = adam.step(0.01, m, std::move(g));
  }
  EXPECT_EQ(adam.num_states(), 1u);
  EXPECT_EQ(adam.param_step(m.w.id()), 2u);
  // m = 0.9 * 0.05 + 0.1 * 0.5 (the moments start from zero)
  auto m1 = adam.state_tensor(m.w.id(), "moment_1");
  ASSERT_TRUE(m1.has_value());
  burn::testing::expect_values(burn::detail::to_data(*m1), {0.095, -0.19}, Shape{2});
  EXPECT_TRUE(adam.state_tensor(m.w.id(), "max_moment_2").has_value());
  const auto keys = adam.state_tensors();
  EXPECT_EQ(keys.size(), 3u);
  EXPECT_TRUE(keys.count(m.w.id().to_string() + ".moment_1"));
  const auto meta = adam.state_metadata();
  EXPECT_EQ(meta.at("optimizer"), "adam");
  EXPECT_EQ(meta.at(m.w.id().to_string() + ".step"), "2");
}

}  // namespace
