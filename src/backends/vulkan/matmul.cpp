// Batched matmul with broadcast batch dims (shaders/matmul.comp): one
// workgroup per 64x64 output tile and batch entry; operand tiles are staged
// as 4-wide vectors where the layout allows (vec4.hpp), else element-wise.
// A K longer than kSplitK runs as one dispatch per K range, summed in a
// scratch accumulator (lavapipe ends a shader after 65,535 loop iterations,
// which once cut a [2, 200000] x [200000, 2] product of ones to 87,392).
#include <algorithm>

#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/vec4.hpp"

namespace burn::vulkan {
namespace {

/// The longest K range one dispatch covers: 1,024 BK steps of about 15 loop
/// iterations each, a quarter of lavapipe's cap. A multiple of 4, so ranges
/// keep the vector paths' alignment.
constexpr std::size_t kSplitK = 16384;
constexpr std::uint32_t kReadPart = 1u << 5, kWritePart = 1u << 6;  // bits of words[7] in matmul.comp

/// Whether every batch entry of `o` starts 4-aligned.
bool batches_aligned(const Operand& o) {
  if (!multiple_of_4(o.offset)) return false;
  for (std::int64_t s : o.strides)
    if (!multiple_of_4(s)) return false;
  return true;
}

/// The shader's LHS_VEC/RHS_VEC (bits of words[7]) for an operand whose
/// matrix dims are (first, second): (m, k) for the lhs, (k, n) for the rhs.
/// 1 when contiguous along the second dim, 2 along the first, 0 for scalar
/// loads. A vector must never straddle the matrix edge, so the contiguous
/// dim's size is a multiple of 4.
std::uint32_t vec_mode(const VkTensor& x, const Operand& batch, std::size_t first, std::size_t second) {
  if (!binding_vec4_aligned(x) || !batches_aligned(batch)) return 0;
  const std::size_t r = x.rank();
  const std::int64_t s_first = x.strides[r - 2], s_second = x.strides[r - 1];
  if (s_second == 1 && second % 4 == 0 && (first == 1 || multiple_of_4(s_first))) return 1;
  if (s_first == 1 && first % 4 == 0 && (second == 1 || multiple_of_4(s_second))) return 2;
  return 0;
}

}  // namespace

Result kernel(const Context& ctx, const ir::Matmul&, Inputs in, Outputs out) {
  const VkTensor& a = as_vk(in[0].primitive);
  const VkTensor& b = as_vk(in[1].primitive);
  auto t = ctx.output(out[0]);
  const std::size_t r = t->rank();
  const std::size_t m = t->shape[r - 2], n = t->shape[r - 1], k = a.shape[r - 1];
  if (t->num_elements() == 0) return {t};

  // Batch dims: the output's, with the inputs broadcast (stride 0) over them.
  const std::vector<std::size_t> batch(t->shape.begin(), t->shape.end() - 2);
  auto batch_operand = [&](const VkTensor& x) {
    Operand o{&x, std::vector<std::int64_t>(x.strides.begin(), x.strides.end() - 2), x.offset};
    for (std::size_t d = 0; d < batch.size(); ++d)
      if (x.shape[d] != batch[d]) o.strides[d] = 0;
    return o;
  };
  Operand out_op{t.get(), std::vector<std::int64_t>(t->strides.begin(), t->strides.end() - 2), t->offset};
  const Operand ops[] = {out_op, batch_operand(a), batch_operand(b)};
  auto word = [](std::int64_t v) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(v)); };
  const std::uint32_t words[] = {static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n),
                                 static_cast<std::uint32_t>(k), word(a.strides[r - 2]),
                                 word(a.strides[r - 1]),        word(b.strides[r - 2]),
                                 word(b.strides[r - 1])};
  // The batch block needs only its offsets: prepare over the batch shape (no
  // collapsing surprises: words carry the matrix strides).
  Prepared prep = prepare_elementwise(ctx, batch, ops, {});
  std::copy(std::begin(words), std::end(words), prep.params.words);
  const std::uint64_t batches = prep.n;
  const auto max_z = ctx.backend.gpu().adapter().limits.maxComputeWorkGroupCount[2];
  if (batches > max_z)
    throw Error(ctx.op, fmt::format("{} batch entries exceed what {} dispatches at once ({}); reshape the batch "
                                    "dims into fewer, larger matrices",
                                    batches, ctx.backend.label(), max_z));
  const std::uint64_t gx = (n + 63) / 64, gy = (m + 63) / 64;
  const auto& limit = ctx.backend.gpu().adapter().limits.maxComputeWorkGroupCount;
  if (gx > limit[0] || gy > limit[1])
    throw Error(ctx.op, fmt::format("a {}x{} output is more tiles than {} dispatches at once; split the matrix", m, n,
                                    ctx.backend.label()));
  prep.params.words[7] = vec_mode(a, ops[1], m, k) | vec_mode(b, ops[2], k, n) << 2 |
                         (binding_vec4_aligned(*t) && n % 4 == 0 ? 1u : 0u) << 4;
  const std::string shader = fmt::format("matmul_{}", dtype_suffix(t->dtype));
  const std::uint32_t constants[] = {0u, prep.contiguous ? 1u : 0u};
  auto dispatch = [&](std::uint32_t pass, ElementwiseParams params, const Binding& part) {
    params.words[7] |= pass;
    const Binding bindings[] = {prep.bindings[0], prep.bindings[1], prep.bindings[2], part};
    ctx.stream().dispatch(ctx.pipeline(shader, constants), bindings, std::as_bytes(std::span(&params, 1)),
                          static_cast<std::uint32_t>(gx), static_cast<std::uint32_t>(gy),
                          static_cast<std::uint32_t>(batches));
  };
  const std::size_t passes = (k + kSplitK - 1) / kSplitK;
  if (passes <= 1) {
    dispatch(0, prep.params, prep.bindings[0]);  // `part` is not read: any valid buffer
    return {t};
  }
  // Range p of K: the operands start k0 further along it.
  const VkTensorPtr part = ctx.output(ir::TensorSpec{Shape{batches, m, n}, shader_compute_dtype(t->dtype)});
  for (std::size_t p = 0; p < passes; ++p) {
    const std::size_t k0 = p * kSplitK;
    ElementwiseParams params = prep.params;
    params.words[2] = static_cast<std::uint32_t>(std::min(kSplitK, k - k0));
    params.offset[1] += static_cast<std::int32_t>(static_cast<std::int64_t>(k0) * a.strides[r - 1]);
    params.offset[2] += static_cast<std::int32_t>(static_cast<std::int64_t>(k0) * b.strides[r - 2]);
    dispatch((p > 0 ? kReadPart : 0u) | (p + 1 < passes ? kWritePart : 0u), params, part->binding());
  }
  return {t};
}

}  // namespace burn::vulkan
