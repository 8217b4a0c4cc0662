// Post-training quantization: calibration ranges, int8 Linear layers against
// an integer reference, the same model on every device, dynamic activations,
// Conv2d layers, weight-only block schemes, and quantized records.
#include <burn/quant.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

#include "burn_test.hpp"
#include "int8_kernel_scope.hpp"

namespace {

using namespace burn;
using burn::quant::QuantScheme;
using burn::testing::all_devices;

struct QuantMlp {
  nn::Linear fc1, fc2;
  BURN_MODULE(fc1, fc2)
  Tensor<2> forward(const Tensor<2>& x) const { return fc2.forward(activation::relu(fc1.forward(x))); }
};

QuantMlp make_mlp(const Device& d, std::uint64_t seed) {
  d.seed(seed);
  return {nn::LinearConfig{16, 32}.init(d), nn::LinearConfig{32, 4}.init(d)};
}

struct QuantCnn {
  nn::Conv2d conv;
  nn::Linear fc;
  BURN_MODULE(conv, fc)
  Tensor<2> forward(const Tensor<4>& x) const { return fc.forward(activation::relu(conv.forward(x)).flatten<2>(1, 3)); }
};

QuantCnn make_cnn(const Device& d, std::uint64_t seed) {
  d.seed(seed);
  nn::Conv2dConfig conv;
  conv.channels = {1, 4};
  conv.kernel_size = {3, 3};
  return {conv.init(d), nn::LinearConfig{64, 3}.init(d)};
}

std::vector<float> normal_floats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

template <std::size_t D>
Tensor<D> batch(const Shape& shape, unsigned seed, const Device& d) {
  return Tensor<D>::from_data(TensorData(normal_floats(shape.num_elements(), seed), shape), d);
}

template <class F>
void expect_ptq_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

float max_abs(const std::vector<float>& v) {
  float m = 0.0f;
  for (float x : v) m = std::max(m, std::abs(x));
  return m;
}

/// One int8 Linear layer computed here from its parts: activations on the
/// grid of amax / activation_qmax(), per-column weight scales, integer sums.
std::vector<float> reference_linear(const std::vector<float>& x, std::size_t m, const nn::Linear& layer, float amax) {
  const auto qw = quant::quantize(layer.weight.val(), QuantScheme::int8_per_channel(1));
  const auto w = qw.values().to_data().to_vec<std::int8_t>();
  const auto ws = qw.scales().to_data().to_vec<float>();
  const auto b = layer.bias->val().to_data().to_vec<float>();
  const std::size_t k = layer.weight->shape()[0], n = layer.weight->shape()[1];
  const float qmax = static_cast<float>(quant::activation_qmax());
  const float sa = amax / qmax;
  std::vector<float> y(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int64_t acc = 0;
      for (std::size_t l = 0; l < k; ++l) {
        const auto xq = static_cast<std::int64_t>(std::clamp(std::nearbyint(x[i * k + l] / sa), -qmax, qmax));
        acc += xq * w[l * n + j];
      }
      y[i * n + j] = static_cast<float>(static_cast<double>(acc) * sa * ws[j] + b[j]);
    }
  return y;
}

TEST(Ptq, CalibrationRecordsEachLayersInputRange) {
  const Device d = Device::flex();
  const auto model = make_mlp(d, 3);
  std::vector<Tensor<2>> batches;
  for (unsigned s = 0; s < 3; ++s) batches.push_back(batch<2>(Shape{8, 16}, 100 + s, d));
  const auto calibration = quant::calibrate(model, [&](const QuantMlp& m) {
    for (const auto& b : batches) (void)m.forward(b);
  });
  ASSERT_EQ(calibration.layers.size(), 2u);
  const auto& fc1 = calibration.layers.at("fc1.weight");
  EXPECT_EQ(fc1.kind, quant::LayerKind::Linear);
  EXPECT_EQ(fc1.calls, 3u);
  float amax = 0.0f;
  for (const auto& b : batches) amax = std::max(amax, max_abs(b.to_data().to_vec<float>()));
  EXPECT_FLOAT_EQ(fc1.input_amax, amax);
  float hidden = 0.0f;
  for (const auto& b : batches)
    hidden = std::max(hidden, max_abs(activation::relu(model.fc1.forward(b)).to_data().to_vec<float>()));
  EXPECT_FLOAT_EQ(calibration.layers.at("fc2.weight").input_amax, hidden);
}

TEST(Ptq, Int8LinearLayersMatchAnIntegerReference) {
  const Device d = Device::flex();
  const auto model = make_mlp(d, 3);
  const auto calib_batch = batch<2>(Shape{32, 16}, 7, d);
  const auto calibration = quant::calibrate(model, [&](const QuantMlp& m) { (void)m.forward(calib_batch); });
  const auto qmodel = quant::quantize_model(model, calibration);
  EXPECT_EQ(qmodel.quantized_layers(), (std::vector<std::string>{"fc1.weight", "fc2.weight"}));

  const auto x = batch<2>(Shape{5, 16}, 8, d);
  const auto got = qmodel.forward(x).to_data().to_vec<float>();
  auto hidden =
      reference_linear(x.to_data().to_vec<float>(), 5, model.fc1, calibration.layers.at("fc1.weight").input_amax);
  for (auto& h : hidden) h = std::max(h, 0.0f);
  const auto expected = reference_linear(hidden, 5, model.fc2, calibration.layers.at("fc2.weight").input_amax);
  ASSERT_EQ(got.size(), expected.size());
  const float scale = max_abs(expected);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-5f * scale) << i;

