// A step that throws changes nothing: the module keeps its values and stays
// usable, also when it was passed with std::move as apps/burn-train does
// (`model = optim.step(lr, std::move(model), grads)`), and the optimiser's
// step counters and moments stay where they were.
#include <burn/optim/adam.hpp>
#include <burn/optim/sgd.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "optim_test_support.hpp"

namespace {

using namespace burn;
using namespace burn::optim;
using burn::optim_test::snapshot;
using burn::optim_test::tiny_batch;
using burn::optim_test::tiny_net;
using burn::optim_test::train_step;
using burn::testing::all_devices;
using burn::testing::expect_op_error;

struct BadLr {
  double lr;
  const char* shown;  // how the message prints it
};

const std::vector<BadLr>& bad_lrs() {
  static const std::vector<BadLr> lrs{{std::numeric_limits<double>::quiet_NaN(), "got nan;"},
                                      {std::numeric_limits<double>::infinity(), "got inf;"},
                                      {-std::numeric_limits<double>::infinity(), "got -inf;"},
                                      {-0.01, "got -0.01;"}};
  return lrs;
}

void expect_same_values(const std::vector<TensorData>& got, const std::vector<TensorData>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) got[i].assert_eq(want[i]);
}

optim_test::Vec vec(std::vector<double> values, const Device& device) {
  return optim_test::Vec{module::Param(Tensor<1>::from_data(TensorData(values), {device, DType::F64}))};
}

GradientsParams grads_for(const optim_test::Vec& m, std::vector<double> g, const Device& device) {
  GradientsParams grads;
  grads.insert(m.w.id(), Tensor<1>::from_data(TensorData(g), {device, DType::F64}));
  return grads;
}

TEST(OptimizerFailedStep, BadLearningRateLeavesAMovedModuleAndTheMomentsAsTheyWere) {
  const Device device = Device::flex();
  auto sgd = SgdConfig{}.with_momentum(MomentumConfig{0.5, 0.0, false}).init();
  auto m = vec({1.0, -2.0}, device);
  // w = [1, -2] - 0.5 * [0.5, -1]; the velocity starts at the gradient.
  m = sgd.step(0.5, std::move(m), grads_for(m, {0.5, -1.0}, device));
  m.w->to_data().assert_eq(TensorData(std::vector<double>{0.75, -1.5}));

  for (const auto& bad : bad_lrs()) {
    SCOPED_TRACE(bad.shown);
    auto grads = grads_for(m, {0.25, 0.5}, device);
    expect_op_error([&] { m = sgd.step(bad.lr, std::move(m), std::move(grads)); }, "Optimizer",
                    std::string("the learning rate must be finite and non-negative, ") + bad.shown);
    // The module is still there, with its old value, and the state did not move.
    m.w->to_data().assert_eq(TensorData(std::vector<double>{0.75, -1.5}));
    EXPECT_EQ(sgd.param_step(m.w.id()), 1u);
    burn::detail::to_data(*sgd.state_tensor(m.w.id(), "velocity"))
        .assert_eq(TensorData(std::vector<double>{0.5, -1.0}));
    // The lvalue form leaves it alone too.
    expect_op_error([&] { (void)sgd.step(bad.lr, m, grads_for(m, {0.25, 0.5}, device)); }, "Optimizer", bad.shown);
    m.w->to_data().assert_eq(TensorData(std::vector<double>{0.75, -1.5}));
  }

  // A valid step continues from the old state: v = 0.5 * [0.5, -1] + [0.25, 0.5], w -= 0.5 * v.
  m = sgd.step(0.5, std::move(m), grads_for(m, {0.25, 0.5}, device));
  m.w->to_data().assert_eq(TensorData(std::vector<double>{0.5, -1.5}));
  EXPECT_EQ(sgd.param_step(m.w.id()), 2u);
  burn::detail::to_data(*sgd.state_tensor(m.w.id(), "velocity")).assert_eq(TensorData(std::vector<double>{0.5, 0.0}));
}

