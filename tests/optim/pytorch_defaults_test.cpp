// The optimisers' pytorch_defaults(): the values torch.optim uses where
// Burn's defaults differ, and trajectories on the fixture of
// optimizer_values_test.cpp (w = [1, -2], gradients [0.5, -1], [0.1, 0.3],
// [-0.2, 0.4]). References follow torch.optim's update order, computed in
// double (the script is in the comment of each).
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

constexpr double kTorchTol = 1e-12;

TEST(OptimPyTorchDefaults, ConfigsCarryTorchOptimsValues) {
  const auto adam = AdamConfig::pytorch_defaults();
  EXPECT_EQ(adam.epsilon, 1e-8);
  EXPECT_EQ(adam.beta_1, 0.9);
  EXPECT_EQ(adam.beta_2, 0.999);
  EXPECT_FALSE(adam.weight_decay.has_value());
  const auto adamw = AdamWConfig::pytorch_defaults();
  EXPECT_EQ(adamw.epsilon, 1e-8);
  EXPECT_EQ(adamw.weight_decay, 1e-2);
  const auto rms = RmsPropConfig::pytorch_defaults();
  EXPECT_EQ(rms.epsilon, 1e-8);
  EXPECT_EQ(rms.alpha, 0.99);
  EXPECT_EQ(rms.momentum, 0.0);
  EXPECT_FALSE(rms.centered);
  const auto momentum = MomentumConfig::pytorch_defaults(0.8);
  EXPECT_EQ(momentum.momentum, 0.8);
  EXPECT_EQ(momentum.dampening, 0.0);
  EXPECT_FALSE(momentum.nesterov);
  // Burn's own defaults stay Burn's.
  EXPECT_EQ(AdamConfig{}.epsilon, 1e-5);
  EXPECT_EQ(MomentumConfig{}.dampening, 0.1);
}

TEST(OptimPyTorchDefaults, TrajectoriesMatchTorchOptim) {
  for (const auto& d : all_devices()) {
    // SGD(lr=0.1, momentum=0.9): v = g, then 0.9 v + g; w -= 0.1 v.
    auto sgd = SgdConfig{}.with_momentum(MomentumConfig::pytorch_defaults(0.9)).init();
    expect_trajectory(trajectory(sgd, d, 0.1), {{0.95, -1.9}, {0.895, -1.84}, {0.8655, -1.826}}, 1e-15);
    // Adam(lr=0.01): m.lerp_(g, 0.1); v = 0.999 v + 0.001 g^2;
    // w -= lr / (1 - 0.9^t) * m / (sqrt(v) / sqrt(1 - 0.999^t) + 1e-8).
    auto adam = AdamConfig::pytorch_defaults().init();
    expect_trajectory(trajectory(adam, d, 0.01),
                      {{0.9900000002, -1.9900000001},
                       {0.9819695906384652, -1.9857215142429225},
                       {0.9785260531835489, -1.9849209238476584}},
                      kTorchTol);
    // AdamW(lr=0.01): w *= 1 - lr * 0.01 first, then Adam's step.
    auto adamw = AdamWConfig::pytorch_defaults().init();
    expect_trajectory(trajectory(adamw, d, 0.01),
                      {{0.9899000002, -1.9898000001},
                       {0.9817706006384452, -1.9853225342429126},
                       {0.978228886123465, -1.984323411594224}},
                      kTorchTol);
    // RMSprop(lr=0.01): v = 0.99 v + 0.01 g^2; w -= lr * g / (sqrt(v) + 1e-8).
    auto rms = RmsPropConfig::pytorch_defaults().init();
    expect_trajectory(trajectory(rms, d, 0.01),
                      {{0.900000019999996, -1.900000009999999},
                       {0.8802934383202046, -1.9288675206817028},
                       {0.9171210980353726, -1.9649460375747332}},
                      kTorchTol);
  }
}

}  // namespace
