// Layout ops. Reshape (when the strides allow it), permute, expand, flip,
// slice and unfold are zero-copy views sharing the input's buffer; slice
// assignment and cat write fresh outputs. Tensors are immutable values, so
// sharing storage is safe.
#include <optional>

#include "backends/flex/strided.hpp"

namespace burn::flex {
namespace {

// Strides that show `t`'s elements in row-major order under `shape`, or
// nullopt when no strides can (then reshape copies). Walks the input's
// dims from the innermost, in runs that are dense in memory, and lays the
// new dims over each run.
std::optional<host::Strides> reshape_strides(const host::CpuTensor& t, const host::Extents& shape) {
  if (t.is_contiguous() || t.num_elements() == 0) return host::contiguous_strides(shape);
  host::Strides out(shape.size());
  std::size_t view_d = shape.size();
  std::int64_t run_stride = t.strides.back();
  std::size_t run_numel = 1, view_numel = 1;
  for (std::size_t d = t.rank(); d-- > 0;) {
    run_numel *= t.shape[d];
    const bool run_ends =
        d == 0 || (t.shape[d - 1] != 1 && t.strides[d - 1] != static_cast<std::int64_t>(run_numel) * run_stride);
    if (!run_ends) continue;
    while (view_d > 0 && (view_numel < run_numel || shape[view_d - 1] == 1)) {
      out[view_d - 1] = static_cast<std::int64_t>(view_numel) * run_stride;
      view_numel *= shape[view_d - 1];
      --view_d;
    }
    if (view_numel != run_numel) return std::nullopt;
    if (d > 0) {
      run_stride = t.strides[d - 1];
      run_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != 0) return std::nullopt;
  return out;
}

host::CpuTensorPtr slice_view(const host::CpuTensor& t, const std::vector<ir::SliceRange>& ranges) {
  host::Extents shape(t.rank());
  host::Strides strides(t.rank());
  std::int64_t offset = t.offset;
  for (std::size_t d = 0; d < t.rank(); ++d) {
    const auto& r = ranges[d];
    shape[d] = r.len;
    strides[d] = t.strides[d] * r.step;
    if (r.len > 0) offset += static_cast<std::int64_t>(r.start) * t.strides[d];
  }
  return t.view(std::move(shape), std::move(strides), offset);
}

}  // namespace

Result kernel(const Context& ctx, const ir::Reshape& op, Inputs in, Outputs) {
  const auto x = host::as_cpu_ptr(in[0].primitive);
  const auto& shape = op.shape.dims();
  if (auto strides = reshape_strides(*x, shape)) return {x->view(shape, std::move(*strides), x->offset)};
  const auto copy = contiguous_copy(ctx, *x);
  return {copy->view(shape, host::contiguous_strides(shape), copy->offset)};
}

Result kernel(const Context&, const ir::Permute& op, Inputs in, Outputs) {
  const auto& x = host::as_cpu(in[0].primitive);
  host::Extents shape(x.rank());
  host::Strides strides(x.rank());
  for (std::size_t i = 0; i < x.rank(); ++i) {
    shape[i] = x.shape[op.axes[i]];
    strides[i] = x.strides[op.axes[i]];
  }
  return {x.view(std::move(shape), std::move(strides), x.offset)};
}

Result kernel(const Context&, const ir::Expand& op, Inputs in, Outputs) {
  const auto& x = host::as_cpu(in[0].primitive);
  host::Strides strides = x.strides;
  for (std::size_t i = 0; i < x.rank(); ++i)
    if (x.shape[i] != op.shape[i]) strides[i] = 0;  // a size-1 dim repeated
  return {x.view(op.shape.dims(), std::move(strides), x.offset)};
}

Result kernel(const Context&, const ir::Flip& op, Inputs in, Outputs) {
  const auto& x = host::as_cpu(in[0].primitive);
  host::Strides strides = x.strides;
  std::int64_t offset = x.offset;
  for (auto a : op.axes) {
    if (x.shape[a] == 0) continue;
    offset += static_cast<std::int64_t>(x.shape[a] - 1) * strides[a];
    strides[a] = -strides[a];
  }
  return {x.view(x.shape, std::move(strides), offset)};
}

Result kernel(const Context&, const ir::Slice& op, Inputs in, Outputs) {
  return {slice_view(host::as_cpu(in[0].primitive), op.ranges)};
}

Result kernel(const Context&, const ir::Unfold& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  host::Strides strides = x.strides;
  strides[op.dim] = x.strides[op.dim] * static_cast<std::int64_t>(op.step);
  strides.push_back(x.strides[op.dim]);
  return {x.view(out[0].shape.dims(), std::move(strides), x.offset)};
}

Result kernel(const Context& ctx, const ir::SliceAssign& op, Inputs in, Outputs) {
  const auto& x = host::as_cpu(in[0].primitive);
  const auto& values = host::as_cpu(in[1].primitive);
  auto y = contiguous_copy(ctx, x);
  copy_into(*slice_view(*y, op.ranges), values);
  return {y};
}

Result kernel(const Context& ctx, const ir::Cat& op, Inputs in, Outputs out) {
  auto y = ctx.output(out[0]);
  std::int64_t offset = 0;
  for (const auto& input : in) {
    const auto& x = host::as_cpu(input.primitive);
    if (x.num_elements() != 0) copy_into(*y->view(x.shape, y->strides, y->offset + offset * y->strides[op.dim]), x);
    offset += static_cast<std::int64_t>(x.shape[op.dim]);
  }
  return {y};
}

}  // namespace burn::flex
