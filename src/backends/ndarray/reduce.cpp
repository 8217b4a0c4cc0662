// Reductions along one dim (kept with size 1) and inclusive scans. Each
// output position walks the `n` input elements of its line along the dim.
#include <limits>

#include "backends/ndarray/kernels.hpp"
#include "backends/ndarray/numeric.hpp"
#include "backends/ndarray/strided.hpp"

namespace burn::ndarray {
namespace {

using ir::CumulativeOp;
using ir::ReduceOp;

/// The elements of one line along the reduced dim, in the compute type.
template <class T>
struct Line {
  const T* data;
  std::int64_t base;
  std::int64_t step;
  std::size_t n;
  acc_t<T> operator[](std::size_t k) const { return load(data[base + static_cast<std::int64_t>(k) * step]); }
};

template <class T>
T mean_of(const Line<T>& line) {
  if constexpr (is_float_v<T>) {
    double s = 0;
    for (std::size_t k = 0; k < line.n; ++k) s += line[k];
    return store<T>(s / static_cast<double>(line.n));  // an empty line gives 0/0 = NaN
  } else {
    // Summed in 64 bits so small int types do not wrap; truncates toward zero.
    using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    Wide s = 0;
    for (std::size_t k = 0; k < line.n; ++k) s = wrap_add(s, static_cast<Wide>(line[k]));
    return static_cast<T>(s / static_cast<Wide>(line.n));
  }
}

/// Max or min; a NaN anywhere makes the result NaN.
template <class T>
acc_t<T> extreme_of(const Line<T>& line, bool max) {
  acc_t<T> best = line[0];
  for (std::size_t k = 1; k < line.n && !is_nan(best); ++k) {
    const acc_t<T> v = line[k];
    if (is_nan(v) || (max ? v > best : v < best)) best = v;
  }
  return best;
}

/// Position of the first max or min; the first NaN wins (as PyTorch, so the
/// value at the index is what max/min return).
template <class T>
std::size_t arg_extreme_of(const Line<T>& line, bool max) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < line.n && !is_nan(line[best]); ++k) {
    const acc_t<T> v = line[k];
    if (is_nan(v) || (max ? v > line[best] : v < line[best])) best = k;
  }
  return best;
}

template <class T>
void reduce_numeric(const ir::Reduce& op, const host::CpuTensor& x, const host::CpuTensor& t) {
  const std::size_t n = x.shape[op.dim];
  const bool is_arg = op.op == ReduceOp::ArgMax || op.op == ReduceOp::ArgMin;
  const bool needs_element =
      is_arg || op.op == ReduceOp::Max || op.op == ReduceOp::Min || (op.op == ReduceOp::Mean && !is_float_v<T>);
  if (needs_element && n == 0 && t.num_elements() != 0)
    throw Error(ir::reduce_name(op.op), "cannot reduce an empty dim: there is no identity");
  for_each_index(t.shape, [&](std::size_t i, const Index& idx) {
    const Line<T> line{elements<T>(x), offset_of(x, idx), x.strides[op.dim], n};
    if (is_arg) {
      store_index(t, i, arg_extreme_of(line, op.op == ReduceOp::ArgMax));
      return;
    }
    T* dst = t.data<T>() + i;
    switch (op.op) {
      case ReduceOp::Sum: {
        acc_t<T> s{0};
        for (std::size_t k = 0; k < n; ++k) s = acc_add(s, line[k]);
        *dst = store<T>(s);
        break;
      }
      case ReduceOp::Prod: {
        acc_t<T> p{1};
        for (std::size_t k = 0; k < n; ++k) p = acc_mul(p, line[k]);
        *dst = store<T>(p);
        break;
      }
      case ReduceOp::Mean: *dst = mean_of(line); break;
      case ReduceOp::Max: *dst = store<T>(extreme_of(line, true)); break;
      case ReduceOp::Min: *dst = store<T>(extreme_of(line, false)); break;
      default: throw_no_kernel(ir::reduce_name(op.op), x.dtype);
    }
  });
}

}  // namespace

Result kernel(const Context& ctx, const ir::Reduce& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  auto t = ctx.output(out[0]);
  if (op.op == ReduceOp::Any || op.op == ReduceOp::All) {
    const bool any = op.op == ReduceOp::Any;
    visit_dtype(x.dtype, [&]<class T>() {
      for_each_index(t->shape, [&](std::size_t i, const Index& idx) {
        const std::int64_t base = offset_of(x, idx);
        bool r = !any;  // empty: any = false, all = true
        for (std::size_t k = 0; k < x.shape[op.dim]; ++k) {
          const bool v = convert_element<bool>(elements<T>(x)[base + static_cast<std::int64_t>(k) * x.strides[op.dim]]);
          if (v == any) {
            r = any;
            break;
          }
        }
        t->data<bool>()[i] = r;
      });
    });
  } else {
    visit_numeric_dtype(ir::reduce_name(op.op), x.dtype, [&]<class T>() { reduce_numeric<T>(op, x, *t); });
  }
  return {t};
}

Result kernel(const Context& ctx, const ir::Cumulative& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  auto t = ctx.output(out[0]);
  host::Extents lines = x.shape;
  lines[op.dim] = 1;
  const std::size_t n = x.shape[op.dim];
  const std::int64_t out_step = t->strides[op.dim];
  visit_numeric_dtype("cumulative", x.dtype, [&]<class T>() {
    for_each_index(lines, [&](std::size_t, const Index& idx) {
      const Line<T> line{elements<T>(x), offset_of(x, idx), x.strides[op.dim], n};
      const std::size_t first = flat_index(t->shape, idx);
      acc_t<T> acc{};
      for (std::size_t k = 0; k < n; ++k) {
        const acc_t<T> v = line[k];
        // Max/Min: a NaN, once seen, stays.
        const bool extreme = op.op == CumulativeOp::Max || op.op == CumulativeOp::Min;
        if (k == 0 || (extreme && !is_nan(acc) && (is_nan(v) || (op.op == CumulativeOp::Max ? v > acc : v < acc))))
          acc = v;
        else if (op.op == CumulativeOp::Sum) acc = acc_add(acc, v);
        else if (op.op == CumulativeOp::Prod) acc = acc_mul(acc, v);
        t->data<T>()[first + k * static_cast<std::size_t>(out_step)] = store<T>(acc);
      }
    });
  });
  return {t};
}

}  // namespace burn::ndarray
