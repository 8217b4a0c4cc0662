// Activations against float64 PyTorch values, on inputs every float dtype
// holds exactly (so f16 and bf16 see the same numbers), including values far
// beyond the points where a naive formula overflows.
#include "module_test_util.hpp"

namespace burn::testing::modules {
namespace {

using ActivationTest = ModuleTest;
namespace act = burn::activation;

const std::vector<double> kX = {-100, -20, -3.5, -1, -0.5, -0.125, 0, 0.125, 0.5, 1, 1.5, 3.5, 20, 100};

class ElementwiseActivationTest : public ActivationTest {
 protected:
  Tensor<1> x() const { return tensor<1>(kX, {kX.size()}); }
};

TEST_P(ElementwiseActivationTest, Relu) {
  expect_tensor(act::relu(x()), {0, 0, 0, 0, 0, 0, 0, 0.125, 0.5, 1, 1.5, 3.5, 20, 100}, {14});
}
TEST_P(ElementwiseActivationTest, LeakyRelu) {
  expect_tensor(act::leaky_relu(x()), {-1, -0.2, -0.035, -0.01, -0.005, -0.00125, 0, 0.125, 0.5, 1, 1.5, 3.5, 20, 100},
                {14});
  expect_tensor(act::leaky_relu(x(), 0.2), {-20, -4, -0.7, -0.2, -0.1, -0.025, 0, 0.125, 0.5, 1, 1.5, 3.5, 20, 100},
                {14});
}
TEST_P(ElementwiseActivationTest, Gelu) {
  expect_tensor(act::gelu(x()),
                {0, 0, -0.0008142018, -0.1586553, -0.1542688, -0.05628272, 0, 0.06871728, 0.3457312, 0.8413447,
                 1.399789, 3.499186, 20, 100},
                {14});
}
TEST_P(ElementwiseActivationTest, GeluTanh) {
  expect_tensor(act::gelu_tanh(x()),
                {0, 0, -0.0006161977, -0.158808, -0.154286, -0.0562828, 0, 0.0687172, 0.345714, 0.841192, 1.399572,
                 3.499384, 20, 100},
                {14});
}
TEST_P(ElementwiseActivationTest, Silu) {
  expect_tensor(act::silu(x()),
                {-3.720076e-42, -4.122307e-8, -0.1025928, -0.2689414, -0.1887703, -0.05859883, 0, 0.06640117, 0.3112297,
                 0.7310586, 1.226362, 3.397407, 20, 100},
                {14});
}
TEST_P(ElementwiseActivationTest, Sigmoid) {
  expect_tensor(act::sigmoid(x()),
                {3.720076e-44, 2.061154e-9, 0.02931223, 0.2689414, 0.3775407, 0.4687906, 0.5, 0.5312094, 0.6224593,
                 0.7310586, 0.8175745, 0.9706878, 1, 1},
                {14});
}
TEST_P(ElementwiseActivationTest, LogSigmoid) {
  expect_tensor(act::log_sigmoid(x()),
                {-100, -20, -3.52975, -1.313262, -0.974077, -0.757599, -0.6931472, -0.632599, -0.474077, -0.3132617,
                 -0.2014133, -0.02975042, -2.061154e-9, -3.720076e-44},
                {14});
}
TEST_P(ElementwiseActivationTest, Softplus) {
  expect_tensor(act::softplus(x()),
                {3.720076e-44, 2.061154e-9, 0.02975042, 0.3132617, 0.474077, 0.632599, 0.6931472, 0.757599, 0.974077,
                 1.313262, 1.701413, 3.52975, 20, 100},
                {14});
  expect_tensor(act::softplus(x(), 2.0),
                {6.919483e-88, 2.124177e-18, 0.0004557332, 0.06346401, 0.1566308, 0.2879697, 0.3465736, 0.4129697,
                 0.6566308, 1.063464, 1.524294, 3.500456, 20, 100},
                {14});
}
TEST_P(ElementwiseActivationTest, HardSigmoid) {
  expect_tensor(act::hard_sigmoid(x()), {0, 0, 0, 0.3, 0.4, 0.475, 0.5, 0.525, 0.6, 0.7, 0.8, 1, 1, 1}, {14});
  expect_tensor(act::hard_sigmoid(x(), 1.0 / 6.0, 0.5),
                {0, 0, 0, 0.3333333, 0.4166667, 0.4791667, 0.5, 0.5208333, 0.5833333, 0.6666667, 0.75, 1, 1, 1}, {14});
}
TEST_P(ElementwiseActivationTest, Mish) {
  expect_tensor(act::mish(x()),
                {-3.720076e-42, -4.122307e-8, -0.1040958, -0.3034015, -0.2207438, -0.06997991, 0, 0.07995757, 0.3752452,
                 0.8650984, 1.403378, 3.493991, 20, 100},
                {14});
}
TEST_P(ElementwiseActivationTest, Tanh) {
  expect_tensor(act::tanh(x()),
                {-1, -1, -0.9981779, -0.7615942, -0.4621172, -0.124353, 0, 0.124353, 0.4621172, 0.7615942, 0.9051483,
                 0.9981779, 1, 1},
                {14});
}
TEST_P(ElementwiseActivationTest, KeepsShapeOf2d) {
  auto y = act::gelu(x().reshape<2>({2, -1}));
  expect_tensor(y,
                {0, 0, -0.0008142018, -0.1586553, -0.1542688, -0.05628272, 0, 0.06871728, 0.3457312, 0.8413447,
                 1.399789, 3.499186, 20, 100},
                {2, 7});
}

// ---- large inputs: exp(x) overflows f32 beyond 88 and f16 beyond 11 ---------------------------------
const std::vector<double> kLarge = {25, 30, 50, 88, 100, 300, 1000, -300, -1000};

class LargeInputActivationTest : public ActivationTest {
 protected:
  Tensor<1> x() const { return tensor<1>(kLarge, {kLarge.size()}); }
};

TEST_P(LargeInputActivationTest, SoftplusBeyondThreshold) {
  expect_tensor(act::softplus(x()), {25, 30, 50, 88, 100, 300, 1000, 5.1482e-131, 0}, {9});
  expect_tensor(act::softplus(x(), 0.5), {25.00001, 30, 50, 88, 100, 300, 1000, 1.435019e-65, 1.424915e-217}, {9});
}
TEST_P(LargeInputActivationTest, LogSigmoid) {
  expect_tensor(
      act::log_sigmoid(x()),
      {-1.388794e-11, -9.357623e-14, -1.92875e-22, -6.054602e-39, -3.720076e-44, -5.1482e-131, 0, -300, -1000}, {9});
}
TEST_P(LargeInputActivationTest, Mish) {
  expect_tensor(act::mish(x()), {25, 30, 50, 88, 100, 300, 1000, -1.54446e-128, 0}, {9});
}
TEST_P(LargeInputActivationTest, Silu) {
  expect_tensor(act::silu(x()), {25, 30, 50, 88, 100, 300, 1000, -1.54446e-128, 0}, {9});
}
TEST_P(LargeInputActivationTest, Sigmoid) {
  expect_tensor(act::sigmoid(x()), {1, 1, 1, 1, 1, 1, 1, 5.1482e-131, 0}, {9});
}

// ---- softmax / log_softmax ------------------------------------------------------------------------
// Rows 3 and 4 hold values near +-1000: exp overflows unless the max is subtracted.
const std::vector<double> kLogits = {1, 2, 3, 4, -1, 0.5, 0.25, -2, 992, 1000, 1008, 1000, -1000, -992, -1008, -1000};

class SoftmaxTest : public ActivationTest {
 protected:
  Tensor<2> x() const { return tensor<2>(kLogits, {4, 4}); }
  Tensor<3> x3() const { return tensor<3>(scaled(arange_values(12), 0.75), {2, 3, 2}) - 3.75; }
};

TEST_P(SoftmaxTest, SoftmaxLastDim) {
  expect_tensor(act::softmax(x(), 1),
                {0.0320586, 0.08714432, 0.2368828, 0.6439143, 0.1070674, 0.4798428, 0.3737019, 0.03938789, 1.124597e-7,
                 0.0003352377, 0.9993294, 0.0003352377, 0.0003352377, 0.9993294, 1.124597e-7, 0.0003352377},
                {4, 4});
  expect_tensor(act::softmax(x(), -1),
                {0.0320586, 0.08714432, 0.2368828, 0.6439143, 0.1070674, 0.4798428, 0.3737019, 0.03938789, 1.124597e-7,
                 0.0003352377, 0.9993294, 0.0003352377, 0.0003352377, 0.9993294, 1.124597e-7, 0.0003352377},
                {4, 4});
}
TEST_P(SoftmaxTest, SoftmaxFirstDim) {
  expect_tensor(act::softmax(x(), 0), {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0}, {4, 4});
}
TEST_P(SoftmaxTest, LogSoftmaxLastDim) {
  expect_tensor(act::log_softmax(x(), 1),
                {-3.44019, -2.44019, -1.44019, -0.4401897, -2.234297, -0.7342968, -0.9842968, -3.234297, -16.00067,
                 -8.000671, -0.0006708127, -8.000671, -8.000671, -0.0006708127, -16.00067, -8.000671},
                {4, 4});
  expect_tensor(act::log_softmax(x(), -1),
                {-3.44019, -2.44019, -1.44019, -0.4401897, -2.234297, -0.7342968, -0.9842968, -3.234297, -16.00067,
                 -8.000671, -0.0006708127, -8.000671, -8.000671, -0.0006708127, -16.00067, -8.000671},
                {4, 4});
}
TEST_P(SoftmaxTest, LogSoftmaxFirstDim) {
  expect_tensor(act::log_softmax(x(), 0),
                {-991, -998, -1005, -996, -993, -999.5, -1007.75, -1002, 0, 0, 0, 0, -1992, -1992, -2016, -2000},
                {4, 4});
}
TEST_P(SoftmaxTest, MiddleDimOf3d) {
  expect_tensor(act::softmax(x3(), 1),
                {0.03911257, 0.03911257, 0.1752904, 0.1752904, 0.785597, 0.785597, 0.03911257, 0.03911257, 0.1752904,
                 0.1752904, 0.785597, 0.785597},
                {2, 3, 2});
  expect_tensor(act::log_softmax(x3(), 1),
                {-3.241311, -3.241311, -1.741311, -1.741311, -0.2413113, -0.2413113, -3.241311, -3.241311, -1.741311,
                 -1.741311, -0.2413113, -0.2413113},
                {2, 3, 2});
}
TEST_P(SoftmaxTest, TransposedInput) {
  // softmax over dim 0 of the transpose equals the transpose of softmax over dim 1.
  auto t = x().transpose();
  auto expected = act::softmax(x(), 1).transpose().to_data().convert(DType::F64).to_vec<double>();
  expect_tensor(act::softmax(t, 0), expected, {4, 4});
}
TEST_P(SoftmaxTest, RowsSumToOne) {
  auto sums = act::softmax(x(), 1).sum_dim(1);
  expect_tensor(sums, {1, 1, 1, 1}, {4, 1});
}

TEST_P(SoftmaxTest, MaskedEntries) {
  // -inf logits (attention masks) get probability 0 and log-probability -inf.
  auto m = tensor<2>({-kInf, 0, 1, -kInf, 2, -kInf, 2, 0}, {2, 4});
  expect_tensor(act::softmax(m, 1), {0, 0.2689414, 0.7310586, 0, 0.4683105, 0, 0.4683105, 0.06337894}, {2, 4});
  expect_tensor(act::log_softmax(m, 1), {-kInf, -1.313262, -0.3132617, -kInf, -0.7586237, -kInf, -0.7586237, -2.758624},
                {2, 4});
}

using ActivationErrorTest = ActivationTest;
TEST_P(ActivationErrorTest, SoftmaxDimOutOfRange) {
  const auto t = tensor<2>(kLogits, {4, 4});
  EXPECT_THROW(act::softmax(t, 2), Error);
  EXPECT_THROW(act::log_softmax(t, -3), Error);
}

BURN_MODULE_SUITE(ElementwiseActivationTest);
BURN_MODULE_SUITE(LargeInputActivationTest);
BURN_MODULE_SUITE(SoftmaxTest);
BURN_MODULE_SUITE(ActivationErrorTest);

}  // namespace
}  // namespace burn::testing::modules
