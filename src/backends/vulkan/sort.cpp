// Sort along a dim (shaders/sort.comp, shaders/merge.comp).
#include "backends/vulkan/sort.hpp"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {

/// The longest line one workgroup sorts (SORT_MAX in sort.comp): 2048, or
/// the largest power of two whose keys and positions fit the adapter's
/// workgroup memory (Vulkan guarantees only 16 KiB).
std::size_t chunk_max(const Context& ctx, DType dtype) {
  const std::size_t key = dtype_size(dtype) == 8 ? 8 : 4;  // smaller types sort as 32-bit keys
  const std::size_t fit = ctx.backend.gpu().adapter().limits.maxComputeSharedMemorySize / (key + 4);
  return std::min<std::size_t>(2048, std::bit_floor(fit));
}

/// Outputs each merge thread writes (ITEMS in merge.comp).
constexpr std::size_t kMergeItems = 8;

std::uint32_t word(std::int64_t v) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(v)); }

/// A row-major [lines, len] scratch buffer seen with x's axis order: the
/// sorted dim is innermost in memory.
VkTensorPtr dim_last_scratch(const Context& ctx, const std::vector<std::size_t>& shape, std::size_t dim, DType dtype) {
  const std::size_t len = shape[dim];
  std::vector<std::size_t> lines = shape;
  lines[dim] = 1;
  auto t = ctx.output(ir::TensorSpec{Shape(shape), dtype});
  std::vector<std::int64_t> strides = row_major_strides(lines);
  for (auto& s : strides) s *= static_cast<std::int64_t>(len);
  strides[dim] = 1;
  return t->view(shape, std::move(strides), t->offset);
}

}  // namespace

Sorted sort_lines(const Context& ctx, const VkTensor& x, std::size_t dim, bool descending) {
  const std::size_t len = x.shape[dim];
  const std::size_t limit = chunk_max(ctx, x.dtype);
  const bool chunked = len > limit;
  Sorted out;
  out.values = ctx.output(ir::TensorSpec{Shape(x.shape), x.dtype});
  out.positions = ctx.output(ir::TensorSpec{Shape(x.shape), DType::I32});
  if (x.num_elements() == 0) return out;

  // Short lines sort straight into the outputs; long ones into scratch A.
  VkTensorPtr keys = out.values, pos = out.positions;
  if (chunked) {
    keys = dim_last_scratch(ctx, x.shape, dim, x.dtype);
    pos = dim_last_scratch(ctx, x.shape, dim, DType::I32);
  }
  const std::size_t chunk = chunked ? limit : std::bit_ceil(len);
  const std::size_t chunks = (len + chunk - 1) / chunk;
  std::vector<std::size_t> lines = x.shape;
  lines[dim] = 1;
  const Operand ops[] = {operand(*keys), operand(*pos), operand(x)};
  std::uint32_t words[8] = {static_cast<std::uint32_t>(len),
                            word(x.strides[dim]),
                            word(keys->strides[dim]),
                            word(pos->strides[dim]),
                            static_cast<std::uint32_t>(chunk),
                            static_cast<std::uint32_t>(chunks),
                            descending ? 1u : 0u,
                            0u};
  Prepared prep = prepare_elementwise(ctx, lines, ops, words);
  prep.params.words[7] = static_cast<std::uint32_t>(prep.n);
  const std::string_view dt = dtype_suffix(x.dtype);
  const std::uint32_t constants[] = {0u, prep.contiguous ? 1u : 0u, static_cast<std::uint32_t>(limit)};
  dispatch_groups(ctx, fmt::format("sort_{}", dt), constants, prep.bindings, prep.params, prep.n * chunks);
  if (!chunked) return out;

  // Merge sorted runs of `width` pairwise, ping-ponging between scratch buffers.
  VkTensorPtr keys_b = dim_last_scratch(ctx, x.shape, dim, x.dtype);
  VkTensorPtr pos_b = dim_last_scratch(ctx, x.shape, dim, DType::I32);
  const std::uint64_t segments = (len + kMergeItems - 1) / kMergeItems;
  const std::uint64_t threads = prep.n * segments;
  for (std::size_t width = chunk; width < len; width *= 2) {
    ElementwiseParams params;
    params.words[0] = static_cast<std::uint32_t>(len);
    params.words[1] = static_cast<std::uint32_t>(width);
    params.words[2] = static_cast<std::uint32_t>(threads);
    params.words[4] = static_cast<std::uint32_t>(segments);
    params.words[6] = descending ? 1u : 0u;
    const Binding bindings[] = {keys_b->binding(), pos_b->binding(), keys->binding(), pos->binding()};
    dispatch_groups(ctx, fmt::format("merge_{}", dt), {}, bindings, params, (threads + kWorkgroup - 1) / kWorkgroup);
    std::swap(keys, keys_b);
    std::swap(pos, pos_b);
  }
  copy_into(ctx, *keys, operand(*out.values));
  copy_into(ctx, *pos, operand(*out.positions));
  return out;
}

Result kernel(const Context& ctx, const ir::Sort& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  Sorted s = sort_lines(ctx, x, op.dim, op.descending);
  if (op.index_dtype == DType::I32) return {s.values, s.positions};
  auto idx = ctx.output(out[1]);
  const Operand ops[] = {operand(*idx), operand(*s.positions)};
  launch_elementwise(ctx, fmt::format("cast_i32_{}", dtype_suffix(op.index_dtype)), 0, idx->shape, ops);
  return {s.values, idx};
}

}  // namespace burn::vulkan
