// Conv2d over [batch, channels_in, height, width], as Burn's Conv2d:
//
//   auto conv = burn::nn::Conv2dConfig{{1, 32}, {3, 3}}.with_padding(burn::nn::PaddingConfig2d::same()).init(device);
//   burn::Tensor<4> y = conv.forward(x);   // [batch, 1, 28, 28] -> [batch, 32, 28, 28]
//
// Weight [channels_out, channels_in / groups, kh, kw] and bias [channels_out],
// PyTorch's layout, so its state_dicts load unchanged.
#pragma once

#include <array>
#include <burn/module/module.hpp>
#include <burn/nn/initializer.hpp>
#include <burn/nn/padding.hpp>
#include <optional>

namespace burn::nn {

struct Conv2d {
  module::Param<Tensor<4>> weight;
  std::optional<module::Param<Tensor<1>>> bias;
  std::array<std::size_t, 2> stride{1, 1};
  std::array<std::size_t, 2> kernel_size{1, 1};
  std::array<std::size_t, 2> dilation{1, 1};
  std::size_t groups = 1;
  PaddingConfig2d padding = PaddingConfig2d::valid();
  BURN_MODULE(weight, bias)

  /// x [batch, channels_in, h, w] -> [batch, channels_out, h_out, w_out];
  /// a wrong channel count is a burn::Error("[Conv2d] ...").
  Tensor<4> forward(const Tensor<4>& x) const;
};

struct Conv2dConfig {
  std::array<std::size_t, 2> channels{0, 0};  // {in, out}
  std::array<std::size_t, 2> kernel_size{0, 0};
  std::array<std::size_t, 2> stride{1, 1};
  std::array<std::size_t, 2> dilation{1, 1};
  std::size_t groups = 1;
  PaddingConfig2d padding = PaddingConfig2d::valid();
  bool bias = true;
  /// PyTorch's default: uniform in ±1/sqrt(fan_in), fan_in = in / groups * kh * kw.
  Initializer initializer = Initializer::kaiming_uniform();

  Conv2dConfig with_stride(std::array<std::size_t, 2> s) const {
    auto c = *this;
    c.stride = s;
    return c;
  }
  Conv2dConfig with_dilation(std::array<std::size_t, 2> d) const {
    auto c = *this;
    c.dilation = d;
    return c;
  }
  Conv2dConfig with_groups(std::size_t g) const {
    auto c = *this;
    c.groups = g;
    return c;
  }
  Conv2dConfig with_padding(PaddingConfig2d p) const {
    auto c = *this;
    c.padding = p;
    return c;
  }
  Conv2dConfig with_bias(bool b) const {
    auto c = *this;
    c.bias = b;
    return c;
  }
  Conv2dConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }

  /// Throws burn::Error("[Conv2dConfig] ...") for zero sizes, channels not
  /// divisible by groups, or same padding that cannot keep the size.
  Conv2d init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
