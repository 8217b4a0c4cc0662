// Gather, select, scatter and select_assign.
//
// Indices are bounds-checked before anything runs: a small device pass finds
// the first bad one and its position is read back, so the op raises "[op]
// index i is out of bounds ..." as the CPU backends do. That read waits for
// the queue (a sync per indexing op); the price of reporting the error at
// the call instead of at a later sync. Checked indices are used as i32.
//
// Scatter and select_assign sort each index line (stable, sort.hpp) and let
// every target element binary-search its own matches (shaders/scatter.comp):
// duplicates resolve as the serial loop does (last write wins, sums in index
// order), deterministically, without atomics, in O(log n) per element.
// An Add over index lines longer than kRun first measures the longest run
// of one index (another 4-byte read) and adds runs in slices of kRun
// matches per dispatch: lavapipe ends a shader after 65,535 loop iterations.
#include <cstring>

#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/sort.hpp"

namespace burn::vulkan {
namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
/// Matches of one index a scatter-add thread adds per dispatch (plus two
/// binary searches of at most 31 steps): a quarter of lavapipe's cap.
constexpr std::uint32_t kRun = 16384;

/// Fills a fresh 1-element u32 tensor with `v`.
VkTensorPtr u32_word(const Context& ctx, std::uint32_t v) {
  auto t = ctx.output(ir::TensorSpec{Shape{1}, DType::U32});
  const struct { std::uint32_t n, pattern[2]; } fill{1, {v, v}};
  const Binding bindings[] = {t->binding()};
  dispatch_groups(ctx, "fill", {}, bindings, fill, 1);
  return t;
}

std::uint32_t read_word(const Context& ctx, const VkTensor& t) {
  std::uint32_t v = 0;
  const Block& b = t.buffer->block();
  ctx.stream().download(Binding{b.buffer, b.offset, 4}, std::as_writable_bytes(std::span(&v, 1)));
  return v;
}

std::uint32_t word(std::int64_t v) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(v)); }

/// The element `flat` (row-major) of `t`, read back as an integer.
std::string element_text(const Context& ctx, const VkTensor& t, std::uint64_t flat) {
  std::int64_t off = t.offset;
  for (std::size_t d = t.rank(); d-- > 0;) {
    off += static_cast<std::int64_t>(flat % t.shape[d]) * t.strides[d];
    flat /= t.shape[d];
  }
  const std::size_t size = dtype_size(t.dtype);
  std::vector<std::byte> bytes(size);
  const Block& b = t.buffer->block();
  ctx.stream().download(Binding{b.buffer, b.offset + static_cast<VkDeviceSize>(off) * size, size}, bytes);
  return visit_int_dtype("index", t.dtype, [&]<class I>() {
    I v{};
    std::memcpy(&v, bytes.data(), size);
    return fmt::format("{}", static_cast<std::conditional_t<std::is_signed_v<I>, std::int64_t, std::uint64_t>>(v));
  });
}

/// `idx` with every value checked to lie in [0, size) of `dim`, as i32.
VkTensorPtr checked_indices(const Context& ctx, const VkTensorPtr& idx, std::size_t size, std::size_t dim) {
  if (idx->num_elements() == 0) return idx->dtype == DType::I32 ? idx : ctx.output({Shape(idx->shape), DType::I32});
  // `first` := 0xffffffff, then the check lowers it to the first bad position.
  auto first = u32_word(ctx, kNone);

  const Operand ops[] = {operand(*idx)};
  const std::uint32_t words[] = {static_cast<std::uint32_t>(size)};
  Prepared prep = prepare_elementwise(ctx, idx->shape, ops, words);
  prep.bindings.push_back(first->binding());
  const std::uint32_t constants[] = {0u, prep.contiguous ? 1u : 0u};
  dispatch_groups(ctx, fmt::format("index_check_{}", dtype_suffix(idx->dtype)), constants, prep.bindings, prep.params,
                  (prep.n + kWorkgroup - 1) / kWorkgroup);
  const std::uint32_t bad = read_word(ctx, *first);
  if (bad != kNone)
    throw Error(ctx.op, fmt::format("index {} is out of bounds for dim {} of size {}", element_text(ctx, *idx, bad),
                                    dim, size));
  if (idx->dtype == DType::I32) return idx;
  auto wide = ctx.output(ir::TensorSpec{Shape(idx->shape), DType::I32});
  const Operand cast_ops[] = {operand(*wide), operand(*idx)};
  launch_elementwise(ctx, fmt::format("cast_{}_i32", dtype_suffix(idx->dtype)), 0, wide->shape, cast_ops);
  return wide;
}

/// out[o] = x[o with dim := idx[o]], `idx` an operand over out's shape.
void gather_into(const Context& ctx, const VkTensor& out, const Operand& idx, const VkTensor& x, std::size_t dim) {
  Operand src = operand(x);
  src.strides[dim] = 0;
  const Operand ops[] = {operand(out), idx, src};
  const std::uint32_t words[] = {word(x.strides[dim]), static_cast<std::uint32_t>(x.shape[dim])};
  launch_elementwise(ctx, fmt::format("gather_{}", dtype_size(x.dtype) * 8), 0, out.shape, ops, words);
}

