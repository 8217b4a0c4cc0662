// Batched matmul with broadcast batch dims (shaders/matmul.comp): one
// workgroup per 64x64 output tile and batch entry.
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {

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
                                 static_cast<std::uint32_t>(k), word(a.strides[r - 2]), word(a.strides[r - 1]),
                                 word(b.strides[r - 2]), word(b.strides[r - 1])};
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
    throw Error(ctx.op, fmt::format("a {}x{} output is more tiles than {} dispatches at once; split the matrix",
                                    m, n, ctx.backend.label()));
  const std::uint32_t constants[] = {0u, prep.contiguous ? 1u : 0u};
  ctx.stream().dispatch(ctx.pipeline(fmt::format("matmul_{}", dtype_suffix(t->dtype)), constants), prep.bindings,
                        std::as_bytes(std::span(&prep.params, 1)), static_cast<std::uint32_t>(gx),
                        static_cast<std::uint32_t>(gy), static_cast<std::uint32_t>(batches));
  return {t};
}

}  // namespace burn::vulkan
