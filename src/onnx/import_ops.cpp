// The ONNX operators import runs (opsets 13 to 17), grouped as ONNX's
// operator list groups them: elementwise, activations, matmul, reductions,
// shape and layout, indexing, creation, neural-network layers.
//
// ONNX broadcasts across ranks; burn's elementwise ops take equal ranks, so
// operands are first given leading unit dims (align_ranks).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include <burn/activation.hpp>
#include <burn/detail/ops.hpp>
#include <burn/error.hpp>
#include <burn/module/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_ops.hpp"

namespace burn::onnx {

// ---- NodeArgs -------------------------------------------------------------------------------

using detail::TensorRef;
using I64s = std::vector<std::int64_t>;

void NodeArgs::fail(std::string_view message) const {
  throw Error(kRunOp, fmt::format("node '{}' ({}): {}", node_.name(), node_.op_type(), message));
}

const TensorRef& NodeArgs::in(std::size_t i) const {
  if (!has(i)) fail(fmt::format("input {} is required but missing", i));
  return *inputs_[i];
}

std::vector<std::int64_t> NodeArgs::ints(std::size_t i) const {
  const TensorData data = i < host_.size() && host_[i] ? *host_[i] : detail::to_data(in(i));
  if (is_float(data.dtype()) || is_bool(data.dtype()))
    fail(fmt::format("input {} must hold integers, it is {}", i, dtype_name(data.dtype())));
  return data.convert(DType::I64).to_vec<std::int64_t>();
}

double NodeArgs::scalar(std::size_t i) const {
  const TensorData data = i < host_.size() && host_[i] ? *host_[i] : detail::to_data(in(i));
  if (data.num_elements() != 1)
    fail(fmt::format("input {} must hold one value, it has shape {}", i, data.shape().to_string()));
  return data.value_as_double(0);
}

const ::onnx::AttributeProto* NodeArgs::attr(std::string_view name) const {
  auto it = attrs_.find(std::string(name));
  return it == attrs_.end() ? nullptr : it->second;
}
const ::onnx::AttributeProto* NodeArgs::typed_attr(std::string_view name,
                                                   ::onnx::AttributeProto_AttributeType type) const {
  const auto* a = attr(name);
  // A model's writer may leave the type unset (IR 1 had no type field); the value then is what the reader asks.
  if (a && a->type() != type && a->type() != ::onnx::AttributeProto::UNDEFINED)
    fail(fmt::format(
        "attribute '{}' must be of type {}, it is {}", name, ::onnx::AttributeProto_AttributeType_Name(type),
        ::onnx::AttributeProto_AttributeType_IsValid(a->type()) ? ::onnx::AttributeProto_AttributeType_Name(a->type())
                                                                : std::to_string(a->type())));
  return a;
}
bool NodeArgs::has_attr(std::string_view name) const { return attr(name) != nullptr; }
std::int64_t NodeArgs::attr_int(std::string_view name, std::int64_t fallback) const {
  const auto* a = typed_attr(name, ::onnx::AttributeProto::INT);
  return a ? a->i() : fallback;
}
float NodeArgs::attr_float(std::string_view name, float fallback) const {
  const auto* a = typed_attr(name, ::onnx::AttributeProto::FLOAT);
  return a ? a->f() : fallback;
}
std::string NodeArgs::attr_string(std::string_view name, std::string_view fallback) const {
  const auto* a = typed_attr(name, ::onnx::AttributeProto::STRING);
  return a ? a->s() : std::string(fallback);
}
std::optional<std::vector<std::int64_t>> NodeArgs::attr_ints(std::string_view name) const {
  const auto* a = typed_attr(name, ::onnx::AttributeProto::INTS);
  if (!a) return std::nullopt;
  return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}
std::optional<TensorData> NodeArgs::attr_tensor(std::string_view name) const {
  const auto* a = typed_attr(name, ::onnx::AttributeProto::TENSOR);
  if (!a) return std::nullopt;
  return read_tensor(a->t(), kRunOp);
}

namespace {

// ---- helpers ----------------------------------------------------------------------------------

std::size_t rank_of(const TensorRef& t) { return t->spec.shape.rank(); }
const Shape& shape_of(const TensorRef& t) { return t->spec.shape; }
DType dtype_of(const TensorRef& t) { return t->spec.dtype; }

std::size_t axis(const NodeArgs& a, std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) a.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// Leading unit dims up to `rank`.
TensorRef with_rank(const TensorRef& t, std::size_t rank) {
  if (rank_of(t) >= rank) return t;
  I64s dims(rank - rank_of(t), 1);
  for (auto d : shape_of(t).dims()) dims.push_back(static_cast<std::int64_t>(d));
  return detail::reshape(t, dims);
}

std::pair<TensorRef, TensorRef> align_ranks(const TensorRef& a, const TensorRef& b) {
  const std::size_t r = std::max(rank_of(a), rank_of(b));
  return {with_rank(a, r), with_rank(b, r)};
}

TensorRef broadcast_binary(ir::BinaryOp op, const TensorRef& x, const TensorRef& y) {
  auto [l, r] = align_ranks(x, y);
  if (dtype_of(r) != dtype_of(l)) r = detail::cast(r, dtype_of(l));  // Pow's exponent may differ
  return detail::binary(op, l, r);
}

std::vector<TensorRef> one(TensorRef t) { return {std::move(t)}; }

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
std::vector<TensorRef> softmax(const NodeArgs& a) {
  const auto ax = static_cast<std::int64_t>(axis(a, a.attr_int("axis", -1), rank_of(a.in(0))));
  return one(detail::softmax(a.in(0), ax));
}
std::vector<TensorRef> log_softmax(const NodeArgs& a) {
  const auto ax = static_cast<std::int64_t>(axis(a, a.attr_int("axis", -1), rank_of(a.in(0))));
  return one(detail::log_softmax(a.in(0), ax));
}

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

// ---- reductions -------------------------------------------------------------------------------

/// The dims `axes` names (every dim when none), sorted, each once.
std::vector<std::size_t> reduced_dims(const NodeArgs& a, const std::optional<I64s>& axes, std::size_t r) {
  std::vector<std::size_t> dims;
  if (!axes || axes->empty()) {
    dims.resize(r);
    std::iota(dims.begin(), dims.end(), 0);
  } else {
    for (auto ax : *axes) dims.push_back(axis(a, ax, r));
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

/// A reduction's result kept at size 1 along `dims` (sorted), without them.
TensorRef drop_reduced(const TensorRef& kept, const std::vector<std::size_t>& dims) {
  I64s shape;
  for (std::size_t d = 0; d < rank_of(kept); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d)) shape.push_back(static_cast<std::int64_t>(shape_of(kept)[d]));
  return detail::reshape(kept, shape);
}

TensorRef reduce(const NodeArgs& a, ir::ReduceOp op, const TensorRef& x, const std::optional<I64s>& axes,
                 bool keepdims) {
  const std::vector<std::size_t> dims = reduced_dims(a, axes, rank_of(x));
  TensorRef out = x;
  for (auto d : dims) out = detail::reduce_dim(op, out, static_cast<std::int64_t>(d));
  return keepdims ? out : drop_reduced(out, dims);
}

/// What every Reduce* node says about its axes: ReduceSum (opset 13) and the
/// others (opset 18) take them as input 1, the others of older opsets as an
/// attribute; with none and noop_with_empty_axes the node is the identity.
struct ReduceAxes {
  std::optional<I64s> axes;
  bool keepdims = true;
  bool noop = false;
};

ReduceAxes reduce_axes(const NodeArgs& a) {
  ReduceAxes r;
  r.axes = a.attr_ints("axes");
  if (a.has(1)) {
    if (r.axes) a.fail("axes are given both as an attribute and as input 1");
    r.axes = a.ints(1);
  }
  r.keepdims = a.attr_int("keepdims", 1) != 0;
  r.noop = (!r.axes || r.axes->empty()) && a.attr_int("noop_with_empty_axes", 0);
  return r;
}

template <ir::ReduceOp Op>
std::vector<TensorRef> reduce_op(const NodeArgs& a) {
  const ReduceAxes r = reduce_axes(a);
  if (r.noop) return one(a.in(0));
  return one(reduce(a, Op, a.in(0), r.axes, r.keepdims));
}

/// The reductions ONNX composes from a sum or a max: a transform of the
/// input and of the result around `reduce`.
enum class ComposedReduce : std::uint8_t { L1, L2, SumSquare, LogSum, LogSumExp };

template <ComposedReduce Kind>
std::vector<TensorRef> composed_reduce(const NodeArgs& a) {
  const ReduceAxes r = reduce_axes(a);
  const TensorRef& x = a.in(0);
  auto sum = [&](const TensorRef& v) { return r.noop ? v : reduce(a, ir::ReduceOp::Sum, v, r.axes, r.keepdims); };
  using U = ir::UnaryOp;
  switch (Kind) {
    case ComposedReduce::L1: return one(sum(detail::unary(U::Abs, x)));
    case ComposedReduce::L2: return one(detail::unary(U::Sqrt, sum(detail::binary(ir::BinaryOp::Mul, x, x))));
    case ComposedReduce::SumSquare: return one(sum(detail::binary(ir::BinaryOp::Mul, x, x)));
    case ComposedReduce::LogSum: return one(detail::unary(U::Log, sum(x)));
    case ComposedReduce::LogSumExp: {
      if (r.noop) return one(x);
      // max + log(sum(exp(x - max))): no overflow for large inputs.
      const TensorRef m = reduce(a, ir::ReduceOp::Max, x, r.axes, true);
      const TensorRef shifted = detail::unary(U::Exp, detail::binary(ir::BinaryOp::Sub, x, m));
      const TensorRef y = detail::binary(ir::BinaryOp::Add,
                                         detail::unary(U::Log, reduce(a, ir::ReduceOp::Sum, shifted, r.axes, true)), m);
      return one(r.keepdims ? y : drop_reduced(y, reduced_dims(a, r.axes, rank_of(x))));
    }
  }
  return one(x);
}

template <ir::ReduceOp Op>
std::vector<TensorRef> arg_reduce(const NodeArgs& a) {
  if (a.attr_int("select_last_index", 0)) a.fail("select_last_index = 1 is not supported (burn picks the first)");
  const std::size_t d = axis(a, a.attr_int("axis", 0), rank_of(a.in(0)));
  return one(reduce(a, Op, a.in(0), I64s{static_cast<std::int64_t>(d)}, a.attr_int("keepdims", 1) != 0));
}

std::vector<TensorRef> cumsum(const NodeArgs& a) {
  const std::size_t d = axis(a, a.ints(1).at(0), rank_of(a.in(0)));
  const I64s flip_axes{static_cast<std::int64_t>(d)};
  TensorRef x = a.in(0);
  const bool reverse = a.attr_int("reverse", 0) != 0;
  if (reverse) x = detail::flip(x, flip_axes);
  TensorRef out = detail::cumulative(ir::CumulativeOp::Sum, x, static_cast<std::int64_t>(d));
  if (a.attr_int("exclusive", 0)) out = detail::binary(ir::BinaryOp::Sub, out, x);
  if (reverse) out = detail::flip(out, flip_axes);
  return one(out);
}

std::vector<TensorRef> topk(const NodeArgs& a) {
  const std::size_t d = axis(a, a.attr_int("axis", -1), rank_of(a.in(0)));
  const I64s k = a.ints(1);
  if (k.size() != 1 || k[0] < 0 || static_cast<std::size_t>(k[0]) > shape_of(a.in(0))[d])
    a.fail(fmt::format("K must be one value in [0, {}]", shape_of(a.in(0))[d]));
  auto [values, indices] =
      detail::topk(a.in(0), static_cast<std::size_t>(k[0]), static_cast<std::int64_t>(d), a.attr_int("largest", 1));
  return {values, detail::cast(indices, DType::I64)};
}

// ---- shape and layout -------------------------------------------------------------------------

std::vector<TensorRef> reshape(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  I64s dims = a.ints(1);
  const bool allowzero = a.attr_int("allowzero", 0) != 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allowzero) {
      if (i >= rank_of(x)) a.fail(fmt::format("shape entry {} is 0 (copy) past the input's rank", i));
      dims[i] = static_cast<std::int64_t>(shape_of(x)[i]);
    }
  }
  // burn's reshape reads 0 as "keep": with allowzero, an empty dim is given as an exact shape.
  if (allowzero && std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    std::vector<std::size_t> exact;
    for (auto d : dims) {
      if (d < 0) a.fail("allowzero with -1 in the shape is ambiguous");
      exact.push_back(static_cast<std::size_t>(d));
    }
    return one(detail::reshape_exact(x, Shape(exact)));
  }
  return one(detail::reshape(x, dims));
}

std::vector<TensorRef> flatten(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  const auto ax = a.attr_int("axis", 1);
  const std::size_t split = ax == static_cast<std::int64_t>(r) ? r : axis(a, ax, r);
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < r; ++d) (d < split ? outer : inner) *= static_cast<std::int64_t>(shape_of(x)[d]);
  return one(detail::reshape(x, I64s{outer, inner}));
}

