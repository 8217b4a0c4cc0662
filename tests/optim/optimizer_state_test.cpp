// What an optimiser step does to a module (ids, leaves, devices, frozen
// parameters) and how its state survives save/load and fork.
#include <burn/nn/linear.hpp>
#include <burn/optim/adam.hpp>
#include <burn/optim/rmsprop.hpp>
#include <burn/optim/sgd.hpp>
#include <burn/record/module_record.hpp>
#include <burn/record/safetensors.hpp>

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

std::vector<module::ParamId> ids_of(const optim_test::TinyNet& net) {
  std::vector<module::ParamId> ids;
  module::for_each_param(net, [&](const std::string&, const module::ParamBase& p) { ids.push_back(p.id()); });
  return ids;
}

Optimizer make_adam() { return AdamConfig{}.with_amsgrad(true).with_weight_decay(WeightDecayConfig{0.01}).init(); }

#if BURN_HAS_AUTODIFF
TEST(OptimizerState, StepKeepsIdsAndLeavesTrainableLeavesOnTheSameDevice) {
  for (const auto& base : all_devices()) {
    const Device device = base.autodiff();
    auto net = tiny_net(device);
    const auto ids = ids_of(net);
    const auto before = net.fc1.weight.val();
    const auto batch = tiny_batch(device);
    auto sgd = SgdConfig{}.init();
    // The update is exactly w - lr * grad.
    const Tensor<1> loss = nn::loss::MseLoss{}.forward(net.forward(batch.first), batch.second);
    Gradients grads = loss.backward();
    const auto g = net.fc1.weight.grad(grads);
    ASSERT_TRUE(g.has_value());
    net = sgd.step(0.1, net, GradientsParams::from_grads(grads, net));
    EXPECT_EQ(ids_of(net), ids);
    module::for_each_param(net, [&](const std::string& path, const module::ParamBase& p) {
      EXPECT_TRUE(burn::detail::is_require_grad(p.ref())) << path << " is not a trainable leaf";
      EXPECT_TRUE(p.ref()->device.is_autodiff()) << path;
      EXPECT_EQ(p.ref()->device, base) << path;
    });
    (before.without_autodiff() - g->mul(0.1))
        .to_data()
        .assert_approx_eq(net.fc1.weight->to_data(), Tolerance::default_for(DType::F32));
    // The stepped model trains again: its new leaves collect gradients.
    EXPECT_LT(train_step(sgd, net, batch, 0.1), loss.into_scalar<double>());
    EXPECT_EQ(sgd.param_step(net.fc1.weight.id()), 2u);
  }
}

TEST(OptimizerState, FrozenParametersAndParametersWithoutGradientsAreUntouched) {
  const Device device = Device::flex().autodiff();
  auto net = tiny_net(device);
  net.fc1 = net.fc1.no_grad();
  const auto frozen_before = snapshot(net.fc1);
  const auto trained_before = snapshot(net.fc2);
  auto adam = make_adam();
  const auto batch = tiny_batch(device);
  for (int i = 0; i < 3; ++i) train_step(adam, net, batch, 0.01);
  const auto frozen_after = snapshot(net.fc1);
  for (std::size_t i = 0; i < frozen_before.size(); ++i) frozen_after[i].assert_eq(frozen_before[i]);
  EXPECT_NE(snapshot(net.fc2)[0], trained_before[0]);
  EXPECT_EQ(adam.num_states(), 2u);  // fc2.weight and fc2.bias only
  EXPECT_FALSE(net.fc1.weight.is_trainable());

  // A gradient handed in for a frozen parameter is ignored too.
  GradientsParams grads;
  grads.insert(net.fc1.weight.id(), Tensor<2>::ones({3, 4}, device));
  net = adam.step(0.1, net, std::move(grads));
  snapshot(net.fc1)[0].assert_eq(frozen_before[0]);
  // And an empty step changes nothing at all.
  const auto all_before = snapshot(net);
  net = adam.step(0.1, net, GradientsParams{});
  const auto all_after = snapshot(net);
  for (std::size_t i = 0; i < all_before.size(); ++i) all_after[i].assert_eq(all_before[i]);
}

TEST(OptimizerState, SaveLoadContinueIsBitwiseTheUninterruptedRun) {
  for (const auto& base : all_devices()) {
    const Device device = base.autodiff();
    const auto batch = tiny_batch(device);
    auto uninterrupted = tiny_net(device);
    auto resumed = uninterrupted;  // same values, same ids
    auto a = make_adam();
    for (int i = 0; i < 5; ++i) train_step(a, uninterrupted, batch, 0.02);

    optim_test::TempDir dir;
    const auto file = dir.path() / "optim.safetensors";
    {
      auto b = make_adam();
      for (int i = 0; i < 2; ++i) train_step(b, resumed, batch, 0.02);
      b.save(file);
    }
    auto c = make_adam();
    c.load(file, base);
    EXPECT_EQ(c.num_states(), 4u);
    EXPECT_EQ(c.param_step(resumed.fc1.weight.id()), 2u);
    for (int i = 0; i < 3; ++i) train_step(c, resumed, batch, 0.02);

    const auto want = snapshot(uninterrupted);
    const auto got = snapshot(resumed);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) got[i].assert_eq(want[i]);
    EXPECT_EQ(c.param_step(resumed.fc1.weight.id()), 5u);
  }
}

