// ConvTranspose2d (the gradient of Conv2d with respect to its input; used to
// upsample), as Burn's ConvTranspose2d:
//
//   auto up = burn::nn::ConvTranspose2dConfig{{16, 8}, {2, 2}}.with_stride({2, 2}).init(device);
//   burn::Tensor<4> y = up.forward(x);   // [batch, 16, h, w] -> [batch, 8, 2h, 2w]
//
// Weight [channels_in, channels_out / groups, kh, kw] and bias [channels_out],
// PyTorch's layout. Output size per axis:
// (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + padding_out + 1.
#pragma once

#include <array>
#include <burn/module/module.hpp>
#include <burn/nn/initializer.hpp>
#include <optional>

namespace burn::nn {

struct ConvTranspose2d {
  module::Param<Tensor<4>> weight;
  std::optional<module::Param<Tensor<1>>> bias;
  std::array<std::size_t, 2> stride{1, 1};
  std::array<std::size_t, 2> kernel_size{1, 1};
  std::array<std::size_t, 2> dilation{1, 1};
  std::size_t groups = 1;
  std::array<std::size_t, 2> padding{0, 0};
  std::array<std::size_t, 2> padding_out{0, 0};
  BURN_MODULE(weight, bias)

  /// x [batch, channels_in, h, w] -> [batch, channels_out, h_out, w_out];
  /// a wrong channel count is a burn::Error("[ConvTranspose2d] ...").
  Tensor<4> forward(const Tensor<4>& x) const;
};

struct ConvTranspose2dConfig {
  std::array<std::size_t, 2> channels{0, 0};  // {in, out}
  std::array<std::size_t, 2> kernel_size{0, 0};
  std::array<std::size_t, 2> stride{1, 1};
  std::array<std::size_t, 2> dilation{1, 1};
  std::size_t groups = 1;
  std::array<std::size_t, 2> padding{0, 0};
  std::array<std::size_t, 2> padding_out{0, 0};
  bool bias = true;
  /// PyTorch's default: uniform in ±1/sqrt(fan_in), fan_in = out / groups * kh * kw
  /// (PyTorch computes it from the weight's dim 1).
  Initializer initializer = Initializer::kaiming_uniform();

  ConvTranspose2dConfig with_stride(std::array<std::size_t, 2> s) const {
    auto c = *this;
    c.stride = s;
    return c;
  }
  ConvTranspose2dConfig with_dilation(std::array<std::size_t, 2> d) const {
    auto c = *this;
    c.dilation = d;
    return c;
  }
  ConvTranspose2dConfig with_groups(std::size_t g) const {
    auto c = *this;
    c.groups = g;
    return c;
  }
  ConvTranspose2dConfig with_padding(std::array<std::size_t, 2> p) const {
    auto c = *this;
    c.padding = p;
    return c;
  }
  ConvTranspose2dConfig with_padding_out(std::array<std::size_t, 2> p) const {
    auto c = *this;
    c.padding_out = p;
    return c;
  }
  ConvTranspose2dConfig with_bias(bool b) const {
    auto c = *this;
    c.bias = b;
    return c;
  }
  ConvTranspose2dConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }

  /// Throws burn::Error("[ConvTranspose2dConfig] ...") for zero sizes, channels
  /// not divisible by groups, or padding_out not below stride or dilation.
  ConvTranspose2d init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
