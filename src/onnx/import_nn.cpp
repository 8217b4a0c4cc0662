// The ONNX operators of neural-network layers import runs: MatMul and Gemm,
// Pad, convolutions, pooling, normalizations, DepthToSpace and Resize (the
// recurrent ones are in import_rnn.cpp, the quantized ones in
// import_quant.cpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include <burn/detail/ops.hpp>
#include <burn/module/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_common.hpp"

namespace burn::onnx {
namespace {

// ---- matmul -----------------------------------------------------------------------------------

TensorRef matmul(const NodeArgs& a, TensorRef x, TensorRef y) {
  // numpy's rules: a 1-D left operand is a row, a 1-D right one a column, removed again after.
  const bool x_vec = rank_of(x) == 1, y_vec = rank_of(y) == 1;
  if (rank_of(x) == 0 || rank_of(y) == 0) a.fail("matmul operands must have at least one dim");
  if (x_vec) x = detail::unsqueeze_dim(x, 0);
  if (y_vec) y = detail::unsqueeze_dim(y, 1);
  auto [l, r] = align_ranks(x, y);
  TensorRef out = detail::matmul(l, r);
  if (y_vec) out = detail::squeeze_dim(out, -1);
  if (x_vec) out = detail::squeeze_dim(out, y_vec ? -1 : -2);
  return out;
}

std::vector<TensorRef> matmul_op(const NodeArgs& a) { return one(matmul(a, a.in(0), a.in(1))); }

std::vector<TensorRef> gemm(const NodeArgs& a) {
  TensorRef x = a.in(0), y = a.in(1);
  if (rank_of(x) != 2 || rank_of(y) != 2) a.fail("Gemm takes 2-D A and B");
  if (a.attr_int("transA", 0)) x = detail::swap_dims(x, 0, 1);
  if (a.attr_int("transB", 0)) y = detail::swap_dims(y, 0, 1);
  TensorRef out = detail::matmul(x, y);
  const double alpha = a.attr_float("alpha", 1.0F), beta = a.attr_float("beta", 1.0F);
  if (alpha != 1.0) out = detail::binary_scalar(ir::BinaryOp::Mul, out, alpha);
  if (a.has(2) && beta != 0.0) {
    TensorRef c = a.in(2);
    if (beta != 1.0) c = detail::binary_scalar(ir::BinaryOp::Mul, c, beta);
    out = broadcast_binary(ir::BinaryOp::Add, out, c);
  }
  return one(out);
}

// ---- neural-network layers --------------------------------------------------------------------

/// Symmetric pads per spatial dim from ONNX's [begin..., end...]; asymmetric ones are an error.
/// `x` padded along each dim d by begins[d] elements before and ends[d]
/// after (negative: that many cropped), as ONNX's Pad: "constant" (`value`),
/// "reflect" (mirrored, the edge not repeated), "edge" (the edge repeated)
/// or "wrap" (the other end's elements, as if the axis were a circle).
TensorRef pad_dims(const NodeArgs& a, TensorRef x, const I64s& begins, const I64s& ends, std::string_view mode,
                   double value) {
  const std::size_t r = rank_of(x);
  for (std::size_t d = 0; d < r; ++d) {
    const std::int64_t cut_b = std::min<std::int64_t>(begins[d], 0), cut_e = std::min<std::int64_t>(ends[d], 0);
    if (cut_b == 0 && cut_e == 0) continue;
    const std::int64_t len = static_cast<std::int64_t>(shape_of(x)[d]) + cut_b + cut_e;
    if (len < 0)
      a.fail(
          fmt::format("negative pads crop {} elements from axis {} of length {}", -(cut_b + cut_e), d, shape_of(x)[d]));
    x = detail::narrow(x, static_cast<std::int64_t>(d), -cut_b, static_cast<std::size_t>(len));
  }
  const DType dtype = dtype_of(x);
  for (std::size_t d = 0; d < r; ++d) {
    const auto before = static_cast<std::size_t>(std::max<std::int64_t>(begins[d], 0));
    const auto after = static_cast<std::size_t>(std::max<std::int64_t>(ends[d], 0));
    if (before == 0 && after == 0) continue;
    const std::size_t dim = shape_of(x)[d];
    const auto axis_d = static_cast<std::int64_t>(d);
    auto side = [&](std::size_t count, bool leading) -> TensorRef {
      if (mode == "constant") {
        Shape shape = shape_of(x);
        shape.dims()[d] = count;
        return detail::full(shape, scalar_for(dtype, value), TensorCreationOptions(a.device(), dtype), kind_for(dtype));
      }
      if (mode == "edge") {
        if (dim == 0) a.fail(fmt::format("edge padding of axis {}, which is empty", d));
        return detail::repeat_dim(detail::narrow(x, axis_d, leading ? 0 : static_cast<std::int64_t>(dim) - 1, 1),
                                  axis_d, count);
      }
      if (mode == "wrap") {
        if (count > dim)
          a.fail(fmt::format("wrap padding of {} on axis {} of length {} (at most the length)", count, d, dim));
        return detail::narrow(x, axis_d, leading ? static_cast<std::int64_t>(dim - count) : 0, count);
      }
      // reflect: the `count` elements next to the edge, mirrored.
      if (count + 1 > dim)
        a.fail(fmt::format("reflect padding of {} on axis {} of length {} (at most length - 1)", count, d, dim));
      const std::int64_t start = leading ? 1 : static_cast<std::int64_t>(dim - 1 - count);
      const std::int64_t axes[] = {axis_d};
      return detail::flip(detail::narrow(x, axis_d, start, count), axes);
    };
    std::vector<TensorRef> parts;
    if (before) parts.push_back(side(before, true));
    parts.push_back(x);
    if (after) parts.push_back(side(after, false));
    x = detail::cat(parts, axis_d);
  }
  return x;
}

std::vector<TensorRef> pad(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  const std::string mode = a.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    a.fail(fmt::format("mode '{}' is not one of constant, reflect, edge, wrap", mode));
  // Opset 18's axes (input 3) name the axes the pads are for; every axis otherwise.
  I64s axes;
  if (a.has(3)) {
    for (const auto ax : a.ints(3)) axes.push_back(static_cast<std::int64_t>(axis(a, ax, r)));
  } else {
    for (std::size_t d = 0; d < r; ++d) axes.push_back(static_cast<std::int64_t>(d));
  }
  const I64s pads = a.ints(1);
  const std::size_t n = axes.size();
  if (pads.size() != 2 * n) a.fail(fmt::format("pads has {} entries for {} padded axes (2 per axis)", pads.size(), n));
  I64s begins(r, 0), ends(r, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto d = static_cast<std::size_t>(axes[i]);
    begins[d] = pads[i];
    ends[d] = pads[i + n];
  }
  const double value = a.has(2) ? a.scalar(2) : 0.0;
  return one(pad_dims(a, x, begins, ends, mode, value));
}

/// A convolution's or pool's padding per spatial dim, before and after.
struct SpatialPads {
  I64s begin, end;
};

/// The pads attribute, or auto_pad's: SAME_UPPER / SAME_LOWER give an
/// output of ceil(input / stride) with the odd element of padding after
/// (upper) or before (lower), VALID none. `kernel` and `dilation` per
/// spatial dim (SAME needs them).
SpatialPads spatial_pads(const NodeArgs& a, const TensorRef& x, const std::vector<std::size_t>& kernel,
                         const std::vector<std::size_t>& stride, const std::vector<std::size_t>& dilation) {
  const std::size_t n = kernel.size();
  SpatialPads pads{I64s(n, 0), I64s(n, 0)};
  const std::string auto_pad = a.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (std::size_t i = 0; i < n; ++i) {
      const auto in = static_cast<std::int64_t>(shape_of(x)[2 + i]);
      const auto s = static_cast<std::int64_t>(stride[i]);
      const auto span = static_cast<std::int64_t>((std::max<std::size_t>(kernel[i], 1) - 1) * dilation[i] + 1);
      const std::int64_t total = std::max<std::int64_t>(((in + s - 1) / s - 1) * s + span - in, 0);
      const std::int64_t small = total / 2, large = total - small;
      pads.begin[i] = auto_pad == "SAME_UPPER" ? small : large;
      pads.end[i] = auto_pad == "SAME_UPPER" ? large : small;
    }
    return pads;
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID")
    a.fail(fmt::format("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad));
  if (auto p = a.attr_ints("pads"); p && auto_pad == "NOTSET") {
    if (p->size() != 2 * n) a.fail(fmt::format("pads has {} entries for {} spatial dims", p->size(), n));
    for (std::size_t i = 0; i < n; ++i) {
      if ((*p)[i] < 0 || (*p)[i + n] < 0) a.fail("negative pads are not supported: crop with a Slice node");
      pads.begin[i] = (*p)[i];
      pads.end[i] = (*p)[i + n];
    }
  }
  return pads;
}

/// The padding burn's kernels take (the same on both sides: the smaller
/// of before and after); the rest, when asymmetric, is applied to `x` first
/// with `fill` (0 for a convolution, the lowest value for a max pool).
std::vector<std::size_t> symmetric_part(const NodeArgs& a, TensorRef& x, const SpatialPads& pads, double fill) {
  const std::size_t n = pads.begin.size();
  std::vector<std::size_t> sym(n);
  I64s extra_begin(n + 2, 0), extra_end(n + 2, 0);
  bool asymmetric = false;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t common = std::min(pads.begin[i], pads.end[i]);
    sym[i] = static_cast<std::size_t>(common);
    extra_begin[2 + i] = pads.begin[i] - common;
    extra_end[2 + i] = pads.end[i] - common;
    asymmetric = asymmetric || extra_begin[2 + i] != 0 || extra_end[2 + i] != 0;
  }
  if (asymmetric) x = pad_dims(a, x, extra_begin, extra_end, "constant", fill);
  return sym;
}

std::vector<std::size_t> spatial(const NodeArgs& a, std::string_view name, std::size_t n, std::size_t fallback) {
  std::vector<std::size_t> out(n, fallback);
  if (auto v = a.attr_ints(name)) {
    if (v->size() != n) a.fail(fmt::format("{} has {} entries for {} spatial dims", name, v->size(), n));
    for (std::size_t i = 0; i < n; ++i) {
      if ((*v)[i] < 1) a.fail(fmt::format("{} entries must be at least 1", name));
      out[i] = static_cast<std::size_t>((*v)[i]);
    }
  }
  return out;
}

/// The kernel's spatial dims from a weight of shape [OC, IC/G, k...].
std::vector<std::size_t> kernel_of(const TensorRef& w) {
  const auto& dims = shape_of(w).dims();
  return {dims.begin() + 2, dims.end()};
}

TensorRef conv_with(const NodeArgs& a, TensorRef x, const TensorRef& w, const std::optional<TensorRef>& bias) {
  if (rank_of(x) < 3) a.fail("the input needs a batch, a channel and at least one spatial dim");
  const std::size_t n = rank_of(x) - 2;
  if (rank_of(w) != n + 2) a.fail("the weight's rank must be the input's");
  const auto stride = spatial(a, "strides", n, 1), dilation = spatial(a, "dilations", n, 1);
  const auto padding = symmetric_part(a, x, spatial_pads(a, x, kernel_of(w), stride, dilation), 0.0);
  return detail::conv(x, w, bias, stride, padding, dilation, static_cast<std::size_t>(a.attr_int("group", 1)));
}

std::vector<TensorRef> conv(const NodeArgs& a) {
  std::optional<TensorRef> bias;
  if (a.has(2)) bias = a.in(2);
  return one(conv_with(a, a.in(0), a.in(1), bias));
}

std::vector<TensorRef> conv_transpose(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  if (rank_of(x) < 3) a.fail("the input needs a batch, a channel and at least one spatial dim");
  const std::size_t n = rank_of(x) - 2;
  std::optional<TensorRef> bias;
  if (a.has(2)) bias = a.in(2);
  std::vector<std::size_t> out_pad(n, 0);
  if (auto v = a.attr_ints("output_padding"))
    for (std::size_t i = 0; i < n && i < v->size(); ++i) out_pad[i] = static_cast<std::size_t>((*v)[i]);
  const std::string auto_pad = a.attr_string("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && !same)
    a.fail(fmt::format("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad));
  const auto stride = spatial(a, "strides", n, 1), dilation = spatial(a, "dilations", n, 1);
  const std::vector<std::size_t> kernel = kernel_of(a.in(1));
  // An output size (output_shape, or input x stride for SAME_*) decides the
  // pads, as ONNX defines: the full output minus it, split with the larger
  // half at the end for SAME_UPPER and at the start otherwise.
  std::optional<I64s> target;
  if (auto given = a.attr_ints("output_shape")) {
    if (given->size() != n && given->size() != n + 2)
      a.fail(fmt::format("output_shape has {} entries for {} spatial dims", given->size(), n));
    target = I64s(given->end() - static_cast<std::ptrdiff_t>(n), given->end());
  } else if (same) {
    target = I64s(n);
    for (std::size_t i = 0; i < n; ++i) (*target)[i] = static_cast<std::int64_t>(shape_of(x)[2 + i] * stride[i]);
  }
  SpatialPads pads{I64s(n, 0), I64s(n, 0)};
  if (target) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto full = static_cast<std::int64_t>(stride[i] * (shape_of(x)[2 + i] - 1) + out_pad[i] +
                                                  (std::max<std::size_t>(kernel[i], 1) - 1) * dilation[i] + 1);
      const std::int64_t total = full - (*target)[i];
      if (total < 0)
        a.fail(fmt::format("output_shape {} is larger than the full transposed output {} on spatial dim {}",
                           (*target)[i], full, i));
      pads.begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads.end[i] = total - pads.begin[i];
    }
  } else {
    pads = spatial_pads(a, x, kernel, stride, dilation);
  }
  // A transposed convolution's pads crop its output: the symmetric part in
  // the kernel, the rest after it.
  std::vector<std::size_t> sym(n);
  for (std::size_t i = 0; i < n; ++i) sym[i] = static_cast<std::size_t>(std::min(pads.begin[i], pads.end[i]));
  TensorRef y = detail::conv_transpose(x, a.in(1), bias, stride, sym, out_pad, dilation,
                                       static_cast<std::size_t>(a.attr_int("group", 1)));
  I64s crop_begin(n + 2, 0), crop_end(n + 2, 0);
  for (std::size_t i = 0; i < n; ++i) {
    crop_begin[2 + i] = -(pads.begin[i] - static_cast<std::int64_t>(sym[i]));
    crop_end[2 + i] = -(pads.end[i] - static_cast<std::int64_t>(sym[i]));
  }
  return one(pad_dims(a, y, crop_begin, crop_end, "constant", 0.0));
}

/// The value extra max-pool padding holds, which never wins a maximum.
double lowest_of(DType dtype) {
  switch (dtype) {
    case DType::I8: return std::numeric_limits<std::int8_t>::min();
    case DType::I16: return std::numeric_limits<std::int16_t>::min();
    case DType::I32: return std::numeric_limits<std::int32_t>::min();
    case DType::I64: return static_cast<double>(std::numeric_limits<std::int64_t>::min());
    default: return is_float(dtype) ? -std::numeric_limits<double>::infinity() : 0.0;  // unsigned, bool: 0
  }
}

std::vector<TensorRef> max_pool(const NodeArgs& a) {
  TensorRef x = a.in(0);
  const std::size_t n = rank_of(x) - 2;
  const bool with_indices = a.output_wanted(1);
  if (with_indices && a.attr_int("storage_order", 0) != 0)
    a.fail("the Indices output with storage_order = 1 (column-major numbering) is not supported");
  auto kernel = a.attr_ints("kernel_shape");
  if (!kernel) a.fail("kernel_shape is required");
  const auto k = spatial(a, "kernel_shape", n, 1);
  const auto stride = spatial(a, "strides", n, 1), dilation = spatial(a, "dilations", n, 1);
  const auto padding = symmetric_part(a, x, spatial_pads(a, x, k, stride, dilation), lowest_of(dtype_of(x)));
  if (with_indices && x != a.in(0))
    a.fail("the Indices output with asymmetric padding is not supported: pad with a Pad node first");
  auto [y, plane_indices] =
      detail::max_pool(x, k, stride, padding, dilation, a.attr_int("ceil_mode", 0) != 0, with_indices);
  if (!with_indices) return one(y);
  // burn numbers a maximum within its (sample, channel) plane, as PyTorch
  // does; ONNX over the whole tensor: each plane starts after the ones before.
  const Shape& xs = shape_of(x);
  const std::size_t planes = xs[0] * xs[1];
  const std::size_t plane = xs.num_elements() / std::max<std::size_t>(planes, 1);
  I64s first_dims{static_cast<std::int64_t>(xs[0]), static_cast<std::int64_t>(xs[1])};
  first_dims.resize(rank_of(x), 1);
  const TensorRef starts =
      detail::reshape(detail::arange(0, static_cast<std::int64_t>(planes * plane),
                                     static_cast<std::int64_t>(std::max<std::size_t>(plane, 1)),
                                     TensorCreationOptions(x->device, DType::I64), TensorKind::Int),
                      first_dims);
  return {y, broadcast_binary(ir::BinaryOp::Add, detail::cast(*plane_indices, DType::I64), starts)};
}

/// MaxUnpool: each value of X written at its index (MaxPool's Indices,
/// numbered over the whole output tensor) of a zero tensor of the output
/// shape: output_shape where given, else each spatial dim
/// (in - 1) * stride + kernel - pads. Indices repeated keep one of the values.
std::vector<TensorRef> max_unpool(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const TensorRef& indices = a.in(1);
  const Shape& xs = shape_of(x);
  if (rank_of(x) < 3) a.fail("X needs a batch, a channel and at least one spatial dim");
  if (shape_of(indices) != xs)
    a.fail(fmt::format("I (shape {}) must have X's shape {}", shape_of(indices).to_string(), xs.to_string()));
  const std::size_t n = rank_of(x) - 2;
  if (!a.has_attr("kernel_shape")) a.fail("kernel_shape is required");
  const auto k = spatial(a, "kernel_shape", n, 1), stride = spatial(a, "strides", n, 1);
  std::vector<std::size_t> out{xs[0], xs[1]};
  if (a.has(2)) {
    const I64s given = a.ints(2);
    if (given.size() != rank_of(x))
      a.fail(fmt::format("output_shape has {} entries for rank {}", given.size(), rank_of(x)));
    for (std::size_t d = 0; d < given.size(); ++d) {
      if (given[d] < 0) a.fail("output_shape must not be negative");
      if (d < 2 && static_cast<std::size_t>(given[d]) != xs[d]) a.fail("output_shape must keep X's batch and channels");
      if (d >= 2) out.push_back(static_cast<std::size_t>(given[d]));
    }
  } else {
    I64s pads(2 * n, 0);
    if (auto p = a.attr_ints("pads")) {
      if (p->size() != 2 * n) a.fail(fmt::format("pads has {} entries for {} spatial dims", p->size(), n));
      pads = *p;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t size = (static_cast<std::int64_t>(xs[2 + i]) - 1) * static_cast<std::int64_t>(stride[i]) +
                                static_cast<std::int64_t>(k[i]) - pads[i] - pads[n + i];
      if (size < 0) a.fail("the pads leave a negative output size");
      out.push_back(static_cast<std::size_t>(size));
    }
  }
  const Shape out_shape(out);
  const auto total = static_cast<std::int64_t>(out_shape.num_elements());
  const TensorRef flat_indices = detail::reshape(detail::cast(indices, DType::I64), I64s{-1});
  // An index outside the output is the model's error, not a silent write elsewhere.
  const TensorData checked = detail::to_data(flat_indices);
  for (const std::int64_t i : checked.to_vec<std::int64_t>())
    if (i < 0 || i >= total) a.fail(fmt::format("index {} is outside the output's {} elements", i, total));
  const TensorRef zeros = detail::full(Shape{out_shape.num_elements()}, Scalar(0.0),
                                       TensorCreationOptions(x->device, dtype_of(x)), kind_for(dtype_of(x)));
  const TensorRef placed =
      detail::scatter(zeros, 0, flat_indices, detail::reshape(x, I64s{-1}), ir::IndexReduce::Assign);
  return one(detail::reshape(placed, I64s(out_shape.dims().begin(), out_shape.dims().end())));
}

std::vector<TensorRef> average_pool(const NodeArgs& a) {
  TensorRef x = a.in(0);
  const std::size_t n = rank_of(x) - 2;
  if (!a.has_attr("kernel_shape")) a.fail("kernel_shape is required");
  const auto k = spatial(a, "kernel_shape", n, 1), stride = spatial(a, "strides", n, 1);
  for (const auto d : spatial(a, "dilations", n, 1))
    if (d != 1) a.fail("dilations other than 1 are not supported");
  const bool count_pad = a.attr_int("count_include_pad", 0) != 0;
  const bool ceil_mode = a.attr_int("ceil_mode", 0) != 0;
  const SpatialPads pads = spatial_pads(a, x, k, stride, std::vector<std::size_t>(n, 1));
  if (count_pad || pads.begin == pads.end) {
    const auto padding = symmetric_part(a, x, pads, 0.0);
    return one(detail::avg_pool(x, k, stride, padding, count_pad, ceil_mode));
  }
  // Asymmetric pads that do not count (TensorFlow's SAME pooling): the pads
  // become explicit zeros, and each window's sum is divided by how many of
  // its elements were the input's, pooled the same way from ones.
  const TensorRef ones =
      detail::full(shape_of(x), Scalar(1.0), TensorCreationOptions(x->device, dtype_of(x)), TensorKind::Float);
  TensorRef padded_x = x, padded_ones = ones;
  const auto padding = symmetric_part(a, padded_x, pads, 0.0);
  (void)symmetric_part(a, padded_ones, pads, 0.0);
  const TensorRef sums = detail::avg_pool(padded_x, k, stride, padding, true, ceil_mode);
  const TensorRef share = detail::avg_pool(padded_ones, k, stride, padding, true, ceil_mode);
  return one(detail::binary(ir::BinaryOp::Div, sums, share));
}

std::vector<TensorRef> global_average_pool(const NodeArgs& a) {
  const std::vector<std::size_t> ones(rank_of(a.in(0)) - 2, 1);
  return one(detail::adaptive_avg_pool(a.in(0), ones));
}

std::vector<TensorRef> global_max_pool(const NodeArgs& a) {
  TensorRef y = a.in(0);
  for (std::size_t d = 2; d < rank_of(y); ++d)
    y = detail::reduce_dim(ir::ReduceOp::Max, y, static_cast<std::int64_t>(d));
  return one(y);
}

/// [C] -> [1, C, 1, ...] for a rank-`rank` input.
TensorRef per_channel(const TensorRef& v, std::size_t rank) {
  I64s dims(rank, 1);
  dims[1] = -1;
  return detail::reshape(v, dims);
}

std::vector<TensorRef> batch_norm(const NodeArgs& a) {
  if (a.attr_int("training_mode", 0)) a.fail("training_mode = 1 is not supported: export the model in eval mode");
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  const double eps = a.attr_float("epsilon", 1e-5F);
  const TensorRef scale =
      detail::binary(ir::BinaryOp::Mul, a.in(1),
                     detail::unary(ir::UnaryOp::Rsqrt, detail::binary_scalar(ir::BinaryOp::Add, a.in(4), eps)));
  const TensorRef shift = detail::binary(ir::BinaryOp::Sub, a.in(2), detail::binary(ir::BinaryOp::Mul, a.in(3), scale));
  return one(detail::binary(ir::BinaryOp::Add, detail::binary(ir::BinaryOp::Mul, x, per_channel(scale, r)),
                            per_channel(shift, r)));
}

/// x's dims, for reshaping a flattened view back.
I64s dims_of(const TensorRef& x) { return I64s(shape_of(x).dims().begin(), shape_of(x).dims().end()); }

/// x with its dims from `first` on flattened into one (the last).
TensorRef flattened_from(const TensorRef& x, std::size_t first) {
  I64s flat;
  for (std::size_t d = 0; d < first; ++d) flat.push_back(static_cast<std::int64_t>(shape_of(x)[d]));
  flat.push_back(-1);
  return detail::reshape(x, flat);
}

/// (x - mean) / sqrt(variance + epsilon) along `dim`, with the population
/// variance: what layer, instance and group normalization share before their
/// scale and shift.
TensorRef standardized(const TensorRef& x, std::int64_t dim, double eps) {
  auto [var, mean] = detail::var_mean_dim(x, dim, 0);
  return detail::binary(ir::BinaryOp::Mul, detail::binary(ir::BinaryOp::Sub, x, mean),
                        detail::unary(ir::UnaryOp::Rsqrt, detail::binary_scalar(ir::BinaryOp::Add, var, eps)));
}

/// InstanceNormalization: each (sample, channel) normalised over its spatial
/// dims (population variance), then scaled and shifted per channel.
std::vector<TensorRef> instance_norm(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  if (r < 3) a.fail("the input needs a batch, a channel and at least one spatial dim");
  const double eps = a.attr_float("epsilon", 1e-5F);
  const TensorRef norm = standardized(flattened_from(x, 2), 2, eps);
  const TensorRef y = detail::binary(ir::BinaryOp::Mul, detail::reshape(norm, dims_of(x)), per_channel(a.in(1), r));
  return one(detail::binary(ir::BinaryOp::Add, y, per_channel(a.in(2), r)));
}

/// The dtype a normalization computes in: its stash_type (float32 by
/// default) for 16-bit inputs, as the definition asks; the input's otherwise.
DType stash_dtype(const NodeArgs& a, DType input) {
  if (input != DType::F16 && input != DType::BF16) return input;
  const auto stash = burn_dtype(static_cast<std::int32_t>(a.attr_int("stash_type", 1)));
  if (!stash || !is_float(*stash))
    a.fail(fmt::format("stash_type {} is not a float type", a.attr_int("stash_type", 1)));
  return *stash;
}

/// GroupNormalization: the channels of each sample split into num_groups
/// groups, each normalised over its channels and spatial dims (population
/// variance), then scaled and shifted: per group in opset 18, per channel
/// from opset 21 (the definition changed; a model's opset says which).
std::vector<TensorRef> group_norm(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  if (r < 3) a.fail("the input needs a batch, a channel and at least one spatial dim");
  const auto n = static_cast<std::int64_t>(shape_of(x)[0]), c = static_cast<std::int64_t>(shape_of(x)[1]);
  const std::int64_t groups = a.attr_int("num_groups", 0);
  if (groups <= 0 || c % groups != 0)
    a.fail(fmt::format("num_groups {} must be positive and divide the {} channels", groups, c));
  const bool per_channel_affine = a.opset() >= 21;
  const std::int64_t affine = per_channel_affine ? c : groups;
  for (const std::size_t i : {1u, 2u})
    if (rank_of(a.in(i)) != 1 || static_cast<std::int64_t>(shape_of(a.in(i))[0]) != affine)
      a.fail(fmt::format("{} must be 1-D with {} values (one per {}, opset {}), it has shape {}",
                         i == 1 ? "scale" : "bias", affine, per_channel_affine ? "channel" : "group", a.opset(),
                         shape_of(a.in(i)).to_string()));
  const DType compute = stash_dtype(a, dtype_of(x));
  const double eps = a.attr_float("epsilon", 1e-5F);
  const I64s flat{n, groups, -1};
  const TensorRef norm = standardized(detail::reshape(detail::cast(x, compute), flat), 2, eps);
  TensorRef scale = detail::cast(a.in(1), compute), bias = detail::cast(a.in(2), compute);
  if (!per_channel_affine) {
    // One value per group, repeated over the group's channels.
    const I64s spread{groups, c / groups};
    const I64s channels{c};
    scale = detail::reshape(detail::expand(detail::unsqueeze_dim(scale, 1), spread), channels);
    bias = detail::reshape(detail::expand(detail::unsqueeze_dim(bias, 1), spread), channels);
  }
  const TensorRef y = detail::binary(ir::BinaryOp::Mul, detail::reshape(norm, dims_of(x)), per_channel(scale, r));
  return one(detail::cast(detail::binary(ir::BinaryOp::Add, y, per_channel(bias, r)), dtype_of(x)));
}

/// DepthToSpace: [N, C, H, W] -> [N, C / b^2, H b, W b], the channels read
/// depth-column-row (DCR, the default) or column-row-depth (CRD, PyTorch's
/// PixelShuffle).
std::vector<TensorRef> depth_to_space(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  if (rank_of(x) != 4) a.fail("the input must be 4-D (N, C, H, W)");
  const std::int64_t b = a.attr_int("blocksize", 0);
  const auto n = static_cast<std::int64_t>(shape_of(x)[0]), c = static_cast<std::int64_t>(shape_of(x)[1]);
  const auto h = static_cast<std::int64_t>(shape_of(x)[2]), w = static_cast<std::int64_t>(shape_of(x)[3]);
  if (b < 1 || c % (b * b) != 0)
    a.fail(fmt::format("blocksize {} must be positive and its square must divide the {} channels", b, c));
  const std::string mode = a.attr_string("mode", "DCR");
  TensorRef y;
  if (mode == "DCR") {
    const I64s split{n, b, b, c / (b * b), h, w}, order{0, 3, 4, 1, 5, 2};
    y = detail::permute(detail::reshape(x, split), order);
  } else if (mode == "CRD") {
    const I64s split{n, c / (b * b), b, b, h, w}, order{0, 1, 4, 2, 5, 3};
    y = detail::permute(detail::reshape(x, split), order);
  } else {
    a.fail(fmt::format("mode '{}' is not one of DCR, CRD", mode));
  }
  const I64s out{n, c / (b * b), h * b, w * b};
  return one(detail::reshape(y, out));
}

std::vector<TensorRef> layer_norm(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  const std::size_t first = axis(a, a.attr_int("axis", -1), r);
  const double eps = a.attr_float("epsilon", 1e-5F);
  std::vector<TensorRef> out;
  if (a.output_wanted(1) || a.output_wanted(2)) {
    // The statistics (what a training graph keeps for its backward): Mean
    // and InvStdDev, x's shape with ones from `axis` on.
    auto [var, mean] = detail::var_mean_dim(flattened_from(x, first), static_cast<std::int64_t>(first), 0);
    I64s kept = dims_of(x);
    for (std::size_t d = first; d < r; ++d) kept[d] = 1;
    const TensorRef inv_std = detail::unary(ir::UnaryOp::Rsqrt, detail::binary_scalar(ir::BinaryOp::Add, var, eps));
    out = {TensorRef(), detail::reshape(mean, kept), detail::reshape(inv_std, kept)};
  }
  auto with_statistics = [&](TensorRef y) {
    if (out.empty()) return one(y);
    out[0] = std::move(y);
    return out;
  };
  // Over the last dim with a [n] scale (and bias): burn's layer norm, one
  // kernel on the devices that have it.
  const std::size_t n = shape_of(x).dims().back();
  const auto is_row = [n](const TensorRef& t) { return rank_of(t) == 1 && shape_of(t)[0] == n; };
  if (first + 1 == r && is_row(a.in(1)) && (!a.has(2) || is_row(a.in(2)))) {
    const TensorRef bias = a.has(2) ? a.in(2) : detail::create(ir::Full{Shape{n}, 0.0, a.in(1)->spec.dtype}, x->device);
    return with_statistics(detail::layer_norm(x, a.in(1), bias, eps));
  }
  // Normalise over dims first.. as one flattened dim.
  const TensorRef norm = standardized(flattened_from(x, first), static_cast<std::int64_t>(first), eps);
  TensorRef y = broadcast_binary(ir::BinaryOp::Mul, detail::reshape(norm, dims_of(x)), a.in(1));
  if (a.has(2)) y = broadcast_binary(ir::BinaryOp::Add, y, a.in(2));
  return with_statistics(y);
}

/// The output coordinate `o` of an axis resized from `in` to `out` values
/// (by `scale`) in the input's coordinates, as coordinate_transformation_mode
/// `ctm` says.
double input_coordinate(const NodeArgs& a, const std::string& ctm, double o, std::size_t in, std::size_t out,
                        double scale) {
  if (ctm == "half_pixel") return (o + 0.5) / scale - 0.5;
  if (ctm == "pytorch_half_pixel") return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (ctm == "align_corners") return out == 1 ? 0.0 : o * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (ctm == "asymmetric") return o / scale;
  a.fail(fmt::format("coordinate_transformation_mode {} is not supported with antialias", ctm));
}

/// The [out, in] matrix that resizes one axis with ONNX's antialiasing
/// filters (Resize with antialias = 1): linear's triangle or cubic's kernel,
/// stretched by 1 / scale when shrinking so that every input value under it
/// contributes, normalised to sum 1; taps beyond the edges take the edge
/// value, or (exclude_outside) drop out and the rest are normalised again.
std::vector<float> antialias_matrix(const NodeArgs& a, bool cubic, const std::string& ctm, std::size_t in,
                                    std::size_t out, double scale) {
  const double stretch = std::min(scale, 1.0);
  const double coeff_a = a.attr_float("cubic_coeff_a", -0.75F);
  const bool exclude_outside = a.attr_int("exclude_outside", 0) != 0;
  const auto filter = [&](double t) {
    t = std::abs(t);
    if (!cubic) return std::max(0.0, 1.0 - t);
    if (t <= 1.0) return ((coeff_a + 2.0) * t - (coeff_a + 3.0)) * t * t + 1.0;
    if (t < 2.0) return ((coeff_a * t - 5.0 * coeff_a) * t + 8.0 * coeff_a) * t - 4.0 * coeff_a;
    return 0.0;
  };
  // Taps i in [first, 1 - first] around the input value left of x (x itself
  // when x falls on a value: ONNX prefers the left neighbour).
  const auto first = static_cast<std::int64_t>(std::floor((cubic ? -2.0 : -1.0) / stretch) + 1.0);
  std::vector<float> m(out * in, 0.0F);
  std::vector<double> w;
  std::vector<std::int64_t> at;
  for (std::size_t o = 0; o < out; ++o) {
    const double x = input_coordinate(a, ctm, static_cast<double>(o), in, out, scale);
    const double left = std::ceil(x) - 1.0;
    const double ratio = x - left;  // in (0, 1]
    w.clear();
    at.clear();
    double sum = 0.0;
    for (std::int64_t i = first; i <= 1 - first; ++i) {
      const auto index = static_cast<std::int64_t>(left) + i;
      double c = filter(stretch * (static_cast<double>(i) - ratio));
      if (exclude_outside && (index < 0 || index >= static_cast<std::int64_t>(in))) c = 0.0;
      w.push_back(c);
      at.push_back(std::clamp<std::int64_t>(index, 0, static_cast<std::int64_t>(in) - 1));
      sum += c;
    }
    for (std::size_t k = 0; k < w.size(); ++k)
      m[o * in + static_cast<std::size_t>(at[k])] += static_cast<float>(sum != 0.0 ? w[k] / sum : 0.0);
  }
  return m;
}

/// Resize with antialias = 1 (linear or cubic): each spatial axis through
/// its antialias_matrix, as two products.
TensorRef resize_antialiased(const NodeArgs& a, const TensorRef& x, const std::vector<std::size_t>& size,
                             const std::vector<double>& scales, bool cubic, const std::string& ctm) {
  const Shape& xs = shape_of(x);
  const auto matrix = [&](std::size_t d) {
    const std::size_t in = xs[d], out = size[d];
    if (in == 0) a.fail("cannot resize an empty axis");
    // The matrix is out x in floats: refuse sizes no image has rather than
    // fail to allocate.
    if (out > (std::size_t{1} << 28) / in)
      a.fail(fmt::format("an antialiased resize of an axis from {} to {} values is too large", in, out));
    return detail::from_data(TensorData(antialias_matrix(a, cubic, ctm, in, out, scales[d]), Shape{out, in}),
                             TensorCreationOptions(x->device, dtype_of(x)), TensorKind::Float);
  };
  // [N, C, H, W] x [W, W'] -> [N, C, H, W'], then [H', H] x that -> [N, C, H', W'].
  const TensorRef along_w = import_matmul(a, x, detail::swap_dims(matrix(3), 0, 1));
  return import_matmul(a, matrix(2), along_w);
}

std::vector<TensorRef> resize(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  if (rank_of(x) != 4) a.fail("only 4-D (N, C, H, W) inputs are resized");
  const bool antialias = a.attr_int("antialias", 0) != 0;
  if (a.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
    a.fail("keep_aspect_ratio_policy other than stretch is not supported");
  // Opset 18's axes name the dims that scales and sizes give; the others keep their size.
  I64s axes{0, 1, 2, 3};
  if (auto given = a.attr_ints("axes")) {
    axes.clear();
    for (const auto ax : *given) axes.push_back(static_cast<std::int64_t>(axis(a, ax, 4)));
  }
  std::vector<std::size_t> size(shape_of(x).dims().begin(), shape_of(x).dims().end());
  std::vector<double> scales_of(4, 1.0);  // each axis's scale: given, or output / input
  if (a.has(3)) {
    const I64s sizes = a.ints(3);
    if (sizes.size() != axes.size()) a.fail(fmt::format("sizes has {} entries for {} axes", sizes.size(), axes.size()));
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (sizes[i] < 0) a.fail("sizes must not be negative");
      const auto d = static_cast<std::size_t>(axes[i]);
      size[d] = static_cast<std::size_t>(sizes[i]);
      if (shape_of(x)[d] > 0) scales_of[d] = static_cast<double>(size[d]) / static_cast<double>(shape_of(x)[d]);
    }
  } else if (a.has(2)) {
    const TensorData scales = detail::to_data(detail::cast(a.in(2), DType::F64));
    if (scales.num_elements() != axes.size())
      a.fail(fmt::format("scales has {} entries for {} axes", scales.num_elements(), axes.size()));
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const auto d = static_cast<std::size_t>(axes[i]);
      const double factor = scales.value_as_double(i);
      if (!(factor > 0.0)) a.fail("scales must be positive");
      size[d] = static_cast<std::size_t>(std::floor(static_cast<double>(shape_of(x)[d]) * factor));
      scales_of[d] = factor;
    }
  } else {
    a.fail("either scales or sizes is required");
  }
  if (size[0] != shape_of(x)[0] || size[1] != shape_of(x)[1]) a.fail("scales and sizes must keep N and C");
  const std::vector<std::size_t> out{size[2], size[3]};
  const std::string mode = a.attr_string("mode", "nearest");
  const std::string ctm = a.attr_string("coordinate_transformation_mode", "half_pixel");
  // Antialiasing widens linear and cubic filters when shrinking; nearest
  // ignores it, as ONNX defines.
  if (antialias && (mode == "linear" || mode == "cubic"))
    return one(resize_antialiased(a, x, size, scales_of, mode == "cubic", ctm));
  module::InterpolateMode m{};
  bool align = false;
  if (mode == "nearest") {
    if (ctm != "asymmetric" || a.attr_string("nearest_mode", "round_prefer_floor") != "floor")
      a.fail(
          "nearest resizing is supported with coordinate_transformation_mode asymmetric and nearest_mode floor "
          "(PyTorch's 'nearest')");
    m = module::InterpolateMode::Nearest;
  } else if (mode == "linear" || mode == "cubic") {
    m = mode == "linear" ? module::InterpolateMode::Bilinear : module::InterpolateMode::Bicubic;
    if (ctm == "align_corners") {
      align = true;
    } else if (ctm != "pytorch_half_pixel" && ctm != "half_pixel") {
      a.fail(fmt::format("coordinate_transformation_mode {} is not supported", ctm));
    }
    if (mode == "cubic" && a.attr_float("cubic_coeff_a", -0.75F) != -0.75F) a.fail("cubic_coeff_a must be -0.75");
  } else {
    a.fail(fmt::format("mode {} is not supported", mode));
  }
  return one(detail::interpolate(x, out, m, align));
}

/// RMSNormalization (opset 23): x / sqrt(mean(x^2) + epsilon) over the dims
/// from axis on, times the scale (which broadcasts against them).
std::vector<TensorRef> rms_norm(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  const std::size_t first = axis(a, a.attr_int("axis", -1), r);
  const DType compute = stash_dtype(a, dtype_of(x));
  const double eps = a.attr_float("epsilon", 1e-5F);
  const TensorRef xf = flattened_from(detail::cast(x, compute), first);
  const TensorRef mean_square = detail::reduce_dim(ir::ReduceOp::Mean, detail::binary(ir::BinaryOp::Mul, xf, xf),
                                                   static_cast<std::int64_t>(first));
  const TensorRef norm =
      detail::binary(ir::BinaryOp::Mul, xf,
                     detail::unary(ir::UnaryOp::Rsqrt, detail::binary_scalar(ir::BinaryOp::Add, mean_square, eps)));
  const TensorRef y =
      broadcast_binary(ir::BinaryOp::Mul, detail::reshape(norm, dims_of(x)), detail::cast(a.in(1), compute));
  return one(detail::cast(y, dtype_of(x)));
}

}  // namespace

TensorRef import_matmul(const NodeArgs& args, const TensorRef& x, const TensorRef& y) { return matmul(args, x, y); }

TensorRef import_conv_of(const NodeArgs& args, const TensorRef& x, const TensorRef& w) {
  return conv_with(args, x, w, std::nullopt);
}

void add_nn_ops(ImportTable& table) {
  table.insert({
      {"MatMul", matmul_op},
      {"Gemm", gemm},
      {"Einsum", import_einsum},
      {"MatMulInteger", import_matmul_integer},
      {"Conv", conv},
      {"ConvInteger", import_conv_integer},
      {"QLinearMatMul", import_qlinear_matmul},
      {"QLinearConv", import_qlinear_conv},
      {"com.microsoft::QLinearAdd", import_qlinear_add},
      {"com.microsoft::QLinearGlobalAveragePool", import_qlinear_global_average_pool},
      {"com.microsoft::MatMulNBits", import_matmul_nbits},
      {"Pad", pad},
      {"ConvTranspose", conv_transpose},
      {"MaxPool", max_pool},
      {"MaxUnpool", max_unpool},
      {"AveragePool", average_pool},
      {"GlobalAveragePool", global_average_pool},
      {"GlobalMaxPool", global_max_pool},
      {"BatchNormalization", batch_norm},
      {"LayerNormalization", layer_norm},
      {"InstanceNormalization", instance_norm},
      {"GroupNormalization", group_norm},
      {"RMSNormalization", rms_norm},
      {"DepthToSpace", depth_to_space},
      {"Resize", resize},
      {"LSTM", import_lstm},
      {"GRU", import_gru},
  });
}

}  // namespace burn::onnx
