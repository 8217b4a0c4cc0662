// BatchNorm, GroupNorm and RmsNorm against PyTorch 1.13 (torch.nn.BatchNorm1d/2d
// and GroupNorm in f64 with the same wave weights; RmsNorm, absent from 1.13,
// as x / sqrt(mean(x^2, -1) + eps) * w in torch), BatchNorm's running
// statistics and train/eval behaviour, the layer-norm op (its kernels and the
// composite other devices run) against its definition in double, gradients
// by finite differences, errors.
#include <burn/module/ops.hpp>
#include <burn/nn/batch_norm.hpp>
#include <burn/nn/group_norm.hpp>
#include <burn/nn/layer_norm.hpp>
#include <burn/nn/rms_norm.hpp>

#include <cmath>
#include <cstring>

#include "../autodiff/grad_check.hpp"
#include "layer_test_support.hpp"

namespace {

using namespace burn;
using burn::layer_test::f32_tol;
using burn::layer_test::values_of;
using burn::layer_test::wave;
using burn::layer_test::wave_tensor;
using burn::testing::all_devices;
using burn::testing::expect_op_error;
using burn::testing::expect_values;

// bn = torch.nn.BatchNorm2d(3); bn.weight = 1 + wave(3, .9, .2, .5); bn.bias = wave(3, 1.3, .4, .3)
// x1 = wave(24, .71, .5, 2).reshape(2, 3, 2, 2) + .5; x2 = wave(24, .47, 1.5, 1.5).reshape(2, 3, 2, 2) - .3
nn::BatchNorm batch_norm_2d(const Device& device) {
  auto bn = nn::BatchNormConfig{3}.init(device);
  bn.weight.set(wave_tensor<1>({3}, 0.9, 0.2, 0.5, device) + 1.0);
  bn.bias.set(wave_tensor<1>({3}, 1.3, 0.4, 0.3, device));
  return bn;
}
Tensor<4> bn_x1(const Device& device) { return wave_tensor<4>({2, 3, 2, 2}, 0.71, 0.5, 2.0, device) + 0.5; }
Tensor<4> bn_x2(const Device& device) { return wave_tensor<4>({2, 3, 2, 2}, 0.47, 1.5, 1.5, device) - 0.3; }

// bn.train(); bn(x1)
const std::vector<double> kTrainStep1{0.647104,  1.354557,  1.360806,  0.662831,  0.333837,  -0.932278,
                                      -1.382580, -0.799450, -0.810293, 0.723101,  1.628817,  1.469143,
                                      0.514340,  -0.562400, -1.413924, -1.628712, -0.633745, 0.763579,
                                      2.157148,  2.873483,  1.350558,  0.092940,  -1.487814, -2.627764};
// bn.running_mean / running_var after bn(x1)
const std::vector<double> kMean1{0.077497, 0.007184, 0.104271};
const std::vector<double> kVar1{1.129724, 1.108444, 1.086474};
// then bn(x2)
const std::vector<double> kTrainStep2{1.097917,  0.750146,  -0.510461, -2.410523, 1.077664,  -0.252877,
                                      -1.130466, -1.364785, -1.142018, -0.069637, 1.374846,  2.878174,
                                      -0.006441, 0.974060,  0.993168,  0.046739,  3.100009,  1.626547,
                                      0.198458,  -0.874556, -1.604664, -1.393309, -0.522796, 0.818091};
const std::vector<double> kMean2{0.157158, -0.095412, -0.009823};
const std::vector<double> kVar2{1.031641, 1.049742, 1.028843};
// then bn.eval(); bn(x1)
const std::vector<double> kEvalAfter2{1.525699,  2.513206,  2.521928,  1.547651,  0.581372,  -1.087525,
                                      -1.681080, -0.912441, 0.478044,  2.409086,  3.549676,  3.348596,
                                      1.340379,  -0.162600, -1.351210, -1.651023, -0.694022, 1.147826,
                                      2.984724,  3.928944,  3.199259,  1.615509,  -0.375175, -1.810743};

TEST(BatchNormLayer, InitMatchesPyTorch) {
  auto bn = nn::BatchNormConfig{4}.init(Device::flex());
  expect_values(bn.weight->to_data(), {1, 1, 1, 1}, Shape{4});
  expect_values(bn.bias->to_data(), {0, 0, 0, 0}, Shape{4});
  expect_values(bn.running_mean->to_data(), {0, 0, 0, 0}, Shape{4});
  expect_values(bn.running_var->to_data(), {1, 1, 1, 1}, Shape{4});
  EXPECT_EQ(bn.num_params(), 8u);  // running statistics are not trained
  std::vector<std::string> paths;
  module::for_each_tensor(bn, [&](const std::string& p, const module::ParamBase&) { paths.push_back(p); });
  EXPECT_EQ(paths, (std::vector<std::string>{"weight", "bias", "running_mean", "running_var"}));
}

TEST(BatchNormLayer, TrainingStepsMatchPyTorchIncludingRunningStatistics) {
  for (const auto& device : all_devices()) {
    auto bn = batch_norm_2d(device).train();
    expect_values(bn.forward(bn_x1(device)).to_data(), kTrainStep1, Shape{2, 3, 2, 2}, f32_tol());
    expect_values(bn.running_mean->to_data(), kMean1, Shape{3}, f32_tol());
    expect_values(bn.running_var->to_data(), kVar1, Shape{3}, f32_tol());
    expect_values(bn.forward(bn_x2(device)).to_data(), kTrainStep2, Shape{2, 3, 2, 2}, f32_tol());
    expect_values(bn.running_mean->to_data(), kMean2, Shape{3}, f32_tol());
    expect_values(bn.running_var->to_data(), kVar2, Shape{3}, f32_tol());
    // Evaluation uses the running statistics (and leaves them alone).
    auto evaluated = bn.eval();
    expect_values(evaluated.forward(bn_x1(device)).to_data(), kEvalAfter2, Shape{2, 3, 2, 2}, f32_tol());
    expect_values(evaluated.running_mean->to_data(), kMean2, Shape{3}, f32_tol());
  }
}

TEST(BatchNormLayer, RanksTwoAndThreeMatchPyTorch) {
  for (const auto& device : all_devices()) {
    // bn1 = torch.nn.BatchNorm1d(2, momentum=.3); bn1(wave(8, .9, .1, 1.5).reshape(4, 2))
    auto bn = nn::BatchNormConfig{2}.with_momentum(0.3).init(device).train();
    expect_values(bn.forward(wave_tensor<2>({4, 2}, 0.9, 0.1, 1.5, device)).to_data(),
                  {0.227385, 1.143186, 1.535448, 0.387939, -0.745657, -1.593336, -1.017176, 0.062211}, Shape{4, 2},
                  f32_tol());
    expect_values(bn.running_mean->to_data(), {-0.021290, 0.033673}, Shape{2}, f32_tol());
    expect_values(bn.running_var->to_data(), {1.076877, 1.104752}, Shape{2}, f32_tol());
    // torch.nn.BatchNorm1d(2)(wave(20, .33, .7).reshape(2, 2, 5))
    auto bn3 = nn::BatchNormConfig{2}.init(device).train();
    expect_values(
        bn3.forward(wave_tensor<3>({2, 2, 5}, 0.33, 0.7, 1.0, device)).to_data(),
        {0.733743,  0.972987,  1.108356,  1.125242,  1.021822,  1.459012,  0.853146,  0.137848,  -0.609690, -1.308797,
         -0.839300, -1.031266, -1.110818, -1.069370, -0.911396, -1.508151, -0.840684, -0.099859, 0.634379,  1.282793},
        Shape{2, 2, 5}, f32_tol());
  }
}

TEST(BatchNormLayer, AutoModeEvaluatesOnAPlainDevice) {
  for (const auto& device : all_devices()) {
    auto bn = batch_norm_2d(device);
    ASSERT_EQ(bn.training.mode, module::Mode::Auto);
    // Fresh running statistics (0, 1): y = x * w / sqrt(1 + eps) + b.
    const auto scale = (bn.weight.val() / std::sqrt(1.0 + 1e-5)).reshape(std::array<std::size_t, 4>{1, 3, 1, 1});
    const auto expected = bn_x1(device) * scale + bn.bias->reshape(std::array<std::size_t, 4>{1, 3, 1, 1});
    expect_values(bn.forward(bn_x1(device)).to_data(), layer_test::values_of(expected.to_data()), Shape{2, 3, 2, 2},
                  f32_tol());
    expect_values(bn.running_mean->to_data(), {0, 0, 0}, Shape{3});  // untouched
  }
}

#if BURN_HAS_AUTODIFF
TEST(BatchNormLayer, AutoModeTrainsOnAnAutodiffDeviceAndEvaluatesWithoutGradients) {
  for (const auto& base : all_devices()) {
    const Device device = base.autodiff();
    auto bn = batch_norm_2d(device);
    {
      NoGradGuard no_grad;  // Burn's rule: no gradients recorded -> evaluation
      bn.forward(bn_x1(device));
      expect_values(bn.running_mean->to_data(), {0, 0, 0}, Shape{3});
    }
    auto y = bn.forward(bn_x1(device));
    expect_values(y.to_data(), kTrainStep1, Shape{2, 3, 2, 2}, f32_tol());
    expect_values(bn.running_mean->to_data(), kMean1, Shape{3}, f32_tol());
    EXPECT_FALSE(bn.running_mean->is_require_grad());
    auto grads = y.sum().backward();
    EXPECT_TRUE(bn.weight.grad(grads).has_value());
    EXPECT_TRUE(bn.bias.grad(grads).has_value());
    // valid() strips autodiff, so Auto means evaluation with the updated statistics.
    auto inference = bn.valid();
    auto x = bn_x1(base);
    auto evaluated = inference.forward(x);
    auto trained_eval = bn.eval().forward(bn_x1(device));
    expect_values(evaluated.to_data(), layer_test::values_of(trained_eval.to_data()), Shape{2, 3, 2, 2}, f32_tol());
    expect_values(inference.running_mean->to_data(), kMean1, Shape{3}, f32_tol());
  }
}
#endif

TEST(BatchNormLayer, ErrorsAreClear) {
  const Device d = Device::flex();
  expect_op_error([&] { nn::BatchNormConfig{0}.init(d); }, "BatchNormConfig", "num_features");
  expect_op_error([&] { nn::BatchNormConfig{3}.with_epsilon(0).init(d); }, "BatchNormConfig", "epsilon");
  expect_op_error([&] { nn::BatchNormConfig{3}.with_momentum(1.5).init(d); }, "BatchNormConfig", "momentum");
  for (const auto& device : all_devices()) {
    auto bn = nn::BatchNormConfig{3}.init(device);
    expect_op_error(
        [&] {
          bn.forward(Tensor<4>::ones({2, 4, 2, 2}, device));
        },
        "BatchNorm", "has 4 channels (dim 1) but the layer has 3 features");
    // One value per channel has no variance to normalise with in training (PyTorch refuses too).
    expect_op_error(
        [&] {
          bn.train().forward(Tensor<2>::ones({1, 3}, device));
        },
        "BatchNorm", "more than one value per channel");
    EXPECT_EQ(bn.eval().forward(Tensor<2>::ones({1, 3}, device)).shape(), (Shape{1, 3}));
  }
}

TEST(GroupNormLayer, ForwardMatchesPyTorch) {
  for (const auto& device : all_devices()) {
    // gn = torch.nn.GroupNorm(2, 4); gn.weight = 1 + wave(4, .9, .2, .5); gn.bias = wave(4, 1.3, .4, .3)
    // gn(wave(24, .57, .2, 2).reshape(2, 4, 3))
    auto gn = nn::GroupNormConfig{2, 4}.init(device);
    ASSERT_TRUE(gn.weight && gn.bias);
    gn.weight->set(wave_tensor<1>({4}, 0.9, 0.2, 0.5, device) + 1.0);
    gn.bias->set(wave_tensor<1>({4}, 1.3, 0.4, 0.3, device));
    expect_values(gn.forward(wave_tensor<3>({2, 4, 3}, 0.57, 0.2, 2.0, device)).to_data(),
                  {-1.143869, 0.474497,  1.376776,  1.823984,  0.418064,  -1.818903, 0.387426, -1.095943,
                   -1.578773, -1.006615, 0.233824,  1.806496,  0.565417,  1.184049,  1.133780, 0.709983,
                   -0.781081, -2.366947, -1.126750, -1.459273, -1.038160, -0.304793, 0.720989, 1.646500},
                  Shape{2, 4, 3}, f32_tol());
    // torch.nn.GroupNorm(3, 6, affine=False)(wave(48, .43, .9).reshape(2, 6, 2, 2))
    auto plain = nn::GroupNormConfig{3, 6}.with_affine(false).init(device);
    EXPECT_FALSE(plain.weight.has_value());
    EXPECT_EQ(plain.num_params(), 0u);
    expect_values(
        plain.forward(wave_tensor<4>({2, 6, 2, 2}, 0.43, 0.9, 1.0, device)).to_data(),
        {0.663506,  0.979712,  0.998241,  0.715719,  0.183585,  -0.501277, -1.214174, -1.825311, -1.002457, -1.100243,
         -0.932267, -0.529114, 0.035816,  0.659666,  1.228853,  1.639746,  1.252064,  1.170137,  0.855088,  0.364277,
         -0.212935, -0.771455, -1.209594, -1.447582, -1.460046, -1.211525, -0.765237, -0.202437, 0.374406,  0.860269,
         1.166690,  1.237880,  1.651649,  1.229155,  0.651390,  0.023549,  -0.540059, -0.936819, -1.094493, -0.984373,
         -1.836638, -1.211395, -0.488754, 0.199714,  0.728662,  1.001784,  0.969353,  0.637274},
        Shape{2, 6, 2, 2}, f32_tol());
  }
}

TEST(GroupNormLayer, ErrorsAreClear) {
  const Device d = Device::flex();
  expect_op_error([&] { nn::GroupNormConfig{0, 4}.init(d); }, "GroupNormConfig", "positive");
  expect_op_error([&] { nn::GroupNormConfig{3, 4}.init(d); }, "GroupNormConfig", "divisible by num_groups");
  expect_op_error([&] { nn::GroupNormConfig{2, 4}.with_epsilon(-1).init(d); }, "GroupNormConfig", "epsilon");
  auto gn = nn::GroupNormConfig{2, 4}.init(d);
  expect_op_error([&] { gn.forward(Tensor<3>::ones({2, 6, 3}, d)); }, "GroupNorm", "has 6 channels");
}

TEST(RmsNormLayer, ForwardMatchesTheDefinition) {
  for (const auto& device : all_devices()) {
    // x = wave(24, .77, .3, 1.7).reshape(2, 3, 4); w = 1 + wave(4, .9, .2, .5)
    // x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
    auto norm = nn::RmsNormConfig{4}.init(device);
    expect_values(norm.weight->to_data(), {1, 1, 1, 1}, Shape{4});
    norm.weight.set(wave_tensor<1>({4}, 0.9, 0.2, 0.5, device) + 1.0);
    expect_values(norm.forward(wave_tensor<3>({2, 3, 4}, 0.77, 0.3, 1.7, device)).to_data(),
                  {0.454578, 1.774350, 1.962088, 0.794130, -0.363401, -1.711865, -1.992457, -0.876085,
                   0.270817, 1.643091, 2.015600, 0.954927, -0.177131, -1.568238, -2.031417, -1.030382,
                   0.082656, 1.487533, 2.039825, 1.102179, 0.012291,  -1.401223, -2.040757, -1.170058},
                  Shape{2, 3, 4}, f32_tol());
  }
}

TEST(RmsNormLayer, ErrorsAreClear) {
  const Device d = Device::flex();
  expect_op_error([&] { nn::RmsNormConfig{0}.init(d); }, "RmsNormConfig", "d_model");
  expect_op_error([&] { nn::RmsNormConfig{4}.with_epsilon(0).init(d); }, "RmsNormConfig", "epsilon");
  auto norm = nn::RmsNormConfig{4}.init(d);
  expect_op_error([&] { norm.forward(Tensor<2>::ones({2, 5}, d)); }, "RmsNorm", "has 5 features");
}

// Layer norm over the last dim in double: the definition every device's
// result is checked against, from the values the device actually holds.
std::vector<double> layer_norm_reference(const std::vector<double>& x, const std::vector<double>& w,
                                         const std::vector<double>& b, double eps) {
  const std::size_t n = w.size();
  std::vector<double> y(x.size());
  for (std::size_t start = 0; start < x.size(); start += n) {
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < n; ++i) mean += x[start + i];
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) var += (x[start + i] - mean) * (x[start + i] - mean);
    var /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) y[start + i] = (x[start + i] - mean) / std::sqrt(var + eps) * w[i] + b[i];
  }
  return y;
}

