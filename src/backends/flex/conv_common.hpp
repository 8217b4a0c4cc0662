// Shared pieces of conv.cpp and conv_transpose.cpp: contiguous operands,
// oneDNN geometry vectors, the bias-only result of an empty reduction, and
// the dtype plan both follow (run_conv).
#pragma once

#include <type_traits>

#include "backends/flex/dnnl_engine.hpp"
#include "backends/flex/window.hpp"

namespace burn::flex::dnn {

/// Contiguous input, weight and optional bias of a convolution; x may
/// instead be opaque (blocked by a previous convolution, or the copy an
/// earlier kernel kept on the input: see CpuTensor::keep_copy).
struct ConvTensors {
  host::CpuTensorPtr x, w, bias;
  host::CpuTensorPtr input;  ///< input 0 as given, which a kernel may keep its reordered copy on
};

ConvTensors conv_inputs(const Context& ctx, Inputs in, bool has_bias);
/// A convolution-family kernel's activation operand as oneDNN reads it:
/// `input` itself when opaque, else the copy an earlier kernel kept on it
/// (as an opaque tensor; taken from it with `take_kept`), else its
/// row-major data (copied when strided).
host::CpuTensorPtr conv_operand(const Context& ctx, const host::CpuTensorPtr& input, bool take_kept = false);
/// The same tensors widened to f32 (for half dtypes).
ConvTensors widen(const Context& ctx, const ConvTensors& t);
/// y[n, c, ...] = bias[c] (or 0): the result when nothing is summed.
void fill_bias(const ConvTensors& t, host::CpuTensor& y);

/// `shape` with trailing unit dims appended up to n spatial dims (oneDNN
/// needs at least one).
std::vector<std::size_t> unit_spatial(std::vector<std::size_t> shape, std::size_t n);

/// oneDNN's logical dims of a conv weight [OC, IC/G, k...] (unit-padded to n
/// spatial dims): [G, OC/G, IC/G, k...] when grouped, the same bytes as ours.
std::vector<std::size_t> conv_weight_dims(const std::vector<std::size_t>& weight_shape, std::size_t n,
                                          std::size_t groups);

struct ConvGeometry {
  dnnl::memory::dims strides, dilates, pad;
};
/// oneDNN's stride / dilation (d - 1) / padding vectors for n >= 1 axes;
/// missing axes (a 0-D problem run as 1-D) get stride 1, no dilation, no pad.
ConvGeometry conv_geometry(const std::vector<std::size_t>& stride, const std::vector<std::size_t>& padding,
                           const std::vector<std::size_t>& dilation, std::size_t n);

/// The kernel body of conv and conv_transpose: an empty output or an empty
/// reduction (bias only), then oneDNN at the output dtype, halves through
/// f32 when oneDNN has no fast kernel for them, and the direct loop for
/// f32 / f64. `onednn(t, y, data_type)` returns false where oneDNN declines;
/// `loop.template operator()<T>(t, y)` runs the direct loop for T.
template <class Op, class OneDnn, class Loop>
Result run_conv(const Context& ctx, const Op& op, Inputs in, Outputs out, OneDnn&& onednn, Loop&& loop) {
  auto y = ctx.output(out[0]);
  const std::string_view name = ir::op_name(ir::Op(op));
  expect_at_most_3d(name, op.stride.size());
  if (y->num_elements() == 0) return {y};
  const ConvTensors t = conv_inputs(ctx, in, op.has_bias);
  if (t.x->num_elements() == 0 || t.w->num_elements() == 0) {  // nothing to sum (all padding or no channels)
    fill_bias(t, *y);
    return {y};
  }
  const DType dtype = out[0].dtype;
  if (const auto dt = float_type(dtype)) {
    if (onednn(t, *y, *dt)) return {y};
  }
  // Only oneDNN reads a blocked input (a conv kernel's input 0) itself.
  t.x->make_plain();
  if (is_half(dtype)) {
    const ConvTensors t32 = widen(ctx, t);
    auto y32 = ctx.output({out[0].shape, DType::F32});
    if (!onednn(t32, *y32, dnnl::memory::data_type::f32)) loop.template operator()<float>(t32, *y32);
    narrow_from_f32(*y32, *y);
    return {y};
  }
  visit_float_dtype(name, dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) loop.template operator()<T>(t, *y);
  });
  return {y};
}

}  // namespace burn::flex::dnn
