// Layout ops. The reference backend always copies: results never alias their
// inputs. Each output element is read from the input position its index maps
// to (written out per op, rather than derived from view strides, so the
// oracle does not share the view arithmetic of the fast backends).
#include "backends/ndarray/kernels.hpp"
#include "backends/ndarray/strided.hpp"

namespace burn::ndarray {
namespace {

/// Fresh output where element `o` is the input element at map(o).
template <class Map>
Result copy_mapped(const Context& ctx, Inputs in, Outputs out, Map&& map) {
  const auto& x = host::as_cpu(in[0].primitive);
  auto t = ctx.output(out[0]);
  Index src(x.rank(), 0);
  for_each_index(t->shape, [&](std::size_t i, const Index& o) {
    map(o, src);
    copy_element(x, offset_of(x, src), *t, i);
  });
  return {t};
}

}  // namespace

Result kernel(const Context& ctx, const ir::Reshape&, Inputs in, Outputs out) {
  // Row-major order is unchanged: a fresh row-major copy with the new shape.
  auto t = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[0].primitive), /*force_copy=*/true);
  t->shape = out[0].shape.dims();
  t->strides = host::contiguous_strides(t->shape);
  return {t};
}

Result kernel(const Context& ctx, const ir::Permute& op, Inputs in, Outputs out) {
  return copy_mapped(ctx, in, out, [&](const Index& o, Index& src) {
    for (std::size_t j = 0; j < op.axes.size(); ++j) src[op.axes[j]] = o[j];
  });
}

Result kernel(const Context& ctx, const ir::Expand&, Inputs in, Outputs out) {
  // offset_of reads index 0 of every size-1 input dim: exactly broadcasting.
  return copy_mapped(ctx, in, out, [](const Index& o, Index& src) { src = o; });
}

Result kernel(const Context& ctx, const ir::Flip& op, Inputs in, Outputs out) {
  const auto& shape = out[0].shape;
  return copy_mapped(ctx, in, out, [&](const Index& o, Index& src) {
    src = o;
    for (auto d : op.axes) src[d] = shape[d] - 1 - o[d];
  });
}

Result kernel(const Context& ctx, const ir::Unfold& op, Inputs in, Outputs out) {
  // Output [..., windows (at dim), ..., size]: window w, element e reads input
  // position w * step + e along dim.
  return copy_mapped(ctx, in, out, [&](const Index& o, Index& src) {
    for (std::size_t d = 0; d < src.size(); ++d) src[d] = o[d];
    src[op.dim] = o[op.dim] * op.step + o.back();
  });
}

}  // namespace burn::ndarray
