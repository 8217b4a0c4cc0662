// Winograd F(4x4, 3x3) convolution for AVX2 CPUs, where oneDNN 2.6 has no
// Winograd kernel (its own is AVX-512 only). It serves 3x3 stride-1 f32
// convolutions when the device's float32 precision is High, as oneDNN's
// does on AVX-512: each 4x4 output tile costs 36 products per channel pair
// instead of 144, at the price of a looser error bound.
//
// Activations are read and written in oneDNN's nChw8c layout (8 channels
// contiguous), the layout its direct AVX2 kernels use, so a network mixing
// both kinds of convolution never reorders between them, and the 8 channels
// of a pixel are one AVX2 vector in the tile transforms.
#pragma once

#include <cstddef>
#include <span>

namespace burn::flex::winograd {

/// Whether this CPU runs the kernels (AVX2 and FMA).
bool available();

/// A 2-D 3x3 stride-1 convolution, one group, no dilation. Channel counts
/// are multiples of 8 (input) and 16 (output); padding may differ per side
/// only through the output size.
struct Problem {
  std::size_t batch = 0, in_channels = 0, out_channels = 0;
  std::size_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  std::size_t pad_top = 0, pad_left = 0;
  /// Threads of the pool the kernels run on: how the tiles are split, and
  /// so the workspace's size.
  std::size_t threads = 1;
};

/// Whether the kernels take `p`: channel counts as above, and enough output
/// tiles. Each position streams its own weight matrix, 4x the direct
/// kernel's weights in all, so with very few tiles (a 7x7 output at batch
/// 1: 4) the products wait on memory and gain nothing over the direct kernel.
bool takes(const Problem& p);

/// Size in floats of the transformed weights of `in_channels` x `out_channels`.
std::size_t transformed_weight_floats(std::size_t in_channels, std::size_t out_channels);

/// Transforms weights [OC, IC, 3, 3] (row-major) into the 36 matrices the
/// products read (`transformed_weight_floats` floats at `u`).
void transform_weights(const float* w, std::size_t in_channels, std::size_t out_channels, float* u);

/// A step applied to each output after the bias: the fused CPU device's
/// epilogue of a convolution (relu, or a binary op whose second operand is
/// a scalar, one value per output channel, or a tensor in y's layout).
struct EpilogueStep {
  enum class Op { Relu, Add, Sub, Mul, Div } op = Op::Relu;
  enum class Operand { None, Scalar, PerChannel, Full } operand = Operand::None;
  const float* data = nullptr;
};

/// Size in floats of the scratch `convolve` needs for `p`.
std::size_t workspace_floats(const Problem& p);

/// y = epilogue(conv(x, w) + bias): x and y in nChw8c, u from
/// transform_weights, bias (out_channels floats) may be null, `workspace`
/// holds workspace_floats(p).
void convolve(const Problem& p, const float* x, const float* u, const float* bias, float* y, float* workspace,
              std::span<const EpilogueStep> epilogue = {});

}  // namespace burn::flex::winograd