  // And close to the f32 model: int8 costs a few per cent at most here.
  const auto f32 = model.forward(x).to_data().to_vec<float>();
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], f32[i], 0.05f * max_abs(f32)) << i;
}

TEST(Ptq, EveryDeviceComputesTheSameQuantizedModel) {
  const auto base = make_mlp(Device::flex(), 5);
  const auto calib_host = batch<2>(Shape{16, 16}, 21, Device::flex());
  const auto x_host = batch<2>(Shape{4, 16}, 22, Device::flex());
  std::vector<float> reference;
  for (const Device& d : all_devices()) {
    SCOPED_TRACE(d.to_string());
    const auto model = base.to_device(d);
    const auto calib = calib_host.to_device(d);
    const auto calibration = quant::calibrate(model, [&](const QuantMlp& m) { (void)m.forward(calib); });
    const auto out = quant::quantize_model(model, calibration).forward(x_host.to_device(d)).to_data().to_vec<float>();
    if (reference.empty()) {
      reference = out;
      continue;
    }
    ASSERT_EQ(out.size(), reference.size());
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], reference[i], 1e-4f * max_abs(reference)) << i;
  }
}

TEST(Ptq, DynamicActivationsFollowEachBatchsRange) {
  const Device d = Device::flex();
  const auto model = make_mlp(d, 4);
  const auto calib = batch<2>(Shape{16, 16}, 31, d);
  const auto calibration = quant::calibrate(model, [&](const QuantMlp& m) { (void)m.forward(calib); });
  const auto static_q = quant::quantize_model(model, calibration);
  const auto dynamic_q = quant::quantize_model(
      model, calibration, quant::QuantizeConfig{}.with_activations(quant::ActivationScale::Dynamic));
  // Inputs ten times the calibrated range: static scales clip them, dynamic ones follow.
  const auto x = batch<2>(Shape{4, 16}, 32, d) * 10.0;
  const auto f32 = model.forward(x).to_data().to_vec<float>();
  const auto dyn = dynamic_q.forward(x).to_data().to_vec<float>();
  const auto sta = static_q.forward(x).to_data().to_vec<float>();
  float dyn_err = 0.0f, sta_err = 0.0f;
  for (std::size_t i = 0; i < f32.size(); ++i) {
    dyn_err = std::max(dyn_err, std::abs(dyn[i] - f32[i]));
    sta_err = std::max(sta_err, std::abs(sta[i] - f32[i]));
  }
  EXPECT_LT(dyn_err, 0.05f * max_abs(f32));
  EXPECT_GT(sta_err, 0.2f * max_abs(f32));
}

