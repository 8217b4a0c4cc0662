// Long reductions in f16 / bf16 must accumulate in f32 (as PyTorch does on
// CPU and as burn's half types promise): partial sums here grow large and
// then cancel, so rounding each partial sum to 16 bits would be far outside
// the tolerance. Inputs are exact in every float dtype; expected values are
// computed here in double.
#include <cmath>

#include "module_test_util.hpp"

namespace burn::testing::modules {
namespace {

using AccumulationTest = ModuleTest;

/// 1, 1.25, 1.5 or 1.75: exact in bf16.
double level(std::size_t i) { return 1.0 + static_cast<double>(i % 4) / 4.0; }

TEST_P(AccumulationTest, Conv1dOverManyChannels) {
  const std::size_t n = 2, c_in = 256, c_out = 3, len = 9, k = 5, pad = 2;
  std::vector<double> x(n * c_in * len), w(c_out * c_in * k);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = level(i / 3);
  // The first half of the channels adds, the second half subtracts: partial
  // sums reach ~1000 before cancelling.
  for (std::size_t o = 0; o < c_out; ++o)
    for (std::size_t c = 0; c < c_in; ++c)
      for (std::size_t j = 0; j < k; ++j)
        w[(o * c_in + c) * k + j] = (c < c_in / 2 ? 1.0 : -1.0) * (1.0 + static_cast<double>((o + j + c) % 3) / 8.0);
  std::vector<double> expected(n * c_out * len, 0.0);
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t o = 0; o < c_out; ++o)
      for (std::size_t l = 0; l < len; ++l) {
        double acc = 0;
        for (std::size_t c = 0; c < c_in; ++c)
          for (std::size_t j = 0; j < k; ++j) {
            const auto pos = static_cast<std::ptrdiff_t>(l + j) - static_cast<std::ptrdiff_t>(pad);
            if (pos >= 0 && pos < static_cast<std::ptrdiff_t>(len))
              acc += x[(b * c_in + c) * len + static_cast<std::size_t>(pos)] * w[(o * c_in + c) * k + j];
          }
        expected[(b * c_out + o) * len + l] = acc;
      }
  auto out = module::conv1d(tensor<3>(x, {n, c_in, len}), tensor<3>(w, {c_out, c_in, k}), std::nullopt,
                            module::ConvOptions<1>({1}, {pad}, {1}));
  expect_tensor(out, expected, {n, c_out, len});
}

TEST_P(AccumulationTest, LinearOverLongRows) {
  const std::size_t rows = 3, d_in = 2048, d_out = 2;
  std::vector<double> x(rows * d_in), w(d_in * d_out), expected(rows * d_out, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = level(i);
  for (std::size_t i = 0; i < d_in; ++i)
    for (std::size_t o = 0; o < d_out; ++o)
      w[i * d_out + o] = (i < d_in / 2 ? 1.0 : -1.0) * (1.0 + static_cast<double>((i + o) % 5) / 8.0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t o = 0; o < d_out; ++o)
      for (std::size_t i = 0; i < d_in; ++i) expected[r * d_out + o] += x[r * d_in + i] * w[i * d_out + o];
  expect_tensor(module::linear(tensor<2>(x, {rows, d_in}), tensor<2>(w, {d_in, d_out}), std::nullopt), expected,
                {rows, d_out});
}

TEST_P(AccumulationTest, GlobalAveragePools) {
  // A 64 x 64 plane: its sum (~5600) is far beyond where f16 resolves 1.375.
  const std::size_t c = 2, side = 64;
  std::vector<double> x(c * side * side), mean(c, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = level(i * 7 + i / 5);
  for (std::size_t i = 0; i < x.size(); ++i) mean[i / (side * side)] += x[i] / (side * side);
  auto t = tensor<4>(x, {1, c, side, side});
  expect_tensor(module::adaptive_avg_pool2d(t, {1, 1}), mean, {1, c, 1, 1});
  expect_tensor(module::avg_pool2d(t, {side, side}, {side, side}), mean, {1, c, 1, 1});
  expect_tensor(module::adaptive_avg_pool1d(t.reshape<3>({1, static_cast<std::int64_t>(c), -1}), 1), mean, {1, c, 1});
}

TEST_P(AccumulationTest, SoftmaxOverLongRow) {
  // 4096 equal logits: each probability is exactly 1/4096 only if the
  // normalising sum is accurate.
  const std::size_t n = 4096;
  auto t = tensor<2>(std::vector<double>(n, 0.5), {1, n});
  expect_tensor(activation::softmax(t, 1), std::vector<double>(n, 1.0 / n), {1, n}, Tolerance{0.01, 1e-6});
  expect_tensor(activation::log_softmax(t, 1), std::vector<double>(n, -std::log(static_cast<double>(n))), {1, n});
}

BURN_MODULE_SUITE(AccumulationTest);

}  // namespace
}  // namespace burn::testing::modules
