// Gather, scatter, select and select-assign. Every index is checked before
// anything is written; indices of any int dtype are read as i64.
//
// Select is a gather whose index tensor is the 1-D indices broadcast over
// the other dims; select-assign is a scatter the same way. Scatters run one
// line along `dim` per task, in index order, so duplicate indices give the
// same result as a serial loop (last write wins, or every value added) and
// threads never write the same element.
#include <fmt/format.h>

#include "backends/flex/element.hpp"
#include "backends/flex/strided.hpp"

namespace burn::flex {
namespace {

struct Bound {
  std::int64_t size;
};

// One unsigned compare per index: a negative index wraps above any size.
BURN_FLEX_ROW_CLONES int check_row(const void* ctx, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  const auto size = static_cast<std::uint64_t>(static_cast<const Bound*>(ctx)->size);
  const auto* ix = reinterpret_cast<const std::int64_t*>(p[0]);
  const auto len = static_cast<std::int64_t>(n);
  std::uint64_t bad = 0;
  if (s[0] == 1)
    for (std::int64_t i = 0; i < len; ++i) bad |= static_cast<std::uint64_t>(ix[i]) >= size;
  else
    for (std::int64_t i = 0; i < len; ++i) bad |= static_cast<std::uint64_t>(ix[i * s[0]]) >= size;
  return bad ? 1 : 0;
}

// The indices as i64, every one checked against [0, size) of `dim`.
host::CpuTensorPtr checked_indices(const Context& ctx, const backend::Input& input, std::size_t size,
                                   std::string_view op, std::size_t dim) {
  auto idx = host::as_cpu_ptr(input.primitive);
  if (idx->dtype != DType::I64) {
    auto wide = ctx.output({Shape(idx->shape), DType::I64});
    convert_into(*wide, *idx);
    idx = wide;
  }
  const Bound bound{static_cast<std::int64_t>(size)};
  const Operand ops[] = {operand(*idx)};
  if (for_each_run(idx->shape, ops, check_row, &bound) != 0) {
    // Name the first bad index in row-major order (a serial pass, on the error path only).
    const auto* data = reinterpret_cast<const std::int64_t*>(idx->buffer->data());
    std::int64_t first = 0;
    bool found = false;
    host::for_each_offset(idx->shape, idx->strides, idx->offset, [&](std::size_t, std::int64_t off) {
      if (!found && (data[off] < 0 || data[off] >= bound.size)) {
        first = data[off];
        found = true;
      }
    });
    throw Error(op, fmt::format("index {} is out of bounds for dim {} of size {}", first, dim, size));
  }
  return idx;
}

struct GatherCtx {
  std::int64_t dim_stride;
};

// ptrs = {out, indices (i64), tensor at position 0 of dim}.
// The contiguous case (output and indices) is a loop of its own, which
// AVX2 and AVX-512 turn into vector gathers.
template <class W>
BURN_FLEX_ROW_CLONES int gather_row(const void* ctx, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  const std::int64_t ds = static_cast<const GatherCtx*>(ctx)->dim_stride;
  auto* o = reinterpret_cast<W*>(p[0]);
  const auto* ix = reinterpret_cast<const std::int64_t*>(p[1]);
  const auto* t = reinterpret_cast<const W*>(p[2]);
  const auto len = static_cast<std::int64_t>(n);
  if (s[0] == 1 && s[1] == 1)
    for (std::int64_t i = 0; i < len; ++i) o[i] = t[i * s[2] + ix[i] * ds];
  else
    for (std::int64_t i = 0; i < len; ++i) o[i * s[0]] = t[i * s[2] + ix[i * s[1]] * ds];
  return 0;
}

// out[pos] = t[pos with `dim` replaced by idx[pos]], over idx's shape.
void gather_into(const host::CpuTensor& out, const Operand& idx, const host::CpuTensor& t, std::size_t dim) {
  Operand src = operand(t);
  src.strides[dim] = 0;
  const GatherCtx gc{t.strides[dim]};
  const Operand ops[] = {operand(out), idx, src};
  const RowFn fn = visit_width(t.dtype, [&]<class W>() -> RowFn { return gather_row<W>; });
  for_each_run(out.shape, ops, fn, &gc);
}

struct ScatterCtx {
  std::int64_t len;         // entries along dim per line
  std::int64_t idx_stride;  // along dim, in the indices
  std::int64_t val_stride;  // along dim, in the values
  std::int64_t out_stride;  // along dim, in the output
};

// ptrs = {out, indices, values}, each at position 0 of `dim` of one line.
template <class T, bool Add>
int scatter_row(const void* ctx, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  const auto& c = *static_cast<const ScatterCtx*>(ctx);
  auto* o = reinterpret_cast<T*>(p[0]);
  const auto* ix = reinterpret_cast<const std::int64_t*>(p[1]);
  const auto* v = reinterpret_cast<const T*>(p[2]);
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
    for (std::int64_t k = 0; k < c.len; ++k) {
      T& dst = o[i * s[0] + ix[i * s[1] + k * c.idx_stride] * c.out_stride];
      const T val = v[i * s[2] + k * c.val_stride];
      if constexpr (Add) dst = store<T>(add(load(dst), load(val)));
      else dst = val;
    }
  }
  return 0;
}

// For every line along `dim` of `loop_shape` (dim's extent is idx_len):
// out[line, idx[line, k]] (+)= values[line, k].
void scatter_into(const host::CpuTensor& out, const Operand& idx, std::int64_t idx_stride,
                  const host::CpuTensor& values, std::vector<std::size_t> loop_shape, std::size_t dim,
                  bool add_values) {
  const std::size_t len = loop_shape[dim];
  if (len == 0) return;
  const ScatterCtx sc{static_cast<std::int64_t>(len), idx_stride, values.strides[dim], out.strides[dim]};
  loop_shape[dim] = 1;
  const Operand ops[] = {operand(out), idx, operand(values)};
  RowFn fn = nullptr;
  if (add_values) fn = visit_dtype(out.dtype, [&]<class T>() -> RowFn { return scatter_row<T, true>; });
  else fn = visit_width(out.dtype, [&]<class W>() -> RowFn { return scatter_row<W, false>; });
  for_each_run(loop_shape, ops, fn, &sc, std::max<std::size_t>(1, kGrainSize / len));
}

// The 1-D indices as an operand of a loop of `rank` dims, varying along `dim`.
Operand along(const host::CpuTensor& idx, std::size_t rank, std::size_t dim) {
  Operand o{idx.base(), dtype_size(idx.dtype), host::Strides(rank, 0)};
  o.strides[dim] = idx.strides[0];
  return o;
}

}  // namespace

