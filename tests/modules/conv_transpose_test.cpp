// conv_transpose1d / 2d / 3d against float64 PyTorch values. Cases marked
// "Burn" are ports of Burn's module tests (arange inputs, weights and bias;
// weight layout [c_in, c_out / groups, kernel...]).
#include "conv_cases.hpp"

namespace burn::testing::modules {
namespace {

using ConvTranspose1dTest = ConvTest;
using ConvTranspose2dTest = ConvTest;
using ConvTranspose3dTest = ConvTest;

// ---- conv_transpose1d -----------------------------------------------------------------------------
TEST_P(ConvTranspose1dTest, DifferentChannels) {  // Burn
  conv_transpose<1>({.batch = 1, .c_in = 3, .c_out = 2, .size = {4}, .kernel = {3}, .padding = {1}},
                    {270, 453, 516, 387, 352, 589, 679, 505}, {1, 2, 4});
}
TEST_P(ConvTranspose1dTest, StrideOutPadding) {  // Burn
  conv_transpose<1>({.batch = 1,
                     .c_in = 2,
                     .c_out = 2,
                     .size = {4},
                     .kernel = {3},
                     .padding = {1},
                     .stride = {2},
                     .padding_out = {1}},
                    {28, 62, 36, 78, 44, 94, 52, 62, 41, 93, 55, 121, 69, 149, 83, 93}, {1, 2, 8});
}
TEST_P(ConvTranspose1dTest, Dilation) {  // Burn
  conv_transpose<1>({.batch = 1, .c_in = 2, .c_out = 2, .size = {4}, .kernel = {3}, .padding = {1}, .dilation = {2}},
                    {30, 64, 78, 76, 94, 52, 49, 101, 127, 113, 143, 77}, {1, 2, 6});
}
TEST_P(ConvTranspose1dTest, Groups) {  // Burn
  conv_transpose<1>({.batch = 1, .c_in = 2, .c_out = 2, .size = {4}, .kernel = {3}, .padding = {1}, .groups = 2},
                    {0, 1, 4, 7, 32, 59, 71, 59}, {1, 2, 4});
}
TEST_P(ConvTranspose1dTest, NoBiasBatchStrideLargerThanKernel) {
  // Stride 3 > kernel 2 leaves zero gaps between the scattered windows.
  conv_transpose<1>({.batch = 2, .c_in = 2, .c_out = 3, .size = {3}, .kernel = {2}, .stride = {3}, .bias = false},
                    {18, 21, 0, 24, 29, 0, 30, 37, 24, 27, 0, 34, 39,  0, 44,  51,  30,  33,  0, 44,  49,  0, 58,  65,
                     54, 69, 0, 60, 77, 0, 66, 85, 84, 99, 0, 94, 111, 0, 104, 123, 114, 129, 0, 128, 145, 0, 142, 161},
                    {2, 3, 8});
}

// ---- conv_transpose2d -----------------------------------------------------------------------------
TEST_P(ConvTranspose2dTest, Simple1) {  // Burn
  conv_transpose<2>({.batch = 1, .c_in = 1, .c_out = 1, .size = {2, 2}, .kernel = {3, 3}, .padding = {1, 1}},
                    {5, 11, 23, 29}, {1, 1, 2, 2});
}
TEST_P(ConvTranspose2dTest, Simple2) {  // Burn
  conv_transpose<2>(
      {.batch = 1, .c_in = 3, .c_out = 3, .size = {4, 4}, .kernel = {3, 3}, .padding = {1, 1}},
      {9855,  15207, 15738, 10797, 16290, 25119, 25956, 17793, 18486, 28467, 29304, 20061, 13593, 20913, 21498, 14703,
       11854, 18286, 18979, 13012, 19612, 30223, 31303, 21439, 22456, 34543, 35623, 24355, 16456, 25288, 26035, 17782,
       13853, 21365, 22220, 15227, 22934, 35327, 36650, 25085, 26426, 40619, 41942, 28649, 19319, 29663, 30572, 20861},
      {1, 3, 4, 4});
}
TEST_P(ConvTranspose2dTest, Stride2) {  // Burn
  conv_transpose<2>({.batch = 1, .c_in = 1, .c_out = 1, .size = {2, 2}, .kernel = {2, 2}, .stride = {2, 2}},
                    {0, 0, 0, 1, 0, 0, 2, 3, 0, 2, 0, 3, 4, 6, 6, 9}, {1, 1, 4, 4});
}
TEST_P(ConvTranspose2dTest, Dilation2OutPadding) {  // Burn
  conv_transpose<2>({.batch = 1,
                     .c_in = 2,
                     .c_out = 2,
                     .size = {2, 2},
                     .kernel = {3, 3},
                     .padding = {1, 1},
                     .dilation = {2, 2},
                     .padding_out = {1, 1}},
                    {126, 116, 136, 124, 146, 108, 88,  114, 92,  120, 156, 140, 166, 148, 176, 126, 100,
                     132, 104, 138, 186, 164, 196, 172, 206, 217, 189, 227, 197, 237, 163, 125, 169, 129,
                     175, 247, 213, 257, 221, 267, 181, 137, 187, 141, 193, 277, 237, 287, 245, 297},
                    {1, 2, 5, 5});
}
TEST_P(ConvTranspose2dTest, Stride2OutPadding) {  // Burn
  conv_transpose<2>(
      {.batch = 1,
       .c_in = 2,
       .c_out = 2,
       .size = {4, 4},
       .kernel = {3, 3},
       .padding = {1, 1},
       .stride = {2, 2},
       .padding_out = {1, 1}},
      {352,  728,  378,  780,  404,  832,  430,  452,  784,  1616, 836,  1720, 888,  1824, 940,  992,  456,  936,  482,
       988,  508,  1040, 534,  564,  992,  2032, 1044, 2136, 1096, 2240, 1148, 1216, 560,  1144, 586,  1196, 612,  1248,
       638,  676,  1200, 2448, 1252, 2552, 1304, 2656, 1356, 1440, 664,  1352, 690,  1404, 716,  1456, 742,  788,  784,
       1598, 816,  1662, 848,  1726, 880,  926,  497,  1035, 541,  1123, 585,  1211, 629,  651,  1145, 2373, 1233, 2549,
       1321, 2725, 1409, 1461, 673,  1387, 717,  1475, 761,  1563, 805,  835,  1497, 3077, 1585, 3253, 1673, 3429, 1761,
       1829, 849,  1739, 893,  1827, 937,  1915, 981,  1019, 1849, 3781, 1937, 3957, 2025, 4133, 2113, 2197, 1025, 2091,
       1069, 2179, 1113, 2267, 1157, 1203, 1145, 2337, 1195, 2437, 1245, 2537, 1295, 1341},
      {1, 2, 8, 8});
}
TEST_P(ConvTranspose2dTest, Groups2) {  // Burn
  conv_transpose<2>(
      {.batch = 1, .c_in = 2, .c_out = 2, .size = {2, 2}, .kernel = {3, 3}, .padding = {1, 1}, .groups = 2},
      {5, 11, 23, 29, 236, 258, 302, 324}, {1, 2, 2, 2});
}
TEST_P(ConvTranspose2dTest, GroupsDifferentChannels) {  // Burn
  conv_transpose<2>(
      {.batch = 1, .c_in = 2, .c_out = 6, .size = {2, 2}, .kernel = {3, 3}, .groups = 2},
      {0,   0,   1,   2,   0,   5,    11,   11,  6,   23,   29,   23,  12,  32,  37,  24,  1,   10,  11,  12,
       19,  60,  66,  48,  25,  78,   84,   60,  31,  78,   83,   52,  2,   20,  21,  22,  38,  115, 121, 85,
       44,  133, 139, 97,  50,  124,  129,  80,  111, 250,  259,  148, 285, 634, 656, 366, 315, 700, 722, 402,
       201, 438, 451, 248, 148, 332,  341,  194, 376, 833,  855,  475, 406, 899, 921, 511, 256, 556, 569, 312,
       185, 414, 423, 240, 467, 1032, 1054, 584, 497, 1098, 1120, 620, 311, 674, 687, 376},
      {1, 6, 4, 4});
}
TEST_P(ConvTranspose2dTest, NoBias) {
  conv_transpose<2>(
      {.batch = 1, .c_in = 1, .c_out = 1, .size = {2, 2}, .kernel = {3, 3}, .padding = {1, 1}, .bias = false},
      {5, 11, 23, 29}, {1, 1, 2, 2});
}
TEST_P(ConvTranspose2dTest, AsymmetricEverything) {
  conv_transpose<2>(
      {.batch = 2,
       .c_in = 2,
       .c_out = 4,
       .size = {3, 2},
       .kernel = {3, 2},
       .padding = {1, 0},
       .stride = {2, 1},
       .dilation = {1, 2},
       .padding_out = {1, 0},
       .groups = 2},
      {0,   2,   0,   3,   0,   4,   2,   8,   4,   6,   6,   9,   8,   12,  14,  20,  8,   10,  12,  15,  16,  20,
       20,  25,  1,   9,   1,   10,  13,  29,  15,  33,  17,  25,  19,  28,  45,  61,  51,  69,  33,  41,  37,  46,
       41,  51,  45,  56,  86,  100, 92,  107, 194, 222, 208, 238, 114, 128, 122, 137, 250, 278, 268, 298, 142, 156,
       152, 167, 162, 178, 172, 189, 123, 143, 129, 150, 279, 319, 293, 335, 163, 183, 171, 192, 359, 399, 377, 419,
       203, 223, 213, 234, 223, 245, 233, 256, 24,  26,  36,  39,  48,  52,  74,  80,  28,  30,  42,  45,  56,  60,
       86,  92,  32,  34,  48,  51,  64,  68,  80,  85,  97,  105, 109, 118, 205, 221, 231, 249, 113, 121, 127, 136,
       237, 253, 267, 285, 129, 137, 145, 154, 161, 171, 177, 188, 254, 268, 272, 287, 530, 558, 568, 598, 282, 296,
       302, 317, 586, 614, 628, 658, 310, 324, 332, 347, 354, 370, 376, 393, 363, 383, 381, 402, 759, 799, 797, 839,
       403, 423, 423, 444, 839, 879, 881, 923, 443, 463, 465, 486, 487, 509, 509, 532},
      {2, 4, 6, 4});
}
TEST_P(ConvTranspose2dTest, EmptyBatch) {
  auto out = module::conv_transpose2d(tensor<4>({}, {0, 2, 3, 3}), arange<4>({2, 1, 2, 2}), arange<1>({1}),
                                      module::ConvTransposeOptions<2>({2, 2}, {0, 0}, {0, 0}, {1, 1}));
  expect_tensor(out, {}, {0, 1, 6, 6});
}

// ---- conv_transpose3d -----------------------------------------------------------------------------
TEST_P(ConvTranspose3dTest, Simple1) {  // Burn
  conv_transpose<3>({.batch = 1, .c_in = 1, .c_out = 1, .size = {2, 2, 2}, .kernel = {3, 3, 3}, .padding = {1, 1, 1}},
                    {96, 124, 180, 208, 348, 376, 432, 460}, {1, 1, 2, 2, 2});
}
TEST_P(ConvTranspose3dTest, Stride2) {  // Burn
  conv_transpose<3>({.batch = 1, .c_in = 1, .c_out = 1, .size = {2, 2, 2}, .kernel = {2, 2, 2}, .stride = {2, 2, 2}},
                    {0,  0,  0,  1,  0,  0,  2,  3,  0,  2,  0,  3,  4,  6,  6,  9,  0,  0,  4,  5, 0, 0,
                     6,  7,  8,  10, 12, 15, 12, 14, 18, 21, 0,  4,  0,  5,  8,  12, 10, 15, 0,  6, 0, 7,
                     12, 18, 14, 21, 16, 20, 20, 25, 24, 28, 30, 35, 24, 30, 28, 35, 36, 42, 42, 49},
                    {1, 1, 4, 4, 4});
}
TEST_P(ConvTranspose3dTest, GroupsOutPadding) {
  conv_transpose<3>({.batch = 1,
                     .c_in = 2,
                     .c_out = 4,
                     .size = {2, 3, 2},
                     .kernel = {2, 2, 1},
                     .padding = {0, 1, 0},
                     .stride = {2, 1, 1},
                     .dilation = {1, 1, 2},
                     .padding_out = {1, 0, 0},
                     .groups = 2},
                    {0,   1,   2,   3,   4,   9,   14,  19,  6,   7,   8,   9,   34,  39,  44,  49,  0, 0, 0, 0,
                     9,   18,  27,  36,  13,  26,  39,  52,  63,  72,  81,  90,  91,  104, 117, 130, 1, 1, 1, 1,
                     222, 239, 256, 273, 274, 295, 316, 337, 324, 341, 358, 375, 400, 421, 442, 463, 2, 2, 2, 2,
                     327, 352, 377, 402, 379, 408, 437, 466, 477, 502, 527, 552, 553, 582, 611, 640, 3, 3, 3, 3},
                    {1, 4, 5, 2, 2});
}
TEST_P(ConvTranspose3dTest, NoBiasDilation) {
  conv_transpose<3>({.batch = 1,
                     .c_in = 1,
                     .c_out = 2,
                     .size = {2, 2, 2},
                     .kernel = {2, 1, 2},
                     .padding = {0, 0, 1},
                     .dilation = {2, 1, 1},
                     .bias = false},
                    {0, 2, 4, 6, 2, 12, 22, 32, 4, 22, 40, 58, 6, 32, 58, 84}, {1, 2, 4, 2, 1});
}

BURN_MODULE_SUITE(ConvTranspose1dTest);
BURN_MODULE_SUITE(ConvTranspose2dTest);
BURN_MODULE_SUITE(ConvTranspose3dTest);

}  // namespace
}  // namespace burn::testing::modules