TEST(OptimizerState, StateFollowsAForkedModuleToAnotherDevice) {
#if BURN_HAS_FLEX && BURN_HAS_NDARRAY
  const Device flex = Device::flex().autodiff();
  const Device ndarray = Device::ndarray().autodiff();
  auto net = tiny_net(flex);
  auto rms = RmsPropConfig{}.with_centered(true).with_momentum(0.5).init();
  for (int i = 0; i < 2; ++i) train_step(rms, net, tiny_batch(flex), 0.01);

  auto stay = net;
  auto moved = net.fork(ndarray);
  EXPECT_EQ(ids_of(moved), ids_of(net));
  auto rms_copy = RmsPropConfig{}.with_centered(true).with_momentum(0.5).init();
  rms_copy.load_state(
      record::deserialize_safetensors(record::serialize_safetensors(rms.state_tensors(), rms.state_metadata())), flex);
  for (int i = 0; i < 2; ++i) {
    train_step(rms, moved, tiny_batch(ndarray), 0.01);
    train_step(rms_copy, stay, tiny_batch(flex), 0.01);
  }
  // The state moved with the parameters and kept its history: both runs agree.
  EXPECT_EQ(rms.param_step(moved.fc2.weight.id()), 4u);
  EXPECT_EQ(rms.state_tensor(moved.fc2.weight.id(), "square_avg").value()->device, Device::ndarray());
  EXPECT_EQ(moved.devices().at(0), Device::ndarray());
  const auto a = snapshot(moved), b = snapshot(stay);
  for (std::size_t i = 0; i < a.size(); ++i) a[i].assert_approx_eq(b[i], Tolerance::rel_abs(1e-5, 1e-6));
#else
  GTEST_SKIP() << "needs both CPU backends";
#endif
}
#endif  // BURN_HAS_AUTODIFF

TEST(OptimizerState, ParametersOffAutodiffAreUpdatedInPlaceOfTheirValues) {
  for (const auto& device : all_devices()) {
    auto net = tiny_net(device);
    GradientsParams grads;
    grads.insert(net.fc2.bias->id(), Tensor<1>::ones({2}, device));
    const auto before = net.fc2.bias->val().to_data().convert<double>().to_vec<double>();
    auto sgd = SgdConfig{}.init();
    net = sgd.step(0.25, net, std::move(grads));
    burn::testing::expect_values(net.fc2.bias->val().to_data(), {before[0] - 0.25, before[1] - 0.25}, Shape{2});
    EXPECT_FALSE(net.fc2.bias->val().is_autodiff());
  }
}

