// Shared pieces of conv.cpp and conv_transpose.cpp: contiguous operands,
// oneDNN geometry vectors, the bias-only result of an empty reduction.
#pragma once

#include "backends/flex/dnnl_engine.hpp"

namespace burn::flex::dnn {

/// Contiguous input, weight and optional bias of a convolution.
struct ConvTensors {
  cpu::CpuTensorPtr x, w, bias;
};

ConvTensors conv_inputs(const Context& ctx, Inputs in, bool has_bias);
/// The same tensors widened to f32 (for half dtypes).
ConvTensors widen(const Context& ctx, const ConvTensors& t);
/// y[n, c, ...] = bias[c] (or 0): the result when nothing is summed.
void fill_bias(const ConvTensors& t, cpu::CpuTensor& y);

/// `shape` with trailing unit dims appended up to n spatial dims (oneDNN
/// needs at least one).
std::vector<std::size_t> unit_spatial(std::vector<std::size_t> shape, std::size_t n);

struct ConvGeometry {
  dnnl::memory::dims strides, dilates, pad;
};
/// oneDNN's stride / dilation (d - 1) / padding vectors for n >= 1 axes;
/// missing axes (a 0-D problem run as 1-D) get stride 1, no dilation, no pad.
ConvGeometry conv_geometry(const std::vector<std::size_t>& stride, const std::vector<std::size_t>& padding,
                           const std::vector<std::size_t>& dilation, std::size_t n);

}  // namespace burn::flex::dnn