#if BURN_HAS_AUTODIFF
TEST(OptimizerFailedStep, BurnTrainLoopSurvivesABadLearningRate) {
  for (const auto& base : all_devices()) {
    SCOPED_TRACE(base.to_string());
    const Device device = base.autodiff();
    auto model = tiny_net(device);
    auto adam = AdamConfig{}.with_weight_decay(WeightDecayConfig{0.01}).init();
    const auto batch = tiny_batch(device);
    train_step(adam, model, batch, 0.01);  // state: step 1 and both moments per parameter
    const auto id = model.fc1.weight.id();
    ASSERT_EQ(adam.param_step(id), 1u);

    for (const auto& bad : bad_lrs()) {
      SCOPED_TRACE(bad.shown);
      const auto values = snapshot(model);
      const auto state = adam.state_tensors();
      const auto metadata = adam.state_metadata();
      // apps/burn-train's step, verbatim.
      const Tensor<1> loss = nn::loss::MseLoss{}.forward(model.forward(batch.first), batch.second);
      auto grads = loss.backward();
      auto grads_params = GradientsParams::from_grads(grads, model);
      expect_op_error([&] { model = adam.step(bad.lr, std::move(model), std::move(grads_params)); }, "Optimizer",
                      bad.shown);

      expect_same_values(snapshot(model), values);
      EXPECT_EQ(adam.state_tensors(), state);
      EXPECT_EQ(adam.state_metadata(), metadata);
      EXPECT_EQ(adam.param_step(id), 1u);
      // Still trainable leaves on the autodiff device: the next batch trains.
      module::for_each_param(model, [&](const std::string& path, const module::ParamBase& p) {
        EXPECT_TRUE(burn::detail::is_require_grad(p.ref())) << path;
        EXPECT_EQ(p.ref()->device, device) << path;
      });
    }

    // A valid step after the failures: Adam's second update from the old moments.
    const auto values = snapshot(model);
    const Tensor<1> loss = nn::loss::MseLoss{}.forward(model.forward(batch.first), batch.second);
    auto grads = loss.backward();
    model = adam.step(0.01, std::move(model), GradientsParams::from_grads(grads, model));
    EXPECT_EQ(adam.param_step(id), 2u);
    const auto stepped = snapshot(model);
    ASSERT_EQ(stepped.size(), values.size());
    for (std::size_t i = 0; i < stepped.size(); ++i) EXPECT_NE(stepped[i], values[i]) << "tensor " << i;
    EXPECT_LT(train_step(adam, model, batch, 0.01), loss.into_scalar<double>());
  }
}
#endif

TEST(OptimizerFailedStep, ABadGradientLeavesAMovedModuleAsItWas) {
  const Device device = Device::flex();
  auto net = tiny_net(device);
  auto adam = AdamConfig{}.init();
  GradientsParams ok;
  ok.insert(net.fc2.bias->id(), Tensor<1>::ones({2}, device));
  net = adam.step(0.1, std::move(net), std::move(ok));
  const auto values = snapshot(net);
  const auto state = adam.state_tensors();

  // fc2.bias is valid and comes first in the visit; fc1.weight's gradient is not.
  GradientsParams bad;
  bad.insert(net.fc2.bias->id(), Tensor<1>::ones({2}, device));
  bad.insert(net.fc1.weight.id(), Tensor<2>::ones({4, 3}, device));
  expect_op_error([&] { net = adam.step(0.1, std::move(net), std::move(bad)); }, "Optimizer",
                  "gradient of parameter 'fc1.weight' has shape [4, 3] but the parameter has shape [3, 4]");
  expect_same_values(snapshot(net), values);
  EXPECT_EQ(adam.state_tensors(), state);
  EXPECT_EQ(adam.param_step(net.fc2.bias->id()), 1u);
  EXPECT_EQ(net.forward(tiny_batch(device).first).dims(), (std::array<std::size_t, 2>{6, 2}));
}

TEST(OptimizerFailedStep, BothOverloadsGiveTheSameUpdate) {
  const Device device = Device::flex();
  auto by_copy = SgdConfig{}.init();
  auto by_move = SgdConfig{}.init();
  auto a = vec({1.0, 2.0}, device);
  auto b = a;
  const auto kept = a;
  a = by_copy.step(0.25, a, grads_for(a, {4.0, -4.0}, device));
  b = by_move.step(0.25, std::move(b), grads_for(b, {4.0, -4.0}, device));
  a.w->to_data().assert_eq(TensorData(std::vector<double>{0.0, 3.0}));
  b.w->to_data().assert_eq(TensorData(std::vector<double>{0.0, 3.0}));
  // The copy taken before either step is untouched: the module is a value.
  kept.w->to_data().assert_eq(TensorData(std::vector<double>{1.0, 2.0}));
  // A temporary module binds to the moving overload.
  const auto c = by_move.step(0.25, vec({1.0, 2.0}, device), GradientsParams{});
  c.w->to_data().assert_eq(TensorData(std::vector<double>{1.0, 2.0}));
}

}  // namespace
