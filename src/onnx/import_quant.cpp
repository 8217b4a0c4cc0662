// ONNX's quantization operators as burn tensor operations, for the models
// ONNX Runtime's quantization tools write: QDQ models (QuantizeLinear and
// DequantizeLinear around float operators, quantize_static's default) and
// dynamically quantized ones (DynamicQuantizeLinear, MatMulInteger and
// ConvInteger, quantize_dynamic's). Each computes what the ONNX definition
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

/// A scale or zero point shaped to broadcast against a rank-`rank` tensor:
/// a scalar (or one value) per tensor, a 1-D one per slice of `axis`.
TensorRef quant_param(const NodeArgs& a, const TensorRef& p, std::size_t rank, std::int64_t axis, const char* what) {
  const Shape& s = p->spec.shape;
  std::vector<std::int64_t> dims(rank, 1);
  if (s.rank() == 1 && s[0] != 1) {
    const std::int64_t ax = axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
    if (ax < 0 || ax >= static_cast<std::int64_t>(rank))
      a.fail(fmt::format("axis {} is outside a rank-{} input", axis, rank));
    dims[static_cast<std::size_t>(ax)] = static_cast<std::int64_t>(s[0]);
  } else if (s.num_elements() != 1) {
    a.fail(fmt::format("the {} must be a scalar or 1-D (per axis), it has shape {}", what, s.to_string()));
  }
  return detail::reshape(p, dims);
}

/// Opset 21's blocked quantization (a scale per block of an axis) is not read.
void refuse_blocks(const NodeArgs& a) {
  if (a.attr_int("block_size", 0) != 0) a.fail("block_size (blocked quantization) is not supported");
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
/// tensor or along `axis`; and the zero point's own dtype.
struct LinearQuantParams {
  TensorRef scale;
  std::optional<TensorRef> zero_point;
  std::optional<DType> zero_point_dtype;
};

LinearQuantParams linear_quant_params(const NodeArgs& a) {
  refuse_blocks(a);
  const std::size_t r = a.in(0)->spec.shape.rank();
  const std::int64_t axis = a.attr_int("axis", 1);
  LinearQuantParams p{quant_param(a, a.in(1), r, axis, "scale"), std::nullopt, std::nullopt};
  if (a.has(2)) {
    p.zero_point_dtype = a.in(2)->spec.dtype;
    p.zero_point = detail::cast(quant_param(a, a.in(2), r, axis, "zero point"), p.scale->spec.dtype);
  }
  return p;
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
  TensorRef y = detail::cast(a.in(0), p.scale->spec.dtype);
  if (p.zero_point) y = detail::binary(ir::BinaryOp::Sub, y, *p.zero_point);
  return {detail::binary(ir::BinaryOp::Mul, y, p.scale)};
}

std::vector<TensorRef> import_quantize_linear(const NodeArgs& a) {
  const LinearQuantParams p = linear_quant_params(a);
  // The zero point's type is the output's; uint8 without one.
  DType out = p.zero_point_dtype.value_or(DType::U8);
  if (a.has_attr("output_dtype") && a.attr_int("output_dtype", 0) != 0) {
    const auto wanted = burn_dtype(static_cast<std::int32_t>(a.attr_int("output_dtype", 0)));
    if (!wanted || (p.zero_point_dtype && *wanted != out)) a.fail("output_dtype must name the zero point's type");
    out = *wanted;
  }
  return {quantize_to(a, detail::cast(a.in(0), p.scale->spec.dtype), p.scale, p.zero_point, out)};
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
