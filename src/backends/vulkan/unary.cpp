// Unary ops and clamp (f64 transcendentals are computed in software by the
// shaders, shaders/double_math.glsl).
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {

using ir::UnaryOp;
// shaders/unary.comp numbers the ops as ir::UnaryOp does.
static_assert(static_cast<int>(UnaryOp::Erf) == 22 && static_cast<int>(UnaryOp::BitNot) == 30);

}  // namespace

Result kernel(const Context& ctx, const ir::Unary& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  auto t = ctx.output(out[0]);
  const bool predicate = op.op == UnaryOp::IsNan || op.op == UnaryOp::IsInf;
  const Operand ops[] = {operand(*t), operand(x)};
  launch_elementwise(ctx, fmt::format("unary_{}{}", predicate ? "pred_" : "", dtype_suffix(x.dtype)),
                     static_cast<std::uint32_t>(op.op), t->shape, ops);
  return {t};
}

Result kernel(const Context& ctx, const ir::Clamp& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  auto t = ctx.output(out[0]);
  std::uint32_t words[4]{};
  if (op.min) scalar_words(*op.min, x.dtype, words);
  if (op.max) scalar_words(*op.max, x.dtype, words + 2);
  const std::uint32_t flags = (op.min ? 1u : 0u) | (op.max ? 2u : 0u);
  const Operand ops[] = {operand(*t), operand(x)};
  launch_elementwise(ctx, fmt::format("clamp_{}", dtype_suffix(x.dtype)), flags, t->shape, ops, words);
  return {t};
}

}  // namespace burn::vulkan
