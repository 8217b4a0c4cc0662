// The weight gradient of a stride-1 f32 convolution on AVX2 CPUs, read from
// row-major activations and output gradients.
//
// oneDNN 2.6's AVX2 backward-weights kernel reads both operands in nChw8c,
// so a training step whose activations are row-major (batch norm, relu and
// pooling between the convolutions write them so) paid a reorder of each
// into that layout on every step; and it pads the input channels to 8, so a
// network's first layer (1-3 image channels) did 8x the work of its
// gradient. This kernel computes
//
//   dW[oc][ic][kh][kw] = sum over n, oh, ow of g[n][oc][oh][ow] * x[n][ic][oh + kh*dh - pad][ow + kw*dw - pad]
//
// as a product over every output pixel: each register block holds 16
// output channels (two AVX2 vectors) x 6 (ic, kh, kw) columns, and takes per
// pixel the 16 channels' gradients (from a transposed copy of a few rows of
// g) and one input value per column (broadcast from a copy of x with its
// zero padding written out).
#pragma once

#include <cstddef>

namespace burn::flex::weight_grad_avx2 {

/// Whether this CPU runs the kernel (AVX2 and FMA).
bool available();

/// A 1-D or 2-D convolution with stride 1 and one group (1-D: in_h, out_h,
/// kernel_h 1 and pad_top 0). dilation_* are the dilations themselves (1:
/// none).
struct Problem {
  std::size_t batch = 0, in_channels = 0, out_channels = 0;
  std::size_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  std::size_t kernel_h = 0, kernel_w = 0;
  std::size_t pad_top = 0, pad_left = 0;
  std::size_t dilation_h = 1, dilation_w = 1;
};

/// Whether the kernel takes `p`: every size positive. (Any output size is
/// summed correctly: each output pixel reads the input at its taps, zero
/// outside it.)
bool takes(const Problem& p);

/// Size in floats of the scratch `weight_grad` needs (the padded input and
/// the sums).
std::size_t workspace_floats(const Problem& p);

/// dw [OC, IC, KH, KW] = the weight gradient of x [N, IC, H, W] and
/// g [N, OC, OH, OW], all row-major; `workspace` holds workspace_floats(p).
void weight_grad(const Problem& p, const float* x, const float* g, float* dw, float* workspace);

}  // namespace burn::flex::weight_grad_avx2