TEST(OptimizerState, BadStepsAndRecordsAreClearErrorsThatChangeNothing) {
  const Device device = Device::flex();
  auto net = tiny_net(device);
  auto adam = make_adam();
  GradientsParams ok;
  ok.insert(net.fc2.bias->id(), Tensor<1>::ones({2}, device));
  net = adam.step(0.1, net, std::move(ok));
  const auto state_before = adam.state_tensors();
  const auto values_before = snapshot(net);

  GradientsParams bad;
  bad.insert(net.fc2.bias->id(), Tensor<1>::ones({2}, device));
  bad.insert(net.fc1.weight.id(), Tensor<2>::ones({4, 3}, device));
  expect_op_error([&] { net = adam.step(0.1, net, std::move(bad)); }, "Optimizer",
                  "gradient of parameter 'fc1.weight' has shape [4, 3] but the parameter has shape [3, 4]");
  EXPECT_EQ(adam.state_tensors(), state_before);
  EXPECT_EQ(adam.param_step(net.fc2.bias->id()), 1u);
  const auto values_after = snapshot(net);
  for (std::size_t i = 0; i < values_before.size(); ++i) values_after[i].assert_eq(values_before[i]);

  expect_op_error([&] { adam.step(-0.1, net, GradientsParams{}); }, "Optimizer", "learning rate");
  expect_op_error([&] { adam.step(std::nan(""), net, GradientsParams{}); }, "Optimizer", "learning rate");

  // Records of another optimiser, or of something else, are refused.
  auto sgd = SgdConfig{}.with_momentum(MomentumConfig{}).init();
  record::SafetensorsFile adam_file{adam.state_tensors(), adam.state_metadata()};
  expect_op_error([&] { sgd.load_state(adam_file, device); }, "Optimizer", "state of a 'adam' optimiser");
  expect_op_error(
      [&] {
        sgd.load_state(record::SafetensorsFile{{}, {{"format", "burn-cpp"}}}, device);
      },
      "Optimizer", "holds no optimiser state");
  auto broken = adam_file;
  broken.tensors.emplace("nothex.moment_1", TensorData(std::vector<float>{1, 2}));
  auto fresh = make_adam();
  expect_op_error([&] { fresh.load_state(broken, device); }, "Optimizer", "does not start with a parameter id");
  EXPECT_EQ(fresh.num_states(), 0u);
  auto unknown_slot = adam_file;
  unknown_slot.tensors.emplace(net.fc2.bias->id().to_string() + ".velocity", TensorData(std::vector<float>{1, 2}));
  expect_op_error([&] { fresh.load_state(unknown_slot, device); }, "Optimizer",
                  "'velocity' is not a state of the 'adam'");
  // Step counts no training run reaches: 2^64 - 1 would wrap to 0 at the
  // next step, and Adam's bias correction then divides by zero.
  for (const char* step : {"0", "9007199254740993", "18446744073709551615"}) {
    auto wrong_step = adam_file;
    wrong_step.metadata[net.fc2.bias->id().to_string() + ".step"] = step;
    expect_op_error([&] { fresh.load_state(wrong_step, device); }, "Optimizer", "is out of range");
    EXPECT_EQ(fresh.num_states(), 0u);
  }

  // State saved for a parameter of another shape (same id) is caught at the step.
  optim_test::Vec v{module::Param(net.fc2.bias->id(), Tensor<1>::ones({5}, device))};
  GradientsParams g;
  g.insert(v.w.id(), Tensor<1>::ones({5}, device));
  expect_op_error([&] { adam.step(0.1, v, std::move(g)); }, "Optimizer", "state of parameter 'w'");

  expect_op_error([] { AdamConfig{}.with_beta_1(1.0).init(); }, "AdamConfig", "beta_1");
  expect_op_error([] { SgdConfig{}.with_momentum(MomentumConfig{-0.5}).init(); }, "SgdConfig", "momentum");
  expect_op_error([] { RmsPropConfig{}.with_alpha(1.5).init(); }, "RmsPropConfig", "alpha");
  expect_op_error([] { SgdConfig{}.with_weight_decay(WeightDecayConfig{-1.0}).init(); }, "SgdConfig", "penalty");
}

// One file loaded into two parts of a model gives both the file's ids: Adam
// would keep one state for the two and never update one of them.
struct TwoLinears {
  nn::Linear x;
  nn::Linear y;
  BURN_MODULE(x, y)
};

TEST(OptimizerState, ParametersSharingAnIdAreRefusedAndFreshIdsTrainBoth) {
  const Device device = Device::flex();
  optim_test::TempDir dir;
  const auto file = dir.path() / "linear.safetensors";
  record::save_module(nn::LinearConfig{3, 2}.init(device), file);
  const auto fresh_linear = [&] { return nn::LinearConfig{3, 2}.init(device); };
  auto adam = AdamConfig{}.init();

  TwoLinears same{record::load_module(fresh_linear(), file), record::load_module(fresh_linear(), file)};
  ASSERT_EQ(same.x.weight.id(), same.y.weight.id());
  expect_op_error([&] { (void)adam.step(0.1, same, GradientsParams{}); }, "Optimizer",
                  "parameters 'x.weight' and 'y.weight' have the same id");
  EXPECT_EQ(adam.num_states(), 0u);

  const auto fresh = record::LoadOptions{}.with_fresh_ids();
  TwoLinears apart{record::load_module(fresh_linear(), file, fresh), record::load_module(fresh_linear(), file, fresh)};
  EXPECT_NE(apart.x.weight.id(), apart.y.weight.id());
  apart.x.weight->to_data().assert_eq(same.x.weight->to_data());  // the file's values all the same
  const auto before = apart.y.weight->to_data();
  GradientsParams grads;
  grads.insert(apart.x.weight.id(), Tensor<2>::ones({3, 2}, device));
  grads.insert(apart.y.weight.id(), Tensor<2>::ones({3, 2}, device));
  apart = adam.step(0.1, apart, std::move(grads));
  EXPECT_EQ(adam.num_states(), 2u);
  // Both moved by Adam's first step, -lr * sign(g) = -0.1 per element.
  const auto x = apart.x.weight->to_data().to_vec<float>(), y = apart.y.weight->to_data().to_vec<float>();
  const auto start = before.to_vec<float>();
  for (std::size_t i = 0; i < start.size(); ++i) {
    EXPECT_NEAR(x[i], start[i] - 0.1f, 1e-5f) << i;
    EXPECT_NEAR(y[i], start[i] - 0.1f, 1e-5f) << i;
  }
}

}  // namespace