std::vector<TensorRef> transpose(const NodeArgs& a) {
  const std::size_t r = rank_of(a.in(0));
  I64s perm;
  if (auto p = a.attr_ints("perm")) {
    perm = *p;
  } else {
    for (std::size_t d = r; d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  }
  return one(detail::permute(a.in(0), perm));
}

std::vector<TensorRef> expand(const NodeArgs& a) {
  const I64s target = a.ints(1);
  Shape t;
  for (auto d : target) {
    if (d < 0) a.fail("the shape must not be negative");
    t.dims().push_back(static_cast<std::size_t>(d));
  }
  const std::size_t r = std::max(rank_of(a.in(0)), t.rank());
  const TensorRef x = with_rank(a.in(0), r);
  while (t.rank() < r) t.dims().insert(t.dims().begin(), 1);
  const Shape out = ir::broadcast_shapes("Expand", shape_of(x), t);
  return one(detail::expand(x, I64s(out.dims().begin(), out.dims().end())));
}

std::vector<TensorRef> squeeze(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  std::vector<bool> drop(rank_of(x), false);
  if (a.has(1)) {
    for (auto ax : a.ints(1)) {
      const std::size_t d = axis(a, ax, rank_of(x));
      if (shape_of(x)[d] != 1) a.fail(fmt::format("cannot squeeze dim {} of size {}", d, shape_of(x)[d]));
      drop[d] = true;
    }
  } else {
    for (std::size_t d = 0; d < drop.size(); ++d) drop[d] = shape_of(x)[d] == 1;
  }
  I64s dims;
  for (std::size_t d = 0; d < drop.size(); ++d)
    if (!drop[d]) dims.push_back(static_cast<std::int64_t>(shape_of(x)[d]));
  return one(detail::reshape(x, dims));
}

std::vector<TensorRef> unsqueeze(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const I64s axes = a.ints(1);
  const std::size_t out_rank = rank_of(x) + axes.size();
  std::vector<bool> inserted(out_rank, false);
  for (auto ax : axes) {
    const std::size_t d = axis(a, ax, out_rank);
    if (inserted[d]) a.fail("an axis is listed twice");
    inserted[d] = true;
  }
  I64s dims;
  std::size_t next = 0;
  for (std::size_t d = 0; d < out_rank; ++d)
    dims.push_back(inserted[d] ? 1 : static_cast<std::int64_t>(shape_of(x)[next++]));
  return one(detail::reshape(x, dims));
}

std::vector<TensorRef> concat(const NodeArgs& a) {
  std::vector<TensorRef> parts;
  for (std::size_t i = 0; i < a.num_inputs(); ++i) parts.push_back(a.in(i));
  return one(detail::cat(parts, static_cast<std::int64_t>(axis(a, a.attr_int("axis", 0), rank_of(parts[0])))));
}

std::vector<TensorRef> split(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t d = axis(a, a.attr_int("axis", 0), rank_of(x));
  const std::size_t n = a.num_outputs();
  if (a.has_attr("num_outputs") && a.attr_int("num_outputs", 0) != static_cast<std::int64_t>(n))
    a.fail(fmt::format("num_outputs is {} but the node has {} outputs", a.attr_int("num_outputs", 0), n));
  std::vector<std::size_t> sizes;
  if (a.has(1)) {
    for (auto s : a.ints(1)) {
      if (s < 0) a.fail("split sizes must not be negative");
      sizes.push_back(static_cast<std::size_t>(s));
    }
  } else {
    const std::size_t len = shape_of(x)[d];
    const std::size_t each = (len + n - 1) / n;  // the last part may be smaller
    for (std::size_t i = 0, left = len; i < n; ++i) {
      sizes.push_back(std::min(each, left));
      left -= sizes.back();
    }
  }
  if (sizes.size() != n) a.fail(fmt::format("{} split sizes for {} outputs", sizes.size(), n));
  return detail::split_with_sizes(x, sizes, static_cast<std::int64_t>(d));
}

std::vector<TensorRef> slice(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  const I64s starts = a.ints(1), ends = a.ints(2);
  I64s axes, steps;
  if (a.has(3)) {
    axes = a.ints(3);
  } else {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  steps = a.has(4) ? a.ints(4) : I64s(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    a.fail("starts, ends, axes and steps must have one entry each per sliced axis");
  ir::Slice op;
  for (std::size_t d = 0; d < r; ++d) op.ranges.push_back({0, shape_of(x)[d], 1});
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::size_t d = axis(a, axes[i], r);
    const auto dim = static_cast<std::int64_t>(shape_of(x)[d]);
    const std::int64_t step = steps[i];
    if (step == 0) a.fail("a step is 0");
    // ONNX's clamping: negative positions count from the end; then starts
    // and ends clamp to [0, dim] (step > 0) or [-1, dim - 1] (step < 0).
    std::int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    std::int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      s = std::clamp<std::int64_t>(s, 0, dim);
      e = std::clamp<std::int64_t>(e, 0, dim);
    } else {
      s = std::clamp<std::int64_t>(s, -1, dim - 1);
      e = std::clamp<std::int64_t>(e, -1, dim - 1);
    }
    const std::int64_t span = step > 0 ? e - s : s - e;
    const std::int64_t mag = step > 0 ? step : -step;
    const std::int64_t len = span <= 0 ? 0 : (span + mag - 1) / mag;
    op.ranges[d] = {len == 0 ? 0 : static_cast<std::size_t>(s), static_cast<std::size_t>(len), step};
  }
  return one(detail::execute1(op, {x}));
}

// ---- indexing ---------------------------------------------------------------------------------

/// Negative indices count from the end of `dim_size`.
TensorRef wrap_indices(const TensorRef& idx, std::size_t dim_size) {
  TensorRef i = dtype_of(idx) == DType::I64 ? idx : detail::cast(idx, DType::I64);
  const TensorRef negative = detail::binary_scalar(ir::BinaryOp::Less, i, std::int64_t{0});
  const TensorRef shifted = detail::binary_scalar(ir::BinaryOp::Add, i, static_cast<std::int64_t>(dim_size));
  return detail::mask_where(i, negative, shifted);
}

std::vector<TensorRef> gather(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t d = axis(a, a.attr_int("axis", 0), rank_of(x));
  const TensorRef& idx = a.in(1);
  const std::size_t n = shape_of(idx).num_elements();
  const TensorRef flat = detail::reshape(wrap_indices(idx, shape_of(x)[d]), I64s{static_cast<std::int64_t>(n)});
  const TensorRef picked = detail::select(x, static_cast<std::int64_t>(d), flat);
  // data.shape[:axis] + indices.shape + data.shape[axis + 1:]
  I64s dims;
  for (std::size_t i = 0; i < d; ++i) dims.push_back(static_cast<std::int64_t>(shape_of(x)[i]));
  for (auto s : shape_of(idx).dims()) dims.push_back(static_cast<std::int64_t>(s));
  for (std::size_t i = d + 1; i < rank_of(x); ++i) dims.push_back(static_cast<std::int64_t>(shape_of(x)[i]));
  return one(detail::reshape(picked, dims));
}

std::vector<TensorRef> gather_elements(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t d = axis(a, a.attr_int("axis", 0), rank_of(x));
  return one(detail::gather(x, static_cast<std::int64_t>(d), wrap_indices(a.in(1), shape_of(x)[d])));
}

std::vector<TensorRef> scatter_elements(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t d = axis(a, a.attr_int("axis", 0), rank_of(x));
  const std::string reduction = a.attr_string("reduction", "none");
  ir::IndexReduce mode = ir::IndexReduce::Assign;
  if (reduction == "add") {
    mode = ir::IndexReduce::Add;
  } else if (reduction != "none") {
    a.fail(fmt::format("reduction '{}' is not supported (none and add are)", reduction));
  }
  return one(detail::scatter(x, static_cast<std::int64_t>(d), wrap_indices(a.in(1), shape_of(x)[d]), a.in(2), mode));
}

/// ScatterND: data with the slices indices[..., :] name replaced by (or, with
/// reduction add, increased by) updates. The indices are read on the host
/// (checked against data's dims, negatives wrapped) and become one scatter
/// along the flattened leading dims.
std::vector<TensorRef> scatter_nd(const NodeArgs& a) {
  const TensorRef& data = a.in(0);
  const Shape& ds = shape_of(data);
  const Shape& is = shape_of(a.in(1));
  if (is.rank() == 0) a.fail("indices need at least one dim");
  const std::size_t k = is[is.rank() - 1];
  if (k == 0 || k > ds.rank()) a.fail(fmt::format("index tuples of {} entries for a rank-{} input", k, ds.rank()));
  const std::string reduction = a.attr_string("reduction", "none");
  ir::IndexReduce mode = ir::IndexReduce::Assign;
  if (reduction == "add") {
    mode = ir::IndexReduce::Add;
  } else if (reduction != "none") {
    a.fail(fmt::format("reduction '{}' is not supported (none and add are)", reduction));
  }
  const I64s tuples = a.ints(1);
  const std::size_t count = tuples.size() / k;
  std::size_t slice = 1;  // elements per indexed slice
  for (std::size_t d = k; d < ds.rank(); ++d) slice *= ds[d];
  std::size_t leading = 1;
  for (std::size_t d = 0; d < k; ++d) leading *= ds[d];
  std::vector<std::int64_t> rows(count);
  for (std::size_t t = 0; t < count; ++t) {
    std::int64_t row = 0;
    for (std::size_t d = 0; d < k; ++d) {
      std::int64_t i = tuples[t * k + d];
      const auto size = static_cast<std::int64_t>(ds[d]);
      if (i < -size || i >= size) a.fail(fmt::format("index {} is out of range for dim {} of size {}", i, d, size));
      if (i < 0) i += size;
      row = row * size + i;
    }
    rows[t] = row;
  }
  // updates: indices.shape[:-1] + data.shape[k:], as [count, slice].
  const TensorRef& updates = a.in(2);
  if (shape_of(updates).num_elements() != count * slice)
    a.fail(fmt::format("updates have shape {}; indices {} and data {} need {} values", shape_of(updates).to_string(),
                       is.to_string(), ds.to_string(), count * slice));
  const auto c = static_cast<std::int64_t>(count), sl = static_cast<std::int64_t>(slice);
  const TensorRef index =
      detail::expand(detail::from_data(TensorData(rows, Shape{count, 1}), TensorCreationOptions(a.device(), DType::I64),
                                       TensorKind::Int),
                     I64s{c, sl});
  const TensorRef flat = detail::reshape(data, I64s{static_cast<std::int64_t>(leading), sl});
  const TensorRef y = detail::scatter(flat, 0, index, detail::reshape(updates, I64s{c, sl}), mode);
  const I64s back(ds.dims().begin(), ds.dims().end());
  return one(detail::reshape(y, back));
}

// ---- creation ---------------------------------------------------------------------------------

/// `value` as a scalar of `dtype`'s kind.
Scalar scalar_for(DType dtype, double value) {
  if (is_float(dtype)) return Scalar(value);
  if (is_bool(dtype)) return Scalar(value != 0.0);
  return Scalar(static_cast<std::int64_t>(value));
}

/// Tile: each dim repeated whole `repeats[d]` times.
std::vector<TensorRef> tile(const NodeArgs& a) {
  const I64s repeats = a.ints(1);
  if (repeats.size() != rank_of(a.in(0)))
    a.fail(fmt::format("repeats has {} entries for a rank-{} input", repeats.size(), rank_of(a.in(0))));
  std::vector<std::size_t> sizes;
  for (const auto r : repeats) {
    if (r < 0) a.fail("repeats must not be negative");
    sizes.push_back(static_cast<std::size_t>(r));
  }
  return one(detail::repeat(a.in(0), sizes));
}

/// Trilu: the upper (or lower) triangle of the last two dims from diagonal
/// k on, zeros elsewhere.
std::vector<TensorRef> trilu(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  if (r < 2) a.fail("the input needs at least 2 dims");
  const std::int64_t k = a.has(1) ? a.ints(1).at(0) : 0;
  const bool upper = a.attr_int("upper", 1) != 0;
  const std::size_t rows = shape_of(x)[r - 2], cols = shape_of(x)[r - 1];
  std::vector<std::byte> keep(rows * cols);  // bools, one byte each
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const std::int64_t diagonal = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);
      keep[i * cols + j] = std::byte{upper ? diagonal >= k : diagonal <= k};
    }
  const TensorRef mask = detail::from_data(TensorData(std::move(keep), Shape{rows, cols}, DType::Bool),
                                           TensorCreationOptions(a.device(), DType::Bool), TensorKind::Bool);
  const I64s dims(shape_of(x).dims().begin(), shape_of(x).dims().end());
  const TensorRef zeros = detail::full(shape_of(x), scalar_for(dtype_of(x), 0.0),
                                       TensorCreationOptions(a.device(), dtype_of(x)), kind_for(dtype_of(x)));
  return one(detail::mask_where(zeros, detail::expand(with_rank(mask, r), dims), x));
}