TEST(Ptq, Conv2dLayersQuantizeTheirInputsAndWeights) {
  const Device d = Device::flex();
  const auto model = make_cnn(d, 6);
  const auto calib = batch<4>(Shape{4, 1, 6, 6}, 41, d);
  const auto calibration = quant::calibrate(model, [&](const QuantCnn& m) { (void)m.forward(calib); });
  ASSERT_EQ(calibration.layers.at("conv.weight").kind, quant::LayerKind::Conv2d);
  const auto qmodel = quant::quantize_model(model, calibration);
  const auto x = batch<4>(Shape{2, 1, 6, 6}, 42, d);
  const auto f32 = model.forward(x).to_data().to_vec<float>();
  const auto q = qmodel.forward(x).to_data().to_vec<float>();
  for (std::size_t i = 0; i < f32.size(); ++i) EXPECT_NEAR(q[i], f32[i], 0.05f * max_abs(f32)) << i;

  // The conv layer by hand: its input on the activation grid, convolved with
  // the dequantized (per output channel) weight the quantized model holds.
  const float sa = calibration.layers.at("conv.weight").input_amax / static_cast<float>(quant::activation_qmax());
  const auto xq = (x / sa).round().clamp(-quant::activation_qmax(), quant::activation_qmax()) * sa;
  const auto wq = quant::quantize(model.conv.weight.val(), QuantScheme::int8_per_channel(0)).dequantize();
  EXPECT_EQ(qmodel.model().conv.weight->to_data().to_vec<float>(), wq.to_data().to_vec<float>());
  const auto conv = module::conv2d(xq, wq, model.conv.bias->val(), module::ConvOptions<2>());
  const auto quantized_conv = qmodel.run([&](const QuantCnn& m) { return m.conv.forward(x); });
  const auto want = conv.to_data().to_vec<float>();
  const auto have = quantized_conv.to_data().to_vec<float>();
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(have[i], want[i], 1e-5f * max_abs(want)) << i;
}

/// Every device with the default int8 kernel, and flex with each kernel.
std::vector<std::pair<Device, quant::detail::Int8Kernel>> devices_and_kernels() {
  std::vector<std::pair<Device, quant::detail::Int8Kernel>> out;
  for (const Device& d : all_devices()) out.emplace_back(d, quant::detail::Int8Kernel::Auto);
  for (const auto kernel : quant::detail::available_int8_kernels()) out.emplace_back(Device::flex(), kernel);
  return out;
}

struct QuantConv {
  nn::Conv2d conv;
  BURN_MODULE(conv)
  Tensor<4> forward(const Tensor<4>& x) const { return conv.forward(x); }
};