/// Writes or adds `values` into `t` (fresh, row-major) along `dim` at the
/// sorted indices `keys` (with original positions `pos`, same strides);
/// `key_strides` walk the keys in the values' coordinates.
void scatter_sorted(const Context& ctx, ir::IndexReduce reduce, const VkTensor& t, const VkTensor& keys,
                    const VkTensor& pos, std::vector<std::int64_t> key_strides, const VkTensor& values,
                    std::size_t dim) {
  std::vector<std::size_t> shape = values.shape;
  shape[dim] = t.shape[dim];
  const std::int64_t key_step = key_strides[dim];
  key_strides[dim] = 0;
  Operand vals = operand(values);
  vals.strides[dim] = 0;
  Operand coord{&t, std::vector<std::int64_t>(shape.size(), 0), 0};
  coord.strides[dim] = 1;
  const Operand ops[] = {Operand{&t, t.strides, t.offset}, Operand{&keys, key_strides, keys.offset}, vals, coord};
  const auto len = static_cast<std::uint32_t>(values.shape[dim]);
  const std::uint32_t words[] = {len, word(key_step), word(values.strides[dim]), 0u, len, 0u};
  Prepared prep = prepare_elementwise(ctx, shape, ops, words);
  if (prep.n == 0) return;
  const std::uint32_t constants[] = {static_cast<std::uint32_t>(reduce), prep.contiguous ? 1u : 0u};
  const std::string shader = fmt::format("scatter_{}", dtype_suffix(t.dtype));
  const std::uint64_t groups = (prep.n + kWorkgroup - 1) / kWorkgroup;
  if (reduce != ir::IndexReduce::Add || len <= kRun) {
    // max_run is not touched: any valid buffer.
    prep.bindings = {t.binding(), keys.binding(), pos.binding(), values.binding(), t.binding()};
    dispatch_groups(ctx, shader, constants, prep.bindings, prep.params, groups);
    return;
  }
  const VkTensorPtr runs = u32_word(ctx, 0);
  prep.bindings = {t.binding(), keys.binding(), pos.binding(), values.binding(), runs->binding()};
  prep.params.words[5] = 1;  // MEASURE
  dispatch_groups(ctx, shader, constants, prep.bindings, prep.params, groups);
  const std::uint32_t longest = read_word(ctx, *runs);
  prep.params.words[5] = 0;
  prep.params.words[4] = kRun;
  for (std::uint32_t first = 0; first < longest; first += kRun) {
    prep.params.words[3] = first;
    dispatch_groups(ctx, shader, constants, prep.bindings, prep.params, groups);
  }
}

}  // namespace

Result kernel(const Context& ctx, const ir::Gather& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  const VkTensorPtr idx = checked_indices(ctx, as_vk_ptr(in[1].primitive), x.shape[op.dim], op.dim);
  auto t = ctx.output(out[0]);
  if (t->num_elements() > 0) gather_into(ctx, *t, operand(*idx), x, op.dim);
  return {t};
}

Result kernel(const Context& ctx, const ir::Select& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  const VkTensorPtr idx = checked_indices(ctx, as_vk_ptr(in[1].primitive), x.shape[op.dim], op.dim);
  auto t = ctx.output(out[0]);
  if (t->num_elements() == 0) return {t};
  // The 1-D indices broadcast over the output: they vary along `dim` only.
  Operand ids{idx.get(), std::vector<std::int64_t>(t->rank(), 0), idx->offset};
  ids.strides[op.dim] = idx->strides[0];
  gather_into(ctx, *t, ids, x, op.dim);
  return {t};
}

Result kernel(const Context& ctx, const ir::Scatter& op, Inputs in, Outputs) {
  const VkTensorPtr t = contiguous(ctx, as_vk_ptr(in[0].primitive), /*force=*/true);
  const VkTensorPtr idx = checked_indices(ctx, as_vk_ptr(in[1].primitive), t->shape[op.dim], op.dim);
  if (idx->num_elements() == 0) return {t};
  const Sorted s = sort_lines(ctx, *idx, op.dim, false);
  scatter_sorted(ctx, op.reduce, *t, *s.values, *s.positions, s.values->strides, as_vk(in[2].primitive), op.dim);
  return {t};
}

Result kernel(const Context& ctx, const ir::SelectAssign& op, Inputs in, Outputs) {
  const VkTensorPtr t = contiguous(ctx, as_vk_ptr(in[0].primitive), /*force=*/true);
  const VkTensorPtr idx = checked_indices(ctx, as_vk_ptr(in[1].primitive), t->shape[op.dim], op.dim);
  if (idx->num_elements() == 0) return {t};
  const Sorted s = sort_lines(ctx, *idx, 0, false);
  // One sorted line for every position of the values: it varies along `dim` only.
  std::vector<std::int64_t> key_strides(t->rank(), 0);
  key_strides[op.dim] = s.values->strides[0];
  scatter_sorted(ctx, op.reduce, *t, *s.values, *s.positions, key_strides, as_vk(in[2].primitive), op.dim);
  return {t};
}

}  // namespace burn::vulkan
