// Convolution cases in the style of Burn's module tests: input, weight and
// bias are arange(0, n) reshaped, so a case is fully described by its sizes.
#pragma once

#include <array>
#include <optional>

#include "module_test_util.hpp"

namespace burn::testing::modules {

template <std::size_t N>
constexpr std::array<std::size_t, N> ones() {
  std::array<std::size_t, N> a{};
  a.fill(1);
  return a;
}

/// Sizes of one case; unnamed fields keep PyTorch's defaults.
template <std::size_t N>
struct ConvCase {
  std::size_t batch, c_in, c_out;
  std::array<std::size_t, N> size, kernel;
  std::array<std::size_t, N> padding{}, stride = ones<N>(), dilation = ones<N>();
  std::array<std::size_t, N> padding_out{};  // transposed convolutions only
  std::size_t groups = 1;
  bool bias = true;
};

/// f16 cannot hold the large sums of arange inputs (max 65504): its inputs
/// and weights are scaled by 1/16 (exactly), so outputs scale by 1/256.
inline double conv_input_scale(DType d) { return d == DType::F16 ? 1.0 / 16.0 : 1.0; }

template <std::size_t N>
Shape channels_first(std::size_t a, std::size_t b, const std::array<std::size_t, N>& rest) {
  std::vector<std::size_t> dims{a, b};
  dims.insert(dims.end(), rest.begin(), rest.end());
  return Shape(dims);
}

template <std::size_t D>
Tensor<D> arange_tensor(const Shape& shape, double scale, const Device& device, DType dtype) {
  return float_tensor<D>(arange_values(shape.num_elements(), scale), shape, device, dtype);
}

template <std::size_t N>
Tensor<N + 2> run_conv(const ConvCase<N>& c, const Device& device, DType dtype) {
  const double s = conv_input_scale(dtype);
  auto x = arange_tensor<N + 2>(channels_first<N>(c.batch, c.c_in, c.size), s, device, dtype);
  auto w = arange_tensor<N + 2>(channels_first<N>(c.c_out, c.c_in / c.groups, c.kernel), s, device, dtype);
  std::optional<Tensor<1>> b;
  if (c.bias) b = arange_tensor<1>(Shape{c.c_out}, s * s, device, dtype);
  const module::ConvOptions<N> o(c.stride, c.padding, c.dilation, c.groups);
  if constexpr (N == 1) return module::conv1d(x, w, b, o);
  else if constexpr (N == 2) return module::conv2d(x, w, b, o);
  else return module::conv3d(x, w, b, o);
}

template <std::size_t N>
Tensor<N + 2> run_conv_transpose(const ConvCase<N>& c, const Device& device, DType dtype) {
  const double s = conv_input_scale(dtype);
  auto x = arange_tensor<N + 2>(channels_first<N>(c.batch, c.c_in, c.size), s, device, dtype);
  auto w = arange_tensor<N + 2>(channels_first<N>(c.c_in, c.c_out / c.groups, c.kernel), s, device, dtype);
  std::optional<Tensor<1>> b;
  if (c.bias) b = arange_tensor<1>(Shape{c.c_out}, s * s, device, dtype);
  const module::ConvTransposeOptions<N> o(c.stride, c.padding, c.padding_out, c.dilation, c.groups);
  if constexpr (N == 1) return module::conv_transpose1d(x, w, b, o);
  else if constexpr (N == 2) return module::conv_transpose2d(x, w, b, o);
  else return module::conv_transpose3d(x, w, b, o);
}

/// Fixture for convolutions: `expect_conv` undoes the f16 input scaling.
class ConvTest : public ModuleTest {
 protected:
  void expect_conv(const TensorData& actual, const std::vector<double>& expected, const Shape& shape,
                   std::source_location loc = std::source_location::current()) const {
    const double s = conv_input_scale(dtype());
    expect_data(actual, scaled(expected, s * s), shape, {}, loc);
  }
  template <std::size_t N>
  void conv(const ConvCase<N>& c, const std::vector<double>& expected, const Shape& shape,
            std::source_location loc = std::source_location::current()) const {
    expect_conv(run_conv<N>(c, device(), dtype()).to_data(), expected, shape, loc);
  }
  template <std::size_t N>
  void conv_transpose(const ConvCase<N>& c, const std::vector<double>& expected, const Shape& shape,
                      std::source_location loc = std::source_location::current()) const {
    expect_conv(run_conv_transpose<N>(c, device(), dtype()).to_data(), expected, shape, loc);
  }
};

}  // namespace burn::testing::modules