Tolerance layer_norm_tol(DType dtype) {
  switch (dtype) {
    case DType::F64: return Tolerance::rel_abs(1e-12, 1e-12);
    case DType::F32: return Tolerance::rel_abs(1e-5, 1e-5);
    default: return Tolerance::rel_abs(2e-2, 2e-2);  // one rounding to 8 or 11 bits, from f32
  }
}

// 37 features: no vector width divides it, so every kernel's tail runs.
TEST(LayerNormOp, MatchesTheDefinitionOnEveryDeviceAndFloatDType) {
  constexpr std::size_t kRows = 6, kN = 37;
  for (const auto& [device, dtype] : burn::testing::combos(burn::testing::float_dtypes())) {
    SCOPED_TRACE(device.to_string() + " / " + std::string(dtype_name(dtype)));
    auto x = wave_tensor<3>({2, kRows / 2, kN}, 0.77, 0.3, 1.7, device, dtype) + 0.75;
    auto w = wave_tensor<1>({kN}, 0.9, 0.2, 0.5, device, dtype) + 1.0;
    auto b = wave_tensor<1>({kN}, 1.3, 0.4, 0.3, device, dtype);
    const auto want =
        layer_norm_reference(values_of(x.to_data()), values_of(w.to_data()), values_of(b.to_data()), 1e-5);
    expect_values(module::layer_norm(x, w, b, 1e-5).to_data(), want, Shape{2, kRows / 2, kN}, layer_norm_tol(dtype));
  }
}

