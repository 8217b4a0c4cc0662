// Cast: the one kernel with a nested dtype x dtype visit. Conversions go
// through convert_element (float -> int: NaN is 0, out-of-range values
// saturate, the rest truncate toward zero), shared by both CPU backends.
#include "backends/flex/element.hpp"
#include "backends/flex/rows.hpp"
#include "backends/flex/strided.hpp"

namespace burn::flex {
namespace {

template <class From, class To>
BURN_FLEX_ROW_CLONES int cast_row(const void*, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  auto* o = reinterpret_cast<To*>(p[0]);
  const auto* a = reinterpret_cast<const From*>(p[1]);
  const auto len = static_cast<std::int64_t>(n);
  if (s[0] == 1 && s[1] == 1) {
    for (std::int64_t i = 0; i < len; ++i) o[i] = convert_element<To>(a[i]);
  } else {
    for (std::int64_t i = 0; i < len; ++i) o[i * s[0]] = convert_element<To>(a[i * s[1]]);
  }
  return 0;
}

}  // namespace

RowFn cast_row_fn(DType from, DType to) {
  return visit_dtype(
      from, [&]<class From>() { return visit_dtype(to, [&]<class To>() -> RowFn { return cast_row<From, To>; }); });
}

void convert_into(const host::CpuTensor& dst, const host::CpuTensor& src) {
  const RowFn fn = cast_row_fn(src.dtype, dst.dtype);
  const Operand ops[] = {operand(dst), operand(src)};
  for_each_run(dst.shape, ops, fn, nullptr);
}

Result kernel(const Context& ctx, const ir::Cast& op, Inputs in, Outputs out) {
  const auto x = host::as_cpu_ptr(in[0].primitive);
  // Tensors are immutable values: a same-dtype cast can share the storage.
  if (x->dtype == op.dtype) return {x};
  auto y = ctx.output(out[0]);
  convert_into(*y, *x);
  return {y};
}

}  // namespace burn::flex
