// Module operations (convolutions, pools, interpolation, embedding, linear).
// Channels-first layouts, as in Burn and PyTorch.
#pragma once

#include <array>
#include <optional>

#include <burn/tensor.hpp>

namespace burn::module {

template <std::size_t N>
struct ConvOptions {
  std::array<std::size_t, N> stride, padding, dilation;
  std::size_t groups = 1;
  ConvOptions() {
    stride.fill(1);
    padding.fill(0);
    dilation.fill(1);
  }
  ConvOptions(std::array<std::size_t, N> s, std::array<std::size_t, N> p, std::array<std::size_t, N> d,
              std::size_t g = 1)
      : stride(s), padding(p), dilation(d), groups(g) {}
};

template <std::size_t N>
struct ConvTransposeOptions {
  std::array<std::size_t, N> stride, padding, padding_out, dilation;
  std::size_t groups = 1;
  ConvTransposeOptions() {
    stride.fill(1);
    padding.fill(0);
    padding_out.fill(0);
    dilation.fill(1);
  }
  ConvTransposeOptions(std::array<std::size_t, N> s, std::array<std::size_t, N> p, std::array<std::size_t, N> po,
                       std::array<std::size_t, N> d, std::size_t g = 1)
      : stride(s), padding(p), padding_out(po), dilation(d), groups(g) {}
};

enum class InterpolateMode { Nearest, Bilinear, Bicubic };
struct InterpolateOptions {
  InterpolateMode mode = InterpolateMode::Nearest;
  bool align_corners = false;
};

}  // namespace burn::module

namespace burn::detail {
using OptRef = std::optional<TensorRef>;
TensorRef conv(const TensorRef& x, const TensorRef& w, const OptRef& bias, std::span<const std::size_t> stride,
               std::span<const std::size_t> padding, std::span<const std::size_t> dilation, std::size_t groups);
TensorRef conv_transpose(const TensorRef& x, const TensorRef& w, const OptRef& bias,
                         std::span<const std::size_t> stride, std::span<const std::size_t> padding,
                         std::span<const std::size_t> padding_out, std::span<const std::size_t> dilation,
                         std::size_t groups);
std::pair<TensorRef, std::optional<TensorRef>> max_pool(const TensorRef& x, std::span<const std::size_t> kernel,
                                                        std::span<const std::size_t> stride,
                                                        std::span<const std::size_t> padding,
                                                        std::span<const std::size_t> dilation, bool ceil_mode,
                                                        bool with_indices);
TensorRef avg_pool(const TensorRef& x, std::span<const std::size_t> kernel, std::span<const std::size_t> stride,
                   std::span<const std::size_t> padding, bool count_include_pad, bool ceil_mode);
TensorRef adaptive_avg_pool(const TensorRef& x, std::span<const std::size_t> output_size);
TensorRef interpolate(const TensorRef& x, std::span<const std::size_t> output_size, module::InterpolateMode mode,
                      bool align_corners);
TensorRef embedding(const TensorRef& weights, const TensorRef& indices);
TensorRef linear(const TensorRef& x, const TensorRef& weight, const OptRef& bias);
TensorRef layer_norm(const TensorRef& x, const TensorRef& weight, const TensorRef& bias, double epsilon);
/// An optional bias as the non-generic functions take it.
template <std::size_t D>
OptRef optional_ref(const std::optional<Tensor<D>>& t) {
  return t ? OptRef(t->ref()) : std::nullopt;
}

}  // namespace burn::detail