Result kernel(const Context& ctx, const ir::Gather& op, Inputs in, Outputs out) {
  const auto& t = host::as_cpu(in[0].primitive);
  const auto idx = checked_indices(ctx, in[1], t.shape[op.dim], "gather", op.dim);
  auto y = ctx.output(out[0]);
  gather_into(*y, operand(*idx), t, op.dim);
  return {y};
}

Result kernel(const Context& ctx, const ir::Select& op, Inputs in, Outputs out) {
  const auto& t = host::as_cpu(in[0].primitive);
  const auto idx = checked_indices(ctx, in[1], t.shape[op.dim], "select", op.dim);
  auto y = ctx.output(out[0]);
  gather_into(*y, along(*idx, y->rank(), op.dim), t, op.dim);
  return {y};
}

/// The tensor a scatter writes into: t's own storage when nobody else can
/// observe it (max pooling's backward scatters into zeros it made for the
/// purpose), else a contiguous copy of t.
host::CpuTensorPtr scatter_target(const Context& ctx, Inputs in, Outputs out) {
  const auto& t = host::as_cpu(in[0].primitive);
  auto y = ctx.output_reusing(out[0], in, {0});
  if (y->buffer != t.buffer) copy_into(*y, t);
  return y;
}

Result kernel(const Context& ctx, const ir::Scatter& op, Inputs in, Outputs out) {
  const auto& t = host::as_cpu(in[0].primitive);
  const auto idx = checked_indices(ctx, in[1], t.shape[op.dim], "scatter", op.dim);
  const auto& values = host::as_cpu(in[2].primitive);
  auto y = scatter_target(ctx, in, out);
  Operand io = operand(*idx);
  io.strides[op.dim] = 0;
  scatter_into(*y, io, idx->strides[op.dim], values, idx->shape, op.dim, op.reduce == ir::IndexReduce::Add);
  return {y};
}

Result kernel(const Context& ctx, const ir::SelectAssign& op, Inputs in, Outputs out) {
  const auto& t = host::as_cpu(in[0].primitive);
  const auto idx = checked_indices(ctx, in[1], t.shape[op.dim], "select_assign", op.dim);
  const auto& values = host::as_cpu(in[2].primitive);
  auto y = scatter_target(ctx, in, out);
  Operand io{idx->base(), sizeof(std::int64_t), host::Strides(y->rank(), 0)};
  scatter_into(*y, io, idx->strides[0], values, values.shape, op.dim, op.reduce == ir::IndexReduce::Add);
  return {y};
}

}  // namespace burn::flex
