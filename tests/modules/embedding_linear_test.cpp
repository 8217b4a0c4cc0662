// embedding and linear against float64 PyTorch values. linear takes Burn's
// weight layout [d_in, d_out].
#include "module_test_util.hpp"

namespace burn::testing::modules {
namespace {

using EmbeddingTest = ModuleTest;

// ---- embedding ------------------------------------------------------------------------------------
TEST_P(EmbeddingTest, LooksUpRows) {
  auto weights = tensor<2>(scaled(arange_values(15), 0.25), {5, 3}) - 1.75;
  auto indices = int_tensor<2>({0, 2, 4, 4, 4, 1}, {2, 3}, device());
  expect_tensor(
      module::embedding(weights, indices),
      {-1.75, -1.5, -1.25, -0.25, 0, 0.25, 1.25, 1.5, 1.75, 1.25, 1.5, 1.75, 1.25, 1.5, 1.75, -1, -0.75, -0.5},
      {2, 3, 3});
}
TEST_P(EmbeddingTest, Int32Indices) {
  auto weights = tensor<2>(scaled(arange_values(15), 0.25), {5, 3}) - 1.75;
  auto indices = int_tensor<2>({0, 2, 4, 4, 4, 1}, {2, 3}, device(), DType::I32);
  expect_tensor(
      module::embedding(weights, indices),
      {-1.75, -1.5, -1.25, -0.25, 0, 0.25, 1.25, 1.5, 1.75, 1.25, 1.5, 1.75, 1.25, 1.5, 1.75, -1, -0.75, -0.5},
      {2, 3, 3});
}
TEST_P(EmbeddingTest, EmptyIndices) {
  auto weights = arange<2>({5, 3});
  auto indices = int_tensor<2>({}, {2, 0}, device());
  expect_tensor(module::embedding(weights, indices), {}, {2, 0, 3});
}

// ---- linear ---------------------------------------------------------------------------------------
class LinearCase : public ModuleTest {
 protected:
  Tensor<2> weight() const { return tensor<2>(scaled(arange_values(12), 0.5), {3, 4}) - 2.5; }
  Tensor<1> bias() const { return tensor<1>({0.5, -1.0, 2.0, 0.0}, {4}); }
};
using LinearForwardTest = LinearCase;

TEST_P(LinearForwardTest, TwoDimWithBias) {
  auto x = tensor<2>(scaled(arange_values(6), 0.5), {2, 3}) - 1.0;
  expect_tensor(module::linear(x, weight(), bias()), {3.25, 1, 3.25, 0.5, 1, 1, 5.5, 5}, {2, 4});
}
TEST_P(LinearForwardTest, TwoDimWithoutBias) {
  auto x = tensor<2>(scaled(arange_values(6), 0.5), {2, 3}) - 1.0;
  expect_tensor(module::linear(x, weight(), std::nullopt), {2.75, 2, 1.25, 0.5, 0.5, 2, 3.5, 5}, {2, 4});
}
TEST_P(LinearForwardTest, ThreeDimWithBias) {
  auto x = tensor<3>(scaled(arange_values(12), 0.25), {2, 2, 3}) - 1.5;
  expect_tensor(module::linear(x, weight(), bias()),
                {3.375, 0, 1.125, -2.75, 2.25, 0, 2.25, -0.5, 1.125, 0, 3.375, 1.75, 0, 0, 4.5, 4}, {2, 2, 4});
}
TEST_P(LinearForwardTest, ThreeDimWithoutBias) {
  auto x = tensor<3>(scaled(arange_values(12), 0.25), {2, 2, 3}) - 1.5;
  expect_tensor(module::linear(x, weight(), std::nullopt),
                {2.875, 1, -0.875, -2.75, 1.75, 1, 0.25, -0.5, 0.625, 1, 1.375, 1.75, -0.5, 1, 2.5, 4}, {2, 2, 4});
}
TEST_P(LinearForwardTest, OneDim) {
  expect_tensor(module::linear(tensor<1>({1, -2, 0.5}, {3}), weight(), bias()), {-0.25, -2, 0.75, -1.5}, {4});
}
TEST_P(LinearForwardTest, BurnSmallCases) {  // Burn's linear tests
  auto w = tensor<2>({1, 2, 3, 4}, {2, 2});
  auto x = tensor<3>({1, 2, 3, 4, -1, -2, -3, -4}, {2, 2, 2});
  expect_tensor(module::linear(x, w, std::nullopt), {7, 10, 15, 22, -7, -10, -15, -22}, {2, 2, 2});
  expect_tensor(module::linear(x, w, tensor<1>({1, -1}, {2})), {8, 9, 16, 21, -6, -11, -14, -23}, {2, 2, 2});
  expect_tensor(module::linear(tensor<1>({1, 2}, {2}), w, std::nullopt), {7, 10}, {2});
}
TEST_P(LinearForwardTest, TransposedInput) {
  // x^T stored as [3, 2] and transposed back: a non-contiguous [2, 3] input.
  auto xt = tensor<2>({-1, 0.5, -0.5, 1, 0, 1.5}, {3, 2});
  expect_tensor(module::linear(xt.transpose(), weight(), bias()), {3.25, 1, 3.25, 0.5, 1, 1, 5.5, 5}, {2, 4});
}
TEST_P(LinearForwardTest, EmptyBatch) {
  expect_tensor(module::linear(tensor<2>({}, {0, 3}), weight(), bias()), {}, {0, 4});
}

BURN_MODULE_SUITE(EmbeddingTest);
BURN_MODULE_SUITE(LinearForwardTest);

}  // namespace
}  // namespace burn::testing::modules
