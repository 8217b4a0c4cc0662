// Max, average and adaptive average pooling (shaders/pool.comp): one thread
// per output element, PyTorch's window rules.
#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/spatial.hpp"

namespace burn::vulkan {
namespace {

/// Mirrors the Params block of shaders/pool.comp.
struct PoolParams {
  std::uint32_t total = 0, nsp = 0, in_vol = 0, out_vol = 0, flags = 0, x_off = 0, unused[2]{};
  std::uint32_t in[kMaxSpatial]{}, out[kMaxSpatial]{}, kernel[kMaxSpatial]{}, stride[kMaxSpatial]{},
      padding[kMaxSpatial]{}, dilation[kMaxSpatial]{};
};

enum Mode : std::uint32_t { kMax = 0, kAverage = 1, kAdaptive = 2 };

/// The input made contiguous, the output allocated, and the shape fields set.
struct Pool {
  VkTensorPtr x, y;
  PoolParams params;
};
Pool prepare(const Context& ctx, Inputs in, const ir::TensorSpec& out) {
  Pool p;
  p.x = contiguous(ctx, as_vk_ptr(in[0].primitive));
  p.y = ctx.output(out);
  const auto& xs = p.x->shape;
  const auto& ys = p.y->shape;
  require_spatial(ctx, xs.size() - 2);
  p.params.nsp = static_cast<std::uint32_t>(xs.size() - 2);
  put_spatial(p.params.in, xs, 2);
  put_spatial(p.params.out, ys, 2);
  std::uint64_t in_vol = 1, out_vol = 1;
  for (std::size_t d = 2; d < xs.size(); ++d) {
    in_vol *= xs[d];
    out_vol *= ys[d];
  }
  p.params.in_vol = static_cast<std::uint32_t>(in_vol);
  p.params.out_vol = static_cast<std::uint32_t>(out_vol);
  p.params.total = static_cast<std::uint32_t>(p.y->num_elements());
  p.params.x_off = static_cast<std::uint32_t>(p.x->offset);
  return p;
}

void run(const Context& ctx, const Pool& p, Mode mode, const VkTensor& indices) {
  if (p.params.total == 0) return;
  const Binding bindings[] = {p.y->binding(), indices.binding(), p.x->binding()};
  const std::uint32_t constants[] = {mode};
  dispatch_groups(ctx, fmt::format("pool_{}", dtype_suffix(p.x->dtype)), constants, bindings, p.params,
                  (p.params.total + kWorkgroup - 1) / kWorkgroup);
}

}  // namespace

Result kernel(const Context& ctx, const ir::MaxPool& op, Inputs in, Outputs out) {
  Pool p = prepare(ctx, in, out[0]);
  put_spatial(p.params.kernel, op.kernel);
  put_spatial(p.params.stride, op.stride);
  put_spatial(p.params.padding, op.padding);
  put_spatial(p.params.dilation, op.dilation);
  if (!op.with_indices) {
    run(ctx, p, kMax, *p.y);  // the shader's index slot is bound but not written
    return {p.y};
  }
  p.params.flags = 1;
  // Indices are computed as i32 (flat positions in a plane fit: the plane is
  // one tensor) and cast when another dtype is asked for.
  const ir::TensorSpec& ispec = out[1];
  auto idx = ctx.output(ir::TensorSpec{ispec.shape, DType::I32});
  run(ctx, p, kMax, *idx);
  if (ispec.dtype == DType::I32) return {p.y, idx};
  auto cast = ctx.output(ispec);
  const Operand ops[] = {operand(*cast), operand(*idx)};
  launch_elementwise(ctx, fmt::format("cast_i32_{}", dtype_suffix(ispec.dtype)), 0, cast->shape, ops);
  return {p.y, cast};
}

Result kernel(const Context& ctx, const ir::AvgPool& op, Inputs in, Outputs out) {
  Pool p = prepare(ctx, in, out[0]);
  put_spatial(p.params.kernel, op.kernel);
  put_spatial(p.params.stride, op.stride);
  put_spatial(p.params.padding, op.padding);
  p.params.flags = op.count_include_pad ? 2u : 0u;
  run(ctx, p, kAverage, *p.y);
  return {p.y};
}

Result kernel(const Context& ctx, const ir::AdaptiveAvgPool&, Inputs in, Outputs out) {
  const Pool p = prepare(ctx, in, out[0]);
  // hi = ((o + 1) * in + out - 1) / out is computed in 32 bits.
  for (std::uint32_t d = 0; d < p.params.nsp; ++d)
    require_index_range(ctx, std::uint64_t{p.params.in[d]} * p.params.out[d] + p.params.out[d],
                        "an input size times the output size");
  run(ctx, p, kAdaptive, *p.y);
  return {p.y};
}

}  // namespace burn::vulkan
