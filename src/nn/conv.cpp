// Conv1d, Conv2d and ConvTranspose2d: config validation, initialisation and
// forward (one call to the module op, after a clear channel check).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <burn/module/ops.hpp>
#include <burn/nn/conv1d.hpp>
#include <burn/nn/conv2d.hpp>
#include <burn/nn/conv_transpose2d.hpp>

namespace burn::nn {

namespace {

template <std::size_t N>
void check_positive(std::string_view who, std::string_view what, const std::array<std::size_t, N>& values) {
  for (std::size_t v : values)
    if (v == 0) throw Error(who, fmt::format("{} must be positive, got {}", what, values));
}

template <std::size_t N>
std::size_t product(const std::array<std::size_t, N>& values) {
  std::size_t p = 1;
  for (std::size_t v : values) p *= v;
  return p;
}

void check_groups(std::string_view who, std::size_t in, std::size_t out, std::size_t groups) {
  if (groups == 0) throw Error(who, "groups must be at least 1");
  if (in % groups || out % groups)
    throw Error(who,
                fmt::format("channels in ({}) and out ({}) must both be divisible by groups ({})", in, out, groups));
}

std::optional<Tensor<1>> bias_value(const std::optional<module::Param<Tensor<1>>>& bias) {
  return bias ? std::optional<Tensor<1>>(bias->val()) : std::nullopt;
}

void check_channels(std::string_view who, std::size_t got, std::size_t expected, const Shape& shape) {
  if (got != expected)
    throw Error(who, fmt::format("input {} has {} channels (dim 1) but the layer expects {}", shape.to_string(), got,
                                 expected));
}

}  // namespace

Conv1d Conv1dConfig::init(const TensorCreationOptions& options) const {
  constexpr std::string_view who = "Conv1dConfig";
  check_positive<2>(who, "channels_in and channels_out", {channels_in, channels_out});
  check_positive<1>(who, "kernel_size", {kernel_size});
  check_positive<1>(who, "stride", {stride});
  check_positive<1>(who, "dilation", {dilation});
  check_groups(who, channels_in, channels_out, groups);
  padding.resolve({kernel_size}, {stride}, {dilation}, who);
  const std::size_t fan_in = channels_in / groups * kernel_size;
  const std::size_t fan_out = channels_out / groups * kernel_size;
  Conv1d layer{module::Param(initializer.init<3>(Shape{channels_out, channels_in / groups, kernel_size}, options,
                                                 fan_in, fan_out)),
               std::nullopt,
               stride,
               kernel_size,
               dilation,
               groups,
               padding};
  if (bias) layer.bias.emplace(initializer.init<1>(Shape{channels_out}, options, fan_in, fan_out));
  return layer;
}

Tensor<3> Conv1d::forward(const Tensor<3>& x) const {
  check_channels("Conv1d", x.dims()[1], weight->dims()[1] * groups, x.shape());
  const auto pad = padding.resolve({kernel_size}, {stride}, {dilation}, "Conv1d");
  return module::conv1d(x, weight.val(), bias_value(bias), module::ConvOptions<1>({stride}, pad, {dilation}, groups));
}

Conv2d Conv2dConfig::init(const TensorCreationOptions& options) const {
  constexpr std::string_view who = "Conv2dConfig";
  check_positive(who, "channels", channels);
  check_positive(who, "kernel_size", kernel_size);
  check_positive(who, "stride", stride);
  check_positive(who, "dilation", dilation);
  check_groups(who, channels[0], channels[1], groups);
  padding.resolve(kernel_size, stride, dilation, who);
  const std::size_t fan_in = channels[0] / groups * product(kernel_size);
  const std::size_t fan_out = channels[1] / groups * product(kernel_size);
  Conv2d layer{module::Param(initializer.init<4>(
                   Shape{channels[1], channels[0] / groups, kernel_size[0], kernel_size[1]}, options, fan_in, fan_out)),
               std::nullopt,
               stride,
               kernel_size,
               dilation,
               groups,
               padding};
  if (bias) layer.bias.emplace(initializer.init<1>(Shape{channels[1]}, options, fan_in, fan_out));
  return layer;
}

Tensor<4> Conv2d::forward(const Tensor<4>& x) const {
  check_channels("Conv2d", x.dims()[1], weight->dims()[1] * groups, x.shape());
  const auto pad = padding.resolve(kernel_size, stride, dilation, "Conv2d");
  return module::conv2d(x, weight.val(), bias_value(bias), module::ConvOptions<2>(stride, pad, dilation, groups));
}

ConvTranspose2d ConvTranspose2dConfig::init(const TensorCreationOptions& options) const {
  constexpr std::string_view who = "ConvTranspose2dConfig";
  check_positive(who, "channels", channels);
  check_positive(who, "kernel_size", kernel_size);
  check_positive(who, "stride", stride);
  check_positive(who, "dilation", dilation);
  check_groups(who, channels[0], channels[1], groups);
  for (std::size_t i = 0; i < 2; ++i)
    if (padding_out[i] >= std::max(stride[i], dilation[i]))
      throw Error(who, fmt::format("padding_out {} must be smaller than the stride {} or the dilation {}", padding_out,
                                   stride, dilation));
  // PyTorch's fan_in for a transposed conv comes from the weight's dim 1.
  const std::size_t fan_in = channels[1] / groups * product(kernel_size);
  const std::size_t fan_out = channels[0] / groups * product(kernel_size);
  ConvTranspose2d layer{
      module::Param(initializer.init<4>(Shape{channels[0], channels[1] / groups, kernel_size[0], kernel_size[1]},
                                        options, fan_in, fan_out)),
      std::nullopt,
      stride,
      kernel_size,
      dilation,
      groups,
      padding,
      padding_out};
  if (bias) layer.bias.emplace(initializer.init<1>(Shape{channels[1]}, options, fan_in, fan_out));
  return layer;
}

Tensor<4> ConvTranspose2d::forward(const Tensor<4>& x) const {
  check_channels("ConvTranspose2d", x.dims()[1], weight->dims()[0], x.shape());
  return module::conv_transpose2d(x, weight.val(), bias_value(bias),
                                  module::ConvTransposeOptions<2>(stride, padding, padding_out, dilation, groups));
}

}  // namespace burn::nn