// Rows of several pairwise-sum leaves, far from zero mean: the variance of
// the deviations keeps the result accurate where E[x^2] - mean^2 would not.
TEST(LayerNormOp, LongRowsFarFromZeroStayAccurateOnTheKernels) {
  constexpr std::size_t kN = 3001;
  for (const auto& device : all_devices()) {
    if (!device.supports_op(ir::LayerNorm{})) continue;  // the composite is checked above
    SCOPED_TRACE(device.to_string());
    auto x = wave_tensor<2>({3, kN}, 0.013, 0.3, 2.0, device) + 1000.0;
    auto w = wave_tensor<1>({kN}, 0.9, 0.2, 0.5, device) + 1.0;
    auto b = wave_tensor<1>({kN}, 1.3, 0.4, 0.3, device);
    const auto want =
        layer_norm_reference(values_of(x.to_data()), values_of(w.to_data()), values_of(b.to_data()), 1e-5);
    // f32 holds x to 6e-5 near 1000: the deviations, so the outputs, to about that.
    expect_values(module::layer_norm(x, w, b, 1e-5).to_data(), want, Shape{3, kN}, Tolerance::rel_abs(1e-4, 2e-4));
  }
}

TEST(LayerNormOp, RunsAsOneKernelOnTheCpuBackendsAndAgreesWithItsComposite) {
  EXPECT_TRUE(Device::flex().supports_op(ir::LayerNorm{}));
#if BURN_HAS_NDARRAY
  EXPECT_TRUE(Device::ndarray().supports_op(ir::LayerNorm{}));
#endif
  const Device flex = Device::flex();
  auto x = wave_tensor<2>({5, 64}, 0.61, 0.1, 1.3, flex);
  auto w = wave_tensor<1>({64}, 0.9, 0.2, 0.5, flex) + 1.0;
  auto b = wave_tensor<1>({64}, 1.3, 0.4, 0.3, flex);
  // nn::LayerNorm runs the op; the composite it replaced gives the same values.
  const nn::LayerNorm layer{module::Param(w), module::Param(b), 1e-5};
  auto [var, mean] = x.var_mean_bias(1);
  const auto composite = (x - mean) * (var + 1e-5).rsqrt() * w.unsqueeze<2>() + b.unsqueeze<2>();
  expect_values(layer.forward(x).to_data(), values_of(composite.to_data()), Shape{5, 64},
                Tolerance::rel_abs(1e-5, 1e-6));
#if BURN_HAS_CPU
  // Device::cpu() runs flex's kernel: the same bits.
  const Device cpu = Device::cpu();
  const auto on_cpu = module::layer_norm(x.to_device(cpu), w.to_device(cpu), b.to_device(cpu)).to_data();
  const auto on_flex = module::layer_norm(x, w, b).to_data();
  ASSERT_EQ(on_cpu.bytes().size(), on_flex.bytes().size());
  EXPECT_EQ(std::memcmp(on_cpu.bytes().data(), on_flex.bytes().data(), on_flex.bytes().size()), 0);
#endif
}

