// Invalid module-op arguments raise burn::Error whose message starts with the
// op in brackets, on every device, before any kernel runs.
#include <optional>

#include "module_test_util.hpp"

namespace burn::testing::modules {
namespace {

class ModuleErrorTest : public ModuleTest {
 protected:
  Tensor<3> x3(std::size_t c = 2, std::size_t l = 6) const { return arange<3>({1, c, l}); }
  Tensor<4> x4(std::size_t c = 2, std::size_t h = 5, std::size_t w = 5) const { return arange<4>({1, c, h, w}); }
};

// ---- convolutions ---------------------------------------------------------------------------------
TEST_P(ModuleErrorTest, ConvChannelMismatch) {
  expect_op_error([&] { module::conv2d(x4(3), arange<4>({2, 2, 3, 3}), std::nullopt); }, "conv2d");
  expect_op_error([&] { module::conv1d(x3(3), arange<3>({2, 2, 3}), std::nullopt); }, "conv1d");
}
TEST_P(ModuleErrorTest, ConvGroupMismatch) {
  // 4 input channels cannot be 3 groups of 2.
  expect_op_error(
      [&] {
        module::conv2d(x4(4), arange<4>({6, 2, 3, 3}), std::nullopt, {{1, 1}, {0, 0}, {1, 1}, 3});
      },
      "conv2d");
  // 3 output channels are not divisible by 2 groups.
  expect_op_error(
      [&] {
        module::conv2d(x4(4), arange<4>({3, 2, 3, 3}), std::nullopt, {{1, 1}, {0, 0}, {1, 1}, 2});
      },
      "conv2d");
  expect_op_error([&] { module::conv1d(x3(2), arange<3>({2, 2, 3}), std::nullopt, {{1}, {0}, {1}, 0}); }, "conv1d");
}
TEST_P(ModuleErrorTest, ConvKernelLargerThanPaddedInput) {
  expect_op_error(
      [&] {
        module::conv2d(x4(1, 2, 2), arange<4>({1, 1, 5, 5}), std::nullopt, {{1, 1}, {1, 1}, {1, 1}});
      },
      "conv2d");
  // Dilation makes a 3-tap kernel span 7 > 6.
  expect_op_error([&] { module::conv1d(x3(2, 6), arange<3>({1, 2, 3}), std::nullopt, {{1}, {0}, {3}}); }, "conv1d");
  expect_op_error(
      [&] {
        module::conv3d(arange<5>({1, 1, 2, 4, 4}), arange<5>({1, 1, 3, 3, 3}), std::nullopt);
      },
      "conv3d");
}
TEST_P(ModuleErrorTest, ConvZeroStrideOrDilation) {
  expect_op_error([&] { module::conv1d(x3(), arange<3>({1, 2, 3}), std::nullopt, {{0}, {0}, {1}}); }, "conv1d");
  expect_op_error(
      [&] {
        module::conv2d(x4(), arange<4>({1, 2, 3, 3}), std::nullopt, {{1, 0}, {0, 0}, {1, 1}});
      },
      "conv2d");
  expect_op_error(
      [&] {
        module::conv2d(x4(), arange<4>({1, 2, 3, 3}), std::nullopt, {{1, 1}, {0, 0}, {0, 1}});
      },
      "conv2d");
}
TEST_P(ModuleErrorTest, ConvBadBiasShape) {
  expect_op_error([&] { module::conv2d(x4(), arange<4>({2, 2, 3, 3}), arange<1>({3})); }, "conv2d");
  expect_op_error([&] { module::conv1d(x3(), arange<3>({4, 2, 3}), arange<1>({2})); }, "conv1d");
}
TEST_P(ModuleErrorTest, ConvWrongRanks) {
  // The typed API fixes ranks at compile time; the generic entry point checks them at run time.
  const std::array<std::size_t, 1> one{1}, zero{0};
  expect_op_error(
      [&] {
        burn::detail::conv(x4().ref(), arange<3>({1, 2, 3}).ref(), std::nullopt, one, zero, one, 1);
      },
      "conv1d");
  expect_op_error(
      [&] {
        burn::detail::conv(x3().ref(), arange<4>({1, 2, 3, 3}).ref(), std::nullopt, one, zero, one, 1);
      },
      "conv1d");
  const std::array<std::size_t, 2> two{1, 1};
  expect_op_error(
      [&] {
        burn::detail::conv(x4().ref(), arange<4>({1, 2, 3, 3}).ref(), std::nullopt, two, zero, two, 1);
      },
      "conv2d");
}
TEST_P(ModuleErrorTest, ConvMixedDTypes) {
  const DType other = dtype() == DType::F64 ? DType::F32 : DType::F64;
  auto w = float_tensor<4>(arange_values(18), {1, 2, 3, 3}, device(), other);
  expect_op_error([&] { module::conv2d(x4(), w, std::nullopt); }, "conv2d");
}
TEST_P(ModuleErrorTest, ConvIntInput) {
  auto x = int_tensor<4>(std::vector<std::int64_t>(50, 1), {1, 2, 5, 5}, device());
  auto w = int_tensor<4>(std::vector<std::int64_t>(18, 1), {1, 2, 3, 3}, device());
  const std::array<std::size_t, 2> one{1, 1}, zero{0, 0};
  expect_op_error([&] { burn::detail::conv(x.ref(), w.ref(), std::nullopt, one, zero, one, 1); }, "conv2d");
}

// ---- transposed convolutions ---------------------------------------------------------------------
TEST_P(ModuleErrorTest, ConvTransposeChannelMismatch) {
  // weight is [c_in, c_out / groups, k...]; c_in must match the input.
  expect_op_error([&] { module::conv_transpose2d(x4(3), arange<4>({2, 2, 3, 3}), std::nullopt); }, "conv_transpose2d");
  expect_op_error(
      [&] {
        module::conv_transpose1d(x3(3), arange<3>({3, 2, 3}), std::nullopt, {{1}, {0}, {0}, {1}, 2});
      },
      "conv_transpose1d");
}
TEST_P(ModuleErrorTest, ConvTransposeBadPaddingOut) {
  // padding_out must be smaller than stride or dilation.
  expect_op_error(
      [&] {
        module::conv_transpose2d(x4(), arange<4>({2, 2, 3, 3}), std::nullopt, {{2, 2}, {0, 0}, {2, 0}, {1, 1}});
      },
      "conv_transpose2d");
}
TEST_P(ModuleErrorTest, ConvTransposeZeroStrideAndBadBias) {
  expect_op_error(
      [&] {
        module::conv_transpose1d(x3(), arange<3>({2, 2, 3}), std::nullopt, {{0}, {0}, {0}, {1}});
      },
      "conv_transpose1d");
  // c_out = weight[1] * groups = 2, so a bias of 3 is wrong.
  expect_op_error([&] { module::conv_transpose1d(x3(), arange<3>({2, 2, 3}), arange<1>({3})); }, "conv_transpose1d");
}
TEST_P(ModuleErrorTest, ConvTransposePaddingLeavesNoOutput) {
  expect_op_error(
      [&] {
        module::conv_transpose1d(x3(2, 1), arange<3>({2, 1, 2}), std::nullopt, {{1}, {1}, {0}, {1}});
      },
      "conv_transpose1d");
}

// ---- pools ----------------------------------------------------------------------------------------
TEST_P(ModuleErrorTest, PoolZeroStride) {
  expect_op_error([&] { module::max_pool2d(x4(), {2, 2}, {0, 1}); }, "max_pool2d");
  expect_op_error([&] { module::max_pool1d(x3(), 2, 0); }, "max_pool1d");
  expect_op_error([&] { module::avg_pool2d(x4(), {2, 2}, {1, 0}); }, "avg_pool2d");
  expect_op_error([&] { module::avg_pool1d(x3(), 2, 0); }, "avg_pool1d");
}
TEST_P(ModuleErrorTest, PoolKernelLargerThanPaddedInput) {
  expect_op_error([&] { module::max_pool2d(x4(2, 3, 3), {6, 2}, {1, 1}, {1, 0}); }, "max_pool2d");
  expect_op_error([&] { module::avg_pool1d(x3(2, 3), 4, 1); }, "avg_pool1d");
  // Dilation 3 spreads a 3-wide kernel over 7 > 6.
  expect_op_error([&] { module::max_pool1d(x3(2, 6), 3, 1, 0, 3); }, "max_pool1d");
}
TEST_P(ModuleErrorTest, PoolPaddingOverHalfKernel) {
  expect_op_error([&] { module::max_pool2d(x4(), {2, 2}, {1, 1}, {2, 0}); }, "max_pool2d");
  expect_op_error([&] { module::avg_pool1d(x3(), 3, 1, 2); }, "avg_pool1d");
}
TEST_P(ModuleErrorTest, PoolZeroKernelOrDilation) {
  expect_op_error([&] { module::max_pool2d(x4(), {0, 2}, {1, 1}); }, "max_pool2d");
  expect_op_error([&] { module::max_pool1d(x3(), 2, 1, 0, 0); }, "max_pool1d");
}
TEST_P(ModuleErrorTest, PoolWrongRank) {
  const std::array<std::size_t, 1> k{2}, s{1}, p{0}, d{1};
  expect_op_error([&] { burn::detail::max_pool(x4().ref(), k, s, p, d, false, false); }, "max_pool1d");
  expect_op_error([&] { burn::detail::avg_pool(x4().ref(), k, s, p, true, false); }, "avg_pool1d");
  const std::array<std::size_t, 1> o{3};
  expect_op_error([&] { burn::detail::adaptive_avg_pool(x4().ref(), o); }, "adaptive_avg_pool1d");
}
TEST_P(ModuleErrorTest, AdaptivePoolZeroOutput) {
  expect_op_error([&] { module::adaptive_avg_pool2d(x4(), {0, 2}); }, "adaptive_avg_pool2d");
  expect_op_error([&] { module::adaptive_avg_pool1d(x3(), 0); }, "adaptive_avg_pool1d");
}
TEST_P(ModuleErrorTest, AvgPoolIntInput) {
  auto x = int_tensor<3>(std::vector<std::int64_t>(12, 1), {1, 2, 6}, device());
  const std::array<std::size_t, 1> k{2}, s{1}, p{0};
  expect_op_error([&] { burn::detail::avg_pool(x.ref(), k, s, p, true, false); }, "avg_pool1d");
}

// ---- interpolate ----------------------------------------------------------------------------------
TEST_P(ModuleErrorTest, InterpolateZeroOutput) {
  expect_op_error([&] { module::interpolate(x4(), {0, 4}); }, "interpolate");
  expect_op_error([&] { module::interpolate(x4(), {4, 0}, {module::InterpolateMode::Bicubic, true}); }, "interpolate");
}
TEST_P(ModuleErrorTest, InterpolateWrongRankOrEmptyInput) {
  const std::array<std::size_t, 2> out{4, 4};
  expect_op_error([&] { burn::detail::interpolate(x3().ref(), out, module::InterpolateMode::Bilinear, false); },
                  "interpolate");
  expect_op_error([&] { module::interpolate(tensor<4>({}, {1, 1, 0, 3}), {2, 2}); }, "interpolate");
}

// ---- linear and embedding -------------------------------------------------------------------------
TEST_P(ModuleErrorTest, LinearShapeMismatch) {
  auto w = arange<2>({3, 4});
  expect_op_error([&] { module::linear(arange<2>({2, 5}), w, std::nullopt); }, "linear");
  expect_op_error([&] { module::linear(arange<2>({2, 3}), w, arange<1>({3})); }, "linear");
  expect_op_error([&] { module::linear(arange<3>({2, 2, 4}), w, arange<1>({4})); }, "linear");
}
TEST_P(ModuleErrorTest, EmbeddingIndexOutOfRange) {
  auto weights = arange<2>({4, 3});
  EXPECT_THROW(module::embedding(weights, int_tensor<2>({0, 4}, {1, 2}, device())).to_data(), Error);
  EXPECT_THROW(module::embedding(weights, int_tensor<2>({-5, 1}, {1, 2}, device())).to_data(), Error);
}

BURN_MODULE_SUITE(ModuleErrorTest);

// Tensors on two devices never mix implicitly.
TEST(ModuleDeviceError, MixedDevices) {
  const auto devices = all_devices();
  for (std::size_t i = 0; i + 1 < devices.size(); ++i) {
    auto x = Tensor<4>::ones({1, 2, 5, 5}, devices[i]);
    auto w = Tensor<4>::ones({1, 2, 3, 3}, devices[i + 1]);
    expect_op_error([&] { module::conv2d(x, w, std::nullopt); }, "conv2d");
    auto lw = Tensor<2>::ones({25, 2}, devices[i + 1]);
    EXPECT_THROW(module::linear(x.reshape<2>({2, 25}), lw, std::nullopt), Error);
  }
}

}  // namespace
}  // namespace burn::testing::modules
