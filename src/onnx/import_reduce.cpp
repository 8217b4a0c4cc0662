// The reducing ONNX operators import runs: the Reduce* family (axes as an
// attribute or, from opset 18, an input; keepdims; noop_with_empty_axes),
// ArgMax/ArgMin, CumSum, CumProd and TopK.
#include <algorithm>
#include <numeric>

#include <burn/detail/ops.hpp>
#include <fmt/format.h>

#include "onnx/import_common.hpp"

namespace burn::onnx {
namespace {

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
  const std::size_t d = axis(a, a.attr_int("axis", 0), rank_of(a.in(0)));
  const bool keepdims = a.attr_int("keepdims", 1) != 0;
  const I64s axes{static_cast<std::int64_t>(d)};
  if (a.attr_int("select_last_index", 0) == 0) return one(reduce(a, Op, a.in(0), axes, keepdims));
  // The last of equal extremes: the first one along the reversed axis,
  // counted back from the end.
  const TensorRef first_reversed = reduce(a, Op, detail::flip(a.in(0), axes), axes, keepdims);
  const auto last = static_cast<std::int64_t>(a.in(0)->spec.shape[d]) - 1;
  return one(detail::scalar_binary(ir::BinaryOp::Sub, Scalar(last), first_reversed));
}

/// CumSum and CumProd (opset 26): an inclusive scan along the axis input,
/// `reverse` scanning from the end; `exclusive` shifts the scan by one,
/// starting from the operation's identity (0 or 1), so that each value is
/// exactly the scan of those before it (not the inclusive scan undone).
template <ir::CumulativeOp Op>
std::vector<TensorRef> cumulative_op(const NodeArgs& a) {
  const std::size_t d = axis(a, a.ints(1).at(0), rank_of(a.in(0)));
  const auto dim = static_cast<std::int64_t>(d);
  const I64s flip_axes{dim};
  TensorRef x = a.in(0);
  const bool reverse = a.attr_int("reverse", 0) != 0;
  if (reverse) x = detail::flip(x, flip_axes);
  TensorRef out = detail::cumulative(Op, x, dim);
  const std::size_t n = shape_of(x)[d];
  if (a.attr_int("exclusive", 0) != 0 && n > 0) {
    Shape first = shape_of(x);
    first[d] = 1;
    const double identity = Op == ir::CumulativeOp::Prod ? 1.0 : 0.0;
    const TensorRef start =
        detail::full(first, Scalar(identity), TensorCreationOptions(x->device, dtype_of(x)), kind_for(dtype_of(x)));
    const std::vector<TensorRef> parts{start, detail::narrow(out, dim, 0, n - 1)};
    out = detail::cat(parts, dim);
  }
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

}  // namespace

void add_reduce_ops(ImportTable& table) {
  using R = ir::ReduceOp;
  table.insert({
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
      {"CumSum", cumulative_op<ir::CumulativeOp::Sum>},
      {"CumProd", cumulative_op<ir::CumulativeOp::Prod>},
      {"TopK", topk},
  });
}

}  // namespace burn::onnx