// Strides, dilations, asymmetric kernels, explicit padding and groups, per
// tensor and per channel, one image and several (the int8 convolution splits
// its work differently): the quantized layer against its input on the
// activation grid convolved with the dequantized weights, on every device and
// on the host with every int8 kernel.
TEST(Ptq, Conv2dGeometriesMatchTheReferenceOnEveryDevice) {
  nn::Conv2dConfig config;
  config.channels = {4, 6};
  config.kernel_size = {3, 2};
  config = config.with_stride({2, 1}).with_dilation({1, 2}).with_groups(2).with_padding(
      nn::PaddingConfig2d::explicit_(1, 2));
  const module::ConvOptions<2> options({2, 1}, {1, 2}, {1, 2}, 2);
  for (const auto& scheme : {QuantScheme::int8_per_channel(0), QuantScheme::int8_per_tensor()})
    for (const std::size_t images : {std::size_t{1}, std::size_t{5}})
      for (const auto& [d, kernel] : devices_and_kernels()) {
        SCOPED_TRACE(d.to_string() + " kernel " + std::to_string(static_cast<int>(kernel)) + " " + scheme.to_string() +
                     " images " + std::to_string(images));
        const burn::testing::Int8KernelScope use(kernel);
        d.seed(8);
        const QuantConv model{config.init(d)};
        const auto calib = batch<4>(Shape{3, 4, 9, 8}, 43, d);
        const auto calibration = quant::calibrate(model, [&](const QuantConv& m) { (void)m.forward(calib); });
        const auto qmodel = quant::quantize_model(model, calibration, quant::QuantizeConfig{}.with_weights(scheme));
        const auto x = batch<4>(Shape{images, 4, 9, 8}, 44, d);
        const auto have = qmodel.forward(x).to_data().to_vec<float>();

        const float sa = calibration.layers.at("conv.weight").input_amax / static_cast<float>(quant::activation_qmax());
        const auto xq = (x / sa).round().clamp(-quant::activation_qmax(), quant::activation_qmax()) * sa;
        const auto wq = quant::quantize(model.conv.weight.val(), scheme).dequantize();
        const auto want_tensor = module::conv2d(xq, wq, model.conv.bias->val(), options);
        ASSERT_EQ(want_tensor.shape(), (Shape{images, 6, 5, 10}));
        const auto want = want_tensor.to_data().to_vec<float>();
        ASSERT_EQ(have.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(have[i], want[i], 1e-5f * max_abs(want)) << i;
        // The int8 convolution keeps the convolution's own checks (here past
        // the layer's, which would refuse this input first).
        const auto three_channels = batch<4>(Shape{1, 3, 9, 8}, 45, d);
        expect_ptq_error(
            [&] {
              (void)qmodel.run([&](const QuantConv& m) {
                return module::conv2d(three_channels, m.conv.weight.val(), m.conv.bias->val(), options);
              });
            },
            "input has 3 channels but the weight");
      }
}

/// A 3x3 convolution padded by 1 (output the input's size), initialised on
/// `d` from `seed`.
QuantConv same_size_3x3_conv(std::size_t in, std::size_t out, std::uint64_t seed, const Device& d) {
  nn::Conv2dConfig config;
  config.channels = {in, out};
  config.kernel_size = {3, 3};
  config = config.with_padding(nn::PaddingConfig2d::explicit_(1, 1));
  d.seed(seed);
  return QuantConv{config.init(d)};
}

// Output channels in whole panels of the AVX2 kernel's 16 columns and a
// partial one (36 = 16 + 16 + 4), with a bias, and row counts that end in a
// partial register block (8 x 7 = 56 pixels): the int8 convolution against
// its input on the activation grid convolved with the dequantized weights,
// on the host with every int8 kernel.
TEST(Ptq, Conv2dWithWholePanelsOfChannelsMatchesTheReference) {
  const Device d = Device::flex();
  const QuantConv model = same_size_3x3_conv(8, 36, 10, d);
  const auto calib = batch<4>(Shape{2, 8, 8, 7}, 48, d);
  const auto x = batch<4>(Shape{3, 8, 8, 7}, 49, d);
  const auto wq = quant::quantize(model.conv.weight.val(), QuantScheme::int8_per_channel(0)).dequantize();
  for (const auto kernel : quant::detail::available_int8_kernels()) {
    SCOPED_TRACE("kernel " + std::to_string(static_cast<int>(kernel)));
    // Quantized under the kernel: its activation range (7 or 8 bits) is
    // the layer's.
    const burn::testing::Int8KernelScope use(kernel);
    const auto calibration = quant::calibrate(model, [&](const QuantConv& m) { (void)m.forward(calib); });
    const auto qmodel = quant::quantize_model(model, calibration);
    const float qmax = static_cast<float>(quant::activation_qmax());
    const float sa = calibration.layers.at("conv.weight").input_amax / qmax;
    const auto xq = (x / sa).round().clamp(-qmax, qmax) * sa;
    const auto want_tensor =
        module::conv2d(xq, wq, model.conv.bias->val(), module::ConvOptions<2>({1, 1}, {1, 1}, {1, 1}, 1));
    ASSERT_EQ(want_tensor.shape(), (Shape{3, 36, 8, 7}));
    const auto want = want_tensor.to_data().to_vec<float>();
    const auto have = qmodel.forward(x).to_data().to_vec<float>();
    ASSERT_EQ(have.size(), want.size());
    const float tolerance = 1e-5f * max_abs(want);
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(have[i], want[i], tolerance) << i;
  }
}

// Several images at once: the convolution runs one image per thread, each
// through the same GEMM (its primitive, its packed weights) at the same
// time. Every kernel gives each image the bits it gives that image alone.
// Layers this size keep the threads' products overlapping in time, so a
// kernel that shares working memory between concurrent calls shows it here.
TEST(Ptq, ConcurrentImagesGiveEachImagesOwnBitsOnEveryKernel) {
  const Device d = Device::flex();
  const QuantConv model = same_size_3x3_conv(32, 64, 9, d);
  const auto calib = batch<4>(Shape{2, 32, 14, 14}, 46, d);
  const auto calibration = quant::calibrate(model, [&](const QuantConv& m) { (void)m.forward(calib); });
  constexpr std::size_t kImages = 16;
  const auto x = batch<4>(Shape{kImages, 32, 14, 14}, 47, d);
  for (const auto kernel : quant::detail::available_int8_kernels()) {
    SCOPED_TRACE("kernel " + std::to_string(static_cast<int>(kernel)));
    const burn::testing::Int8KernelScope use(kernel);
    const auto qmodel = quant::quantize_model(model, calibration);
    std::vector<float> want;
    for (std::size_t i = 0; i < kImages; ++i) {
      const auto one = x.slice({Range::index(static_cast<std::int64_t>(i)), Range::all(), Range::all(), Range::all()});
      const auto y = qmodel.forward(one).to_data().to_vec<float>();
      want.insert(want.end(), y.begin(), y.end());
    }
    for (int pass = 0; pass < 3; ++pass) EXPECT_EQ(qmodel.forward(x).to_data().to_vec<float>(), want);
  }
}

TEST(Ptq, BlockSchemesQuantizeWeightsOnly) {
  const Device d = Device::flex();
  const auto model = make_mlp(d, 8);
  const auto calib = batch<2>(Shape{8, 16}, 51, d);
  const auto calibration = quant::calibrate(model, [&](const QuantMlp& m) { (void)m.forward(calib); });
  const auto qmodel =
      quant::quantize_model(model, calibration, quant::QuantizeConfig{}.with_weights(QuantScheme::int4_block(16)));
  const auto x = batch<2>(Shape{3, 16}, 52, d);
  // Weight-only: the layers compute in f32 with the dequantized weights.
  EXPECT_EQ(qmodel.forward(x).to_data().to_vec<float>(), qmodel.model().forward(x).to_data().to_vec<float>());
  const auto w = model.fc1.weight->to_data().to_vec<float>();
  const auto wq = qmodel.model().fc1.weight->to_data().to_vec<float>();
  EXPECT_NE(w, wq);
  for (std::size_t b = 0; b < w.size() / 16; ++b) {
    float amax = 0.0f;
    for (std::size_t i = 0; i < 16; ++i) amax = std::max(amax, std::abs(w[b * 16 + i]));
    for (std::size_t i = 0; i < 16; ++i) EXPECT_LE(std::abs(w[b * 16 + i] - wq[b * 16 + i]), amax / 14 + 1e-7f);
  }
}

// An int8 layer on a host device keeps only its int8 form: the model holds a
// placeholder (NaN, broadcast) for its weight; model() makes the dequantized
// weight on request. Other devices, and weight-only schemes, hold the
// dequantized weight itself.
TEST(Ptq, HostInt8LayersHoldNoFloatWeight) {
  for (const Device& d : all_devices()) {
    SCOPED_TRACE(d.to_string());
    const DeviceType type = d.type();
    const bool host = type == DeviceType::Flex || type == DeviceType::Cpu || type == DeviceType::NdArray;
    const auto model = make_mlp(d, 9);
    const auto calib = batch<2>(Shape{8, 16}, 53, d);
    const auto calibration = quant::calibrate(model, [&](const QuantMlp& m) { (void)m.forward(calib); });
    const auto qmodel = quant::quantize_model(model, calibration);
    const auto held = qmodel.run([](const QuantMlp& m) { return m.fc1.weight.val(); }).to_data().to_vec<float>();
    const auto dequantized = quant::quantize(model.fc1.weight.val(), QuantScheme::int8_per_channel(1))
                                 .dequantize()
                                 .to_data()
                                 .to_vec<float>();
    ASSERT_EQ(held.size(), dequantized.size());
    if (host) {
      for (float v : held) ASSERT_TRUE(std::isnan(v));
    } else {
      EXPECT_EQ(held, dequantized);
    }
    EXPECT_EQ(qmodel.model().fc1.weight->to_data().to_vec<float>(), dequantized);
    // model() runs on its own, with the dequantized weights in f32.
    const auto x = batch<2>(Shape{3, 16}, 54, d);
    const auto f32 = model.forward(x).to_data().to_vec<float>();
    const auto plain = qmodel.model().forward(x).to_data().to_vec<float>();
    for (std::size_t i = 0; i < f32.size(); ++i) EXPECT_NEAR(plain[i], f32[i], 0.05f * max_abs(f32)) << i;
  }
  // Weight-only schemes compute in f32 from the weight they hold.
  const auto model = make_mlp(Device::flex(), 10);
  const auto calib = batch<2>(Shape{8, 16}, 55, Device::flex());
  const auto calibration = quant::calibrate(model, [&](const QuantMlp& m) { (void)m.forward(calib); });
  const auto blocks =
      quant::quantize_model(model, calibration, quant::QuantizeConfig{}.with_weights(QuantScheme::int8_block(16)));
  const auto held = blocks.run([](const QuantMlp& m) { return m.fc1.weight.val(); }).to_data().to_vec<float>();
  EXPECT_EQ(held, blocks.model().fc1.weight->to_data().to_vec<float>());
  for (float v : held) ASSERT_FALSE(std::isnan(v));
}

#if BURN_HAS_AUTODIFF
TEST(Ptq, TrackedInputsAreAnErrorAndNoGradRuns) {
  const Device d = Device::flex().autodiff();
  const auto model = make_mlp(d, 12);
  const auto x = batch<2>(Shape{4, 16}, 81, d).require_grad();
  const auto calibration = quant::calibrate(model, [&](const QuantMlp& m) { (void)m.forward(x); });
  const auto qmodel = quant::quantize_model(model, calibration);
  expect_ptq_error([&] { (void)qmodel.forward(x); }, "quantized models are for inference");
  NoGradGuard no_grad;
  const auto y = qmodel.forward(x).to_data().to_vec<float>();
  const auto f32 = model.forward(x).to_data().to_vec<float>();
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], f32[i], 0.05f * max_abs(f32)) << i;
}
#endif

