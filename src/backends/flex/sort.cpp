// Stable sort along one dim: each line is sorted independently (lines in
// parallel) by a stable sort of positions, NaN ordering as the largest
// value. Outputs the sorted values and their original positions.
#include <algorithm>
#include <numeric>
#include <vector>

#include "backends/flex/element.hpp"
#include "backends/flex/lines.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::flex {
namespace {

template <class T>
void sort_lines(const Lines& v, bool descending, T* values, std::int64_t* indices) {
  using C = compute_t<T>;
  const auto* base = reinterpret_cast<const T*>(v.base);
  const std::size_t lines = v.outer * v.inner;
  const auto before = [descending](C a, C b) {
    if (descending) return (is_nan(a) && !is_nan(b)) || a > b;
    return (!is_nan(a) && is_nan(b)) || a < b;
  };
  parallel_for(
      lines,
      [&](std::size_t b, std::size_t e) {
        std::vector<C> keys(v.n);
        std::vector<std::int64_t> order(v.n);
        for (std::size_t l = b; l < e; ++l) {
          const std::size_t o = l / v.inner, j = l % v.inner;
          const T* src =
              base + static_cast<std::int64_t>(o) * v.outer_stride + static_cast<std::int64_t>(j) * v.inner_stride;
          for (std::size_t k = 0; k < v.n; ++k) keys[k] = load(src[static_cast<std::int64_t>(k) * v.stride]);
          std::iota(order.begin(), order.end(), std::int64_t{0});
          std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
            return before(keys[static_cast<std::size_t>(x)], keys[static_cast<std::size_t>(y)]);
          });
          // Output is row-major [outer, n, inner].
          const std::size_t first = o * v.n * v.inner + j;
          for (std::size_t k = 0; k < v.n; ++k) {
            values[first + k * v.inner] = src[order[k] * v.stride];
            indices[first + k * v.inner] = order[k];
          }
        }
      },
      std::max<std::size_t>(1, kGrainSize / (8 * std::max<std::size_t>(1, v.n))));
}

}  // namespace

Result kernel(const Context& ctx, const ir::Sort& op, Inputs in, Outputs out) {
  const auto x = host::as_cpu_ptr(in[0].primitive);
  host::CpuTensorPtr keep;
  const Lines v = lines_of(ctx, x, op.dim, keep);
  auto values = ctx.output(out[0]);
  auto indices = ctx.output(out[1]);
  // Positions are produced as i64 and converted when another int dtype is asked for.
  auto idx = out[1].dtype == DType::I64 ? indices : ctx.output({out[1].shape, DType::I64});
  if (values->num_elements() != 0) {
    visit_numeric_dtype("sort", x->dtype, [&]<class T>() {
      sort_lines<T>(v, op.descending, values->data<T>(), idx->data<std::int64_t>());
    });
    if (idx != indices) convert_into(*indices, *idx);
  }
  return {values, indices};
}

}  // namespace burn::flex
