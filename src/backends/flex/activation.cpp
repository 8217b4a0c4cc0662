// Softmax and log-softmax over the last dim, and gelu.
//
// Softmax runs a row at a time, rows split across flex's threads. Each step
// is the composite's as flex runs it, with the same rounding to the dtype,
// flex's own exp and log row functions, and the same reduction tree: the
// max, exp(x - max) into a scratch row, its sum, then exp / sum (log-softmax:
// (x - max) - log(sum)). So the op gives the composite's bits in every dtype
// (as the cpu device's row-reduce fuser does for the composite written out),
// but a row is read from memory once and written once, where the composite
// makes five passes over the whole tensor.
//
// Gelu is an elementwise row function (the loop driver's, and the fused cpu
// device's groups call it too), in chunks of 256 elements: the erf (or
// tanh) argument into a buffer, the vector erf (tanh) over it, then x * (1 +
// erf) / 2 in the composite's order.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "backends/flex/kernels.hpp"
#include "backends/flex/parallel.hpp"
#include "backends/flex/reduce_engine.hpp"
#include "backends/flex/rows.hpp"
#include "backends/flex/simd/math.hpp"
#include "backends/flex/strided.hpp"

namespace burn::flex {
namespace {

using host::CpuTensor;

/// Reducer Rd over a contiguous line, as flex's reduce kernel folds a
/// last-dim line: chunks of kChunk elements merged in its fixed tree.
template <class Rd>
reduce_engine::Acc<Rd> fold_line(const reduce_engine::In<Rd>* p, std::size_t n) {
  using reduce_engine::kChunk;
  if (n <= kChunk) return reduce_engine::run_line<Rd>(p, 1, 0, n);
  std::vector<reduce_engine::Acc<Rd>> parts;
  for (std::size_t k0 = 0; k0 < n; k0 += kChunk)
    parts.push_back(reduce_engine::run_line<Rd>(p + k0, 1, k0, std::min(kChunk, n - k0)));
  return reduce_engine::merge_tree<Rd>(parts.data(), parts.size(), 1);
}

/// Runs a unary row function (flex's exp or log for T) over n contiguous
/// elements in place.
template <class T>
void apply_in_place(RowFn fn, T* v, std::size_t n) {
  std::byte* const ptrs[] = {reinterpret_cast<std::byte*>(v), reinterpret_cast<std::byte*>(v)};
  const std::int64_t strides[] = {1, 1};
  fn(nullptr, ptrs, strides, n);
}

// One row of n elements; `e` is scratch for n values. exp_fn and log_fn are
// flex's unary row functions for T. The last pass prefetches `next`, the
// row after this one (null for none).
template <class T>
BURN_FLEX_ROW_CLONES void softmax_row(const T* row, T* out, T* e, std::size_t n, bool log, RowFn exp_fn, RowFn log_fn,
                                      const T* next) {
  const compute_t<T> max = fold_line<ExtremeR<T, true>>(row, n);  // an element: exact in T
  for (std::size_t i = 0; i < n; ++i) e[i] = store<T>(load(row[i]) - max);
  if (log) std::copy_n(e, n, out);  // the shifted row is the result's first term
  apply_in_place(exp_fn, e, n);
  T sum = store<T>(fold_line<SumR<T>>(e, n));
  if (log) apply_in_place(log_fn, &sum, 1);
  // By value: `sum`'s address escaped above, so a store to out[i] might
  // change it as far as the compiler knows, and the loop would not vectorise.
  const compute_t<T> s = load(sum);
  if (log) {
    for_each_prefetching(next, n, [&, s](std::size_t i) { out[i] = store<T>(load(out[i]) - s); });
  } else {
    for_each_prefetching(next, n, [&, s](std::size_t i) { out[i] = store<T>(load(e[i]) / s); });
  }
}

template <class T>
void softmax_rows(const CpuTensor& x, const CpuTensor& y, bool log) {
  const std::size_t n = x.shape.back();
  const std::size_t rows = x.num_elements() / n;
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  const RowFn exp_fn = unary_row_fn(ir::UnaryOp::Exp, x.dtype);
  const RowFn log_fn = unary_row_fn(ir::UnaryOp::Log, x.dtype);
  parallel_for(
      rows,
      [&](std::size_t begin, std::size_t end) {
        std::vector<T> e(n);  // reused by the chunk's rows
        for (std::size_t r = begin; r < end; ++r)
          softmax_row<T>(src + r * n, dst + r * n, e.data(), n, log, exp_fn, log_fn,
                         r + 1 < end ? src + (r + 1) * n : nullptr);
      },
      std::max<std::size_t>(1, kMathGrain / n));
}

// ptrs = {out T, in T}; `out` may be `in`.
template <class T, bool Tanh>
BURN_FLEX_ROW_CLONES int gelu_row(const void*, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  using C = compute_t<T>;
  auto* o = reinterpret_cast<T*>(p[0]);
  const auto* a = reinterpret_cast<const T*>(p[1]);
  const auto k = static_cast<C>(Tanh ? std::sqrt(2.0 / std::numbers::pi) : 1.0 / std::numbers::sqrt2);
  const auto cubic = static_cast<C>(0.044715);
  constexpr std::size_t kChunk = 256;
  C x[kChunk], u[kChunk];
  for (std::size_t begin = 0; begin < n; begin += kChunk) {
    const std::size_t len = std::min(kChunk, n - begin);
    const T* in = a + static_cast<std::int64_t>(begin) * s[1];
    T* dst = o + static_cast<std::int64_t>(begin) * s[0];
    for (std::size_t i = 0; i < len; ++i) x[i] = load(in[static_cast<std::int64_t>(i) * s[1]]);
    for (std::size_t i = 0; i < len; ++i) u[i] = Tanh ? (x[i] + x[i] * x[i] * x[i] * cubic) * k : x[i] * k;
    simd::apply(Tanh ? simd::MathFn::Tanh : simd::MathFn::Erf, u, u, len);
    for (std::size_t i = 0; i < len; ++i)
      dst[static_cast<std::int64_t>(i) * s[0]] = store<T>(x[i] * (u[i] + C(1)) * C(0.5));
  }
  return 0;
}

}  // namespace

Result kernel(const Context& ctx, const ir::Softmax& op, Inputs in, Outputs out) {
  const auto x = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[0].primitive));
  auto y = ctx.output(out[0]);
  if (y->num_elements() == 0) return {y};
  visit_float_dtype(ir::op_name(op), x->dtype, [&]<class T>() { softmax_rows<T>(*x, *y, op.log); });
  return {y};
}

RowFn gelu_row_fn(bool tanh, DType dtype) {
  return visit_float_dtype(ir::op_name(ir::Gelu{tanh}), dtype,
                           [&]<class T>() -> RowFn { return tanh ? gelu_row<T, true> : gelu_row<T, false>; });
}

Result kernel(const Context& ctx, const ir::Gelu& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  auto y = ctx.output_reusing(out[0], in, {0});
  const Operand ops[] = {operand(*y), operand(x)};
  for_each_run(y->shape, ops, gelu_row_fn(op.tanh, x.dtype), nullptr, kMathGrain);
  return {y};
}

}  // namespace burn::flex
