// Conv1d over [batch, channels_in, length], as Burn's Conv1d:
//
//   auto conv = burn::nn::Conv1dConfig{16, 32, 3}.with_padding(burn::nn::PaddingConfig1d::same()).init(device);
//   burn::Tensor<3> y = conv.forward(x);   // [batch, 16, L] -> [batch, 32, L]
//
// Weight [channels_out, channels_in / groups, kernel_size] and bias
// [channels_out], PyTorch's layout, so its state_dicts load unchanged.
#pragma once

#include <burn/module/module.hpp>
#include <burn/nn/initializer.hpp>
#include <burn/nn/padding.hpp>
#include <optional>

namespace burn::nn {

struct Conv1d {
  module::Param<Tensor<3>> weight;
  std::optional<module::Param<Tensor<1>>> bias;
  std::size_t stride = 1;
  std::size_t kernel_size = 1;
  std::size_t dilation = 1;
  std::size_t groups = 1;
  PaddingConfig1d padding = PaddingConfig1d::valid();
  BURN_MODULE(weight, bias)

  /// x [batch, channels_in, length] -> [batch, channels_out, length_out];
  /// a wrong channel count is a burn::Error("[Conv1d] ...").
  Tensor<3> forward(const Tensor<3>& x) const;
};

struct Conv1dConfig {
  std::size_t channels_in = 0;
  std::size_t channels_out = 0;
  std::size_t kernel_size = 0;
  std::size_t stride = 1;
  std::size_t dilation = 1;
  std::size_t groups = 1;
  PaddingConfig1d padding = PaddingConfig1d::valid();
  bool bias = true;
  /// PyTorch's default: uniform in ±1/sqrt(fan_in), fan_in = channels_in / groups * kernel_size.
  Initializer initializer = Initializer::kaiming_uniform();

  Conv1dConfig with_stride(std::size_t s) const {
    auto c = *this;
    c.stride = s;
    return c;
  }
  Conv1dConfig with_dilation(std::size_t d) const {
    auto c = *this;
    c.dilation = d;
    return c;
  }
  Conv1dConfig with_groups(std::size_t g) const {
    auto c = *this;
    c.groups = g;
    return c;
  }
  Conv1dConfig with_padding(PaddingConfig1d p) const {
    auto c = *this;
    c.padding = p;
    return c;
  }
  Conv1dConfig with_bias(bool b) const {
    auto c = *this;
    c.bias = b;
    return c;
  }
  Conv1dConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }

  /// Throws burn::Error("[Conv1dConfig] ...") for zero sizes, channels not
  /// divisible by groups, or same padding that cannot keep the length.
  Conv1d init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
