// Short training runs: the loss of a tiny model must fall with each
// optimiser, driven by a scheduler, on every device.
#include <burn/lr_scheduler/cosine.hpp>
#include <burn/lr_scheduler/linear.hpp>
#include <burn/nn/loss/cross_entropy.hpp>
#include <burn/optim/adam.hpp>
#include <burn/optim/adamw.hpp>
#include <burn/optim/rmsprop.hpp>
#include <burn/optim/sgd.hpp>

#include "optim_test_support.hpp"

namespace {

using namespace burn;
using namespace burn::optim;
using burn::testing::all_devices;

#if BURN_HAS_AUTODIFF
/// A Linear classifier on 3 separable clusters in 2-D.
TEST(Training, LinearClassifierLossFallsWithAdamAndCosineSchedule) {
  for (const auto& base : all_devices()) {
    const Device device = base.autodiff();
    device.seed(3);
    auto model = nn::LinearConfig{2, 3}.init(device);
    const auto x = Tensor<2>::from_floats({{2.0, 0.1},
                                           {1.8, -0.2},
                                           {2.2, 0.3},
                                           {-1.0, 1.9},
                                           {-1.2, 2.1},
                                           {-0.8, 1.7},
                                           {-1.1, -2.0},
                                           {-0.9, -1.8},
                                           {-1.3, -2.2}},
                                          device);
    const auto y = Tensor<1, Int>::from_ints({0, 0, 0, 1, 1, 1, 2, 2, 2}, device);
    const auto ce = nn::loss::CrossEntropyLossConfig{}.init(device);
    auto optim = AdamConfig{}.init();
    auto sched = lr_scheduler::CosineAnnealingLrSchedulerConfig{0.1, 40}.with_min_lr(0.01).init();
    double first = 0.0, last = 0.0;
    for (int i = 0; i < 40; ++i) {
      const Tensor<1> loss = ce.forward(model.forward(x), y);
      Gradients grads = loss.backward();
      model = optim.step(sched.step(), model, GradientsParams::from_grads(grads, model));
      last = loss.into_scalar<double>();
      if (i == 0) first = last;
    }
    EXPECT_LT(last, 0.2 * first) << "on " << base;
    // And it classifies the training points.
    const auto predicted = model.valid().forward(x.without_autodiff()).argmax(1).reshape<1>({-1});
    predicted.to_data().convert(DType::I64).assert_eq(y.to_data().convert(DType::I64));
  }
}

TEST(Training, EveryOptimiserReducesTheRegressionLoss) {
  const auto batch_of = [](const Device& d) { return optim_test::tiny_batch(d); };
  struct Case {
    const char* name;
    Optimizer (*make)();
    double lr;
  };
  const Case cases[] = {
      {"sgd+nesterov",
       [] {
         return SgdConfig{}.with_momentum(MomentumConfig{0.9, 0.0, true}).init();
       },
       0.05},
      {"adam", [] { return AdamConfig{}.init(); }, 0.02},
      {"adamw", [] { return AdamWConfig{}.with_weight_decay(0.01).init(); }, 0.02},
      {"rmsprop", [] { return RmsPropConfig{}.with_centered(true).init(); }, 0.005},
      {"sgd+global-norm",
       [] { return SgdConfig{}.with_gradient_clipping(GradientClippingConfig::global_norm(0.5)).init(); }, 0.2},
  };
  for (const auto& base : all_devices()) {
    const Device device = base.autodiff();
    const auto batch = batch_of(device);
    for (const auto& c : cases) {
      auto model = optim_test::tiny_net(device);
      auto optim = c.make();
      auto warmup = lr_scheduler::LinearLrSchedulerConfig{c.lr / 10, c.lr, 5}.init();
      const double first = optim_test::train_step(optim, model, batch, warmup.step());
      double last = first;
      for (int i = 0; i < 60; ++i) last = optim_test::train_step(optim, model, batch, warmup.step());
      EXPECT_LT(last, 0.1 * first) << c.name << " on " << base;
    }
  }
}
#endif

}  // namespace
