// Binary ops (numpy broadcasting, strided operands, or a scalar right-hand
// side) and comparisons.
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {

using ir::BinaryOp;
// shaders/binary.comp numbers the ops as ir::BinaryOp does.
static_assert(static_cast<int>(BinaryOp::Atan2) == 8 && static_cast<int>(BinaryOp::LessEqual) == 22);

bool is_comparison(BinaryOp op) { return op >= BinaryOp::Equal; }
bool raises(BinaryOp op) {
  return op == BinaryOp::Div || op == BinaryOp::Rem || op == BinaryOp::Pow || op == BinaryOp::Shl ||
         op == BinaryOp::Shr;
}

}  // namespace

Result kernel(const Context& ctx, const ir::Binary& op, Inputs in, Outputs out) {
  const VkTensor& lhs = as_vk(in[0].primitive);
  auto t = ctx.output(out[0]);
  const std::string shader = fmt::format("binary_{}{}", is_comparison(op.op) ? "cmp_" : "", dtype_suffix(lhs.dtype));
  std::uint32_t code = static_cast<std::uint32_t>(op.op);
  std::uint32_t words[2]{};
  // With a scalar, the lhs is bound again in the rhs slot so every binding
  // the shader declares is valid (it never reads it).
  const VkTensor& rhs = op.scalar ? lhs : as_vk(in[1].primitive);
  if (op.scalar) {
    code |= 256u;
    scalar_words(*op.scalar, lhs.dtype, words);
  }
  const Operand ops[] = {operand(*t), broadcast_to(lhs, t->shape), broadcast_to(rhs, t->shape)};
  launch_elementwise(ctx, shader, code, t->shape, ops, words, raises(op.op) && is_int(lhs.dtype));
  return {t};
}

}  // namespace burn::vulkan
