// Cast between any two dtypes (one shader variant per pair).
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {

Result kernel(const Context& ctx, const ir::Cast& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  auto t = ctx.output(out[0]);
  const Operand ops[] = {operand(*t), operand(x)};
  if (x.dtype == op.dtype) copy_into(ctx, x, ops[0]);
  else
    launch_elementwise(ctx, fmt::format("cast_{}_{}", dtype_suffix(x.dtype), dtype_suffix(op.dtype)), 0, t->shape, ops);
  return {t};
}

}  // namespace burn::vulkan
