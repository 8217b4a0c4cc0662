// 2-D nearest, bilinear and bicubic resizing (shaders/interpolate.comp).
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/spatial.hpp"

namespace burn::vulkan {

Result kernel(const Context& ctx, const ir::Interpolate& op, Inputs in, Outputs out) {
  static_assert(static_cast<int>(ir::InterpolateMode::Bicubic) == 2);  // MODE in interpolate.comp
  const VkTensorPtr x = contiguous(ctx, as_vk_ptr(in[0].primitive));
  auto y = ctx.output(out[0]);
  struct {
    std::uint32_t total, h_in, w_in, h_out, w_out, align, x_off;
  } params{static_cast<std::uint32_t>(y->num_elements()), static_cast<std::uint32_t>(x->shape[2]),
           static_cast<std::uint32_t>(x->shape[3]),       static_cast<std::uint32_t>(op.output_size[0]),
           static_cast<std::uint32_t>(op.output_size[1]), op.align_corners ? 1u : 0u,
           static_cast<std::uint32_t>(x->offset)};
  // Source coordinates are exact fractions with numerators up to (2 out + 1) * in.
  for (std::size_t d = 0; d < 2; ++d)
    require_index_range(ctx, (2 * std::uint64_t{op.output_size[d]} + 1) * x->shape[d + 2],
                        "an input size times twice the output size");
  if (params.total == 0) return {y};
  const Binding bindings[] = {y->binding(), x->binding()};
  const std::uint32_t constants[] = {static_cast<std::uint32_t>(op.mode)};
  dispatch_groups(ctx, fmt::format("interpolate_{}", dtype_suffix(x->dtype)), constants, bindings, params,
                  (params.total + kWorkgroup - 1) / kWorkgroup);
  return {y};
}

}  // namespace burn::vulkan