TEST(LayerNormOp, ReadsPermutedViewsAndKeepsEmptyInputsEmpty) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    auto base = wave_tensor<2>({8, 3}, 0.37, 0.9, 1.1, device);
    auto x = base.transpose();  // [3, 8], not contiguous
    auto w = wave_tensor<1>({8}, 0.9, 0.2, 0.5, device) + 1.0;
    auto b = wave_tensor<1>({8}, 1.3, 0.4, 0.3, device);
    const auto want =
        layer_norm_reference(values_of(x.to_data()), values_of(w.to_data()), values_of(b.to_data()), 1e-5);
    expect_values(module::layer_norm(x, w, b).to_data(), want, Shape{3, 8}, Tolerance::rel_abs(1e-5, 1e-5));
    auto empty = module::layer_norm(Tensor<2>::zeros({0, 8}, device), w, b);
    EXPECT_EQ(empty.dims(), (std::array<std::size_t, 2>{0, 8}));
  }
}

TEST(LayerNormOp, BadInputsGetTheOpsErrorOnEveryDevice) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    auto x = Tensor<2>::ones({2, 4}, device);
    auto w = Tensor<1>::ones({4}, device), b = Tensor<1>::zeros({4}, device);
    expect_op_error([&] { (void)module::layer_norm(x, Tensor<1>::ones({5}, device), b); }, "layer_norm",
                    "weight has shape [5]; it must be [4]");
    expect_op_error([&] { (void)module::layer_norm(x, w, Tensor<1>::zeros({3}, device)); }, "layer_norm",
                    "bias has shape [3]");
    expect_op_error([&] { (void)module::layer_norm(x, w, b, 0.0); }, "layer_norm", "epsilon must be positive");
    if (device.supports_dtype(DType::F64))
      expect_op_error([&] { (void)module::layer_norm(x, w.cast(DType::F64), b); }, "layer_norm", "dtypes");
  }
}