TEST(Ptq, EmptyCalibrationAndUnfitSchemesAreErrors) {
  const auto model = make_mlp(Device::flex(), 3);
  const auto nothing = quant::calibrate(model, [](const QuantMlp&) {});
  expect_ptq_error([&] { (void)quant::quantize_model(model, nothing); }, "saw no Linear or Conv2d layer");
  const auto x = batch<2>(Shape{2, 16}, 1, Device::flex());
  const auto calibration = quant::calibrate(model, [&](const QuantMlp& m) { (void)m.forward(x); });
  // fc2's weight has 32 x 4 = 128 elements: blocks of 48 fit neither layer.
  expect_ptq_error(
      [&] {
        (void)quant::quantize_model(model, calibration,
                                    quant::QuantizeConfig{}.with_weights(QuantScheme::int8_block(48)));
      },
      "layer 'fc1.weight'");
}

class PtqRecord : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("burn-ptq-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                               std::to_string(reinterpret_cast<std::uintptr_t>(this)));
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
};

TEST_F(PtqRecord, SavedModelsLoadIntoFreshModelsAndComputeTheSame) {
  const Device d = Device::flex();
  const auto model = make_cnn(d, 9);
  const auto calib = batch<4>(Shape{4, 1, 6, 6}, 61, d);
  const auto calibration = quant::calibrate(model, [&](const QuantCnn& m) { (void)m.forward(calib); });
  const auto x = batch<4>(Shape{2, 1, 6, 6}, 62, d);
  for (const QuantScheme& scheme : {QuantScheme::int8_per_channel(0), QuantScheme::int4_block(4)}) {
    SCOPED_TRACE(scheme.to_string());
    const auto qmodel = quant::quantize_model(model, calibration, quant::QuantizeConfig{}.with_weights(scheme));
    const auto file = dir / "model.safetensors";
    quant::save_quantized(qmodel, file);
    const auto loaded = quant::load_quantized(make_cnn(d, 99), file);
    EXPECT_EQ(loaded.quantized_layers(), qmodel.quantized_layers());
    EXPECT_EQ(loaded.forward(x).to_data().to_vec<float>(), qmodel.forward(x).to_data().to_vec<float>());
    const auto stored = record::load_safetensors(file);
    EXPECT_EQ(stored.metadata.at("burn.quant.fc.weight.scheme"),
              quant::detail::layer_scheme(scheme, quant::LayerKind::Linear).to_string());
    if (scheme.bits == quant::QuantBits::Int4) {
      EXPECT_EQ(stored.tensor("fc.weight").dtype(), DType::U8);
      EXPECT_EQ(stored.tensor("fc.weight").shape(), (Shape{64 * 3 / 2}));
    } else {
      EXPECT_EQ(stored.tensor("fc.weight").dtype(), DType::I8);
      EXPECT_EQ(stored.tensor("conv.weight.scales").shape(), (Shape{4}));
    }
    EXPECT_EQ(stored.tensor("fc.bias").dtype(), DType::F32);
  }
}

