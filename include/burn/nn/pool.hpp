// Pooling layers, as Burn's: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d.
// They hold no tensors (BURN_MODULE() with no fields) and only constants.
//
//   auto pool = burn::nn::MaxPool2dConfig{{2, 2}}.with_strides({2, 2}).init();
//   burn::Tensor<4> y = pool.forward(x);   // [batch, c, 28, 28] -> [batch, c, 14, 14]
//
// Strides default to 1 as in Burn (PyTorch defaults them to the kernel size).
// Padding may be at most half the kernel; max pools pad with -inf and average
// pools with zeros (counted in the divisor unless count_include_pad is false).
#pragma once

#include <array>
#include <burn/module/module.hpp>
#include <burn/nn/padding.hpp>

namespace burn::nn {

struct MaxPool1d {
  std::size_t kernel_size = 1;
  std::size_t stride = 1;
  PaddingConfig1d padding = PaddingConfig1d::valid();
  std::size_t dilation = 1;
  bool ceil_mode = false;
  BURN_MODULE()
  /// [batch, channels, length] -> [batch, channels, length_out].
  Tensor<3> forward(const Tensor<3>& x) const;
};

struct MaxPool1dConfig {
  std::size_t kernel_size = 0;
  std::size_t stride = 1;
  PaddingConfig1d padding = PaddingConfig1d::valid();
  std::size_t dilation = 1;
  bool ceil_mode = false;
  MaxPool1dConfig with_stride(std::size_t s) const {
    auto c = *this;
    c.stride = s;
    return c;
  }
  MaxPool1dConfig with_padding(PaddingConfig1d p) const {
    auto c = *this;
    c.padding = p;
    return c;
  }
  MaxPool1dConfig with_dilation(std::size_t d) const {
    auto c = *this;
    c.dilation = d;
    return c;
  }
  MaxPool1dConfig with_ceil_mode(bool m) const {
    auto c = *this;
    c.ceil_mode = m;
    return c;
  }
  /// nn.MaxPool1d(kernel_size)'s defaults: stride = kernel_size (Burn's
  /// default stride is 1).
  static MaxPool1dConfig pytorch_defaults(std::size_t kernel_size) {
    MaxPool1dConfig c;
    c.kernel_size = kernel_size;
    return c.with_stride(kernel_size);
  }
  /// Throws burn::Error("[MaxPool1dConfig] ...") for zero sizes or padding above half the kernel.
  MaxPool1d init() const;
};

struct MaxPool2d {
  std::array<std::size_t, 2> kernel_size{1, 1};
  std::array<std::size_t, 2> strides{1, 1};
  PaddingConfig2d padding = PaddingConfig2d::valid();
  std::array<std::size_t, 2> dilation{1, 1};
  bool ceil_mode = false;
  BURN_MODULE()
  /// [batch, channels, h, w] -> [batch, channels, h_out, w_out].
  Tensor<4> forward(const Tensor<4>& x) const;
};

struct MaxPool2dConfig {
  std::array<std::size_t, 2> kernel_size{0, 0};
  std::array<std::size_t, 2> strides{1, 1};
  PaddingConfig2d padding = PaddingConfig2d::valid();
  std::array<std::size_t, 2> dilation{1, 1};
  bool ceil_mode = false;
  MaxPool2dConfig with_strides(std::array<std::size_t, 2> s) const {
    auto c = *this;
    c.strides = s;
    return c;
  }
  MaxPool2dConfig with_padding(PaddingConfig2d p) const {
    auto c = *this;
    c.padding = p;
    return c;
  }
  MaxPool2dConfig with_dilation(std::array<std::size_t, 2> d) const {
    auto c = *this;
    c.dilation = d;
    return c;
  }
  MaxPool2dConfig with_ceil_mode(bool m) const {
    auto c = *this;
    c.ceil_mode = m;
    return c;
  }
  /// nn.MaxPool2d(kernel_size)'s defaults: strides = kernel_size (Burn's
  /// default stride is 1).
  static MaxPool2dConfig pytorch_defaults(std::array<std::size_t, 2> kernel_size) {
    MaxPool2dConfig c;
    c.kernel_size = kernel_size;
    return c.with_strides(kernel_size);
  }
  /// Throws burn::Error("[MaxPool2dConfig] ...") for zero sizes or padding above half the kernel.
  MaxPool2d init() const;
};

struct AvgPool1d {
  std::size_t kernel_size = 1;
  std::size_t stride = 1;
  PaddingConfig1d padding = PaddingConfig1d::valid();
  bool count_include_pad = true;
  bool ceil_mode = false;
  BURN_MODULE()
  Tensor<3> forward(const Tensor<3>& x) const;
};

struct AvgPool1dConfig {
  std::size_t kernel_size = 0;
  std::size_t stride = 1;
  PaddingConfig1d padding = PaddingConfig1d::valid();
  bool count_include_pad = true;
  bool ceil_mode = false;
  AvgPool1dConfig with_stride(std::size_t s) const {
    auto c = *this;
    c.stride = s;
    return c;
  }
  AvgPool1dConfig with_padding(PaddingConfig1d p) const {
    auto c = *this;
    c.padding = p;
    return c;
  }
  AvgPool1dConfig with_count_include_pad(bool b) const {
    auto c = *this;
    c.count_include_pad = b;
    return c;
  }
  AvgPool1dConfig with_ceil_mode(bool m) const {
    auto c = *this;
    c.ceil_mode = m;
    return c;
  }
  /// nn.AvgPool1d(kernel_size)'s defaults: stride = kernel_size (Burn's
  /// default stride is 1).
  static AvgPool1dConfig pytorch_defaults(std::size_t kernel_size) {
    AvgPool1dConfig c;
    c.kernel_size = kernel_size;
    return c.with_stride(kernel_size);
  }
  /// Throws burn::Error("[AvgPool1dConfig] ...") for zero sizes or padding above half the kernel.
  AvgPool1d init() const;
};

struct AvgPool2d {
  std::array<std::size_t, 2> kernel_size{1, 1};
  std::array<std::size_t, 2> strides{1, 1};
  PaddingConfig2d padding = PaddingConfig2d::valid();
  bool count_include_pad = true;
  bool ceil_mode = false;
  BURN_MODULE()
  Tensor<4> forward(const Tensor<4>& x) const;
};

struct AvgPool2dConfig {
  std::array<std::size_t, 2> kernel_size{0, 0};
  std::array<std::size_t, 2> strides{1, 1};
  PaddingConfig2d padding = PaddingConfig2d::valid();
  bool count_include_pad = true;
  bool ceil_mode = false;
  AvgPool2dConfig with_strides(std::array<std::size_t, 2> s) const {
    auto c = *this;
    c.strides = s;
    return c;
  }
  AvgPool2dConfig with_padding(PaddingConfig2d p) const {
    auto c = *this;
    c.padding = p;
    return c;
  }
  AvgPool2dConfig with_count_include_pad(bool b) const {
    auto c = *this;
    c.count_include_pad = b;
    return c;
  }
  AvgPool2dConfig with_ceil_mode(bool m) const {
    auto c = *this;
    c.ceil_mode = m;
    return c;
  }
  /// nn.AvgPool2d(kernel_size)'s defaults: strides = kernel_size (Burn's
  /// default stride is 1).
  static AvgPool2dConfig pytorch_defaults(std::array<std::size_t, 2> kernel_size) {
    AvgPool2dConfig c;
    c.kernel_size = kernel_size;
    return c.with_strides(kernel_size);
  }
  /// Throws burn::Error("[AvgPool2dConfig] ...") for zero sizes or padding above half the kernel.
  AvgPool2d init() const;
};

/// Averages over windows chosen so the output has `output_size` (PyTorch's bins:
/// start floor(i * in / out), end ceil((i + 1) * in / out)).
struct AdaptiveAvgPool1d {
  std::size_t output_size = 1;
  BURN_MODULE()
  Tensor<3> forward(const Tensor<3>& x) const;
};

struct AdaptiveAvgPool1dConfig {
  std::size_t output_size = 0;
  /// Throws burn::Error("[AdaptiveAvgPool1dConfig] ...") for a zero size.
  AdaptiveAvgPool1d init() const;
};

struct AdaptiveAvgPool2d {
  std::array<std::size_t, 2> output_size{1, 1};
  BURN_MODULE()
  Tensor<4> forward(const Tensor<4>& x) const;
};

struct AdaptiveAvgPool2dConfig {
  std::array<std::size_t, 2> output_size{0, 0};
  /// Throws burn::Error("[AdaptiveAvgPool2dConfig] ...") for a zero size.
  AdaptiveAvgPool2d init() const;
};

}  // namespace burn::nn
