// Unary ops and clamp.
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {

using ir::UnaryOp;
// shaders/unary.comp numbers the ops as ir::UnaryOp does.
static_assert(static_cast<int>(UnaryOp::Erf) == 22 && static_cast<int>(UnaryOp::BitNot) == 30);

/// Ops Vulkan shaders can compute in f64 (the others need f64 exp/log/sin).
bool has_f64(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: case UnaryOp::Abs: case UnaryOp::Sign: case UnaryOp::Recip: case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt: case UnaryOp::Round: case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Trunc:
    case UnaryOp::IsNan: case UnaryOp::IsInf:
      return true;
    default:
      return false;
  }
}

}  // namespace

Result kernel(const Context& ctx, const ir::Unary& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  if (x.dtype == DType::F64 && !has_f64(op.op))
    throw Error(ctx.op, fmt::format("f64 {} is not supported by the {} backend: Vulkan shaders have no f64 {}; cast "
                                    "to f32 first or use another device",
                                    ir::unary_name(op.op), ctx.backend.name(), ir::unary_name(op.op)));
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
