// Matmul, every ReduceOp and CumulativeOp, and sort: along every dim, on
// views, long rows (vectorised and blocked paths), ties (first occurrence,
// stability) and empty tensors.
#include "harness.hpp"

namespace burn::differential {
namespace {

using ir::CumulativeOp;
using ir::ReduceOp;

struct Along {
  Shape shape;
  View view;
  std::size_t dim;
};

std::string label(const Along& a) { return layout_label(a.shape, a.view) + " dim " + std::to_string(a.dim); }

std::vector<Along> along_dims(DType dt) {
  std::vector<Along> a{
      {{4, 5, 6}, View::Contiguous, 0}, {{4, 5, 6}, View::Contiguous, 1}, {{4, 5, 6}, View::Contiguous, 2},
      {{6, 7}, View::Permuted, 1},      {{6, 7}, View::Permuted, 0},      {{3, 4, 5}, View::Strided, 2},
      {{4, 5, 6}, View::Expanded, 0},   {{4, 5, 6}, View::Expanded, 1},   {{5, 6}, View::Flipped, 1},
      {{3, 300}, View::Contiguous, 1},  {{0, 4}, View::Contiguous, 1},    {kLarge, View::Contiguous, 0},
      {kLarge, View::Permuted, 0}};
  // Rows of 541: one-byte ints could not hold the sums.
  if (is_float(dt) || dtype_size(dt) > 1) a.push_back({kLarge, View::Contiguous, 1});
  return a;
}

/// Sums of n ints stay inside the dtype: one-byte ints take values in [-1, 1]
/// (u8: [0, 1]) beyond 30 elements, so 300 of them sum to about +-14 (i8) or
/// 150 +- 9 (u8), far inside the dtype.
Dist sum_dist(DType dt, std::size_t n) {
  if (is_float(dt)) return Dist::range(-2, 2);
  if (dtype_size(dt) == 1) return n <= 30 ? Dist::range(-2, 2) : Dist::range(-1, 1);
  return Dist::range(-5, 5);
}
/// Products of n values stay finite and inside the dtype: short dims take
/// wider values, long ones values near 1 (ints: +-1).
Dist product_dist(DType dt, std::size_t n) {
  if (is_float(dt)) return n <= 6 ? Dist::range(0.5, 1.5) : Dist::range(0.9, 1.1);
  return n <= 6 ? Dist::range(-2, 2) : Dist::range(-1, 1).without_zero();
}
/// Ties happen: first-occurrence rules are compared.
Dist order_dist(DType dt) { return is_float(dt) ? Dist::range(-2, 2).on_grid(0.25) : Dist::range(-5, 5); }
Dist logical_dist() { return Dist::range(0, 3).on_grid(1).with_p_true(0.75); }

bool empty_dim_allowed(ReduceOp op, DType dt) {
  // Reducing an empty dim has an identity for these (float mean: NaN).
  return op == ReduceOp::Sum || op == ReduceOp::Prod || op == ReduceOp::Any || op == ReduceOp::All ||
         (op == ReduceOp::Mean && is_float(dt));
}

Entry reduce(ReduceOp op, std::vector<DType> dtypes) {
  CaseMaker make = [op](DType dt, Rng& rng) {
    const auto dist = [&](std::size_t n) {
      if (op == ReduceOp::Prod) return product_dist(dt, n);
      if (op == ReduceOp::Max || op == ReduceOp::Min || op == ReduceOp::ArgMax || op == ReduceOp::ArgMin)
        return order_dist(dt);
      if (op == ReduceOp::Any || op == ReduceOp::All) return logical_dist();
      return sum_dist(dt, n);
    };
    std::vector<Along> shapes = along_dims(dt);
    if (empty_dim_allowed(op, dt)) shapes.push_back({{3, 0}, View::Contiguous, 1});
    std::vector<Case> out;
    for (const auto& a : shapes)
      out.push_back({label(a), ir::Reduce{op, a.dim}, {random_input(a.shape, dt, dist(a.shape[a.dim]), a.view, rng)}});
    if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin)
      out.push_back({"[4, 5, 6] dim 2, i32 indices",
                     ir::Reduce{op, 2, DType::I32},
                     {random_input({4, 5, 6}, dt, dist(6), View::Contiguous, rng)}});
    return out;
  };
  return {std::string(ir::reduce_name(op)), ir::Reduce{op, 0}, std::move(dtypes), std::move(make)};
}

Entry cumulative(CumulativeOp op) {
  CaseMaker make = [op](DType dt, Rng& rng) {
    const auto dist = [&](std::size_t n) {
      if (op == CumulativeOp::Prod) return product_dist(dt, n);
      return op == CumulativeOp::Sum ? sum_dist(dt, n) : order_dist(dt);
    };
    std::vector<Along> shapes = along_dims(dt);
    shapes.push_back({{3, 0}, View::Contiguous, 1});
    std::vector<Case> out;
    for (const auto& a : shapes)
      out.push_back(
          {label(a), ir::Cumulative{op, a.dim}, {random_input(a.shape, dt, dist(a.shape[a.dim]), a.view, rng)}});
    return out;
  };
  const ir::Cumulative proto{op, 0};
  return {std::string(ir::op_name(proto)), proto, numeric_dtypes(), std::move(make)};
}

std::vector<Case> sort_cases(DType dt, Rng& rng) {
  const Dist plain = is_float(dt) ? Dist::range(-2, 2) : Dist::range(-5, 5);
  const Dist ties = order_dist(dt);
  struct S {
    Along a;
    bool descending;
    Dist dist;
  };
  std::vector<S> cases{{{{4, 5, 6}, View::Contiguous, 0}, false, plain},
                       {{{4, 5, 6}, View::Contiguous, 1}, false, plain},
                       {{{4, 5, 6}, View::Contiguous, 2}, true, plain},
                       {{{6, 7}, View::Permuted, 1}, true, plain},
                       {{{3, 4, 5}, View::Strided, 0}, true, plain},
                       // Equal values along the sorted dim: indices must stay in order.
                       {{{4, 5, 6}, View::Expanded, 0}, false, plain},
                       {{{4, 5, 6}, View::Expanded, 0}, true, plain},
                       {{{5, 9}, View::Flipped, 1}, false, ties},
                       {{{5, 9}, View::Flipped, 1}, true, ties},
                       {{{2, 300}, View::Contiguous, 1}, false, ties},
                       {{{3, 20011}, View::Contiguous, 1}, false, ties},
                       {{{20011, 4}, View::Permuted, 0}, true, plain},
                       {{{0, 5}, View::Contiguous, 1}, false, plain},
                       {{{3, 0}, View::Contiguous, 1}, true, plain}};
  if (is_float(dt)) {
    // NaN sorts as the largest value; infinities in between.
    cases.push_back({{{4, 9}, View::Contiguous, 1}, false, ties.with_non_finite()});
    cases.push_back({{{4, 9}, View::Contiguous, 1}, true, ties.with_non_finite()});
  }
  std::vector<Case> out;
  for (const auto& c : cases)
    out.push_back({label(c.a) + (c.descending ? " descending" : " ascending"),
                   ir::Sort{c.a.dim, c.descending},
                   {random_input(c.a.shape, dt, c.dist, c.a.view, rng)}});
  out.push_back({"[4, 5, 6] dim 1, i32 indices",
                 ir::Sort{1, false, DType::I32},
                 {random_input({4, 5, 6}, dt, ties, View::Contiguous, rng)}});
  return out;
}

struct MatmulShapes {
  Shape a;
  View va;
  Shape b;
  View vb;
};

std::vector<Case> matmul_cases(DType dt, Rng& rng) {
  // Ints of one byte stay in [-1, 1]: dot products of up to 300 such terms
  // stay far inside the dtype for the fixed seeds.
  const Dist d = is_float(dt) ? Dist::range(-2, 2) : dtype_size(dt) == 1 ? Dist::range(-1, 1) : Dist::range(-3, 3);
  const std::vector<MatmulShapes> shapes{
      {{5, 7}, View::Contiguous, {7, 3}, View::Contiguous},
      {{2, 3, 4, 5}, View::Contiguous, {2, 3, 5, 6}, View::Contiguous},
      {{2, 1, 4, 5}, View::Contiguous, {1, 3, 5, 2}, View::Contiguous},  // batch dims broadcast
      {{6, 4}, View::Permuted, {4, 5}, View::Permuted},                  // both transposed
      {{3, 8}, View::Strided, {8, 2}, View::Flipped},
      {{2, 4, 6}, View::Expanded, {2, 6, 3}, View::Contiguous},
      {{33, 65}, View::Contiguous, {65, 17}, View::Contiguous},
      {{128, 300}, View::Contiguous, {300, 96}, View::Permuted},
      {{3, 0}, View::Contiguous, {0, 4}, View::Contiguous},  // k = 0: zeros
      {{0, 5}, View::Contiguous, {5, 3}, View::Contiguous}};
  std::vector<Case> out;
  for (const auto& s : shapes)
    out.push_back({layout_label(s.a, s.va) + " x " + layout_label(s.b, s.vb),
                   ir::Matmul{},
                   {random_input(s.a, dt, d, s.va, rng), random_input(s.b, dt, d, s.vb, rng)}});
  return out;
}

}  // namespace

std::vector<Entry> reduce_entries() {
  const auto& N = numeric_dtypes();
  return {
      {"matmul", ir::Matmul{}, N, matmul_cases},
      reduce(ReduceOp::Sum, N),
      reduce(ReduceOp::Prod, N),
      reduce(ReduceOp::Mean, N),
      reduce(ReduceOp::Max, N),
      reduce(ReduceOp::Min, N),
      reduce(ReduceOp::ArgMax, N),
      reduce(ReduceOp::ArgMin, N),
      reduce(ReduceOp::Any, all_dtypes()),
      reduce(ReduceOp::All, all_dtypes()),
      cumulative(CumulativeOp::Sum),
      cumulative(CumulativeOp::Prod),
      cumulative(CumulativeOp::Max),
      cumulative(CumulativeOp::Min),
      {"sort", ir::Sort{0, false}, N, sort_cases},
  };
}

}  // namespace burn::differential