std::vector<TensorRef> constant_of_shape(const NodeArgs& a) {
  Shape shape;
  for (auto d : a.ints(0)) {
    if (d < 0) a.fail("the shape must not be negative");
    shape.dims().push_back(static_cast<std::size_t>(d));
  }
  TensorData value = a.attr_tensor("value").value_or(TensorData(std::vector<float>{0.0F}));
  if (value.num_elements() != 1) a.fail("value must hold one element");
  const DType dtype = value.dtype();
  return one(detail::full(shape, scalar_for(dtype, value.value_as_double(0)), TensorCreationOptions(a.device(), dtype),
                          kind_for(dtype)));
}

std::vector<TensorRef> range(const NodeArgs& a) {
  const DType dtype = dtype_of(a.in(0));
  if (!is_float(dtype)) {
    const auto start = static_cast<std::int64_t>(a.scalar(0)), limit = static_cast<std::int64_t>(a.scalar(1)),
               delta = static_cast<std::int64_t>(a.scalar(2));
    if (delta == 0) a.fail("delta is 0");
    return one(detail::arange(start, limit, delta, TensorCreationOptions(a.device(), dtype), TensorKind::Int));
  }
  const double start = a.scalar(0), limit = a.scalar(1), delta = a.scalar(2);
  if (delta == 0.0) a.fail("delta is 0");
  const double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (count > 1e9) a.fail("the range is too long");
  std::vector<double> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = start + static_cast<double>(i) * delta;
  return one(detail::from_data(TensorData(values).convert(dtype), TensorCreationOptions(a.device(), dtype),
                               TensorKind::Float));
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
  if (a.has_attr("output_shape")) a.fail("output_shape is not supported: export with pads and output_padding");
  const std::size_t n = rank_of(x) - 2;
  std::optional<TensorRef> bias;
  if (a.has(2)) bias = a.in(2);
  std::vector<std::size_t> out_pad(n, 0);
  if (auto v = a.attr_ints("output_padding"))
    for (std::size_t i = 0; i < n && i < v->size(); ++i) out_pad[i] = static_cast<std::size_t>((*v)[i]);
  const std::string auto_pad = a.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID")
    a.fail(fmt::format("auto_pad '{}' is not supported on ConvTranspose: export with explicit pads", auto_pad));
  const auto stride = spatial(a, "strides", n, 1), dilation = spatial(a, "dilations", n, 1);
  const SpatialPads pads = spatial_pads(a, x, kernel_of(a.in(1)), stride, dilation);
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
  if (a.output_wanted(1)) a.fail("the Indices output is not supported (ONNX numbers them over the whole tensor)");
  if (a.attr_int("storage_order", 0) != 0) a.fail("storage_order = 1 is not supported");
  auto kernel = a.attr_ints("kernel_shape");
  if (!kernel) a.fail("kernel_shape is required");
  const auto k = spatial(a, "kernel_shape", n, 1);
  const auto stride = spatial(a, "strides", n, 1), dilation = spatial(a, "dilations", n, 1);
  const auto padding = symmetric_part(a, x, spatial_pads(a, x, k, stride, dilation), lowest_of(dtype_of(x)));
  return one(detail::max_pool(x, k, stride, padding, dilation, a.attr_int("ceil_mode", 0) != 0, false).first);
}

