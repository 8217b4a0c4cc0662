// ONNX's quantization operators as burn tensor operations, for the models
// ONNX Runtime's quantization tools write: QDQ models (QuantizeLinear and
// DequantizeLinear around float operators, quantize_static's default) and
// dynamically quantized ones (DynamicQuantizeLinear, MatMulInteger and
// ConvInteger, quantize_dynamic's), with scales per tensor, per axis or per
// block (opset 21's blocked quantization). Each computes what the ONNX definition
// says: integer products are exact (int32 matmuls; convolutions in f64, or in
// f32 where every sum stays below 2^24), rounding is half to even.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include <burn/detail/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_ops.hpp"

namespace burn::onnx {

using detail::TensorRef;

namespace {

/// The range of an 8-bit integer dtype (or int32's, for a bias), for saturation.
std::pair<double, double> integer_range(const NodeArgs& a, DType dtype) {
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

/// round-half-to-even(x / scale) + zero_point, saturated to `dtype`'s range, as `dtype`.
TensorRef quantize_to(const NodeArgs& a, const TensorRef& x, const TensorRef& scale,
                      const std::optional<TensorRef>& zero_point, DType dtype) {
  const auto [lo, hi] = integer_range(a, dtype);
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
  const auto dtype = burn_dtype(static_cast<std::int32_t>(code));
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
  // (opset 21), else uint8.
  const DType out = dtype_attr(a, "output_dtype", p.zero_point_dtype.value_or(DType::U8));
  if (p.zero_point_dtype && out != *p.zero_point_dtype)
    a.fail(fmt::format("output_dtype {} must be the zero point's dtype, {}", dtype_name(out),
                       dtype_name(*p.zero_point_dtype)));
  // Opset 23's precision: the dtype x / scale is computed in (the scale's by default).
  const DType precision = dtype_attr(a, "precision", p.scale->spec.dtype);
  if (!is_float(precision)) a.fail(fmt::format("precision {} is not a float type", dtype_name(precision)));
  std::optional<TensorRef> zero_point;
  if (p.zero_point) zero_point = detail::cast(*p.zero_point, precision);
  return {quantize_to(a, detail::cast(a.in(0), precision), detail::cast(p.scale, precision), zero_point, out)};
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

// burn's convolutions compute in floats: f64 holds every sum of 8-bit
// products exactly; f32 does while the terms per output stay below 2^24 / 255^2.
std::vector<TensorRef> import_conv_integer(const NodeArgs& a) {
  for (const std::size_t zp : {2u, 3u})
    if (a.has(zp) && a.in(zp)->spec.shape.num_elements() != 1)
      a.fail(fmt::format("zero point {} must be one value (a per-channel zero point is not supported)", zp));
  const TensorRef x = centred(a, 0, 2, false), w = centred(a, 1, 3, false);
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
  const TensorRef y = import_conv_of(a, detail::cast(x, compute), detail::cast(w, compute));
  return {detail::cast(y, DType::I32)};
}

}  // namespace burn::onnx
