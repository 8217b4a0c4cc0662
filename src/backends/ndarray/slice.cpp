// Slicing, slice assignment and concatenation: element copies between index
// spaces, whatever the dtype.
#include "backends/ndarray/kernels.hpp"
#include "backends/ndarray/strided.hpp"

namespace burn::ndarray {
namespace {

/// Position along a dim of element k of a range.
std::size_t range_index(const ir::SliceRange& r, std::size_t k) {
  return static_cast<std::size_t>(static_cast<std::int64_t>(r.start) + static_cast<std::int64_t>(k) * r.step);
}

}  // namespace

Result kernel(const Context& ctx, const ir::Slice& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  auto t = ctx.output(out[0]);
  Index src(x.rank(), 0);
  for_each_index(t->shape, [&](std::size_t i, const Index& o) {
    for (std::size_t d = 0; d < src.size(); ++d) src[d] = range_index(op.ranges[d], o[d]);
    copy_element(x, offset_of(x, src), *t, i);
  });
  return {t};
}

Result kernel(const Context& ctx, const ir::SliceAssign& op, Inputs in, Outputs) {
  auto t = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[0].primitive), /*force_copy=*/true);
  const auto& values = host::as_cpu(in[1].primitive);
  Index dst(t->rank(), 0);
  for_each_index(values.shape, [&](std::size_t, const Index& o) {
    for (std::size_t d = 0; d < dst.size(); ++d) dst[d] = range_index(op.ranges[d], o[d]);
    copy_element(values, offset_of(values, o), *t, flat_index(t->shape, dst));
  });
  return {t};
}

Result kernel(const Context& ctx, const ir::Cat& op, Inputs in, Outputs out) {
  auto t = ctx.output(out[0]);
  std::size_t start = 0;  // where the current input begins along dim
  for (const auto& input : in) {
    const auto& x = host::as_cpu(input.primitive);
    Index dst(x.rank(), 0);
    for_each_index(x.shape, [&](std::size_t, const Index& o) {
      dst = o;
      dst[op.dim] += start;
      copy_element(x, offset_of(x, o), *t, flat_index(t->shape, dst));
    });
    start += x.shape[op.dim];
  }
  return {t};
}

}  // namespace burn::ndarray
