// The elementwise ONNX operators import runs: arithmetic, comparisons and
// logic (broadcast across ranks: burn's elementwise ops take equal ranks, so
// operands first get leading unit dims), math functions, casts, Where,
// Identity and Dropout (inference only), and the activations.
#include <algorithm>

#include <burn/activation.hpp>
#include <burn/detail/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_common.hpp"

namespace burn::onnx {
namespace {

template <ir::BinaryOp Op>
std::vector<TensorRef> binary_op(const NodeArgs& a) {
  return one(broadcast_binary(Op, a.in(0), a.in(1)));
}

/// Max, Min, Sum, Mean: any number of inputs, broadcast together.
template <ir::BinaryOp Op>
std::vector<TensorRef> variadic(const NodeArgs& a) {
  TensorRef acc = a.in(0);
  for (std::size_t i = 1; i < a.num_inputs(); ++i) acc = broadcast_binary(Op, acc, a.in(i));
  return one(acc);
}

std::vector<TensorRef> mean_op(const NodeArgs& a) {
  TensorRef acc = variadic<ir::BinaryOp::Add>(a)[0];
  return one(detail::binary_scalar(ir::BinaryOp::Div, acc, static_cast<double>(a.num_inputs())));
}

template <ir::UnaryOp Op>
std::vector<TensorRef> unary_op(const NodeArgs& a) {
  return one(detail::unary(Op, a.in(0)));
}

std::vector<TensorRef> identity(const NodeArgs& a) { return one(a.in(0)); }

/// BitShift: unsigned integers shifted left or right (the `direction`) by
/// the second input's amounts, broadcast.
std::vector<TensorRef> bit_shift(const NodeArgs& a) {
  const std::string direction = a.attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    a.fail(fmt::format("direction must be LEFT or RIGHT, it is '{}'", direction));
  return one(broadcast_binary(direction == "LEFT" ? ir::BinaryOp::Shl : ir::BinaryOp::Shr, a.in(0), a.in(1)));
}

std::vector<TensorRef> mod(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const TensorRef& y = a.in(1);
  if (a.attr_int("fmod", 0) == 0) {
    if (is_float(dtype_of(x))) a.fail("fmod = 0 is for integers; floats need fmod = 1");
    return one(broadcast_binary(ir::BinaryOp::Rem, x, y));
  }
  // fmod = 1: the dividend's sign (C fmod): x - trunc(x / y) * y.
  TensorRef q = broadcast_binary(ir::BinaryOp::Div, x, y);
  if (is_float(dtype_of(q))) q = detail::unary(ir::UnaryOp::Trunc, q);
  return one(broadcast_binary(ir::BinaryOp::Sub, x, broadcast_binary(ir::BinaryOp::Mul, q, y)));
}

std::vector<TensorRef> clip(const NodeArgs& a) {
  std::optional<Scalar> lo, hi;
  const bool ints = !is_float(dtype_of(a.in(0)));
  auto bound = [&](std::size_t i) -> std::optional<Scalar> {
    if (!a.has(i)) return std::nullopt;
    const double v = a.scalar(i);
    return ints ? Scalar(static_cast<std::int64_t>(v)) : Scalar(v);
  };
  lo = bound(1);
  hi = bound(2);
  if (!lo && !hi) return one(a.in(0));
  return one(detail::clamp(a.in(0), lo, hi));
}

std::vector<TensorRef> cast(const NodeArgs& a) {
  const auto to = burn_dtype(static_cast<std::int32_t>(a.attr_int("to", 0)));
  if (!to)
    a.fail(fmt::format("cast to {} is not supported: burn has no such dtype",
                       onnx_type_name(static_cast<std::int32_t>(a.attr_int("to", 0)))));
  return one(detail::cast(a.in(0), *to));
}

/// BitCast (opset 26): the same bytes read as another dtype of the same
/// width. Done on the host (burn has no device op that reinterprets bits):
/// a round trip through the input's data.
std::vector<TensorRef> bit_cast(const NodeArgs& a) {
  const auto code = static_cast<std::int32_t>(a.attr_int("to", 0));
  const auto to = burn_dtype(code);
  const TensorRef& x = a.in(0);
  const DType from = dtype_of(x);
  if (!to) a.fail(fmt::format("BitCast to {} is not supported: burn has no such dtype", onnx_type_name(code)));
  if (*to == DType::Bool || from == DType::Bool)
    a.fail("BitCast to or from bool is not supported (a byte other than 0 or 1 is no bool burn holds)");
  if (dtype_size(*to) != dtype_size(from))
    a.fail(fmt::format("BitCast needs types of one width: {} has {} bytes, {} has {}", dtype_name(from),
                       dtype_size(from), dtype_name(*to), dtype_size(*to)));
  const TensorData data = detail::to_data(x);
  std::vector<std::byte> bytes(data.bytes().begin(), data.bytes().end());
  return one(detail::from_data(TensorData(std::move(bytes), data.shape(), *to), TensorCreationOptions(x->device, *to),
                               kind_for(*to)));
}

/// CastLike (opset 15): input 0 in input 1's dtype.
std::vector<TensorRef> cast_like(const NodeArgs& a) { return one(detail::cast(a.in(0), dtype_of(a.in(1)))); }

std::vector<TensorRef> is_inf(const NodeArgs& a) {
  const bool neg = a.attr_int("detect_negative", 1) != 0, pos = a.attr_int("detect_positive", 1) != 0;
  TensorRef inf = detail::unary(ir::UnaryOp::IsInf, a.in(0));
  if (neg && pos) return one(inf);
  if (!neg && !pos) return one(detail::binary_scalar(ir::BinaryOp::LogicalAnd, inf, false));
  const TensorRef sign = detail::binary_scalar(pos ? ir::BinaryOp::Greater : ir::BinaryOp::Less, a.in(0), 0.0);
  return one(detail::binary(ir::BinaryOp::LogicalAnd, inf, sign));
}

std::vector<TensorRef> where(const NodeArgs& a) {
  // Broadcast all three to one shape, then take x where the condition holds.
  const std::size_t r = std::max({rank_of(a.in(0)), rank_of(a.in(1)), rank_of(a.in(2))});
  TensorRef c = with_rank(a.in(0), r), x = with_rank(a.in(1), r), y = with_rank(a.in(2), r);
  Shape out = ir::broadcast_shapes("Where", ir::broadcast_shapes("Where", shape_of(c), shape_of(x)), shape_of(y));
  const I64s dims(out.dims().begin(), out.dims().end());
  if (dtype_of(c) != DType::Bool) a.fail("the condition must be bool");
  return one(detail::mask_where(detail::expand(y, dims), detail::expand(c, dims), detail::expand(x, dims)));
}

// ---- activations ------------------------------------------------------------------------------

std::vector<TensorRef> relu(const NodeArgs& a) { return one(detail::relu(a.in(0))); }
std::vector<TensorRef> sigmoid(const NodeArgs& a) { return one(detail::sigmoid(a.in(0))); }
std::vector<TensorRef> leaky_relu(const NodeArgs& a) {
  return one(detail::leaky_relu(a.in(0), a.attr_float("alpha", 0.01F)));
}
std::vector<TensorRef> softplus(const NodeArgs& a) { return one(detail::softplus(a.in(0), 1.0)); }
std::vector<TensorRef> hard_sigmoid(const NodeArgs& a) {
  return one(detail::hard_sigmoid(a.in(0), a.attr_float("alpha", 0.2F), a.attr_float("beta", 0.5F)));
}
/// outer * (exp(inner * min(x, 0)) - 1), 0 where x >= 0: the negative side of Elu, Selu and Celu.
TensorRef negative_expm1(const TensorRef& x, double inner_scale, double outer_scale) {
  TensorRef neg = detail::binary_scalar(ir::BinaryOp::Min, x, 0.0);
  if (inner_scale != 1.0) neg = detail::binary_scalar(ir::BinaryOp::Mul, neg, inner_scale);
  return detail::binary_scalar(ir::BinaryOp::Mul, detail::unary(ir::UnaryOp::Expm1, neg), outer_scale);
}
std::vector<TensorRef> elu(const NodeArgs& a) {
  const double alpha = a.attr_float("alpha", 1.0F);
  return one(detail::binary(ir::BinaryOp::Add, detail::relu(a.in(0)), negative_expm1(a.in(0), 1.0, alpha)));
}
std::vector<TensorRef> selu(const NodeArgs& a) {
  // ONNX's defaults are the float32 roundings of SELU's constants.
  const double alpha = a.attr_float("alpha", 1.67326319217681884765625F);
  const double gamma = a.attr_float("gamma", 1.05070102214813232421875F);
  const TensorRef y = detail::binary(ir::BinaryOp::Add, detail::relu(a.in(0)), negative_expm1(a.in(0), 1.0, alpha));
  return one(detail::binary_scalar(ir::BinaryOp::Mul, y, gamma));
}
std::vector<TensorRef> celu(const NodeArgs& a) {
  const double alpha = a.attr_float("alpha", 1.0F);
  if (alpha == 0.0) a.fail("alpha must not be 0");
  return one(detail::binary(ir::BinaryOp::Add, detail::relu(a.in(0)), negative_expm1(a.in(0), 1.0 / alpha, alpha)));
}
/// PRelu: x where positive, slope * x elsewhere (the slope broadcast to x, as ONNX's).
std::vector<TensorRef> prelu(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const TensorRef negative =
      broadcast_binary(ir::BinaryOp::Mul, detail::binary_scalar(ir::BinaryOp::Min, x, 0.0), a.in(1));
  if (shape_of(negative) != shape_of(x)) a.fail("the slope must broadcast to the input's shape");
  return one(detail::binary(ir::BinaryOp::Add, detail::relu(x), negative));
}
std::vector<TensorRef> hard_swish(const NodeArgs& a) {
  return one(detail::binary(ir::BinaryOp::Mul, a.in(0), detail::hard_sigmoid(a.in(0), 1.0 / 6.0, 0.5)));
}
std::vector<TensorRef> mish(const NodeArgs& a) { return one(detail::mish(a.in(0))); }
/// Swish (opset 24): x * sigmoid(alpha * x); alpha = 1 is silu.
std::vector<TensorRef> swish(const NodeArgs& a) {
  const double alpha = a.attr_float("alpha", 1.0F);
  if (alpha == 1.0) return one(detail::silu(a.in(0)));
  const TensorRef gate = detail::sigmoid(detail::binary_scalar(ir::BinaryOp::Mul, a.in(0), alpha));
  return one(detail::binary(ir::BinaryOp::Mul, a.in(0), gate));
}
std::vector<TensorRef> softmax(const NodeArgs& a) {
  const auto ax = static_cast<std::int64_t>(axis(a, a.attr_int("axis", -1), rank_of(a.in(0))));
  return one(detail::softmax(a.in(0), ax));
}
std::vector<TensorRef> log_softmax(const NodeArgs& a) {
  const auto ax = static_cast<std::int64_t>(axis(a, a.attr_int("axis", -1), rank_of(a.in(0))));
  return one(detail::log_softmax(a.in(0), ax));
}

/// Gelu (opset 20): the exact form (erf) or PyTorch's tanh approximation.
std::vector<TensorRef> gelu_op(const NodeArgs& a) {
  const std::string approximate = a.attr_string("approximate", "none");
  if (approximate == "none") return one(detail::gelu(a.in(0)));
  if (approximate == "tanh") return one(detail::gelu_tanh(a.in(0)));
  a.fail(fmt::format("approximate '{}' is not one of none, tanh", approximate));
}

std::vector<TensorRef> dropout(const NodeArgs& a) {
  if (a.has(2) && a.scalar(2) != 0.0) a.fail("training_mode = true is not supported: export in eval mode");
  if (!a.output_wanted(1)) return one(a.in(0));
  // In inference every element is kept: the mask is all true.
  const TensorRef& x = a.in(0);
  return {x,
          detail::full(x->spec.shape, Scalar(true), TensorCreationOptions(x->device, DType::Bool), TensorKind::Bool)};
}

}  // namespace

void add_elementwise_ops(ImportTable& table) {
  using B = ir::BinaryOp;
  using U = ir::UnaryOp;
  table.insert({
      {"Add", binary_op<B::Add>},
      {"Sub", binary_op<B::Sub>},
      {"Mul", binary_op<B::Mul>},
      {"Div", binary_op<B::Div>},
      {"Pow", binary_op<B::Pow>},
      {"Mod", mod},
      {"Max", variadic<B::Max>},
      {"Min", variadic<B::Min>},
      {"Sum", variadic<B::Add>},
      {"Mean", mean_op},
      {"And", binary_op<B::LogicalAnd>},
      {"Or", binary_op<B::LogicalOr>},
      {"Xor", binary_op<B::LogicalXor>},
      {"Equal", binary_op<B::Equal>},
      {"Greater", binary_op<B::Greater>},
      {"GreaterOrEqual", binary_op<B::GreaterEqual>},
      {"Less", binary_op<B::Less>},
      {"LessOrEqual", binary_op<B::LessEqual>},
      {"Neg", unary_op<U::Neg>},
      {"Abs", unary_op<U::Abs>},
      {"Sign", unary_op<U::Sign>},
      {"Reciprocal", unary_op<U::Recip>},
      {"Exp", unary_op<U::Exp>},
      {"Log", unary_op<U::Log>},
      {"Sqrt", unary_op<U::Sqrt>},
      {"Sin", unary_op<U::Sin>},
      {"Cos", unary_op<U::Cos>},
      {"Tan", unary_op<U::Tan>},
      {"Asin", unary_op<U::Asin>},
      {"Acos", unary_op<U::Acos>},
      {"Atan", unary_op<U::Atan>},
      {"Sinh", unary_op<U::Sinh>},
      {"Cosh", unary_op<U::Cosh>},
      {"Tanh", unary_op<U::Tanh>},
      {"Asinh", unary_op<U::Asinh>},
      {"Acosh", unary_op<U::Acosh>},
      {"Atanh", unary_op<U::Atanh>},
      {"Erf", unary_op<U::Erf>},
      {"Round", unary_op<U::Round>},
      {"Floor", unary_op<U::Floor>},
      {"Ceil", unary_op<U::Ceil>},
      {"IsNaN", unary_op<U::IsNan>},
      {"IsInf", is_inf},
      {"Not", unary_op<U::LogicalNot>},
      {"BitwiseAnd", binary_op<B::BitAnd>},
      {"BitwiseOr", binary_op<B::BitOr>},
      {"BitwiseXor", binary_op<B::BitXor>},
      {"BitwiseNot", unary_op<U::BitNot>},
      {"BitShift", bit_shift},
      {"Clip", clip},
      {"Cast", cast},
      {"BitCast", bit_cast},
      {"QuantizeLinear", import_quantize_linear},
      {"DequantizeLinear", import_dequantize_linear},
      {"DynamicQuantizeLinear", import_dynamic_quantize_linear},
      {"CastLike", cast_like},
      {"Where", where},
      {"Identity", identity},
      {"Dropout", dropout},
      {"Relu", relu},
      {"Sigmoid", sigmoid},
      {"Gelu", gelu_op},
      {"Elu", elu},
      {"Selu", selu},
      {"Celu", celu},
      {"PRelu", prelu},
      {"HardSwish", hard_swish},
      {"Mish", mish},
      {"LeakyRelu", leaky_relu},
      {"Softplus", softplus},
      {"Swish", swish},
      {"HardSigmoid", hard_sigmoid},
      {"Softmax", softmax},
      {"LogSoftmax", log_softmax},
  });
}

}  // namespace burn::onnx