namespace burn::module {

/// x [N, C_in, L], weight [C_out, C_in/groups, K], bias [C_out].
inline Tensor<3> conv1d(const Tensor<3>& x, const Tensor<3>& weight, const std::optional<Tensor<1>>& bias,
                        const ConvOptions<1>& o = {}) {
  return Tensor<3>(burn::detail::conv(x.ref(), weight.ref(), burn::detail::optional_ref(bias), o.stride, o.padding,
                                      o.dilation, o.groups));
}
inline Tensor<4> conv2d(const Tensor<4>& x, const Tensor<4>& weight, const std::optional<Tensor<1>>& bias,
                        const ConvOptions<2>& o = {}) {
  return Tensor<4>(burn::detail::conv(x.ref(), weight.ref(), burn::detail::optional_ref(bias), o.stride, o.padding,
                                      o.dilation, o.groups));
}
inline Tensor<5> conv3d(const Tensor<5>& x, const Tensor<5>& weight, const std::optional<Tensor<1>>& bias,
                        const ConvOptions<3>& o = {}) {
  return Tensor<5>(burn::detail::conv(x.ref(), weight.ref(), burn::detail::optional_ref(bias), o.stride, o.padding,
                                      o.dilation, o.groups));
}
/// weight [C_in, C_out/groups, K...].
inline Tensor<3> conv_transpose1d(const Tensor<3>& x, const Tensor<3>& weight, const std::optional<Tensor<1>>& bias,
                                  const ConvTransposeOptions<1>& o = {}) {
  return Tensor<3>(burn::detail::conv_transpose(x.ref(), weight.ref(), burn::detail::optional_ref(bias), o.stride,
                                                o.padding, o.padding_out, o.dilation, o.groups));
}
inline Tensor<4> conv_transpose2d(const Tensor<4>& x, const Tensor<4>& weight, const std::optional<Tensor<1>>& bias,
                                  const ConvTransposeOptions<2>& o = {}) {
  return Tensor<4>(burn::detail::conv_transpose(x.ref(), weight.ref(), burn::detail::optional_ref(bias), o.stride,
                                                o.padding, o.padding_out, o.dilation, o.groups));
}
inline Tensor<5> conv_transpose3d(const Tensor<5>& x, const Tensor<5>& weight, const std::optional<Tensor<1>>& bias,
                                  const ConvTransposeOptions<3>& o = {}) {
  return Tensor<5>(burn::detail::conv_transpose(x.ref(), weight.ref(), burn::detail::optional_ref(bias), o.stride,
                                                o.padding, o.padding_out, o.dilation, o.groups));
}

inline Tensor<3> max_pool1d(const Tensor<3>& x, std::size_t kernel, std::size_t stride, std::size_t padding = 0,
                            std::size_t dilation = 1, bool ceil_mode = false) {
  std::array k{kernel}, s{stride}, p{padding}, d{dilation};
  return Tensor<3>(burn::detail::max_pool(x.ref(), k, s, p, d, ceil_mode, false).first);
}
inline std::pair<Tensor<3>, Tensor<3, Int>> max_pool1d_with_indices(const Tensor<3>& x, std::size_t kernel,
                                                                    std::size_t stride, std::size_t padding = 0,
                                                                    std::size_t dilation = 1, bool ceil_mode = false) {
  std::array k{kernel}, s{stride}, p{padding}, d{dilation};
  auto [v, i] = burn::detail::max_pool(x.ref(), k, s, p, d, ceil_mode, true);
  return {Tensor<3>(v), Tensor<3, Int>(*i)};
}
inline Tensor<4> max_pool2d(const Tensor<4>& x, std::array<std::size_t, 2> kernel, std::array<std::size_t, 2> stride,
                            std::array<std::size_t, 2> padding = {0, 0}, std::array<std::size_t, 2> dilation = {1, 1},
                            bool ceil_mode = false) {
  return Tensor<4>(burn::detail::max_pool(x.ref(), kernel, stride, padding, dilation, ceil_mode, false).first);
}
inline std::pair<Tensor<4>, Tensor<4, Int>> max_pool2d_with_indices(
    const Tensor<4>& x, std::array<std::size_t, 2> kernel, std::array<std::size_t, 2> stride,
    std::array<std::size_t, 2> padding = {0, 0}, std::array<std::size_t, 2> dilation = {1, 1}, bool ceil_mode = false) {
  auto [v, i] = burn::detail::max_pool(x.ref(), kernel, stride, padding, dilation, ceil_mode, true);
  return {Tensor<4>(v), Tensor<4, Int>(*i)};
}
inline Tensor<3> avg_pool1d(const Tensor<3>& x, std::size_t kernel, std::size_t stride, std::size_t padding = 0,
                            bool count_include_pad = true, bool ceil_mode = false) {
  std::array k{kernel}, s{stride}, p{padding};
  return Tensor<3>(burn::detail::avg_pool(x.ref(), k, s, p, count_include_pad, ceil_mode));
}
inline Tensor<4> avg_pool2d(const Tensor<4>& x, std::array<std::size_t, 2> kernel, std::array<std::size_t, 2> stride,
                            std::array<std::size_t, 2> padding = {0, 0}, bool count_include_pad = true,
                            bool ceil_mode = false) {
  return Tensor<4>(burn::detail::avg_pool(x.ref(), kernel, stride, padding, count_include_pad, ceil_mode));
}
inline Tensor<3> adaptive_avg_pool1d(const Tensor<3>& x, std::size_t output_size) {
  std::array o{output_size};
  return Tensor<3>(burn::detail::adaptive_avg_pool(x.ref(), o));
}
inline Tensor<4> adaptive_avg_pool2d(const Tensor<4>& x, std::array<std::size_t, 2> output_size) {
  return Tensor<4>(burn::detail::adaptive_avg_pool(x.ref(), output_size));
}
/// Resizes the spatial dims of [N, C, H, W] to output_size.
inline Tensor<4> interpolate(const Tensor<4>& x, std::array<std::size_t, 2> output_size, InterpolateOptions o = {}) {
  return Tensor<4>(burn::detail::interpolate(x.ref(), output_size, o.mode, o.align_corners));
}
/// weights [n_embedding, d_model], indices [batch, seq] -> [batch, seq, d_model].
inline Tensor<3> embedding(const Tensor<2>& weights, const Tensor<2, Int>& indices) {
  return Tensor<3>(burn::detail::embedding(weights.ref(), indices.ref()));
}
/// Layer normalisation over the last dim, PyTorch's F.layer_norm with
/// normalized_shape [n]: (x - mean) / sqrt(var + epsilon) * weight + bias
/// with the biased variance; x [..., n], weight and bias [n]. One kernel
/// where the device has it (flex, cpu, libtorch: one read of x, one write),
/// the same formula as separate ops elsewhere. Differentiable.
template <std::size_t D>
Tensor<D> layer_norm(const Tensor<D>& x, const Tensor<1>& weight, const Tensor<1>& bias, double epsilon = 1e-5) {
  return Tensor<D>(burn::detail::layer_norm(x.ref(), weight.ref(), bias.ref(), epsilon));
}
/// x [..., d_in] * weight [d_in, d_out] + bias [d_out] (Burn's weight layout).
template <std::size_t D>
Tensor<D> linear(const Tensor<D>& x, const Tensor<2>& weight, const std::optional<Tensor<1>>& bias) {
  return Tensor<D>(
      burn::detail::linear(x.ref(), weight.ref(), bias ? burn::detail::OptRef(bias->ref()) : std::nullopt));
}

}  // namespace burn::module
