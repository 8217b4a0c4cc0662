// Elementwise ops on convolution outputs in oneDNN's activation layouts.
// oneDNN's fast convolutions write channels-last (NHWC) or channel-blocked
// (nChw16c with AVX-512, nChw8c with AVX2) activations, which
// blocked_layout.hpp keeps as opaque layouts; the batch norm, ReLU and
// residual add between two convolutions used to make them row-major first,
// and the next convolution reordered them back — two full passes over every
// activation, 23% of ResNet-18's time at batch 32. Each of these layouts is
// the logical tensor with its dims permuted (and, for the blocked ones, C
// split into C/16 and 16 or C/8 and 8), so an elementwise op runs on them
// as on any dense tensor once every operand is viewed in that physical dim
// order, and its result keeps the layout.
#pragma once

#include <optional>
#include <span>

#include "backends/flex/kernels.hpp"

namespace burn::flex::dnn {

/// The activation layouts elementwise ops run in directly.
enum class ActivationLayout {
  ChannelsLast,  ///< nwc / nhwc / ndhwc
  Blocked8,      ///< nCw8c / nChw8c / nCdhw8c with C a multiple of 8 (no padding)
  Blocked16,     ///< nCw16c / nChw16c / nCdhw16c with C a multiple of 16 (no padding)
};

/// The layout of an opaque tensor, when it is one of those at its own shape.
std::optional<ActivationLayout> activation_layout(const host::CpuTensor& t);

/// Runs the elementwise `op` (unary, binary, clamp, cast, mask fill, mask
/// where) on inputs of which the opaque ones are all in activation layouts
/// at the output's shape (see loop_layout), leaving the result in the first
/// one's layout; nullptr
/// when that does not apply (the caller then makes the inputs row-major as
/// for any op).
host::CpuTensorPtr elementwise_in_layout(const Context& ctx, const ir::Op& op, Inputs in, const ir::TensorSpec& out);

/// A reshape of such a tensor that keeps N and C and regroups only the
/// spatial dims (batch norm's [N, C, H, W] -> [N, C, H*W] and back) is a view
/// of the same bytes in the same layout. nullptr for any other reshape or
/// input.
host::CpuTensorPtr reshape_in_layout(const ir::Op& op, Inputs in, const ir::TensorSpec& out);

// The pieces, for the fused CPU backend's elementwise groups, which run the
// same way over their own loop:

/// The layout an elementwise loop over `shape` producing `out_dtypes` runs
/// in: the first opaque input's, when every opaque input is in one of the
/// two layouts at `shape`, every input has the loop's rank, and each output
/// dtype can hold the layout. nullopt: the loop runs row-major.
std::optional<ActivationLayout> loop_layout(Inputs in, const host::Extents& shape, std::span<const DType> out_dtypes);
/// `shape` in the layout's memory order (channels-last: N, spatial dims, C;
/// blocked: N, C/block, spatial dims, block).
host::Extents physical_shape(ActivationLayout layout, const host::Extents& shape);
/// An input of such a loop viewed in that order: the opaque bytes as
/// row-major (reordered first when in the other layout), a plain tensor
/// (broadcast dims included) through strides.
host::CpuTensorPtr physical_view(const Context& ctx, ActivationLayout layout, const host::CpuTensor& t);
/// A result computed row-major in that order, as the logical tensor of
/// `shape`, opaque in `layout`.
host::CpuTensorPtr from_physical(const Context& ctx, ActivationLayout layout, host::CpuTensorPtr physical,
                                 const host::Extents& shape);

}  // namespace burn::flex::dnn
