// max_pool1d / max_pool2d (values and PyTorch-style flat indices) against
// float64 PyTorch values. Cases marked "Burn" port Burn's module tests.
#include "module_test_util.hpp"

#include <cmath>
#include <limits>

namespace burn::testing::modules {
namespace {

using MaxPool1dTest = ModuleTest;
using MaxPool2dTest = ModuleTest;

const std::vector<double> kRows6{0.9861, 0.5474, 0.4477, 0.0732, 0.3548, 0.8221,
                                 0.8148, 0.5474, 0.9490, 0.7890, 0.5537, 0.5689};

// ---- max_pool1d -----------------------------------------------------------------------------------
TEST_P(MaxPool1dTest, Simple) {  // Burn
  auto out = module::max_pool1d(tensor<3>(kRows6, {1, 2, 6}), 3, 1, 0, 1);
  expect_tensor(out, {0.9861, 0.5474, 0.4477, 0.8221, 0.949, 0.949, 0.949, 0.789}, {1, 2, 4});
}
TEST_P(MaxPool1dTest, PaddingStride) {  // Burn
  auto out = module::max_pool1d(tensor<3>({0.6309, 0.6112, 0.6998, 0.4708}, {1, 1, 4}), 3, 2, 1, 1);
  expect_tensor(out, {0.6309, 0.6998}, {1, 1, 2});
}
TEST_P(MaxPool1dTest, NegativeValuesIgnorePadding) {  // Burn: padding never wins, even over negatives
  auto out = module::max_pool1d(tensor<3>({-0.6309, -0.6112, -0.6998, -0.4708}, {1, 1, 4}), 3, 1, 1, 1);
  expect_tensor(out, {-0.6112, -0.6112, -0.4708, -0.4708}, {1, 1, 4});
}
TEST_P(MaxPool1dTest, Dilation) {  // Burn
  auto out = module::max_pool1d(tensor<3>(kRows6, {1, 2, 6}), 2, 1, 1, 2);
  expect_tensor(out, {0.5474, 0.9861, 0.5474, 0.4477, 0.8221, 0.3548, 0.5474, 0.949, 0.789, 0.949, 0.789, 0.5537},
                {1, 2, 6});
}
TEST_P(MaxPool1dTest, WithIndices) {  // Burn
  auto [out, idx] = module::max_pool1d_with_indices(tensor<3>({0.2479, 0.6386, 0.3166, 0.5742}, {1, 1, 4}), 2, 1);
  expect_tensor(out, {0.6386, 0.6386, 0.5742}, {1, 1, 3});
  expect_tensor(idx, {1, 1, 3}, {1, 1, 3});
}
TEST_P(MaxPool1dTest, ComplexWithIndices) {  // Burn
  auto [out, idx] =
      module::max_pool1d_with_indices(tensor<3>({0.5388, 0.0676, 0.7122, 0.8316, 0.0653}, {1, 1, 5}), 4, 1, 2, 1);
  expect_tensor(out, {0.5388, 0.7122, 0.8316, 0.8316, 0.8316, 0.8316}, {1, 1, 6});
  expect_tensor(idx, {0, 2, 3, 3, 3, 3}, {1, 1, 6});
}
TEST_P(MaxPool1dTest, CeilMode) {  // Burn
  auto x = tensor<3>({1, 2, 3, 4, 5, 6}, {1, 1, 6});
  expect_tensor(module::max_pool1d(x, 3, 2, 0, 1, false), {3, 5}, {1, 1, 2});
  expect_tensor(module::max_pool1d(x, 3, 2, 0, 1, true), {3, 5, 6}, {1, 1, 3});
}
TEST_P(MaxPool1dTest, CeilModePaddingDilationWithIndices) {
  auto x = tensor<3>({0,          0.841471,   0.9092974,  0.14112,    -0.7568025, -0.9589243, -0.2794155,   0.6569866,
                      0.9893582,  0.4121185,  -0.5440211, -0.9999902, -0.5365729, 0.420167,   0.9906074,    0.6502878,
                      -0.2879033, -0.9613975, -0.7509872, 0.1498772,  0.9129453,  0.8366556,  -0.008851309, -0.8462204,
                      -0.9055784, -0.1323518, 0.7625585,  0.9563759,  0.2709058,  -0.6636339, -0.9880316,   -0.4040376,
                      0.5514267,  0.9999119,  0.5290827,  -0.4281827, -0.9917789, -0.6435381, 0.2963686,    0.9637954},
                     {2, 2, 10});
  auto [out, idx] = module::max_pool1d_with_indices(x, 3, 3, 1, 2, true);
  expect_tensor(out,
                {0.841471, 0.9092974, 0.6569866, 0.9893582, 0.420167, 0.9906074, 0.6502878, -0.7509872, 0.8366556,
                 0.7625585, 0.9563759, 0.2709058, 0.9999119, 0.5514267, 0.9637954, 0.2963686},
                {2, 2, 4});
  expect_tensor(idx, {1, 2, 7, 8, 3, 4, 5, 8, 1, 6, 7, 8, 3, 2, 9, 8}, {2, 2, 4});
}

TEST_P(MaxPool1dTest, NaNPropagates) {
  // As in PyTorch, a NaN in a window is that window's maximum.
  auto x = tensor<3>({1, kNaN, 3, 2, kNaN, 0.5}, {1, 1, 6});
  auto [out, idx] = module::max_pool1d_with_indices(x, 2, 1);
  expect_tensor(out, {kNaN, kNaN, 3, kNaN, kNaN}, {1, 1, 5});
  expect_tensor(idx, {1, 1, 2, 4, 4}, {1, 1, 5});
}

// ---- max_pool2d -----------------------------------------------------------------------------------
TEST_P(MaxPool2dTest, Simple) {  // Burn
  auto x = tensor<4>(
      {0.9861, 0.5474, 0.4477, 0.0732, 0.3548, 0.8221, 0.8148, 0.5474, 0.949,  0.789,  0.5537, 0.5689, 0.5986, 0.2059,
       0.4897, 0.6136, 0.2965, 0.6182, 0.1485, 0.954,  0.4023, 0.6176, 0.7111, 0.3392, 0.3703, 0.0472, 0.2771, 0.1868,
       0.8855, 0.5605, 0.5063, 0.1638, 0.9432, 0.7836, 0.8696, 0.1068, 0.8872, 0.0137, 0.1652, 0.5505, 0.6127, 0.6473,
       0.1128, 0.0888, 0.1152, 0.5456, 0.6199, 0.7947, 0.5911, 0.7781, 0.7256, 0.6578, 0.0989, 0.9149, 0.5879, 0.5189,
       0.6561, 0.0578, 0.7025, 0.6426, 0.959,  0.0325, 0.6455, 0.6248, 0.2009, 0.1544, 0.7339, 0.1369, 0.6598, 0.5528,
       0.6775, 0.1572, 0.6853, 0.6439, 0.4639, 0.5573, 0.2723, 0.591,  0.5419, 0.7729, 0.6743, 0.8956, 0.2997, 0.9546,
       0.0334, 0.2178, 0.6917, 0.4958, 0.3357, 0.6584, 0.7358, 0.9074, 0.2462, 0.5159, 0.642,  0.2441, 0.7602, 0.6297,
       0.6073, 0.5937, 0.8037, 0.4881, 0.8859, 0.0974, 0.3954, 0.6763, 0.1078, 0.7467, 0.2991, 0.5012, 0.8024, 0.7653,
       0.9378, 0.7952, 0.7393, 0.2336, 0.9521, 0.2719, 0.8445, 0.0454, 0.6479, 0.9822, 0.7905, 0.0318, 0.2474, 0.0628,
       0.9955, 0.7591, 0.414,  0.3215, 0.4349, 0.1527, 0.8064, 0.0164, 0.4002, 0.2024, 0.6128, 0.5827, 0.5368, 0.7895,
       0.8727, 0.7793, 0.091,  0.3421},
      {2, 2, 6, 6});
  expect_tensor(
      module::max_pool2d(x, {3, 3}, {1, 1}, {1, 1}, {1, 1}),
      {0.9861, 0.9861, 0.949,  0.949,  0.8221, 0.8221, 0.9861, 0.9861, 0.949,  0.949,  0.8221, 0.8221, 0.954,  0.954,
       0.954,  0.949,  0.789,  0.7111, 0.954,  0.954,  0.954,  0.8855, 0.8855, 0.8855, 0.954,  0.954,  0.954,  0.9432,
       0.8855, 0.8855, 0.5063, 0.9432, 0.9432, 0.9432, 0.8855, 0.8855, 0.8872, 0.8872, 0.5505, 0.6199, 0.7947, 0.7947,
       0.8872, 0.8872, 0.7781, 0.7256, 0.9149, 0.9149, 0.7781, 0.7781, 0.7781, 0.7256, 0.9149, 0.9149, 0.959,  0.959,
       0.7781, 0.7256, 0.9149, 0.9149, 0.959,  0.959,  0.6598, 0.7025, 0.7025, 0.7025, 0.959,  0.959,  0.6598, 0.6775,
       0.6775, 0.6775, 0.7729, 0.7729, 0.8956, 0.8956, 0.9546, 0.9546, 0.7729, 0.7729, 0.8956, 0.8956, 0.9546, 0.9546,
       0.9074, 0.9074, 0.9074, 0.8956, 0.9546, 0.9546, 0.9074, 0.9074, 0.9074, 0.8037, 0.8037, 0.8037, 0.9074, 0.9074,
       0.9074, 0.8037, 0.8037, 0.8037, 0.8859, 0.8859, 0.6763, 0.8037, 0.8037, 0.8037, 0.7393, 0.9521, 0.9521, 0.9521,
       0.9378, 0.9378, 0.9822, 0.9822, 0.9822, 0.9521, 0.9378, 0.9378, 0.9955, 0.9955, 0.9822, 0.9521, 0.8445, 0.8445,
       0.9955, 0.9955, 0.9822, 0.7905, 0.6128, 0.6128, 0.9955, 0.9955, 0.8727, 0.8727, 0.7793, 0.6128, 0.8064, 0.8727,
       0.8727, 0.8727, 0.7793, 0.6128},
      {2, 2, 6, 6});
}

const std::vector<double> kTall{0.6309, 0.6112, 0.6998, 0.4708, 0.9161, 0.5402, 0.4577, 0.7397, 0.9870,
                                0.6380, 0.4352, 0.5884, 0.6277, 0.5139, 0.4525, 0.9333, 0.9846, 0.5006};

TEST_P(MaxPool2dTest, DifferentPaddingStrideKernel) {  // Burn
  auto out = module::max_pool2d(tensor<4>(kTall, {1, 1, 6, 3}), {3, 1}, {1, 2}, {1, 0}, {1, 1});
  expect_tensor(out, {0.6309, 0.6998, 0.6309, 0.987, 0.638, 0.987, 0.638, 0.987, 0.9333, 0.5884, 0.9333, 0.5006},
                {1, 1, 6, 2});
}
TEST_P(MaxPool2dTest, NegativeValuesIgnorePadding) {  // Burn
  auto out = module::max_pool2d(tensor<4>(scaled(kTall, -1), {1, 1, 6, 3}), {3, 3}, {1, 1}, {1, 1}, {1, 1});
  expect_tensor(out,
                {-0.4708, -0.4708, -0.5402, -0.4577, -0.4577, -0.5402, -0.4352, -0.4352, -0.4352, -0.4352, -0.4352,
                 -0.4352, -0.4352, -0.4352, -0.4352, -0.5139, -0.4525, -0.4525},
                {1, 1, 6, 3});
}
TEST_P(MaxPool2dTest, Dilation) {  // Burn
  auto x = tensor<4>({0.9861, 0.9861, 0.949, 0.949,  0.8221, 0.8221, 0.9861, 0.9861, 0.949,  0.949,  0.8221, 0.8221,
                      0.954,  0.954,  0.954, 0.949,  0.789,  0.7111, 0.954,  0.954,  0.954,  0.8855, 0.8855, 0.8855,
                      0.954,  0.954,  0.954, 0.9432, 0.8855, 0.8855, 0.5063, 0.9432, 0.9432, 0.9432, 0.8855, 0.8855},
                     {1, 1, 6, 6});
  expect_tensor(module::max_pool2d(x, {2, 2}, {1, 1}, {0, 0}, {2, 2}),
                {0.9861, 0.9861, 0.954, 0.949, 0.9861, 0.9861, 0.954, 0.949, 0.954, 0.954, 0.954, 0.949, 0.954, 0.954,
                 0.954, 0.9432},
                {1, 1, 4, 4});
}
TEST_P(MaxPool2dTest, WithIndicesPadded) {  // Burn
  auto x = tensor<4>({0.2479, 0.6386, 0.3166, 0.5742, 0.7065, 0.1940, 0.6305, 0.8959, 0.5416, 0.8602, 0.8129, 0.1662,
                      0.3358, 0.3059, 0.8293, 0.0990},
                     {1, 1, 4, 4});
  auto [out, idx] = module::max_pool2d_with_indices(x, {2, 2}, {1, 1}, {1, 1}, {1, 1});
  expect_tensor(out,
                {0.2479, 0.6386, 0.6386, 0.5742, 0.5742, 0.7065, 0.7065, 0.6386, 0.8959, 0.8959, 0.7065, 0.8602, 0.8602,
                 0.8959, 0.8959, 0.5416, 0.8602, 0.8602, 0.8293, 0.1662, 0.3358, 0.3358, 0.8293, 0.8293, 0.099},
                {1, 1, 5, 5});
  expect_tensor(idx, {0, 1, 1, 3, 3, 4, 4, 1, 7, 7, 4, 9, 9, 7, 7, 8, 9, 9, 14, 11, 12, 12, 14, 14, 15}, {1, 1, 5, 5});
}
TEST_P(MaxPool2dTest, ComplexWithIndices) {  // Burn
  auto x =
      tensor<4>({0.5388, 0.0676, 0.7122, 0.8316, 0.0653, 0.9154, 0.1536, 0.9089, 0.8016, 0.7518, 0.2073, 0.0501, 0.8811,
                 0.5604, 0.5075, 0.4384, 0.9963, 0.9698, 0.4988, 0.2609, 0.3391, 0.2230, 0.4610, 0.5365, 0.6880},
                {1, 1, 5, 5});
  auto [out, idx] = module::max_pool2d_with_indices(x, {4, 2}, {1, 2}, {2, 1}, {1, 1});
  expect_tensor(out,
                {0.9154, 0.9089, 0.8316, 0.9154, 0.9089, 0.8316, 0.9154, 0.9963, 0.8316, 0.9154, 0.9963, 0.8016, 0.4384,
                 0.9963, 0.688, 0.4384, 0.9963, 0.688},
                {1, 1, 6, 3});
  expect_tensor(idx, {5, 7, 3, 5, 7, 3, 5, 16, 3, 5, 16, 8, 15, 16, 24, 15, 16, 24}, {1, 1, 6, 3});
}
TEST_P(MaxPool2dTest, CeilModeWithIndices) {  // Burn
  auto x = arange<4>({1, 1, 6, 6});
  auto [floor_out, floor_idx] = module::max_pool2d_with_indices(x, {3, 3}, {2, 2}, {0, 0}, {1, 1}, false);
  expect_tensor(floor_out, {14, 16, 26, 28}, {1, 1, 2, 2});
  expect_tensor(floor_idx, {14, 16, 26, 28}, {1, 1, 2, 2});
  auto [ceil_out, ceil_idx] = module::max_pool2d_with_indices(x, {3, 3}, {2, 2}, {0, 0}, {1, 1}, true);
  expect_tensor(ceil_out, {14, 16, 17, 26, 28, 29, 32, 34, 35}, {1, 1, 3, 3});
  expect_tensor(ceil_idx, {14, 16, 17, 26, 28, 29, 32, 34, 35}, {1, 1, 3, 3});
  expect_tensor(module::max_pool2d(x, {3, 3}, {2, 2}, {0, 0}, {1, 1}, true), {14, 16, 17, 26, 28, 29, 32, 34, 35},
                {1, 1, 3, 3});
}
TEST_P(MaxPool2dTest, CeilModePaddingWithIndices) {  // Burn
  auto [out, idx] = module::max_pool2d_with_indices(arange<4>({1, 1, 5, 5}), {3, 3}, {2, 2}, {1, 1}, {1, 1}, true);
  expect_tensor(out, {6, 8, 9, 16, 18, 19, 21, 23, 24}, {1, 1, 3, 3});
  expect_tensor(idx, {6, 8, 9, 16, 18, 19, 21, 23, 24}, {1, 1, 3, 3});
}
TEST_P(MaxPool2dTest, CeilModeDropsWindowStartingInPadding) {
  // Rows: ceil((5 + 2 - 2) / 2) + 1 = 4 windows, but the 4th would start in the
  // bottom padding, so PyTorch keeps 3.
  auto x = tensor<4>(
      {1,          0.5403023,  -0.4161468,  -0.9899925, -0.6536436, 0.2836622,  0.9601703,   0.7539023,  -0.1455,
       -0.9111303, -0.8390715, 0.004425698, 0.843854,   0.9074468,  0.1367372,  -0.7596879,  -0.9576595, -0.2751633,
       0.6603167,  0.9887046,  0.4080821,   -0.5477293, -0.9999608, -0.532833,  0.424179,    0.9912028,  0.6469193,
       -0.2921388, -0.9626059, -0.7480575,  0.1542514,  0.9147424,  0.8342234,  -0.01327675, -0.8485703, -0.9036922,
       -0.1279637, 0.7654141,  0.9550736,   0.2666429,  -0.6669381, -0.9873393, -0.3999853,  0.5551133,  0.9998433,
       0.525322,   -0.4321779, -0.9923355,  -0.6401443, 0.3005925,  0.964966,   0.7421542,   -0.1629908, -0.9182828,
       -0.8293098, 0.02212676, 0.8532201,   0.8998668,  0.1191801,  -0.7710802},
      {1, 2, 5, 6});
  auto [out, idx] = module::max_pool2d_with_indices(x, {2, 3}, {2, 2}, {1, 1}, {1, 2}, true);
  expect_tensor(out,
                {0.5403023, 0.5403023, 0.2836622, 0.9074468, 0.9074468, 0.004425698, 0.9912028, 0.9912028, -0.2921388,
                 0.9147424, 0.9147424, -0.01327675, 0.7654141, 0.7654141, 0.525322, 0.8998668, 0.8998668, 0.8998668},
                {1, 2, 3, 3});
  expect_tensor(idx, {1, 1, 5, 13, 13, 11, 25, 25, 27, 1, 1, 3, 7, 7, 15, 27, 27, 27}, {1, 2, 3, 3});
}
TEST_P(MaxPool2dTest, NaNPropagates) {
  auto x = tensor<4>({1, kNaN, 3, 2, 0, -1, 5, 4, kNaN}, {1, 1, 3, 3});
  auto [out, idx] = module::max_pool2d_with_indices(x, {2, 2}, {1, 1});
  expect_tensor(out, {kNaN, kNaN, 5, kNaN}, {1, 1, 2, 2});
  expect_tensor(idx, {1, 1, 6, 8}, {1, 1, 2, 2});
  expect_tensor(module::max_pool2d(x, {2, 2}, {1, 1}), {kNaN, kNaN, 5, kNaN}, {1, 1, 2, 2});
}
TEST_P(MaxPool2dTest, NonContiguousInput) {
  // The same data stored as [1, 6, 6, 2] and permuted to [1, 2, 6, 6].
  auto a = tensor<4>(
      {0.9861, 0.5474, 0.4477, 0.0732, 0.3548, 0.8221, 0.8148, 0.5474, 0.949,  0.789,  0.5537, 0.5689, 0.5986, 0.2059,
       0.4897, 0.6136, 0.2965, 0.6182, 0.1485, 0.954,  0.4023, 0.6176, 0.7111, 0.3392, 0.3703, 0.0472, 0.2771, 0.1868,
       0.8855, 0.5605, 0.5063, 0.1638, 0.9432, 0.7836, 0.8696, 0.1068, 0.8872, 0.0137, 0.1652, 0.5505, 0.6127, 0.6473,
       0.1128, 0.0888, 0.1152, 0.5456, 0.6199, 0.7947, 0.5911, 0.7781, 0.7256, 0.6578, 0.0989, 0.9149, 0.5879, 0.5189,
       0.6561, 0.0578, 0.7025, 0.6426, 0.959,  0.0325, 0.6455, 0.6248, 0.2009, 0.1544, 0.7339, 0.1369, 0.6598, 0.5528,
       0.6775, 0.1572, 0.6853, 0.6439, 0.4639, 0.5573, 0.2723, 0.591,  0.5419, 0.7729, 0.6743, 0.8956, 0.2997, 0.9546,
       0.0334, 0.2178, 0.6917, 0.4958, 0.3357, 0.6584, 0.7358, 0.9074, 0.2462, 0.5159, 0.642,  0.2441, 0.7602, 0.6297,
       0.6073, 0.5937, 0.8037, 0.4881, 0.8859, 0.0974, 0.3954, 0.6763, 0.1078, 0.7467, 0.2991, 0.5012, 0.8024, 0.7653,
       0.9378, 0.7952, 0.7393, 0.2336, 0.9521, 0.2719, 0.8445, 0.0454, 0.6479, 0.9822, 0.7905, 0.0318, 0.2474, 0.0628,
       0.9955, 0.7591, 0.414,  0.3215, 0.4349, 0.1527, 0.8064, 0.0164, 0.4002, 0.2024, 0.6128, 0.5827, 0.5368, 0.7895,
       0.8727, 0.7793, 0.091,  0.3421},
      {2, 2, 6, 6});
  auto x = a.permute({0, 2, 3, 1}).to_data();
  auto strided = Tensor<4>::from_data(x, {device(), dtype()}).permute({0, 3, 1, 2});
  expect_tensor(
      module::max_pool2d(strided, {3, 3}, {1, 1}, {1, 1}, {1, 1}),
      {0.9861, 0.9861, 0.949,  0.949,  0.8221, 0.8221, 0.9861, 0.9861, 0.949,  0.949,  0.8221, 0.8221, 0.954,  0.954,
       0.954,  0.949,  0.789,  0.7111, 0.954,  0.954,  0.954,  0.8855, 0.8855, 0.8855, 0.954,  0.954,  0.954,  0.9432,
       0.8855, 0.8855, 0.5063, 0.9432, 0.9432, 0.9432, 0.8855, 0.8855, 0.8872, 0.8872, 0.5505, 0.6199, 0.7947, 0.7947,
       0.8872, 0.8872, 0.7781, 0.7256, 0.9149, 0.9149, 0.7781, 0.7781, 0.7781, 0.7256, 0.9149, 0.9149, 0.959,  0.959,
       0.7781, 0.7256, 0.9149, 0.9149, 0.959,  0.959,  0.6598, 0.7025, 0.7025, 0.7025, 0.959,  0.959,  0.6598, 0.6775,
       0.6775, 0.6775, 0.7729, 0.7729, 0.8956, 0.8956, 0.9546, 0.9546, 0.7729, 0.7729, 0.8956, 0.8956, 0.9546, 0.9546,
       0.9074, 0.9074, 0.9074, 0.8956, 0.9546, 0.9546, 0.9074, 0.9074, 0.9074, 0.8037, 0.8037, 0.8037, 0.9074, 0.9074,
       0.9074, 0.8037, 0.8037, 0.8037, 0.8859, 0.8859, 0.6763, 0.8037, 0.8037, 0.8037, 0.7393, 0.9521, 0.9521, 0.9521,
       0.9378, 0.9378, 0.9822, 0.9822, 0.9822, 0.9521, 0.9378, 0.9378, 0.9955, 0.9955, 0.9822, 0.9521, 0.8445, 0.8445,
       0.9955, 0.9955, 0.9822, 0.7905, 0.6128, 0.6128, 0.9955, 0.9955, 0.8727, 0.8727, 0.7793, 0.6128, 0.8064, 0.8727,
       0.8727, 0.8727, 0.7793, 0.6128},
      {2, 2, 6, 6});
}
TEST_P(MaxPool2dTest, TwoByTwoStrideTwoRowsFollowTheRule) {
  // The common 2x2 / stride 2 pool on rows long enough for vector lanes and a
  // remainder (20 outputs), and on short rows of planes with an odd row and
  // column left over (7 outputs, three planes, as a small CNN's): ties keep
  // the first maximum, a NaN wins and the last NaN's position is reported,
  // -inf windows report their first position, and rows without NaN sit next
  // to rows with one.
  struct Case {
    std::size_t planes, H, W;
  };
  for (const Case c : {Case{1, 4, 40}, Case{3, 5, 15}}) {
    const std::size_t H = c.H, W = c.W, OH = H / 2, OW = W / 2;
    SCOPED_TRACE(std::to_string(c.planes) + " planes of " + std::to_string(H) + " x " + std::to_string(W));
    std::vector<double> x(c.planes * H * W);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37) % 11) - 5.0;
    const double inf = std::numeric_limits<double>::infinity();
    x[2] = x[3] = x[W + 2] = x[W + 3] = 4.0;   // four-way tie
    x[4] = x[5] = x[W + 4] = x[W + 5] = -inf;  // all -inf
    x[6] = kNaN;                               // first position NaN
    x[8 + 1] = kNaN, x[W + 8] = kNaN;          // two NaNs: the last wins
    x[2 * W + 2 * (OW - 1) + W + 1] = kNaN;    // second output row, last window's last position
    x[2 * W + 10] = 7.0, x[2 * W + 11] = 7.0;  // a tie on the top row
    x[x.size() - W - 1] = kNaN;                // the last plane's leftover column
    std::vector<double> want_v, want_i;
    for (std::size_t plane = 0; plane < c.planes; ++plane)
      for (std::size_t oh = 0; oh < OH; ++oh)
        for (std::size_t ow = 0; ow < OW; ++ow) {
          double best = -inf;
          std::size_t at = 2 * oh * W + 2 * ow;
          for (std::size_t dh = 0; dh < 2; ++dh)
            for (std::size_t dw = 0; dw < 2; ++dw) {
              const std::size_t p = (2 * oh + dh) * W + 2 * ow + dw;
              const double v = x[plane * H * W + p];
              if (v > best || std::isnan(v)) best = v, at = p;
            }
          want_v.push_back(best);
          want_i.push_back(static_cast<double>(at));
        }
    const Shape in{1, c.planes, H, W}, out{1, c.planes, OH, OW};
    auto [values, idx] = module::max_pool2d_with_indices(tensor<4>(x, in), {2, 2}, {2, 2});
    expect_tensor(values, want_v, out);
    expect_tensor(idx, want_i, out);
    expect_tensor(module::max_pool2d(tensor<4>(x, in), {2, 2}, {2, 2}), want_v, out);
  }
}
TEST_P(MaxPool2dTest, EmptyBatch) {
  auto [out, idx] = module::max_pool2d_with_indices(tensor<4>({}, {0, 3, 4, 4}), {2, 2}, {2, 2});
  expect_tensor(out, {}, {0, 3, 2, 2});
  expect_tensor(idx, {}, {0, 3, 2, 2});
}

