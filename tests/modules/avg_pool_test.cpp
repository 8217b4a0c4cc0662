// avg_pool1d / avg_pool2d (count_include_pad both ways, ceil_mode) and
// adaptive_avg_pool1d / 2d against float64 PyTorch values. Inputs are
// arange(0, n) as in Burn's tests; cases marked "Burn" port them.
#include "module_test_util.hpp"

namespace burn::testing::modules {
namespace {

using AvgPool1dTest = ModuleTest;
using AvgPool2dTest = ModuleTest;
using AdaptiveAvgPoolTest = ModuleTest;

// ---- avg_pool1d -----------------------------------------------------------------------------------
TEST_P(AvgPool1dTest, Simple) {  // Burn
  expect_tensor(module::avg_pool1d(arange<3>({1, 1, 6}), 3, 1, 0, true), {1, 2, 3, 4}, {1, 1, 4});
}
TEST_P(AvgPool1dTest, PaddingCountIncludePad) {  // Burn
  expect_tensor(module::avg_pool1d(arange<3>({1, 2, 6}), 3, 2, 1, true), {0.3333333, 2, 4, 4.333333, 8, 10}, {1, 2, 3});
}
TEST_P(AvgPool1dTest, PaddingExcludePad) {  // Burn
  expect_tensor(module::avg_pool1d(arange<3>({1, 2, 6}), 3, 2, 1, false), {0.5, 2, 4, 6.5, 8, 10}, {1, 2, 3});
}
TEST_P(AvgPool1dTest, CeilModeExcludePad) {  // Burn: the partial last window averages 2 values
  expect_tensor(module::avg_pool1d(arange<3>({1, 1, 6}), 3, 2, 0, false, true), {1, 3, 4.5}, {1, 1, 3});
}
TEST_P(AvgPool1dTest, CeilModeCountIncludePad) {  // Burn
  // The last window covers the value 5, one padding slot and one slot past the
  // padding; only the first two count (PyTorch divides by 2).
  expect_tensor(module::avg_pool1d(arange<3>({1, 1, 6}), 3, 2, 1, true, true), {0.3333333, 2, 4, 2.5}, {1, 1, 4});
}
TEST_P(AvgPool1dTest, CeilModeCountIncludePadWithoutPadding) {
  expect_tensor(module::avg_pool1d(arange<3>({1, 1, 6}), 3, 2, 0, true, true), {1, 3, 4.5}, {1, 1, 3});
}

// ---- avg_pool2d -----------------------------------------------------------------------------------
TEST_P(AvgPool2dTest, Simple) {  // Burn
  expect_tensor(module::avg_pool2d(arange<4>({1, 1, 6, 6}), {3, 3}, {1, 1}, {0, 0}, true),
                {7, 8, 9, 10, 13, 14, 15, 16, 19, 20, 21, 22, 25, 26, 27, 28}, {1, 1, 4, 4});
}
TEST_P(AvgPool2dTest, ComplexCountIncludePad) {  // Burn
  expect_tensor(module::avg_pool2d(arange<4>({1, 1, 4, 6}), {3, 4}, {1, 2}, {1, 2}, true),
                {1.166667, 3, 4.333333, 2.5, 3.25, 7.5, 9.5, 5.25, 6.25, 13.5, 15.5, 8.25, 5.166667, 11, 12.33333, 6.5},
                {1, 1, 4, 4});
}
TEST_P(AvgPool2dTest, ComplexExcludePad) {  // Burn
  expect_tensor(module::avg_pool2d(arange<4>({1, 1, 4, 6}), {3, 4}, {1, 2}, {1, 2}, false),
                {3.5, 4.5, 6.5, 7.5, 6.5, 7.5, 9.5, 10.5, 12.5, 13.5, 15.5, 16.5, 15.5, 16.5, 18.5, 19.5},
                {1, 1, 4, 4});
}
TEST_P(AvgPool2dTest, CeilModeCountIncludePad) {
  expect_tensor(module::avg_pool2d(arange<4>({2, 1, 5, 6}), {3, 2}, {2, 2}, {1, 1}, true, true),
                {1,  3,  4.333333, 2.666667, 6,  13.5, 15.5, 8.5,  7,  15, 16.33333, 8.666667,
                 11, 23, 24.33333, 12.66667, 21, 43.5, 45.5, 23.5, 17, 35, 36.33333, 18.66667},
                {2, 1, 3, 4});
}
TEST_P(AvgPool2dTest, CeilModeExcludePad) {
  expect_tensor(module::avg_pool2d(arange<4>({2, 1, 5, 6}), {3, 2}, {2, 2}, {1, 1}, false, true),
                {3,  4.5,  6.5,  8,  12, 13.5, 15.5, 17, 21, 22.5, 24.5, 26,
                 33, 34.5, 36.5, 38, 42, 43.5, 45.5, 47, 51, 52.5, 54.5, 56},
                {2, 1, 3, 4});
}
TEST_P(AvgPool2dTest, CeilModeWithoutPadding) {
  expect_tensor(module::avg_pool2d(arange<4>({1, 2, 5, 5}), {2, 2}, {2, 2}, {0, 0}, true, true),
                {3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24, 28, 30, 31.5, 38, 40, 41.5, 45.5, 47.5, 49}, {1, 2, 3, 3});
}
TEST_P(AvgPool2dTest, SlicedInput) {
  // Columns 1, 3, 5, ... of a wider tensor: a strided, offset view.
  auto wide = arange<4>({1, 1, 4, 13});
  auto x = wide.slice({Range::all(), Range::all(), Range::all(), Range(1, 13, 2)});
  // x[h, w] = 13 h + 2 w + 1, so the 2x2 window at (h0, w0) holds that value
  // plus 0, 2, 13 and 15: its mean is 13 h0 + 2 w0 + 1 + 7.5.
  std::vector<double> expected;
  for (double h : {0.0, 2.0})
    for (double w : {0.0, 2.0, 4.0}) expected.push_back(13 * h + 2 * w + 8.5);
  expect_tensor(module::avg_pool2d(x, {2, 2}, {2, 2}), expected, {1, 1, 2, 3});
}
TEST_P(AvgPool2dTest, EmptyChannels) {
  expect_tensor(module::avg_pool2d(tensor<4>({}, {2, 0, 4, 4}), {2, 2}, {2, 2}), {}, {2, 0, 2, 2});
}

// ---- adaptive_avg_pool1d / 2d ---------------------------------------------------------------------
TEST_P(AdaptiveAvgPoolTest, OneDimSimple) {  // Burn
  expect_tensor(module::adaptive_avg_pool1d(arange<3>({1, 2, 8}), 4), {0.5, 2.5, 4.5, 6.5, 8.5, 10.5, 12.5, 14.5},
                {1, 2, 4});
}
TEST_P(AdaptiveAvgPoolTest, OneDimNonDividing) {  // Burn: windows overlap
  expect_tensor(module::adaptive_avg_pool1d(arange<3>({1, 2, 7}), 3), {1, 3, 5, 8, 10, 12}, {1, 2, 3});
}
TEST_P(AdaptiveAvgPoolTest, OneDimBiggerOutput) {  // Burn
  expect_tensor(module::adaptive_avg_pool1d(arange<3>({1, 2, 4}), 8), {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7},
                {1, 2, 8});
}
TEST_P(AdaptiveAvgPoolTest, OneDimOddBatch) {
  expect_tensor(module::adaptive_avg_pool1d(arange<3>({2, 1, 10}), 4), {1, 3, 6, 8, 11, 13, 16, 18}, {2, 1, 4});
}
TEST_P(AdaptiveAvgPoolTest, OneDimGlobal) {
  expect_tensor(module::adaptive_avg_pool1d(arange<3>({1, 3, 5}), 1), {2, 7, 12}, {1, 3, 1});
}
TEST_P(AdaptiveAvgPoolTest, TwoDimSimple) {  // Burn
  expect_tensor(module::adaptive_avg_pool2d(arange<4>({1, 2, 8, 6}), {4, 4}),
                {3.5,  4.5,  6.5,  7.5,  15.5, 16.5, 18.5, 19.5, 27.5, 28.5, 30.5, 31.5, 39.5, 40.5, 42.5, 43.5,
                 51.5, 52.5, 54.5, 55.5, 63.5, 64.5, 66.5, 67.5, 75.5, 76.5, 78.5, 79.5, 87.5, 88.5, 90.5, 91.5},
                {1, 2, 4, 4});
}
TEST_P(AdaptiveAvgPoolTest, TwoDimNonDividing) {  // Burn
  expect_tensor(module::adaptive_avg_pool2d(arange<4>({1, 2, 5, 7}), {3, 2}),
                {5, 8, 15.5, 18.5, 26, 29, 40, 43, 50.5, 53.5, 61, 64}, {1, 2, 3, 2});
}
TEST_P(AdaptiveAvgPoolTest, TwoDimBiggerOutput) {  // Burn
  expect_tensor(module::adaptive_avg_pool2d(arange<4>({1, 2, 4, 3}), {5, 4}),
                {0,  0.5,  1.5,  2,  1.5,  2,  3,  3.5,  4.5,  5,  6,  6.5,  7.5,  8,  9,  9.5,  9,  9.5,  10.5, 11,
                 12, 12.5, 13.5, 14, 13.5, 14, 15, 15.5, 16.5, 17, 18, 18.5, 19.5, 20, 21, 21.5, 21, 21.5, 22.5, 23},
                {1, 2, 5, 4});
}
TEST_P(AdaptiveAvgPoolTest, TwoDimOddSizes) {
  expect_tensor(module::adaptive_avg_pool2d(arange<4>({2, 1, 7, 5}), {3, 4}),
                {5.5,  6.5,  7.5,  8.5,  15.5, 16.5, 17.5, 18.5, 25.5, 26.5, 27.5, 28.5,
                 40.5, 41.5, 42.5, 43.5, 50.5, 51.5, 52.5, 53.5, 60.5, 61.5, 62.5, 63.5},
                {2, 1, 3, 4});
}
TEST_P(AdaptiveAvgPoolTest, TwoDimGlobal) {
  expect_tensor(module::adaptive_avg_pool2d(arange<4>({1, 2, 3, 4}), {1, 1}), {5.5, 17.5}, {1, 2, 1, 1});
}
TEST_P(AdaptiveAvgPoolTest, TransposedInput) {
  // [1, 2, 5, 7] data read through swapped spatial dims: [1, 2, 7, 5].
  auto x = arange<4>({1, 2, 5, 7}).swap_dims(2, 3);
  auto out = module::adaptive_avg_pool2d(x, {2, 3});
  auto reference = module::adaptive_avg_pool2d(arange<4>({1, 2, 5, 7}), {3, 2}).swap_dims(2, 3);
  expect_data(out.to_data(),
              [&] {
                TensorData r = reference.to_data().convert(DType::F64);
                return r.to_vec<double>();
              }(),
              {1, 2, 2, 3});
}

BURN_MODULE_SUITE(AvgPool1dTest);
BURN_MODULE_SUITE(AvgPool2dTest);
BURN_MODULE_SUITE(AdaptiveAvgPoolTest);

}  // namespace
}  // namespace burn::testing::modules
