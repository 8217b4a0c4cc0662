// Backward of max, average and adaptive average pooling.
// - max: the cotangent goes to each window's arg-max (scatter-add of the flat
//   indices the forward returns, or recomputes);
// - average: the cotangent divided by each window's divisor, spread over the
//   window by a depthwise transposed conv with a ones kernel;
// - adaptive average: separable, so the transposed per-axis pooling matrices.
#include <algorithm>
#include <array>
#include <cstdint>

#include "autodiff/rules/module_util.hpp"

namespace burn::autodiff {
namespace {

using module_rules::Sizes;

// The flat arg-max indices of every window: the forward's second output, or
// the same pool run again with indices on.
TensorRef max_pool_indices(const ir::MaxPool& op, const VjpArgs& a) {
  if (op.with_indices && a.outputs.size() > 1) return a.outputs[1];
  const TensorRef& x = a.inputs[0];
  ir::MaxPool with = op;
  with.with_indices = true;
  // The device's int dtype, unless it is too narrow for this plane's flat indices.
  with.index_dtype = to_dtype(x->device.settings().int_dtype);
  std::size_t volume = 1;
  for (std::size_t s : module_rules::spatial(x->spec.shape)) volume *= s;
  const std::size_t bits = dtype_size(with.index_dtype) * 8 - (is_signed_int(with.index_dtype) ? 1 : 0);
  if (volume > 1 && bits < 64 && (volume - 1) >> bits) with.index_dtype = DType::I64;
  const std::array<TensorRef, 1> input{x};  // copied: the node still holds x
  return detail::execute(with, input).at(1);
}

// One axis's 1/divisor per output position, with PyTorch's avg-pool rules
// (as the forward): count_include_pad counts the window clipped to the padded
// input, otherwise the real elements only; a window without real elements
// outputs 0 whatever x is, so it passes no gradient on. The divisor of a window is the product of
// its per-axis counts, so these vectors multiply into the full map.
std::vector<double> inverse_divisors(std::size_t in, std::size_t out, std::size_t k, std::size_t s, std::size_t p,
                                     bool count_include_pad) {
  std::vector<double> inv(out);
  const auto in_i = static_cast<std::int64_t>(in), pad = static_cast<std::int64_t>(p);
  for (std::size_t o = 0; o < out; ++o) {
    const std::int64_t start = static_cast<std::int64_t>(o * s) - pad;
    const std::int64_t end = std::min(start + static_cast<std::int64_t>(k), in_i + pad);
    const std::int64_t real = std::min(end, in_i) - std::max<std::int64_t>(start, 0);
    const std::int64_t count = count_include_pad ? end - start : real;
    inv[o] = real > 0 ? 1.0 / static_cast<double>(count) : 0.0;
  }
  return inv;
}

// The 1/divisor map [1, 1, *out] of an avg pool (outer product of the axes).
TensorRef inverse_divisor_map(const ir::AvgPool& op, const Sizes& in, const Sizes& out, const TensorRef& like) {
  std::vector<double> map{1.0};
  for (std::size_t d = 0; d < in.size(); ++d) {
    const auto axis = inverse_divisors(in[d], out[d], op.kernel[d], op.stride[d], op.padding[d], op.count_include_pad);
    std::vector<double> next;
    next.reserve(map.size() * axis.size());
    for (double m : map)
      for (double v : axis) next.push_back(m * v);
    map = std::move(next);
  }
  Sizes shape{1, 1};
  shape.insert(shape.end(), out.begin(), out.end());
  return module_rules::host_constant(map, Shape(shape), like);
}

// Bin o of an adaptive pool covers [floor(o*in/out), ceil((o+1)*in/out)).
module_rules::AxisMap adaptive_matrix(std::size_t in, std::size_t out) {
  module_rules::AxisMap map{out, in, std::vector<double>(out * in, 0.0)};
  for (std::size_t o = 0; o < out; ++o) {
    const std::size_t lo = o * in / out, hi = ((o + 1) * in + out - 1) / out;
    for (std::size_t i = lo; i < hi; ++i) map.m[o * in + i] = 1.0 / static_cast<double>(hi - lo);
  }
  return map;
}

}  // namespace

// The indices output when the forward returned it, else x to recompute them.
SavedValues saved(const ir::MaxPool& op) { return op.with_indices ? kKeepOutput1 : kKeepInput0; }
Grads rule(const ir::MaxPool& op, const VjpArgs& a) {
  Grads out(a.inputs.size());
  if (!wants(a, 0)) return out;  // int inputs have no gradient
  const TensorRef& x = a.inputs[0];
  if (a.cotangents.empty() || !a.cotangents[0] || module_rules::numel(x) == 0) {
    out[0] = zeros_like(x);
    return out;
  }
  const TensorRef& g = *a.cotangents[0];
  const Shape& xs = x->spec.shape;
  std::size_t in_vol = 1, out_vol = 1;
  for (std::size_t s : module_rules::spatial(xs)) in_vol *= s;
  for (std::size_t s : module_rules::spatial(g->spec.shape)) out_vol *= s;
  const Shape flat_out{xs[0], xs[1], out_vol};
  // Overlapping windows may pick the same element: their cotangents add.
  const TensorRef idx = detail::reshape_exact(max_pool_indices(op, a), flat_out);
  // The zeros are handed to the scatter (no other handle), which then adds
  // into them in place instead of into a copy.
  const std::array<TensorRef, 3> scatter_args{
      detail::create(ir::Full{Shape{xs[0], xs[1], in_vol}, 0.0, x->spec.dtype}, x->device), idx,
      detail::reshape_exact(g, flat_out)};
  const TensorRef dx = detail::execute1(ir::Scatter{2, ir::IndexReduce::Add}, scatter_args);
  out[0] = detail::reshape_exact(dx, xs);
  return out;
}

// y[o] = (1/div[o]) * sum of the real elements of window o, window o covering
// positions o*s - p + [0, k): the adjoint spreads g[o]/div[o] over the window,
// which is a depthwise transposed conv (ones kernel, same stride and padding).
SavedValues saved(const ir::AvgPool&) { return kKeepNothing; }
Grads rule(const ir::AvgPool& op, const VjpArgs& a) {
  Grads out(a.inputs.size());
  if (!wants(a, 0)) return out;
  const TensorRef& x = a.inputs[0];
  if (a.cotangents.empty() || !a.cotangents[0] || module_rules::numel(x) == 0) {
    out[0] = zeros_like(x);
    return out;
  }
  const TensorRef& g = *a.cotangents[0];
  const Shape& xs = x->spec.shape;
  const Sizes in = module_rules::spatial(xs), o = module_rules::spatial(g->spec.shape);
  const std::size_t channels = xs[1];

  const TensorRef scaled = detail::binary(ir::BinaryOp::Mul, g, inverse_divisor_map(op, in, o, g));
  Sizes kshape{channels, 1};
  kshape.insert(kshape.end(), op.kernel.begin(), op.kernel.end());
  const TensorRef ones = detail::create(ir::Full{Shape(kshape), 1.0, x->spec.dtype}, x->device);
  // The transposed conv covers (O-1)s + k - 2p positions: in floor mode up to
  // s-1 short of the input (trailing elements no window reached, added back by
  // padding_out), in ceil mode possibly past it (a last window hanging over
  // the end, cut by fit_to).
  Sizes pad_out(in.size()), dilation(in.size(), 1);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::size_t rebuilt = (o[i] - 1) * op.stride[i] + op.kernel[i];
    const std::size_t padded = in[i] + 2 * op.padding[i];
    pad_out[i] = padded > rebuilt ? std::min(padded - rebuilt, op.stride[i] - 1) : 0;
  }
  const TensorRef dx =
      detail::conv_transpose(scaled, ones, std::nullopt, op.stride, op.padding, pad_out, dilation, channels);
  out[0] = module_rules::fit_to(dx, xs);
  return out;
}

SavedValues saved(const ir::AdaptiveAvgPool&) { return kKeepNothing; }
Grads rule(const ir::AdaptiveAvgPool& op, const VjpArgs& a) {
  Grads out(a.inputs.size());
  if (!wants(a, 0)) return out;
  const TensorRef& x = a.inputs[0];
  if (a.cotangents.empty() || !a.cotangents[0] || module_rules::numel(x) == 0) {
    out[0] = zeros_like(x);
    return out;
  }
  const Sizes in = module_rules::spatial(x->spec.shape);
  std::vector<module_rules::AxisMap> maps;
  for (std::size_t d = 0; d < in.size(); ++d) maps.push_back(adaptive_matrix(in[d], op.output_size[d]));
  out[0] = module_rules::apply_transposed(*a.cotangents[0], maps);
  return out;
}

}  // namespace burn::autodiff