// Batch norm in training over every dim but 1, in double: y, and the
// channels' means and biased variances.
struct BatchNormReference {
  std::vector<double> y, mean, var;
};
BatchNormReference batch_norm_reference(const std::vector<double>& x, const Shape& shape, const std::vector<double>& w,
                                        const std::vector<double>& b, double eps) {
  const std::size_t n = shape[0], c = shape[1], l = shape.num_elements() / (n * c);
  BatchNormReference r{std::vector<double>(x.size()), std::vector<double>(c), std::vector<double>(c)};
  for (std::size_t ch = 0; ch < c; ++ch) {
    double sum = 0, squares = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < l; ++k) sum += x[(i * c + ch) * l + k];
    r.mean[ch] = sum / static_cast<double>(n * l);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < l; ++k) squares += std::pow(x[(i * c + ch) * l + k] - r.mean[ch], 2);
    r.var[ch] = squares / static_cast<double>(n * l);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < l; ++k) {
        const std::size_t at = (i * c + ch) * l + k;
        r.y[at] = (x[at] - r.mean[ch]) / std::sqrt(r.var[ch] + eps) * w[ch] + b[ch];
      }
  }
  return r;
}

/// A batch norm layer in training of `dtype`, its weights waves.
nn::BatchNorm training_batch_norm(std::size_t c, const Device& device, DType dtype) {
  return nn::BatchNorm{module::Param(wave_tensor<1>({c}, 0.9, 0.2, 0.5, device, dtype) + 1.0),
                       module::Param(wave_tensor<1>({c}, 1.3, 0.4, 0.3, device, dtype)),
                       module::RunningState(Tensor<1>::zeros({c}, TensorCreationOptions(device, dtype))),
                       module::RunningState(Tensor<1>::ones({c}, TensorCreationOptions(device, dtype))),
                       0.1,
                       1e-5,
                       {module::Mode::Train}};
}

