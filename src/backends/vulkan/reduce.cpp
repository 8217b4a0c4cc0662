// Reductions along one dim: a workgroup-memory tree per output for long
// dims, one thread per output for short ones (shaders/reduce.comp).
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {
using ir::ReduceOp;
static_assert(static_cast<int>(ReduceOp::All) == 8);  // reduce.comp numbers the ops as ir::ReduceOp
/// Dims at least this long get a workgroup (and a tree) per output.
constexpr std::size_t kTreeMin = 64;
/// The longest dim one workgroup folds correctly. Past 256 x 65,534 elements
/// each thread loops 65,535 times or more, and lavapipe then drops the end of
/// the dim (a sum of 2^24 ones reads 131,070; the shader is not at fault). Until
/// a two-pass reduction exists, longer dims are refused instead of summed wrong.
constexpr std::size_t kMaxFoldLen = std::size_t{256} * 65000;
}  // namespace

Result kernel(const Context& ctx, const ir::Reduce& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  auto t = ctx.output(out[0]);
  std::string shader;
  const std::string_view dt = dtype_suffix(x.dtype);
  switch (op.op) {
    case ReduceOp::Any:
    case ReduceOp::All: shader = fmt::format("reduce_anyall_{}", dt); break;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      if (op.index_dtype != DType::I64 && op.index_dtype != DType::I32)
        throw Error(ctx.op, fmt::format("the {} backend returns i64 or i32 indices, not {}; ask for one of those",
                                        ctx.backend.name(), dtype_name(op.index_dtype)));
      shader = fmt::format("reduce_arg_{}_{}", dt, dtype_name(op.index_dtype));
      break;
    case ReduceOp::Mean:
      if (is_int(x.dtype)) {
        // The sum of an int mean is 64 bits wide, so small types do not wrap.
        if (!ctx.backend.supports_dtype(DType::I64))
          throw Error(ctx.op, fmt::format("an integer mean needs 64-bit shader integers, which {} lacks; cast to "
                                          "f32 first",
                                          ctx.backend.label()));
        shader = fmt::format("reduce_mean_{}", dt);
        break;
      }
      [[fallthrough]];
    default: shader = fmt::format("reduce_{}", dt);
  }
  const std::size_t len = x.shape[op.dim];
  if (len > kMaxFoldLen)
    throw Error(ctx.op, fmt::format("reducing a dim of {} elements is not supported on {} (at most {} in one "
                                    "reduction); reshape it into [k, {} / k] and reduce both dims, or use another "
                                    "device",
                                    len, ctx.backend.label(), kMaxFoldLen, len));
  const std::int64_t step = x.strides[op.dim];
  const std::uint32_t words[] = {static_cast<std::uint32_t>(len), static_cast<std::uint32_t>(static_cast<std::int32_t>(step))};
  // The input's strides over the output's shape: the reduced dim has size 1.
  const Operand ops[] = {operand(*t), Operand{&x, x.strides, x.offset}};
  const Prepared prep = prepare_elementwise(ctx, t->shape, ops, words);
  if (prep.n == 0) return {t};
  const bool tree = len >= kTreeMin;
  const std::uint32_t constants[] = {static_cast<std::uint32_t>(op.op), prep.contiguous ? 1u : 0u, tree ? 1u : 0u};
  std::uint32_t gx = 0, gy = 0;
  grid_for(ctx, tree ? prep.n : (prep.n + kWorkgroup - 1) / kWorkgroup, gx, gy);
  ctx.stream().dispatch(ctx.pipeline(shader, constants), prep.bindings, std::as_bytes(std::span(&prep.params, 1)),
                        gx, gy);
  return {t};
}

}  // namespace burn::vulkan