std::vector<TensorRef> average_pool(const NodeArgs& a) {
  TensorRef x = a.in(0);
  const std::size_t n = rank_of(x) - 2;
  if (!a.has_attr("kernel_shape")) a.fail("kernel_shape is required");
  const auto k = spatial(a, "kernel_shape", n, 1), stride = spatial(a, "strides", n, 1);
  for (const auto d : spatial(a, "dilations", n, 1))
    if (d != 1) a.fail("dilations other than 1 are not supported");
  const bool count_pad = a.attr_int("count_include_pad", 0) != 0;
  const SpatialPads pads = spatial_pads(a, x, k, stride, std::vector<std::size_t>(n, 1));
  // Zeros added in front count as elements: right only when padding counts.
  if (!count_pad && pads.begin != pads.end)
    a.fail("asymmetric padding with count_include_pad = 0 is not supported: pad with a Pad node first");
  const auto padding = symmetric_part(a, x, pads, 0.0);
  return one(detail::avg_pool(x, k, stride, padding, count_pad, a.attr_int("ceil_mode", 0) != 0));
}

std::vector<TensorRef> global_average_pool(const NodeArgs& a) {
  const std::vector<std::size_t> ones(rank_of(a.in(0)) - 2, 1);
  return one(detail::adaptive_avg_pool(a.in(0), ones));
}