// Lines of 21 values (no vector width divides them), one value per line
// (rank 2: a channel is one strided line), and channel means far from zero:
// the kernels take the variance of the deviations, as the definition does.
TEST(BatchNormOp, MatchesItsDefinitionOnEveryDeviceAndFloatDType) {
  const std::vector<Shape> shapes{Shape{3, 5, 7, 3}, Shape{9, 5}, Shape{2, 5, 11}};
  for (const auto& [device, dtype] : burn::testing::combos(burn::testing::float_dtypes())) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(device.to_string() + " / " + std::string(dtype_name(dtype)) + " / " + shape.to_string());
      const bool half = dtype == DType::F16 || dtype == DType::BF16;
      const double offset = half ? 3.0 : 100.0;  // 16-bit floats hold 100 to a unit in the last place of 0.06
      const auto input =
          burn::detail::reshape_exact((burn::testing::float_tensor<1>(wave(shape.num_elements(), 0.77, 0.3, 1.7),
                                                                      Shape{shape.num_elements()}, device, dtype) +
                                       offset)
                                          .ref(),
                                      shape);
      auto bn = training_batch_norm(5, device, dtype);
      const auto want = batch_norm_reference(values_of(burn::detail::to_data(input)), shape,
                                             values_of(bn.weight->to_data()), values_of(bn.bias->to_data()), 1e-5);
      const Tolerance tol = dtype == DType::F64   ? Tolerance::rel_abs(1e-10, 1e-10)
                            : dtype == DType::F32 ? Tolerance::rel_abs(1e-4, 1e-4)
                                                  : Tolerance::rel_abs(3e-2, 3e-2);
      const auto y = burn::detail::to_data(nn::detail::batch_norm(bn, input, true));
      expect_values(y, want.y, shape, tol);
      // The running statistics moved a tenth of the way to the batch's
      // (the variance unbiased).
      const double count = static_cast<double>(shape.num_elements() / 5);
      std::vector<double> running_mean(5), running_var(5);
      for (std::size_t ch = 0; ch < 5; ++ch) {
        running_mean[ch] = 0.1 * want.mean[ch];
        running_var[ch] = 0.9 + 0.1 * want.var[ch] * count / (count - 1);
      }
      expect_values(bn.running_mean->to_data(), running_mean, Shape{5}, tol);
      expect_values(bn.running_var->to_data(), running_var, Shape{5}, tol);
    }
  }
}

