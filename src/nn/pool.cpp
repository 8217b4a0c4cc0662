// Pooling layers: config validation and forward (one module op each).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <burn/module/ops.hpp>
#include <burn/nn/pool.hpp>

namespace burn::nn {

namespace {

template <std::size_t N>
void check_positive(std::string_view who, std::string_view what, const std::array<std::size_t, N>& values) {
  for (std::size_t v : values)
    if (v == 0) throw Error(who, fmt::format("{} must be positive, got {}", what, values));
}

/// Validates a pool's sizes and returns its padding; a window may overhang the
/// input by at most half its size on each side (PyTorch's rule).
template <std::size_t N>
std::array<std::size_t, N> check_pool(std::string_view who, const std::array<std::size_t, N>& kernel,
                                      const std::array<std::size_t, N>& stride,
                                      const std::array<std::size_t, N>& dilation, const PaddingConfig<N>& padding) {
  check_positive(who, "kernel_size", kernel);
  check_positive(who, "stride", stride);
  check_positive(who, "dilation", dilation);
  const auto pad = padding.resolve(kernel, stride, dilation, who);
  for (std::size_t i = 0; i < N; ++i)
    if (2 * pad[i] > kernel[i])
      throw Error(who, fmt::format("padding {} must be at most half the kernel size {}", pad, kernel));
  return pad;
}

}  // namespace

MaxPool1d MaxPool1dConfig::init() const {
  check_pool<1>("MaxPool1dConfig", {kernel_size}, {stride}, {dilation}, padding);
  return MaxPool1d{kernel_size, stride, padding, dilation, ceil_mode};
}

Tensor<3> MaxPool1d::forward(const Tensor<3>& x) const {
  const auto pad = padding.resolve({kernel_size}, {stride}, {dilation}, "MaxPool1d");
  return module::max_pool1d(x, kernel_size, stride, pad[0], dilation, ceil_mode);
}

MaxPool2d MaxPool2dConfig::init() const {
  check_pool("MaxPool2dConfig", kernel_size, strides, dilation, padding);
  return MaxPool2d{kernel_size, strides, padding, dilation, ceil_mode};
}

Tensor<4> MaxPool2d::forward(const Tensor<4>& x) const {
  const auto pad = padding.resolve(kernel_size, strides, dilation, "MaxPool2d");
  return module::max_pool2d(x, kernel_size, strides, pad, dilation, ceil_mode);
}

AvgPool1d AvgPool1dConfig::init() const {
  check_pool<1>("AvgPool1dConfig", {kernel_size}, {stride}, {1}, padding);
  return AvgPool1d{kernel_size, stride, padding, count_include_pad, ceil_mode};
}

Tensor<3> AvgPool1d::forward(const Tensor<3>& x) const {
  const auto pad = padding.resolve({kernel_size}, {stride}, {1}, "AvgPool1d");
  return module::avg_pool1d(x, kernel_size, stride, pad[0], count_include_pad, ceil_mode);
}

AvgPool2d AvgPool2dConfig::init() const {
  check_pool("AvgPool2dConfig", kernel_size, strides, {1, 1}, padding);
  return AvgPool2d{kernel_size, strides, padding, count_include_pad, ceil_mode};
}

Tensor<4> AvgPool2d::forward(const Tensor<4>& x) const {
  const auto pad = padding.resolve(kernel_size, strides, {1, 1}, "AvgPool2d");
  return module::avg_pool2d(x, kernel_size, strides, pad, count_include_pad, ceil_mode);
}

AdaptiveAvgPool1d AdaptiveAvgPool1dConfig::init() const {
  check_positive<1>("AdaptiveAvgPool1dConfig", "output_size", {output_size});
  return AdaptiveAvgPool1d{output_size};
}

Tensor<3> AdaptiveAvgPool1d::forward(const Tensor<3>& x) const { return module::adaptive_avg_pool1d(x, output_size); }

AdaptiveAvgPool2d AdaptiveAvgPool2dConfig::init() const {
  check_positive("AdaptiveAvgPool2dConfig", "output_size", output_size);
  return AdaptiveAvgPool2d{output_size};
}

Tensor<4> AdaptiveAvgPool2d::forward(const Tensor<4>& x) const { return module::adaptive_avg_pool2d(x, output_size); }

}  // namespace burn::nn