std::vector<TensorRef> global_max_pool(const NodeArgs& a) {
  I64s axes;
  for (std::size_t d = 2; d < rank_of(a.in(0)); ++d) axes.push_back(static_cast<std::int64_t>(d));
  return one(reduce(a, ir::ReduceOp::Max, a.in(0), axes, true));
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

/// InstanceNormalization: each (sample, channel) normalised over its spatial
/// dims (population variance), then scaled and shifted per channel.
std::vector<TensorRef> instance_norm(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  const std::size_t r = rank_of(x);
  if (r < 3) a.fail("the input needs a batch, a channel and at least one spatial dim");
  const double eps = a.attr_float("epsilon", 1e-5F);
  const I64s flat{static_cast<std::int64_t>(shape_of(x)[0]), static_cast<std::int64_t>(shape_of(x)[1]), -1};
  const TensorRef xf = detail::reshape(x, flat);
  auto [var, mean] = detail::var_mean_dim(xf, 2, 0);
  const TensorRef norm =
      detail::binary(ir::BinaryOp::Mul, detail::binary(ir::BinaryOp::Sub, xf, mean),
                     detail::unary(ir::UnaryOp::Rsqrt, detail::binary_scalar(ir::BinaryOp::Add, var, eps)));
  const I64s back(shape_of(x).dims().begin(), shape_of(x).dims().end());
  const TensorRef y = detail::binary(ir::BinaryOp::Mul, detail::reshape(norm, back), per_channel(a.in(1), r));
  return one(detail::binary(ir::BinaryOp::Add, y, per_channel(a.in(2), r)));
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
  if (a.output_wanted(1) || a.output_wanted(2)) a.fail("the Mean and InvStdDev outputs are not supported");
  const double eps = a.attr_float("epsilon", 1e-5F);
  // Normalise over dims first.. as one flattened dim.
  I64s flat;
  for (std::size_t d = 0; d < first; ++d) flat.push_back(static_cast<std::int64_t>(shape_of(x)[d]));
  flat.push_back(-1);
  const TensorRef xf = detail::reshape(x, flat);
  const auto last = static_cast<std::int64_t>(first);
  auto [var, mean] = detail::var_mean_dim(xf, last, 0);
  const TensorRef norm =
      detail::binary(ir::BinaryOp::Mul, detail::binary(ir::BinaryOp::Sub, xf, mean),
                     detail::unary(ir::UnaryOp::Rsqrt, detail::binary_scalar(ir::BinaryOp::Add, var, eps)));
  const I64s back(shape_of(x).dims().begin(), shape_of(x).dims().end());
  TensorRef y = broadcast_binary(ir::BinaryOp::Mul, detail::reshape(norm, back), a.in(1));
  if (a.has(2)) y = broadcast_binary(ir::BinaryOp::Add, y, a.in(2));
  return one(y);
}

std::vector<TensorRef> resize(const NodeArgs& a) {
  const TensorRef& x = a.in(0);
  if (rank_of(x) != 4) a.fail("only 4-D (N, C, H, W) inputs are resized");
  if (a.attr_int("antialias", 0) != 0) a.fail("antialias = 1 is not supported");
  if (a.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
    a.fail("keep_aspect_ratio_policy other than stretch is not supported");
  // Opset 18's axes name the dims that scales and sizes give; the others keep their size.
  I64s axes{0, 1, 2, 3};
  if (auto given = a.attr_ints("axes")) {
    axes.clear();
    for (const auto ax : *given) axes.push_back(static_cast<std::int64_t>(axis(a, ax, 4)));
  }
  std::vector<std::size_t> size(shape_of(x).dims().begin(), shape_of(x).dims().end());
  if (a.has(3)) {
    const I64s sizes = a.ints(3);
    if (sizes.size() != axes.size()) a.fail(fmt::format("sizes has {} entries for {} axes", sizes.size(), axes.size()));
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (sizes[i] < 0) a.fail("sizes must not be negative");
      size[static_cast<std::size_t>(axes[i])] = static_cast<std::size_t>(sizes[i]);
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
    }
  } else {
    a.fail("either scales or sizes is required");
  }
  if (size[0] != shape_of(x)[0] || size[1] != shape_of(x)[1]) a.fail("scales and sizes must keep N and C");
  const std::vector<std::size_t> out{size[2], size[3]};
  const std::string mode = a.attr_string("mode", "nearest");
  const std::string ctm = a.attr_string("coordinate_transformation_mode", "half_pixel");
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

/// Gelu (opset 20): the exact form (erf) or PyTorch's tanh approximation.
std::vector<TensorRef> gelu_op(const NodeArgs& a) {
  const std::string approximate = a.attr_string("approximate", "none");
  if (approximate == "none") return one(detail::gelu(a.in(0)));
  if (approximate == "tanh") return one(detail::gelu_tanh(a.in(0)));
  a.fail(fmt::format("approximate '{}' is not one of none, tanh", approximate));
}

std::vector<TensorRef> dropout(const NodeArgs& a) {
  if (a.output_wanted(1)) a.fail("the mask output is not supported");
  if (a.has(2) && a.scalar(2) != 0.0) a.fail("training_mode = true is not supported: export in eval mode");
  return one(a.in(0));
}

const std::map<std::string, ImportFn, std::less<>>& table() {
  using B = ir::BinaryOp;
  using U = ir::UnaryOp;
  using R = ir::ReduceOp;
  static const std::map<std::string, ImportFn, std::less<>> t{
      // elementwise
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
      {"Clip", clip},
      {"Cast", cast},
      {"QuantizeLinear", import_quantize_linear},
      {"DequantizeLinear", import_dequantize_linear},
      {"DynamicQuantizeLinear", import_dynamic_quantize_linear},
      {"CastLike", cast_like},
      {"Where", where},
      {"Identity", identity},
      {"Dropout", dropout},
      // activations
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
      {"HardSigmoid", hard_sigmoid},
      {"Softmax", softmax},
      {"LogSoftmax", log_softmax},
      // matmul
      {"MatMul", matmul_op},
      {"Gemm", gemm},
      {"Einsum", import_einsum},
      {"MatMulInteger", import_matmul_integer},
      // reductions
      {"ReduceSum", reduce_op<R::Sum>},
      {"ReduceMean", reduce_op<R::Mean>},
      {"ReduceMax", reduce_op<R::Max>},
      {"ReduceMin", reduce_op<R::Min>},
      {"ReduceProd", reduce_op<R::Prod>},
      {"ReduceL1", composed_reduce<ComposedReduce::L1>},
      {"ReduceL2", composed_reduce<ComposedReduce::L2>},
      {"ReduceSumSquare", composed_reduce<ComposedReduce::SumSquare>},
      {"ReduceLogSum", composed_reduce<ComposedReduce::LogSum>},
      {"ReduceLogSumExp", composed_reduce<ComposedReduce::LogSumExp>},
      {"ArgMax", arg_reduce<R::ArgMax>},
      {"ArgMin", arg_reduce<R::ArgMin>},
      {"CumSum", cumsum},
      {"TopK", topk},
      // shape and layout
      {"Reshape", reshape},
      {"Flatten", flatten},
      {"Transpose", transpose},
      {"Expand", expand},
      {"Squeeze", squeeze},
      {"Unsqueeze", unsqueeze},
      {"Concat", concat},
      {"Tile", tile},
      {"Trilu", trilu},
      {"Split", split},
      {"Slice", slice},
      // indexing
      {"Gather", gather},
      {"GatherElements", gather_elements},
      {"ScatterElements", scatter_elements},
      {"ScatterND", scatter_nd},
      // creation
      {"ConstantOfShape", constant_of_shape},
      {"Range", range},
      // neural-network layers
      {"Conv", conv},
      {"ConvInteger", import_conv_integer},
      {"Pad", pad},
      {"ConvTranspose", conv_transpose},
      {"MaxPool", max_pool},
      {"AveragePool", average_pool},
      {"GlobalAveragePool", global_average_pool},
      {"GlobalMaxPool", global_max_pool},
      {"BatchNormalization", batch_norm},
      {"LayerNormalization", layer_norm},
      {"InstanceNormalization", instance_norm},
      {"DepthToSpace", depth_to_space},
      {"Resize", resize},
      {"LSTM", import_lstm},
      {"GRU", import_gru},
  };
  return t;
}

}  // namespace

TensorRef import_matmul(const NodeArgs& args, const TensorRef& x, const TensorRef& y) { return matmul(args, x, y); }

TensorRef import_conv_of(const NodeArgs& args, const TensorRef& x, const TensorRef& w) {
  return conv_with(args, x, w, std::nullopt);
}

ImportFn find_import(std::string_view op_type) {
  const auto& t = table();
  auto it = t.find(op_type);
  return it == t.end() ? nullptr : it->second;
}

std::vector<std::string> supported_operators() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : table()) out.push_back(name);
  // Handled by the loader itself (their values are known on the host).
  out.emplace_back("Constant");
  out.emplace_back("Shape");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace burn::onnx