TEST(BatchNormOp, RunsAsOneKernelOnTheCpuBackendsAndNotOnTheCaptureDevice) {
  EXPECT_TRUE(Device::flex().supports_op(ir::BatchNorm{}));
#if BURN_HAS_CAPTURE
  // Recorded as its composite there, which an ONNX export can write.
  EXPECT_FALSE(Device::capture().supports_op(ir::BatchNorm{}));
#endif
#if BURN_HAS_CPU
  // Device::cpu() runs flex's kernel: the same bits.
  const Device flex = Device::flex(), cpu = Device::cpu();
  auto x = wave_tensor<4>({4, 6, 5, 5}, 0.61, 0.1, 1.3, flex);
  auto bn_flex = training_batch_norm(6, flex, DType::F32);
  auto bn_cpu = training_batch_norm(6, cpu, DType::F32);
  const auto on_flex = bn_flex.forward(x).to_data();
  const auto on_cpu = bn_cpu.forward(x.to_device(cpu)).to_data();
  ASSERT_EQ(on_cpu.bytes().size(), on_flex.bytes().size());
  EXPECT_EQ(std::memcmp(on_cpu.bytes().data(), on_flex.bytes().data(), on_flex.bytes().size()), 0);
#endif
}

TEST(BatchNormOp, BadInputsGetTheOpsError) {
  const Device d = Device::flex();
  auto run = [&](const Shape& x, std::size_t c, std::size_t c_bias) {
    const std::array<burn::detail::TensorRef, 3> in{
        burn::detail::reshape_exact(Tensor<1>::ones({x.num_elements()}, d).ref(), x), Tensor<1>::ones({c}, d).ref(),
        Tensor<1>::ones({c_bias}, d).ref()};
    (void)burn::detail::execute(ir::BatchNorm{}, in);
  };
  expect_op_error([&] { run(Shape{2, 3, 4}, 4, 3); }, "batch_norm", "weight has shape [4]");
  expect_op_error([&] { run(Shape{2, 3, 4}, 3, 2); }, "batch_norm", "bias has shape [2]");
  expect_op_error([&] { run(Shape{6}, 6, 6); }, "batch_norm", "rank at least 2");
  expect_op_error([&] { run(Shape{1, 3, 1}, 3, 3); }, "batch_norm", "more than one value per channel");
}

#if BURN_HAS_AUTODIFF
class NormLayerGrad : public adtest::AdTest {};

nn::BatchNorm batch_norm_of(const Tensor<1>& w, const Tensor<1>& b, module::Mode mode) {
  const TensorCreationOptions o{w.device(), DType::F64};
  const std::size_t c = w.dims()[0];
  return nn::BatchNorm{
      module::Param(w),
      module::Param(b),
      module::RunningState(Tensor<1>::from_data(TensorData(wave(c, 0.8, 0.1, 0.3), Shape{c}), o)),
      module::RunningState(Tensor<1>::from_data(TensorData(wave(c, 0.6, 0.2, 0.2), Shape{c}), o) + 1.0),
      0.1,
      1e-5,
      {mode}};
}

