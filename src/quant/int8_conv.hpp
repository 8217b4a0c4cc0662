// Int8 2-D convolution for quantized Conv2d layers on host-memory devices:
// each image's int8 input unfolded into rows (im2col), one row per output
// pixel, then multiplied by the layer's int8 weights with the int8 GEMM
// (int8_gemm.hpp), which writes the f32 output channels with their scales
// and bias.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "quant/int8_gemm.hpp"

namespace burn::quant::kernels {

struct Int8Conv2dGeometry {
  std::size_t channels = 0, height = 0, width = 0;  // of one input image
  std::size_t out_channels = 0, kernel_h = 0, kernel_w = 0;
  std::array<std::size_t, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};
  std::size_t groups = 1;

  std::size_t out_height() const;
  std::size_t out_width() const;
};

/// A Conv2d layer's int8 weights as one GEMM operand per group
/// ([in / groups * kh * kw, out / groups]), with the per-output-channel
/// scales (or one scale for all). `weights` makes the layer's values in
/// their [out, in / groups, kh, kw] order when a kernel asks.
std::vector<std::shared_ptr<const Int8Weights>> prepare_int8_conv_weights(const Int8Source& weights,
                                                                          const Int8Conv2dGeometry& g,
                                                                          const std::vector<float>& scales);

/// out [images, out_channels, out_h, out_w] = the convolution of the int8
/// activations x [images, channels, height, width] (|x| <=
/// exact_activation_qmax(), dequantized by x_scale) plus bias (one per output
/// channel, or null).
void int8_conv2d(const std::int8_t* x, std::size_t images, float x_scale, const Int8Conv2dGeometry& g,
                 const std::vector<std::shared_ptr<const Int8Weights>>& weights, const float* bias, float* out);

}  // namespace burn::quant::kernels