TEST_F(PtqRecord, HostInt8LayersKeepOnlyTheKernelsCopyOnceTheyRun) {
  // A grouped convolution and a Linear layer large enough to see in the
  // device's memory: after the first forward, the int8 tensors are released
  // (the kernel's packed copy is all that holds the values), and records,
  // model() and every other kernel read the values back from that copy,
  // unchanged.
  struct Net {
    nn::Conv2d conv;
    nn::Linear fc;
    BURN_MODULE(conv, fc)
    Tensor<2> forward(const Tensor<4>& x) const {
      return fc.forward(activation::relu(conv.forward(x)).flatten<2>(1, 3));
    }
  };
  const Device d = Device::flex();
  d.seed(21);
  nn::Conv2dConfig conv;
  conv.channels = {4, 8};
  conv.kernel_size = {3, 3};
  conv.groups = 2;
  const Net model{conv.init(d), nn::LinearConfig{8 * 4 * 4, 512}.init(d)};
  const auto calib = batch<4>(Shape{2, 4, 6, 6}, 71, d);
  const auto calibration = quant::calibrate(model, [&](const Net& m) { (void)m.forward(calib); });
  const auto x = batch<4>(Shape{3, 4, 6, 6}, 72, d);
  const auto read = [](const std::filesystem::path& f) {
    std::ifstream in(f, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const auto in_use = [&] {
    d.sync();
    return d.memory_pool_usage().value().bytes_in_use;
  };
  const auto kernels = quant::detail::available_int8_kernels();
  // Each kernel's outputs from a model it packed itself (the kernels'
  // activation grids differ: 7 bits without VNNI).
  std::map<quant::detail::Int8Kernel, std::vector<float>> want;
  for (const auto kernel : kernels) {
    const burn::testing::Int8KernelScope use(kernel);
    want[kernel] = quant::quantize_model(model, calibration).forward(x).to_data().to_vec<float>();
  }
  for (const auto kernel : kernels) {
    SCOPED_TRACE("kernel " + std::to_string(static_cast<int>(kernel)));
    {
      const burn::testing::Int8KernelScope use(kernel);
      const auto qmodel = quant::quantize_model(model, calibration);
      const auto dequantized = qmodel.model().fc.weight->to_data().to_vec<float>();
      quant::save_quantized(qmodel, dir / "before.safetensors");
      const std::uint64_t held = in_use();
      EXPECT_EQ(qmodel.forward(x).to_data().to_vec<float>(), want[kernel]);
      // The Linear layer's 128 x 512 int8 values (and the convolution's) are gone.
      EXPECT_GE(held - std::min(held, in_use()), std::uint64_t{128 * 512}) << held;
      quant::save_quantized(qmodel, dir / "after.safetensors");
      EXPECT_EQ(read(dir / "after.safetensors"), read(dir / "before.safetensors"));
      EXPECT_EQ(qmodel.model().fc.weight->to_data().to_vec<float>(), dequantized);
      // Another kernel packs its own form from the first one's copy.
      for (const auto other : kernels) {
        const burn::testing::Int8KernelScope switched(other);
        EXPECT_EQ(qmodel.forward(x).to_data().to_vec<float>(), want[other])
            << "then kernel " << static_cast<int>(other);
      }
    }
    const burn::testing::Int8KernelScope use(kernel);
    const auto loaded =
        quant::load_quantized(Net{conv.init(d), nn::LinearConfig{8 * 4 * 4, 512}.init(d)}, dir / "after.safetensors");
    EXPECT_EQ(loaded.forward(x).to_data().to_vec<float>(), want[kernel]);
  }
}

TEST_F(PtqRecord, BadFilesAreClearErrors) {
  const Device d = Device::flex();
  const auto model = make_mlp(d, 3);
  const auto plain = dir / "plain.safetensors";
  record::save_module(model, plain);
  expect_ptq_error([&] { (void)quant::load_quantized(model, plain); }, "not a quantized record");
  expect_ptq_error([&] { (void)quant::load_quantized(model, dir / "missing.safetensors"); }, "load_quantized");
  const auto garbage = dir / "garbage.safetensors";
  std::ofstream(garbage) << "not a safetensors file at all";
  expect_ptq_error([&] { (void)quant::load_quantized(model, garbage); }, "load_quantized");

  // A quantized record of another architecture.
  const auto calib = batch<2>(Shape{4, 16}, 71, d);
  const auto calibration = quant::calibrate(model, [&](const QuantMlp& m) { (void)m.forward(calib); });
  const auto file = dir / "mlp.safetensors";
  quant::save_quantized(quant::quantize_model(model, calibration), file);
  expect_ptq_error([&] { (void)quant::load_quantized(make_cnn(d, 1), file); }, "load_quantized");
}

}  // namespace
