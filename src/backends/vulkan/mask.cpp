// mask_where and mask_fill: an element-wise choice with the tensor, mask and
// source broadcast to the output (shaders/mask.comp, raw element bits);
// mask_fill's value is a one-element source.
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {

std::string mask_shader(DType dtype) { return fmt::format("mask_{}", dtype_size(dtype) * 8); }

}  // namespace

Result kernel(const Context& ctx, const ir::MaskWhere&, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  const VkTensor& mask = as_vk(in[1].primitive);
  const VkTensor& source = as_vk(in[2].primitive);
  auto t = ctx.output(out[0]);
  const Operand ops[] = {operand(*t), broadcast_to(x, t->shape), broadcast_to(mask, t->shape),
                         broadcast_to(source, t->shape)};
  launch_elementwise(ctx, mask_shader(x.dtype), 0, t->shape, ops);
  return {t};
}

Result kernel(const Context& ctx, const ir::MaskFill& op, Inputs in, Outputs out) {
  const VkTensor& x = as_vk(in[0].primitive);
  const VkTensor& mask = as_vk(in[1].primitive);
  auto t = ctx.output(out[0]);
  if (t->num_elements() == 0) return {t};
  // The value as a one-element tensor (filled on the device), broadcast as the source.
  auto value = ctx.output(ir::TensorSpec{Shape{1}, x.dtype});
  struct {
    std::uint32_t n, pattern[2];
  } fill{static_cast<std::uint32_t>((dtype_size(x.dtype) + 3) / 4), {}};  // words: the block holds at least 4 bytes
  storage_words(op.value, x.dtype, fill.pattern);
  const Binding fill_bindings[] = {value->binding()};
  dispatch_groups(ctx, "fill", {}, fill_bindings, fill, 1);
  const Operand ops[] = {operand(*t), broadcast_to(x, t->shape), broadcast_to(mask, t->shape),
                         Operand{value.get(), std::vector<std::int64_t>(t->rank(), 0), 0}};
  launch_elementwise(ctx, mask_shader(x.dtype), 0, t->shape, ops);
  return {t};
}

}  // namespace burn::vulkan
