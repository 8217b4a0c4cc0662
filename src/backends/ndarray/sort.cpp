// Stable sort along one dim, returning values and their original positions.
#include <algorithm>

#include "backends/ndarray/kernels.hpp"
#include "backends/ndarray/numeric.hpp"
#include "backends/ndarray/strided.hpp"

namespace burn::ndarray {
namespace {

/// Strict order with NaN as the largest value (NaNs are equal to each other,
/// so stable sorting keeps them in input order).
template <class A>
bool nan_last_less(A a, A b) {
  if (is_nan(a)) return false;
  if (is_nan(b)) return true;
  return a < b;
}

}  // namespace

Result kernel(const Context& ctx, const ir::Sort& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  auto values = ctx.output(out[0]);
  auto indices = ctx.output(out[1]);
  host::Extents lines = x.shape;
  lines[op.dim] = 1;
  const std::size_t n = x.shape[op.dim];
  const auto out_step = static_cast<std::size_t>(values->strides[op.dim]);
  visit_numeric_dtype("sort", x.dtype, [&]<class T>() {
    struct Entry {
      acc_t<T> key;
      T value;  // written back bit for bit
      std::size_t position;
    };
    std::vector<Entry> entries;
    for_each_index(lines, [&](std::size_t, const Index& idx) {
      const std::int64_t base = offset_of(x, idx);
      entries.clear();
      for (std::size_t k = 0; k < n; ++k) {
        const T v = elements<T>(x)[base + static_cast<std::int64_t>(k) * x.strides[op.dim]];
        entries.push_back({load(v), v, k});
      }
      std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
        return op.descending ? nan_last_less(b.key, a.key) : nan_last_less(a.key, b.key);
      });
      const std::size_t first = flat_index(values->shape, idx);
      for (std::size_t k = 0; k < n; ++k) {
        values->data<T>()[first + k * out_step] = entries[k].value;
        store_index(*indices, first + k * out_step, entries[k].position);
      }
    });
  });
  return {values, indices};
}

}  // namespace burn::ndarray
