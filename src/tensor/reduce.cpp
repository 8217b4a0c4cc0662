// Reductions, variance, cumulative scans, sort and topk.
#include <algorithm>
#include <array>

#include <burn/detail/ops.hpp>

#include "tensor/normalize.hpp"

namespace burn::detail {
namespace {

/// The public method name of a reduction along one dim, for error messages.
std::string_view dim_op_name(ir::ReduceOp op) {
  switch (op) {
    case ir::ReduceOp::Sum: return "sum_dim";
    case ir::ReduceOp::Prod: return "prod_dim";
    case ir::ReduceOp::Mean: return "mean_dim";
    case ir::ReduceOp::Max: return "max_dim";
    case ir::ReduceOp::Min: return "min_dim";
    case ir::ReduceOp::ArgMax: return "argmax";
    case ir::ReduceOp::ArgMin: return "argmin";
    case ir::ReduceOp::Any: return "any_dim";
    case ir::ReduceOp::All: return "all_dim";
  }
  return "reduce";
}

std::string_view cumulative_name(ir::CumulativeOp op) {
  switch (op) {
    case ir::CumulativeOp::Sum: return "cumsum";
    case ir::CumulativeOp::Prod: return "cumprod";
    case ir::CumulativeOp::Max: return "cummax";
    case ir::CumulativeOp::Min: return "cummin";
  }
  return "cumulative";
}

TensorRef reduce_normalized(ir::ReduceOp op, const TensorRef& t, std::size_t dim) {
  return execute1(ir::Reduce{op, dim, default_int_dtype(t)}, {t});
}

}  // namespace

TensorRef reduce_dim(ir::ReduceOp op, const TensorRef& t, std::int64_t dim) {
  return reduce_normalized(op, t, normalize_dim(dim_op_name(op), dim, rank_of(t)));
}

TensorRef reduce_all(ir::ReduceOp op, const TensorRef& t) {
  return reduce_normalized(op, reshape_exact(t, Shape{shape_of(t).num_elements()}), 0);
}

std::pair<TensorRef, TensorRef> var_mean_dim(const TensorRef& t, std::int64_t dim, std::size_t correction) {
  expect_float_tensor("var", t);
  const std::size_t d = normalize_dim("var", dim, rank_of(t));
  auto mean = reduce_normalized(ir::ReduceOp::Mean, t, d);
  auto diff = binary(ir::BinaryOp::Sub, t, mean);
  auto sum_sq = reduce_normalized(ir::ReduceOp::Sum, binary(ir::BinaryOp::Mul, diff, diff), d);
  // As PyTorch: a non-positive divisor is not an error; it yields inf or nan.
  const std::size_t n = shape_of(t)[d];
  const double divisor = n > correction ? static_cast<double>(n - correction) : 0.0;
  return {binary_scalar(ir::BinaryOp::Div, sum_sq, divisor), mean};
}

TensorRef var_dim(const TensorRef& t, std::int64_t dim, std::size_t correction) {
  return var_mean_dim(t, dim, correction).first;
}

std::pair<TensorRef, TensorRef> max_min_dim_with_indices(const TensorRef& t, std::int64_t dim, bool max) {
  const ir::ReduceOp op = max ? ir::ReduceOp::ArgMax : ir::ReduceOp::ArgMin;
  const std::size_t d = normalize_dim(max ? "max_dim_with_indices" : "min_dim_with_indices", dim, rank_of(t));
  auto indices = reduce_normalized(op, t, d);
  return {execute1(ir::Gather{d}, {t, indices}), indices};
}

TensorRef cumulative(ir::CumulativeOp op, const TensorRef& t, std::int64_t dim) {
  return execute1(ir::Cumulative{op, normalize_dim(cumulative_name(op), dim, rank_of(t))}, {t});
}

std::pair<TensorRef, TensorRef> sort(const TensorRef& t, std::int64_t dim, bool descending) {
  const std::size_t d = normalize_dim("sort", dim, rank_of(t));
  const std::array<TensorRef, 1> input{t};  // copied: t is borrowed, not handed over
  auto out = execute(ir::Sort{d, descending, default_int_dtype(t)}, input);
  return {std::move(out.at(0)), std::move(out.at(1))};
}

std::pair<TensorRef, TensorRef> topk(const TensorRef& t, std::size_t k, std::int64_t dim, bool largest) {
  const std::size_t d = normalize_dim("topk", dim, rank_of(t));
  const std::size_t size = shape_of(t)[d];
  if (k > size)
    throw Error("topk", fmt::format("k = {} is larger than dim {} of size {} (shape {})", k, dim, size,
                                    shape_of(t).to_string()));
  auto [values, indices] = sort(t, static_cast<std::int64_t>(d), largest);
  const auto sd = static_cast<std::int64_t>(d);
  return {narrow(values, sd, 0, k), narrow(indices, sd, 0, k)};
}

}  // namespace burn::detail
