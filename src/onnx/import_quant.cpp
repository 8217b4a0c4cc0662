// ONNX's quantization operators as burn tensor operations, for the models
// ONNX Runtime's quantization tools write: QDQ models (QuantizeLinear and
// DequantizeLinear around float operators, quantize_static's default) and
// dynamically quantized ones (DynamicQuantizeLinear, MatMulInteger and
// ConvInteger, quantize_dynamic's), with scales per tensor, per axis or per
// block (opset 21's blocked quantization); and the QOperator format's
// QLinearMatMul and QLinearConv (quantize_static's other format); and the
// weight-only forms of its MatMulNBitsQuantizer: com.microsoft's MatMulNBits
// and DequantizeLinear of 4-bit weights. Each computes what the ONNX definition
// says: integer products are exact (int32 matmuls; convolutions in f64, or in
// f32 where every sum stays below 2^24), rounding is half to even.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include <burn/detail/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_common.hpp"
#include "onnx/import_ops.hpp"

namespace burn::onnx {

using detail::TensorRef;

namespace {

/// The range of an 8-bit integer dtype (or int32's, for a bias), for
/// saturation; of INT4 or UINT4 where `four_bit` (held in I8 or U8).
std::pair<double, double> integer_range(const NodeArgs& a, DType dtype, bool four_bit = false) {
  if (four_bit && dtype == DType::U8) return {0.0, 15.0};
  if (four_bit && dtype == DType::I8) return {-8.0, 7.0};
  switch (dtype) {
    case DType::U8: return {0.0, 255.0};
    case DType::I8: return {-128.0, 127.0};
    case DType::I32: return {-2147483648.0, 2147483647.0};
    default:
      a.fail(fmt::format("{} is not a quantized type this version reads (uint8, int8, int32)", dtype_name(dtype)));
  }
}

/// A scale or zero point shaped to broadcast against `x` (of shape `xs`): a
/// scalar (or one value) per tensor, a 1-D one per slice of `axis`, or, with
/// a block size (opset 21), one of x's rank with a value per block of
/// `block` consecutive elements along `axis` (the last block may be short),
/// spread over its block.
TensorRef quant_param(const NodeArgs& a, const TensorRef& p, const Shape& xs, std::int64_t axis, std::int64_t block,
                      const char* what) {
  const Shape& s = p->spec.shape;
  const std::size_t rank = xs.rank();
  const auto ax_of = [&] {
    const std::int64_t ax = axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
    if (ax < 0 || ax >= static_cast<std::int64_t>(rank))
      a.fail(fmt::format("axis {} is outside a rank-{} input", axis, rank));
    return static_cast<std::size_t>(ax);
  };
  if (block < 0) a.fail(fmt::format("block_size {} must not be negative", block));
  if (block > 0) {
    const std::size_t ax = ax_of();
    const std::size_t blocks = (xs[ax] + static_cast<std::size_t>(block) - 1) / static_cast<std::size_t>(block);
    bool ok = s.rank() == rank;
    for (std::size_t d = 0; ok && d < rank; ++d) ok = s[d] == (d == ax ? blocks : xs[d]);
    if (!ok)
      a.fail(
          fmt::format("with block_size {} along axis {}, the {} must have shape like the input {} with {} blocks "
                      "on that axis, it has shape {}",
                      block, axis, what, xs.to_string(), blocks, s.to_string()));
    std::vector<std::int64_t> wide(s.dims().begin(), s.dims().end()), spread(wide);
    wide.insert(wide.begin() + static_cast<std::ptrdiff_t>(ax) + 1, block);
    spread[ax] = static_cast<std::int64_t>(blocks) * block;
    const TensorRef repeated =
        detail::reshape(detail::expand(detail::unsqueeze_dim(p, static_cast<std::int64_t>(ax) + 1), wide), spread);
    return detail::narrow(repeated, static_cast<std::int64_t>(ax), 0, xs[ax]);
  }
  std::vector<std::int64_t> dims(rank, 1);
  if (s.rank() == 1 && s[0] != 1) {
    dims[ax_of()] = static_cast<std::int64_t>(s[0]);
  } else if (s.num_elements() != 1) {
    a.fail(
        fmt::format("the {} must be a scalar or 1-D (per axis), or have the input's rank with a block_size; it "
                    "has shape {}",
                    what, s.to_string()));
  }
  return detail::reshape(p, dims);
}

/// round-half-to-even(x / scale) + zero_point, saturated to `dtype`'s range
/// (a 4-bit one's where `four_bit`), as `dtype`.
TensorRef quantize_to(const NodeArgs& a, const TensorRef& x, const TensorRef& scale,
                      const std::optional<TensorRef>& zero_point, DType dtype, bool four_bit = false) {
  const auto [lo, hi] = integer_range(a, dtype, four_bit);
  TensorRef q = detail::unary(ir::UnaryOp::Round, detail::binary(ir::BinaryOp::Div, x, scale));
  if (zero_point) q = detail::binary(ir::BinaryOp::Add, q, *zero_point);
  return detail::cast(detail::clamp(q, Scalar(lo), Scalar(hi)), dtype);
}

/// QuantizeLinear's and DequantizeLinear's scale (input 1) and zero point
/// (input 2, in the scale's dtype), shaped to broadcast against input 0 per
/// tensor, along `axis` or per block; and the zero point's own dtype.
struct LinearQuantParams {
  TensorRef scale;
  std::optional<TensorRef> zero_point;
  std::optional<DType> zero_point_dtype;
};

LinearQuantParams linear_quant_params(const NodeArgs& a) {
  const Shape& xs = a.in(0)->spec.shape;
  const std::int64_t axis = a.attr_int("axis", 1);
  const std::int64_t block = a.attr_int("block_size", 0);
  LinearQuantParams p{quant_param(a, a.in(1), xs, axis, block, "scale"), std::nullopt, std::nullopt};
  if (a.has(2)) {
    if (a.in(2)->spec.shape.num_elements() != a.in(1)->spec.shape.num_elements())
      a.fail(fmt::format("the zero point (shape {}) must have as many values as the scale (shape {})",
                         a.in(2)->spec.shape.to_string(), a.in(1)->spec.shape.to_string()));
    p.zero_point_dtype = a.in(2)->spec.dtype;
    p.zero_point = detail::cast(quant_param(a, a.in(2), xs, axis, block, "zero point"), p.scale->spec.dtype);
  }
  return p;
}

/// The dtype an `output_dtype` or `precision` attribute names, or `fallback`
/// when it is absent (or 0, ONNX's "unset").
DType dtype_attr(const NodeArgs& a, std::string_view name, DType fallback) {
  const std::int64_t code = a.attr_int(name, 0);
  if (code == 0) return fallback;
  const auto dtype = storage_dtype(static_cast<std::int32_t>(code));
  if (!dtype) a.fail(fmt::format("{} {} is not an ONNX element type burn holds", name, code));
  return *dtype;
}

/// An integer operand minus its zero point, as int32 (`per_row`: a 1-D zero
/// point is one per row of a matrix, else one per column or scalar).
TensorRef centred(const NodeArgs& a, std::size_t i, std::size_t zero_point, bool per_row) {
  TensorRef v = detail::cast(a.in(i), DType::I32);
  if (!a.has(zero_point)) return v;
  TensorRef zp = detail::cast(a.in(zero_point), DType::I32);
  const std::size_t r = v->spec.shape.rank();
  const Shape& zs = zp->spec.shape;
  std::vector<std::int64_t> dims(r, 1);
  if (zs.rank() == 1 && zs[0] != 1) {
    if (r < 2) a.fail("a per-row or per-column zero point needs a matrix operand");
    dims[per_row ? r - 2 : r - 1] = static_cast<std::int64_t>(zs[0]);
  } else if (zs.num_elements() != 1) {
    a.fail(fmt::format("zero point {} has shape {}; it must be a scalar or 1-D", zero_point, zs.to_string()));
  }
  return detail::binary(ir::BinaryOp::Sub, v, detail::reshape(zp, dims));
}

}  // namespace

std::vector<TensorRef> import_dequantize_linear(const NodeArgs& a) {
  const LinearQuantParams p = linear_quant_params(a);
  // The output is the scale's dtype; opset 23's output_dtype may only restate it.
  const DType out = dtype_attr(a, "output_dtype", p.scale->spec.dtype);
  if (out != p.scale->spec.dtype)
    a.fail(
        fmt::format("output_dtype {} must be the scale's dtype, {}", dtype_name(out), dtype_name(p.scale->spec.dtype)));
  TensorRef y = detail::cast(a.in(0), p.scale->spec.dtype);
  if (p.zero_point) y = detail::binary(ir::BinaryOp::Sub, y, *p.zero_point);
  return {detail::binary(ir::BinaryOp::Mul, y, p.scale)};
}

std::vector<TensorRef> import_quantize_linear(const NodeArgs& a) {
  const LinearQuantParams p = linear_quant_params(a);
  // The zero point's type is the output's; without one, output_dtype's
  // (opset 21), else uint8. A 4-bit output (INT4 or UINT4, held a value a
  // byte) is named by output_dtype: load sets it from a 4-bit zero point.
  const DType out = dtype_attr(a, "output_dtype", p.zero_point_dtype.value_or(DType::U8));
  const bool four_bit = is_four_bit(static_cast<std::int32_t>(a.attr_int("output_dtype", 0)));
  if (p.zero_point_dtype && out != *p.zero_point_dtype)
    a.fail(fmt::format("output_dtype {} must be the zero point's dtype, {}", dtype_name(out),
                       dtype_name(*p.zero_point_dtype)));
  // Opset 23's precision: the dtype x / scale is computed in (the scale's by default).
  const DType precision = dtype_attr(a, "precision", p.scale->spec.dtype);
  if (!is_float(precision)) a.fail(fmt::format("precision {} is not a float type", dtype_name(precision)));
  std::optional<TensorRef> zero_point;
  if (p.zero_point) zero_point = detail::cast(*p.zero_point, precision);
  return {
      quantize_to(a, detail::cast(a.in(0), precision), detail::cast(p.scale, precision), zero_point, out, four_bit)};
}

/// DynamicQuantizeLinear: uint8 with a scale and zero point from the input's
/// range, widened to hold 0, computed in f32 as ONNX Runtime does.
std::vector<TensorRef> import_dynamic_quantize_linear(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  if (x->spec.dtype != DType::F32) a.fail(fmt::format("the input must be f32, it is {}", dtype_name(x->spec.dtype)));
  const float lo = std::min(0.0F, detail::to_data(detail::reduce_all(ir::ReduceOp::Min, x)).to_vec<float>().at(0));
  const float hi = std::max(0.0F, detail::to_data(detail::reduce_all(ir::ReduceOp::Max, x)).to_vec<float>().at(0));
  // An all-zero input has no range: any scale quantizes it to the zero point.
  const float scale = hi == lo ? 1.0F : (hi - lo) / 255.0F;
  const float zero_point = std::nearbyint(std::clamp(0.0F - lo / scale, 0.0F, 255.0F));
  const TensorCreationOptions f32(a.device(), DType::F32);
  const Shape scalar;
  const TensorRef scale_t = detail::full(scalar, Scalar(static_cast<double>(scale)), f32, TensorKind::Float);
  const TensorRef zp_t = detail::full(scalar, Scalar(static_cast<double>(zero_point)), f32, TensorKind::Float);
  const std::size_t r = x->spec.shape.rank();
  const std::vector<std::int64_t> ones(r, 1);
  TensorRef y = quantize_to(a, x, detail::reshape(scale_t, ones), detail::reshape(zp_t, ones), DType::U8);
  return {y, scale_t, detail::cast(zp_t, DType::U8)};
}

std::vector<TensorRef> import_matmul_integer(const NodeArgs& a) {
  return {import_matmul(a, centred(a, 0, 2, /*per_row=*/true), centred(a, 1, 3, /*per_row=*/false))};
}

namespace {

/// A weight's integer values minus its zero point (input `zero_point`: one
/// value, or one per output channel, dim 0), as int32.
TensorRef centred_weight(const NodeArgs& a, std::size_t i, std::size_t zero_point) {
  TensorRef w = detail::cast(a.in(i), DType::I32);
  if (!a.has(zero_point)) return w;
  const TensorRef zp = detail::cast(a.in(zero_point), DType::I32);
  const Shape& zs = zp->spec.shape;
  const std::size_t r = w->spec.shape.rank();
  std::vector<std::int64_t> dims(r, 1);
  if (zs.num_elements() != 1) {
    if (zs.rank() != 1 || r == 0 || zs[0] != w->spec.shape[0])
      a.fail(fmt::format("the weight's zero point has shape {}; it must be one value or one per output channel ({})",
                         zs.to_string(), r == 0 ? 0 : w->spec.shape[0]));
    dims[0] = static_cast<std::int64_t>(zs[0]);
  }
  return detail::binary(ir::BinaryOp::Sub, w, detail::reshape(zp, dims));
}

/// The convolution of two int32 operands (the node's attributes), exact: in
/// f64, which holds every sum of 8-bit products, or in f32 on a device
/// without f64 while the terms per output stay below 2^24 / 255^2.
TensorRef exact_integer_conv(const NodeArgs& a, const TensorRef& x, const TensorRef& w) {
  DType compute = DType::F64;
  if (!a.device().supports_dtype(DType::F64)) {
    const Shape& ws = w->spec.shape;
    const std::size_t terms = ws[0] == 0 ? 0 : ws.num_elements() / ws[0];  // input channels per group x kernel
    if (terms > (std::size_t{1} << 24) / (std::size_t{255} * 255))
      a.fail(
          fmt::format("{} has no f64 and sums of {} products of 8-bit values may not be exact in f32: load the "
                      "model on a device with f64 (flex, cpu, ndarray)",
                      a.device().to_string(), terms));
    compute = DType::F32;
  }
  return detail::cast(import_conv_of(a, detail::cast(x, compute), detail::cast(w, compute)), DType::I32);
}

/// A scale as f32 reshaped to `dims` (all ones when it is one value), so
/// that it broadcasts against the integer sums.
TensorRef scale_as(const TensorRef& scale, std::vector<std::int64_t> dims) {
  if (scale->spec.shape.num_elements() == 1) std::fill(dims.begin(), dims.end(), 1);
  return detail::reshape(detail::cast(scale, DType::F32), dims);
}

/// The quantized output of the QLinear operators: round-half-to-even(real)
/// plus the zero point (input `zero_point`, where given), saturated to the
/// output's dtype, the zero point's or else `fallback` (uint8 or int8).
TensorRef saturated_round(const NodeArgs& a, const TensorRef& real, std::size_t zero_point, DType fallback) {
  const DType out = a.has(zero_point) ? a.in(zero_point)->spec.dtype : fallback;
  if (out != DType::U8 && out != DType::I8)
    a.fail(fmt::format("the output must be uint8 or int8, it is {}", dtype_name(out)));
  const auto [lo, hi] = integer_range(a, out);
  TensorRef y = detail::unary(ir::UnaryOp::Round, real);
  if (a.has(zero_point)) y = broadcast_binary(ir::BinaryOp::Add, y, detail::cast(a.in(zero_point), DType::F32));
  return detail::cast(detail::clamp(y, Scalar(lo), Scalar(hi)), out);
}

/// QLinearMatMul's and QLinearConv's output: the integer sums times the
/// multiplier (input scale x weight scale) / output scale, both in f32 as
/// ONNX Runtime's kernels requantize, rounded with the (required) zero point.
TensorRef requantize(const NodeArgs& a, const TensorRef& sums, const TensorRef& multiplier, std::size_t zero_point) {
  const DType out = a.in(zero_point)->spec.dtype;
  return saturated_round(a, broadcast_binary(ir::BinaryOp::Mul, detail::cast(sums, DType::F32), multiplier), zero_point,
                         out);
}

/// Fails unless each of `inputs` that is given (scales and zero points)
/// holds one value.
void require_single_values(const NodeArgs& a, std::initializer_list<std::size_t> inputs) {
  for (const std::size_t i : inputs)
    if (a.has(i) && a.in(i)->spec.shape.num_elements() != 1)
      a.fail(fmt::format("input {} (a scale or zero point) must be one value, it has shape {}", i,
                         a.in(i)->spec.shape.to_string()));
}

/// An operand's zero point or scale for QLinearMatMul: one value, a 1-D
/// vector per row of a (per column of b), or a tensor of the operand's rank
/// with the reduced dim 1; as a shape that broadcasts against the operand.
std::vector<std::int64_t> matmul_param_dims(const NodeArgs& a, const Shape& operand, const Shape& param, bool per_row,
                                            const char* what) {
  const std::size_t r = operand.rank();
  std::vector<std::int64_t> dims(r, 1);
  if (param.num_elements() == 1) return dims;
  if (r >= 2 && param.rank() == r) {
    for (std::size_t d = 0; d < r; ++d) dims[d] = static_cast<std::int64_t>(param[d]);
    return dims;
  }
  if (r >= 2 && param.rank() == 1 && param[0] == operand[per_row ? r - 2 : r - 1]) {
    dims[per_row ? r - 2 : r - 1] = static_cast<std::int64_t>(param[0]);
    return dims;
  }
  a.fail(fmt::format("the {} has shape {}; for an operand of shape {} it must be one value or one per {}", what,
                     param.to_string(), operand.to_string(), per_row ? "row" : "column"));
}

}  // namespace

std::vector<TensorRef> import_conv_integer(const NodeArgs& a) {
  if (a.has(2) && a.in(2)->spec.shape.num_elements() != 1)
    a.fail("the input's zero point must be one value (ONNX has no per-channel input zero point)");
  return {exact_integer_conv(a, centred(a, 0, 2, false), centred_weight(a, 1, 3))};
}

/// QLinearMatMul: (a - a_zp) x (b - b_zp) in int32, requantized with
/// a_scale x b_scale / y_scale (per tensor, per row of a, per column of b).
std::vector<TensorRef> import_qlinear_matmul(const NodeArgs& a) {
  const Shape &as = a.in(0)->spec.shape, &bs = a.in(3)->spec.shape;
  if (as.rank() < 2 || bs.rank() < 2) a.fail("QLinearMatMul takes operands of rank 2 or more");
  const auto centre = [&](std::size_t value, std::size_t zero_point, bool per_row) {
    TensorRef v = detail::cast(a.in(value), DType::I32);
    const auto dims = matmul_param_dims(a, v->spec.shape, a.in(zero_point)->spec.shape, per_row,
                                        per_row ? "a's zero point" : "b's zero point");
    return detail::binary(ir::BinaryOp::Sub, v, detail::reshape(detail::cast(a.in(zero_point), DType::I32), dims));
  };
  const TensorRef sums = import_matmul(a, centre(0, 2, true), centre(3, 5, false));
  const TensorRef a_scale = scale_as(a.in(1), matmul_param_dims(a, as, a.in(1)->spec.shape, true, "a's scale"));
  const TensorRef b_scale = scale_as(a.in(4), matmul_param_dims(a, bs, a.in(4)->spec.shape, false, "b's scale"));
  if (a.in(6)->spec.shape.num_elements() != 1) a.fail("y_scale must be one value");
  const TensorRef y_scale = detail::reshape(detail::cast(a.in(6), DType::F32), std::vector<std::int64_t>{1});
  const TensorRef multiplier =
      broadcast_binary(ir::BinaryOp::Div, broadcast_binary(ir::BinaryOp::Mul, a_scale, b_scale), y_scale);
  return {requantize(a, sums, multiplier, 7)};
}

/// QLinearConv: the convolution of (x - x_zp) by (w - w_zp) in integers,
/// plus the int32 bias, requantized with x_scale x w_scale / y_scale (w's
/// scale and zero point per tensor or per output channel).
std::vector<TensorRef> import_qlinear_conv(const NodeArgs& a) {
  if (a.in(2)->spec.shape.num_elements() != 1 || a.in(1)->spec.shape.num_elements() != 1)
    a.fail("x_scale and x_zero_point must be one value each");
  if (a.in(6)->spec.shape.num_elements() != 1 || a.in(7)->spec.shape.num_elements() != 1)
    a.fail("y_scale and y_zero_point must be one value each");
  TensorRef sums = exact_integer_conv(a, centred(a, 0, 2, false), centred_weight(a, 3, 5));
  const std::size_t r = sums->spec.shape.rank();
  const auto channels = static_cast<std::int64_t>(a.in(3)->spec.shape[0]);
  std::vector<std::int64_t> per_channel(r, 1);
  per_channel[1] = channels;
  if (a.has(8)) {
    const TensorRef& bias = a.in(8);
    if (bias->spec.shape.num_elements() != static_cast<std::size_t>(channels))
      a.fail(fmt::format("the bias has shape {}; it must hold one int32 value per output channel ({})",
                         bias->spec.shape.to_string(), channels));
    sums = detail::binary(ir::BinaryOp::Add, sums, detail::reshape(detail::cast(bias, DType::I32), per_channel));
  }
  const std::size_t w_scales = a.in(4)->spec.shape.num_elements();
  if (w_scales != 1 && w_scales != static_cast<std::size_t>(channels))
    a.fail(fmt::format("w_scale has {} values; it must be one or one per output channel ({})", w_scales, channels));
  const std::vector<std::int64_t> ones(r, 1);
  const TensorRef x_scale = detail::reshape(detail::cast(a.in(1), DType::F32), ones);
  const TensorRef y_scale = detail::reshape(detail::cast(a.in(6), DType::F32), ones);
  const TensorRef multiplier = detail::binary(
      ir::BinaryOp::Div, detail::binary(ir::BinaryOp::Mul, x_scale, scale_as(a.in(4), per_channel)), y_scale);
  return {requantize(a, sums, multiplier, 7)};
}

/// QLinearAdd (com.microsoft, ONNX Runtime's QOperator format): A and B
/// broadcast and added in their real values, requantized with C's scale and
/// zero point, in f32 as ONNX Runtime computes it: round(A_scale / C_scale
/// x (A - A_zp) + B_scale / C_scale x (B - B_zp)) + C_zp, saturated.
std::vector<TensorRef> import_qlinear_add(const NodeArgs& a) {
  require_single_values(a, {1, 2, 4, 5, 6, 7});
  const TensorRef c_scale = detail::cast(a.in(6), DType::F32);
  const auto term = [&](std::size_t value, std::size_t scale, std::size_t zero_point) {
    TensorRef v = detail::cast(a.in(value), DType::I32);
    if (a.has(zero_point)) v = broadcast_binary(ir::BinaryOp::Sub, v, detail::cast(a.in(zero_point), DType::I32));
    const TensorRef ratio = detail::binary(ir::BinaryOp::Div, detail::cast(a.in(scale), DType::F32), c_scale);
    return broadcast_binary(ir::BinaryOp::Mul, detail::cast(v, DType::F32), ratio);
  };
  const TensorRef sum = broadcast_binary(ir::BinaryOp::Add, term(0, 1, 2), term(3, 4, 5));
  return {saturated_round(a, sum, 7, a.in(0)->spec.dtype)};
}

/// QLinearGlobalAveragePool (com.microsoft): each channel's integer sum over
/// the image, less the zero point's share, requantized with x_scale /
/// (y_scale x the image size) in f32, as ONNX Runtime computes it; the
/// spatial dims stay as ones.
std::vector<TensorRef> import_qlinear_global_average_pool(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = x->spec.shape.rank();
  if (r < 3) a.fail("the input needs a batch, a channel and at least one spatial dim");
  require_single_values(a, {1, 2, 3, 4});
  const bool channels_last = a.attr_int("channels_last", 0) != 0;
  TensorRef sums = detail::cast(x, DType::I32);
  std::size_t pixels = 1;
  for (std::size_t d = channels_last ? 1 : 2; d < (channels_last ? r - 1 : r); ++d) {
    pixels *= x->spec.shape[d];
    sums = detail::reduce_dim(ir::ReduceOp::Sum, sums, static_cast<std::int64_t>(d));
  }
  const std::vector<std::int64_t> ones(r, 1);
  if (a.has(2)) {
    const TensorRef share = detail::binary_scalar(ir::BinaryOp::Mul, detail::cast(a.in(2), DType::I32),
                                                  Scalar(static_cast<std::int64_t>(pixels)));
    sums = detail::binary(ir::BinaryOp::Sub, sums, detail::reshape(share, ones));
  }
  const TensorRef scale = detail::binary(
      ir::BinaryOp::Div, detail::cast(a.in(1), DType::F32),
      detail::binary_scalar(ir::BinaryOp::Mul, detail::cast(a.in(3), DType::F32), Scalar(static_cast<double>(pixels))));
  const TensorRef real =
      detail::binary(ir::BinaryOp::Mul, detail::cast(sums, DType::F32), detail::reshape(scale, ones));
  return {saturated_round(a, real, 4, x->spec.dtype)};
}

namespace {

/// The `bits`-wide unsigned values packed in the bytes of `packed` (an
/// integer tensor [rows, bytes]), the first of each byte in its low bits:
/// [rows, bytes * 8 / bits] as int32.
TensorRef unpack_bits(const TensorRef& packed, std::int64_t bits) {
  TensorRef bytes = detail::cast(packed, DType::I32);
  if (bits == 8) return bytes;
  const std::int64_t per_byte = 8 / bits;
  std::vector<TensorRef> parts;
  for (std::int64_t i = 0; i < per_byte; ++i)
    parts.push_back(detail::binary_scalar(ir::BinaryOp::BitAnd,
                                          detail::binary_scalar(ir::BinaryOp::Shr, bytes, Scalar(i * bits)),
                                          Scalar((std::int64_t{1} << bits) - 1)));
  const Shape& s = bytes->spec.shape;
  const std::vector<std::int64_t> dims{static_cast<std::int64_t>(s[0]), static_cast<std::int64_t>(s[1]) * per_byte};
  return detail::reshape(detail::stack(parts, 2), dims);
}

/// One value per block ([n, blocks]) spread over each block's columns and
/// cut to `k`: [n, k].
TensorRef per_column(const TensorRef& per_block, std::int64_t block, std::int64_t k) {
  const Shape& s = per_block->spec.shape;
  const auto n = static_cast<std::int64_t>(s[0]), blocks = static_cast<std::int64_t>(s[1]);
  const std::vector<std::int64_t> wide{n, blocks, block}, flat{n, blocks * block};
  const TensorRef spread = detail::reshape(detail::expand(detail::unsqueeze_dim(per_block, 2), wide), flat);
  return detail::narrow(spread, 1, 0, static_cast<std::size_t>(k));
}

}  // namespace

std::vector<TensorRef> import_matmul_nbits(const NodeArgs& a) {
  const std::int64_t k = a.attr_int("K", 0), n = a.attr_int("N", 0), bits = a.attr_int("bits", 4);
  const std::int64_t block = a.attr_int("block_size", 0);
  // Bounds that keep every size below computed in range (2^30 each: far
  // beyond any real layer).
  constexpr std::int64_t kLimit = std::int64_t{1} << 30;
  if (k <= 0 || n <= 0 || k > kLimit || n > kLimit)
    a.fail(fmt::format("attributes K and N must be in [1, 2^30], they are {} and {}", k, n));
  if (bits != 2 && bits != 4 && bits != 8) a.fail(fmt::format("bits {} is not one of 2, 4 and 8", bits));
  if (block < 16 || block > kLimit || (block & (block - 1)) != 0)
    a.fail(fmt::format("block_size {} must be a power of two from 16 to 2^30", block));
  if (a.has(4)) a.fail("g_idx (a column order, act-order quantization) is not supported; quantize without it");
  const TensorRef& x = a.in(0);
  const DType dtype = x->spec.dtype;
  if (!is_float(dtype)) a.fail(fmt::format("input A must be a float tensor, it is {}", dtype_name(dtype)));
  const Shape& xs = x->spec.shape;
  if (xs.rank() < 1 || static_cast<std::int64_t>(xs[xs.rank() - 1]) != k)
    a.fail(fmt::format("input A (shape {}) must end in K = {}", xs.to_string(), k));
  const std::int64_t blocks = (k + block - 1) / block, blob = block * bits / 8;
  const TensorRef& b = a.in(1);
  if (b->spec.dtype != DType::U8 || b->spec.shape.num_elements() != static_cast<std::size_t>(n * blocks * blob))
    a.fail(fmt::format("input B must be uint8 of shape [{}, {}, {}] (N, blocks of K, bytes a block), it is {} {}", n,
                       blocks, blob, dtype_name(b->spec.dtype), b->spec.shape.to_string()));
  const TensorRef values = detail::narrow(unpack_bits(detail::reshape(b, std::vector{n, blocks * blob}), bits), 1, 0,
                                          static_cast<std::size_t>(k));
  const TensorRef& scales = a.in(2);
  if (scales->spec.dtype != dtype || scales->spec.shape.num_elements() != static_cast<std::size_t>(n * blocks))
    a.fail(fmt::format("scales must be {} with {} values (N x blocks), they are {} {}", dtype_name(dtype), n * blocks,
                       dtype_name(scales->spec.dtype), scales->spec.shape.to_string()));
  const std::vector<std::int64_t> per_block{n, blocks};
  const TensorRef scale = per_column(detail::reshape(scales, per_block), block, k);
  // The zero point: packed like B (a byte holds 8 / bits blocks' values, each
  // row padded to whole bytes), in the scales' type, or 2^(bits - 1).
  TensorRef w = detail::cast(values, dtype);
  if (!a.has(3)) {
    w = detail::binary_scalar(ir::BinaryOp::Sub, w, Scalar(static_cast<double>(std::int64_t{1} << (bits - 1))));
  } else {
    const TensorRef& zp = a.in(3);
    TensorRef zero;
    if (zp->spec.dtype == DType::U8) {
      const std::int64_t row_bytes = (blocks * bits + 7) / 8;
      if (zp->spec.shape.num_elements() != static_cast<std::size_t>(n * row_bytes))
        a.fail(fmt::format("uint8 zero_points must hold {} bytes (N x {} packed), they have shape {}", n * row_bytes,
                           row_bytes, zp->spec.shape.to_string()));
      zero = detail::cast(detail::narrow(unpack_bits(detail::reshape(zp, std::vector{n, row_bytes}), bits), 1, 0,
                                         static_cast<std::size_t>(blocks)),
                          dtype);
    } else if (zp->spec.dtype == dtype && zp->spec.shape.num_elements() == static_cast<std::size_t>(n * blocks)) {
      zero = detail::reshape(zp, per_block);
    } else {
      a.fail(fmt::format("zero_points must be packed uint8 or {} with {} values, they are {} {}", dtype_name(dtype),
                         n * blocks, dtype_name(zp->spec.dtype), zp->spec.shape.to_string()));
    }
    w = detail::binary(ir::BinaryOp::Sub, w, per_column(zero, block, k));
  }
  w = detail::binary(ir::BinaryOp::Mul, w, scale);  // [N, K]
  TensorRef y = import_matmul(a, x, detail::swap_dims(w, 0, 1));
  if (a.has(5)) {
    const TensorRef& bias = a.in(5);
    if (bias->spec.shape.num_elements() != static_cast<std::size_t>(n))
      a.fail(fmt::format("bias must have N = {} values, it has shape {}", n, bias->spec.shape.to_string()));
    y = broadcast_binary(ir::BinaryOp::Add, y, detail::reshape(bias, std::vector<std::int64_t>{n}));
  }
  return {y};
}

}  // namespace burn::onnx
