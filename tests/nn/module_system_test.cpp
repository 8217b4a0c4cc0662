// The module system: field visiting, paths, ids, and the module methods
// (to_device, fork, no_grad, valid, train/eval, num_params, devices).
#include <burn/nn/dropout.hpp>
#include <burn/nn/layer_norm.hpp>
#include <burn/nn/linear.hpp>

#include <set>

#include "burn_test.hpp"

namespace {

using namespace burn;
using burn::testing::all_devices;

struct Block {
  nn::Linear fc;
  nn::LayerNorm norm;
  BURN_MODULE(fc, norm)
};

struct Net {
  std::vector<Block> blocks;
  std::optional<nn::Linear> head;
  nn::Dropout dropout;
  module::RunningState<Tensor<1>> steps;
  std::size_t width = 3;  // a constant: not listed, not visited
  BURN_MODULE(blocks, head, dropout, steps)
};

Net make_net(const Device& device) {
  Net net{{}, std::nullopt, nn::DropoutConfig{0.5}.init(), module::RunningState(Tensor<1>::zeros(Shape{1}, device))};
  for (int i = 0; i < 2; ++i)
    net.blocks.push_back({nn::LinearConfig{3, 3}.init(device), nn::LayerNormConfig{3}.init(device)});
  net.head = nn::LinearConfig{3, 2}.with_bias(false).init(device);
  return net;
}

std::vector<std::string> param_paths(const Net& net) {
  std::vector<std::string> paths;
  module::for_each_param(net, [&](const std::string& path, const module::ParamBase&) { paths.push_back(path); });
  return paths;
}

TEST(ModuleSystem, VisitsFieldsWithDottedPathsInDeclarationOrder) {
  auto net = make_net(Device::flex());
  std::vector<std::string> expected{"blocks.0.fc.weight",   "blocks.0.fc.bias",   "blocks.0.norm.weight",
                                    "blocks.0.norm.bias",   "blocks.1.fc.weight", "blocks.1.fc.bias",
                                    "blocks.1.norm.weight", "blocks.1.norm.bias", "head.weight"};
  EXPECT_EQ(param_paths(net), expected);
  std::vector<std::string> all;
  module::for_each_tensor(net, [&](const std::string& path, const module::ParamBase&) { all.push_back(path); });
  EXPECT_EQ(all.back(), "steps");
  EXPECT_EQ(all.size(), expected.size() + 1);
}

TEST(ModuleSystem, NumParamsCountsTrainableScalarsOnly) {
  auto net = make_net(Device::flex());
  // 2 blocks x (3*3 + 3 + 3 + 3) + head 3*2; the running state is not a parameter.
  EXPECT_EQ(net.num_params(), 2u * 18u + 6u);
}

TEST(ModuleSystem, ParamIdsAreUniqueAndRoundTripAsText) {
  auto net = make_net(Device::flex());
  std::set<module::ParamId> ids;
  module::for_each_tensor(net, [&](const std::string&, const module::ParamBase& p) { ids.insert(p.id()); });
  EXPECT_EQ(ids.size(), 10u);
  for (const auto& id : ids) EXPECT_EQ(module::ParamId::parse(id.to_string()), id);
  burn::testing::expect_error([] { module::ParamId::parse("xyz"); }, "[ParamId]");
}

TEST(ModuleSystem, ToDeviceMovesEveryTensorAndKeepsIds) {
  auto net = make_net(Device::flex());
  auto moved = net.to_device(Device::ndarray());
  ASSERT_EQ(moved.devices().size(), 1u);
  EXPECT_EQ(moved.devices()[0], Device::ndarray());
  EXPECT_EQ(net.devices()[0], Device::flex());  // the source is untouched
  std::vector<module::ParamId> a, b;
  module::for_each_tensor(net, [&](const std::string&, const module::ParamBase& p) { a.push_back(p.id()); });
  module::for_each_tensor(moved, [&](const std::string&, const module::ParamBase& p) { b.push_back(p.id()); });
  EXPECT_EQ(a, b);
  burn::testing::expect_values(
      moved.blocks[1].fc.weight->to_data(),
      [&] {
        auto v = net.blocks[1].fc.weight->to_data().convert<double>().to_vec<double>();
        return v;
      }(),
      Shape{3, 3}, Tolerance{0.0, 0.0});
}

#if BURN_HAS_AUTODIFF
TEST(ModuleSystem, ParamsOnAnAutodiffDeviceAreTrainableLeaves) {
  auto device = Device::flex().autodiff();
  auto fc = nn::LinearConfig{2, 1}.init(device);
  EXPECT_TRUE(fc.weight->is_require_grad());
  auto x = Tensor<2>::from_floats({{1.0, 2.0}}, device);
  auto grads = fc.forward(x).sum().backward();
  auto g = fc.weight.grad(grads);
  ASSERT_TRUE(g.has_value());
  burn::testing::expect_values(g->to_data(), {1.0, 2.0}, Shape{2, 1});
  ASSERT_TRUE(fc.bias->grad(grads).has_value());
}

TEST(ModuleSystem, NoGradFreezesEveryParameter) {
  auto device = Device::flex().autodiff();
  auto fc = nn::LinearConfig{2, 1}.init(device).no_grad();
  EXPECT_FALSE(fc.weight.is_trainable());
  EXPECT_FALSE(fc.weight->is_require_grad());
  auto x = Tensor<2>::from_floats({{1.0, 2.0}}, device).require_grad();
  auto grads = fc.forward(x).sum().backward();
  EXPECT_FALSE(fc.weight.grad(grads).has_value());
  EXPECT_TRUE(x.grad(grads).has_value());
}

TEST(ModuleSystem, ForkMakesFreshLeavesWithTheSameIds) {
  auto source = nn::LinearConfig{2, 1}.init(Device::flex().autodiff());
  auto forked = source.fork(Device::ndarray().autodiff());
  EXPECT_EQ(forked.weight.id(), source.weight.id());
  EXPECT_TRUE(forked.weight->is_require_grad());
  auto x = Tensor<2>::from_floats({{3.0, 4.0}}, Device::ndarray().autodiff());
  auto grads = forked.forward(x).sum().backward();
  ASSERT_TRUE(forked.weight.grad(grads).has_value());
  EXPECT_FALSE(source.weight.grad(grads).has_value());  // detached from the source
}

TEST(ModuleSystem, ToDeviceOnAutodiffKeepsTheLinkToTheSourceParameters) {
  auto source = nn::LinearConfig{2, 1}.init(Device::flex().autodiff());
  auto moved = source.to_device(Device::ndarray());
  EXPECT_TRUE(moved.weight->is_autodiff());
  auto x = Tensor<2>::from_floats({{3.0, 4.0}}, Device::ndarray().autodiff());
  auto grads = moved.forward(x).sum().backward();
  auto g = source.weight.grad(grads);  // the gradient reaches the source leaf
  ASSERT_TRUE(g.has_value());
  burn::testing::expect_values(g->to_data(), {3.0, 4.0}, Shape{2, 1});
}

TEST(ModuleSystem, ValidStripsAutodiffAndSwitchesDropoutOff) {
  auto device = Device::flex().autodiff();
  auto net = make_net(device);
  auto inference = net.valid();
  for (const auto& d : inference.devices()) EXPECT_FALSE(d.is_autodiff());
  auto x = Tensor<2>::ones({4, 100}, inference.devices()[0]);
  auto y = inference.dropout.forward(x);
  burn::testing::expect_values(y.sum().to_data(), {400.0}, Shape{1});
  // On the autodiff device (Auto mode) dropout is active: some zeros, the rest 2.
  auto y_train = net.dropout.forward(Tensor<2>::ones({4, 100}, device));
  auto values = y_train.to_data().convert<double>().to_vec<double>();
  std::size_t zeros = 0;
  for (double v : values) {
    EXPECT_TRUE(v == 0.0 || v == 2.0) << v;
    zeros += v == 0.0;
  }
  EXPECT_GT(zeros, 100u);
  EXPECT_LT(zeros, 300u);
}
#endif

TEST(ModuleSystem, TrainAndEvalOverrideTheAutomaticMode) {
  auto net = make_net(Device::flex());
  auto x = Tensor<2>::ones({2, 50}, Device::flex());
  EXPECT_EQ(net.dropout.forward(x).sum().into_scalar<double>(), 100.0);  // Auto on a plain device: eval
  auto trained = net.train();
  EXPECT_EQ(trained.dropout.training.mode, module::Mode::Train);
  EXPECT_NE(trained.dropout.forward(x).to_data().convert<double>().to_vec<double>(), std::vector<double>(100, 1.0));
  EXPECT_EQ(trained.eval().dropout.forward(x).sum().into_scalar<double>(), 100.0);
}

TEST(ModuleSystem, LinearMatchesPyTorchLayoutTransposed) {
  for (const auto& device : all_devices()) {
    nn::Linear fc{module::Param(Tensor<2>::from_floats({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}, device)),
                  module::Param(Tensor<1>::from_floats({0.5, -0.5}, device))};
    auto y = fc.forward(Tensor<2>::from_floats({{1.0, 0.0, -1.0}}, device));
    burn::testing::expect_values(y.to_data(), {-3.5, -4.5}, Shape{1, 2});
  }
}

TEST(ModuleSystem, LayerNormMatchesBurnsFixedCase) {
  for (const auto& device : all_devices()) {
    auto norm = nn::LayerNormConfig{10}.init(device);
    auto x = Tensor<2>::from_floats(
        {{-0.6897, -2.7106, 2.2222, -1.0330, -0.8933, 1.1765, 0.0601, 1.5252, -0.3630, 0.6728}}, device);
    burn::testing::expect_values(norm.forward(x).to_data(),
                                 {-0.4990, -1.9680, 1.6178, -0.7486, -0.6470, 0.8576, 0.0461, 1.1111, -0.2614, 0.4915},
                                 Shape{1, 10}, Tolerance{0.0, 1e-3});
  }
}

TEST(ModuleSystem, ConfigsRejectBadValues) {
  burn::testing::expect_error([] { nn::LinearConfig{0, 3}.init(Device::flex()); }, "[LinearConfig]");
  burn::testing::expect_error([] { nn::DropoutConfig{1.5}.init(); }, "[DropoutConfig]");
  burn::testing::expect_error([] { nn::LayerNormConfig{4, -1.0}.init(Device::flex()); }, "[LayerNormConfig]");
  burn::testing::expect_error(
      [] {
        nn::Initializer::kaiming_uniform().init<2>(Shape{2, 2}, Device::flex());
      },
      "fan_in");
}

}  // namespace

namespace {
// The PyTorch record adapter transposes Linear weights; the flag must hold
// for a hand-built layer too, not only for one made by LinearConfig.
TEST(ModuleSystem, HandBuiltLinearWeightsAreFlaggedAsTransposedForPyTorch) {
  using namespace burn;
  nn::Linear fc{module::Param(Tensor<2>::zeros({3, 3}, Device::flex())), std::nullopt};
  std::vector<bool> flags;
  module::for_each_param(
      fc, [&](const std::string&, const module::ParamBase& p) { flags.push_back(p.is_pytorch_transposed()); });
  EXPECT_EQ(flags, std::vector<bool>{true});
}
}  // namespace