BURN_MODULE_SUITE(MaxPool1dTest);
BURN_MODULE_SUITE(MaxPool2dTest);

// max pooling is defined for int tensors too (the IR accepts any numeric dtype).
class MaxPoolIntTest : public ::testing::TestWithParam<DeviceDType> {};

TEST_P(MaxPoolIntTest, IntValuesWithIndices) {
  const auto [device, dtype] = GetParam();
  auto x = int_tensor<4>({3, -7, 2, 9, 4, 4, -1, 0, 8, -2, 6, 5}, {1, 1, 3, 4}, device, dtype);
  // Tensor<4, Int> has no pooling overload, so use the generic entry point.
  const std::array<std::size_t, 2> k{2, 2}, s{1, 2}, p{0, 1}, d{1, 1};
  auto [v, i] = burn::detail::max_pool(x.ref(), k, s, p, d, false, true);
  EXPECT_EQ(v->spec.dtype, dtype);
  expect_tensor(Tensor<4, Int>(v), {4, 4, 9, 8, 6, 5}, {1, 1, 2, 3});
  expect_tensor(Tensor<4, Int>(*i), {4, 5, 3, 8, 10, 11}, {1, 1, 2, 3});
}

INSTANTIATE_TEST_SUITE_P(AllDevices, MaxPoolIntTest, ::testing::ValuesIn(combos(signed_int_dtypes())), combo_name);

}  // namespace
}  // namespace burn::testing::modules