TEST_P(NormLayerGrad, BatchNormTraining) {
  // Train is forced: GradCheck's finite differences run without gradients, which Auto would treat as evaluation.
  adtest::GradCheck(ad())
      .tolerance(1e-5, 1e-6)
      .run([](Tensor<4> x, Tensor<1> w, Tensor<1> b) { return batch_norm_of(w, b, module::Mode::Train).forward(x); },
           adtest::Input<4>{rng.uniform(3 * 2 * 2 * 3, -1, 1), {3, 2, 2, 3}},
           adtest::Input<1>{rng.uniform(2, 0.5, 1.5), {2}}, adtest::Input<1>{rng.uniform(2, -1, 1), {2}});
}

TEST_P(NormLayerGrad, BatchNormEvaluation) {
  adtest::GradCheck(ad()).run(
      [](Tensor<3> x, Tensor<1> w, Tensor<1> b) { return batch_norm_of(w, b, module::Mode::Eval).forward(x); },
      adtest::Input<3>{rng.uniform(2 * 3 * 4, -1, 1), {2, 3, 4}}, adtest::Input<1>{rng.uniform(3, 0.5, 1.5), {3}},
      adtest::Input<1>{rng.uniform(3, -1, 1), {3}});
}

TEST_P(NormLayerGrad, GroupNorm) {
  adtest::GradCheck(ad())
      .tolerance(1e-5, 1e-6)
      .run(
          [](Tensor<4> x, Tensor<1> w, Tensor<1> b) {
            nn::GroupNorm gn{module::Param(w), module::Param(b), 2, 4, 1e-5};
            return gn.forward(x);
          },
          adtest::Input<4>{rng.uniform(2 * 4 * 2 * 2, -1, 1), {2, 4, 2, 2}},
          adtest::Input<1>{rng.uniform(4, 0.5, 1.5), {4}}, adtest::Input<1>{rng.uniform(4, -1, 1), {4}});
}

TEST_P(NormLayerGrad, RmsNorm) {
  adtest::GradCheck(ad())
      .tolerance(1e-5, 1e-6)
      .run(
          [](Tensor<3> x, Tensor<1> w) {
            nn::RmsNorm norm{module::Param(w), 1e-5};
            return norm.forward(x);
          },
          adtest::Input<3>{rng.uniform(2 * 3 * 4, -1, 1), {2, 3, 4}}, adtest::Input<1>{rng.uniform(4, 0.5, 1.5), {4}});
}

TEST_P(NormLayerGrad, LayerNorm) {
  adtest::GradCheck(ad())
      .tolerance(1e-5, 1e-6)
      .run([](Tensor<3> x, Tensor<1> w, Tensor<1> b) { return module::layer_norm(x, w, b, 1e-5); },
           adtest::Input<3>{rng.uniform(2 * 3 * 5, -1, 1), {2, 3, 5}}, adtest::Input<1>{rng.uniform(5, 0.5, 1.5), {5}},
           adtest::Input<1>{rng.uniform(5, -1, 1), {5}});
}

// Something that reads the op's mean and var outputs gets their gradients
// too (the layer reads them only for its running statistics, untracked).
TEST_P(NormLayerGrad, BatchNormOpStatisticsOutputs) {
  if (!ad().supports_op(ir::BatchNorm{})) GTEST_SKIP() << ad().to_string() << " runs batch norm as its composite";
  adtest::GradCheck(ad())
      .tolerance(1e-5, 1e-6)
      .run(
          [](Tensor<3> x, Tensor<1> w, Tensor<1> b) {
            const std::array<burn::detail::TensorRef, 3> in{x.ref(), w.ref(), b.ref()};
            const auto out = burn::detail::execute(ir::BatchNorm{1e-5}, in);
            const auto stats = (Tensor<1>(out[1]) * 3.0 + Tensor<1>(out[2]) * Tensor<1>(out[1])).reshape({1, 2, 1});
            return Tensor<3>(out[0]) * stats;
          },
          adtest::Input<3>{rng.uniform(3 * 2 * 4, -1, 1), {3, 2, 4}}, adtest::Input<1>{rng.uniform(2, 0.5, 1.5), {2}},
          adtest::Input<1>{rng.uniform(2, -1, 1), {2}});
}

BURN_AD_MODES(NormLayerGrad);
#endif

}  // namespace
