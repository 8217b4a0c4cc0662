// Backward rules of reductions along a dim, cumulative scans and sort.
// Reductions keep the reduced dim with size 1, so their cotangent broadcasts
// straight back over the input's shape.
#include "autodiff/rules/math_helpers.hpp"

namespace burn::autodiff {

using namespace math;

namespace {

using ir::CumulativeOp;
using ir::ReduceOp;

TensorRef cumulative(CumulativeOp op, const TensorRef& t, std::size_t dim) {
  return detail::execute1(ir::Cumulative{op, dim}, {t});
}

TensorRef ones_slab(const TensorRef& like, std::size_t dim) {
  Shape shape = like->spec.shape;
  shape[dim] = 1;
  return detail::create(ir::Full{shape, 1.0, like->spec.dtype}, like->device);
}

/// prod_{k < i} x_k along dim (1 at i = 0), without dividing, so zeros are exact.
TensorRef exclusive_cumprod(const TensorRef& x, std::size_t dim) {
  const std::size_t n = x->spec.shape[dim];
  const auto sd = static_cast<std::int64_t>(dim);
  auto inclusive = cumulative(CumulativeOp::Prod, x, dim);
  const TensorRef parts[] = {ones_slab(x, dim), detail::narrow(inclusive, sd, 0, n - 1)};
  return detail::cat(parts, sd);
}

/// prod over the line of every element except x_i: the exclusive products
/// from the left and from the right (exact where x has zeros, unlike y / x).
TensorRef product_of_others(const TensorRef& x, std::size_t dim) {
  auto left = exclusive_cumprod(x, dim);
  auto right = flip_dim(exclusive_cumprod(flip_dim(x, dim), dim), dim);
  return mul(left, right);
}

/// Max/Min (PyTorch's amax/amin rule): the gradient is shared evenly by the
/// elements equal to the extreme. A NaN extreme came from the NaN elements.
TensorRef extreme_grad(const TensorRef& g, const TensorRef& x, const TensorRef& y, std::size_t dim) {
  auto hit = detail::execute1(ir::Cast{x->spec.dtype}, {equal_or_both_nan(x, y)});
  auto count = detail::execute1(ir::Reduce{ReduceOp::Sum, dim}, {hit});
  return mul(hit, div(g, count));
}

/// cumprod's gradient, exact with zeros: dx_i = sum_{j >= i} g_j prod_{k <= j, k != i} x_k.
/// Before the first zero of a line this is revcumsum(g y)_i / x_i (y vanishes
/// from the first zero on); at the first zero it is revcumsum(g y')_i with
/// y' the cumprod of x with that zero replaced by 1; after it every term
/// contains the zero.
TensorRef cumprod_grad(const TensorRef& g, const TensorRef& x, const TensorRef& y, std::size_t dim) {
  auto is_zero = detail::binary_scalar(BinaryOp::Equal, x, 0.0);
  // Counted in x's float dtype: the running count never decreases and is
  // exact while small, so "== 0" and "== 1" stay right (an int count in a
  // narrow device dtype could wrap back to them).
  auto zeros_so_far = cumulative(CumulativeOp::Sum, detail::execute1(ir::Cast{x->spec.dtype}, {is_zero}), dim);
  auto before_zero = detail::binary_scalar(BinaryOp::Equal, zeros_so_far, 0.0);
  auto first_zero =
      detail::binary(BinaryOp::LogicalAnd, is_zero, detail::binary_scalar(BinaryOp::Equal, zeros_so_far, 1.0));

  auto no_zero_part = keep_where(div(reverse_cumsum(mul(g, y), dim), x), before_zero);
  auto y_skip = cumulative(CumulativeOp::Prod, detail::mask_fill(x, first_zero, 1.0), dim);
  auto at_zero = reverse_cumsum(mul(g, y_skip), dim);
  return detail::mask_where(no_zero_part, first_zero, at_zero);
}

/// cummax/cummin: g_j goes to the element holding the running extreme at j.
/// As PyTorch, that is the last k <= j whose x_k became the running extreme
/// (x_k == y_k; ties move it forward, a NaN holds it once seen).
TensorRef cum_extreme_grad(const TensorRef& g, const TensorRef& x, const TensorRef& y, std::size_t dim) {
  auto took_over = equal_or_both_nan(x, y);
  // Position 0 always took over, so 0 elsewhere never wins the running max.
  auto positions = positions_along(x, dim);
  auto zero = detail::create(ir::Full{x->spec.shape, 0, positions->spec.dtype}, x->device);
  auto holder = cumulative(CumulativeOp::Max, detail::mask_where(zero, took_over, positions), dim);
  return detail::execute1(ir::Scatter{dim, ir::IndexReduce::Add}, {zeros_like(x), holder, g});
}

}  // namespace

SavedValues saved(const ir::Reduce& op) {
  switch (op.op) {
    case ReduceOp::Prod: return kKeepInput0;
    case ReduceOp::Max:
    case ReduceOp::Min: return kKeepInput0Output0;
    case ReduceOp::Sum:
    case ReduceOp::Mean:
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
    case ReduceOp::Any:
    case ReduceOp::All: return kKeepNothing;
  }
  return kKeepAll;
}

Grads rule(const ir::Reduce& op, const VjpArgs& args) {
  Grads out(args.inputs.size());
  const bool float_result = op.op == ReduceOp::Sum || op.op == ReduceOp::Prod || op.op == ReduceOp::Mean ||
                            op.op == ReduceOp::Max || op.op == ReduceOp::Min;
  if (!float_result || !wants(args, 0)) return out;
  const TensorRef& x = args.inputs[0];
  if (is_empty(x)) {
    out[0] = zeros_like(x);
    return out;
  }
  const Shape& shape = x->spec.shape;
  const TensorRef g = cotangent_or_zeros(args, 0);
  switch (op.op) {
    case ReduceOp::Sum: out[0] = expand_to(g, shape); break;
    case ReduceOp::Mean: out[0] = expand_to(mul(g, 1.0 / static_cast<double>(shape[op.dim])), shape); break;
    case ReduceOp::Prod: out[0] = mul(g, product_of_others(x, op.dim)); break;
    case ReduceOp::Max:
    case ReduceOp::Min: out[0] = extreme_grad(g, x, args.outputs[0], op.dim); break;
    case ReduceOp::ArgMax:  // int and bool results: returned above
    case ReduceOp::ArgMin:
    case ReduceOp::Any:
    case ReduceOp::All: break;
  }
  return out;
}

SavedValues saved(const ir::Cumulative& op) {
  switch (op.op) {
    case CumulativeOp::Sum: return kKeepNothing;
    case CumulativeOp::Prod:
    case CumulativeOp::Max:
    case CumulativeOp::Min: return kKeepInput0Output0;
  }
  return kKeepAll;
}

Grads rule(const ir::Cumulative& op, const VjpArgs& args) {
  Grads out(args.inputs.size());
  if (!wants(args, 0)) return out;
  const TensorRef& x = args.inputs[0];
  if (is_empty(x)) {
    out[0] = zeros_like(x);
    return out;
  }
  const TensorRef g = cotangent_or_zeros(args, 0);
  const TensorRef& y = args.outputs[0];
  switch (op.op) {
    case CumulativeOp::Sum: out[0] = reverse_cumsum(g, op.dim); break;
    case CumulativeOp::Prod: out[0] = cumprod_grad(g, x, y, op.dim); break;
    case CumulativeOp::Max:
    case CumulativeOp::Min: out[0] = cum_extreme_grad(g, x, y, op.dim); break;
  }
  return out;
}

SavedValues saved(const ir::Sort&) { return kKeepOutput1; }  // the indices
Grads rule(const ir::Sort& op, const VjpArgs& args) {
  Grads out(args.inputs.size());
  if (!wants(args, 0)) return out;
  const TensorRef& x = args.inputs[0];
  // Only the values carry a gradient; it returns to where each value came from.
  if (args.cotangents.empty() || !args.cotangents[0]) {
    out[0] = zeros_like(x);
    return out;
  }
  out[0] = detail::execute1(ir::Scatter{op.dim, ir::IndexReduce::Add},
                            {zeros_like(x), args.outputs[1], *args.cotangents[0]});
  return out;
}

}  // namespace burn::autodiff
