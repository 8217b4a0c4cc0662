// Max, average and adaptive average pooling (shaders/pool.comp): one thread
// per output element, PyTorch's window rules. A window longer than one
// pass's share (kPassBudget) is walked in several dispatches that carry the
// running value and index in scratch buffers: lavapipe ends a shader after
// 65,535 loop iterations, which once cut a global average of a 200x200 image
// of ones to 0.41.
#include <algorithm>

#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/spatial.hpp"

namespace burn::vulkan {
namespace {

/// Mirrors the Params block of shaders/pool.comp.
struct PoolParams {
  std::uint32_t total = 0, nsp = 0, in_vol = 0, out_vol = 0, flags = 0, x_off = 0, w_begin = 0, w_count = 0;
  std::uint32_t in[kMaxSpatial]{}, out[kMaxSpatial]{}, kernel[kMaxSpatial]{}, stride[kMaxSpatial]{},
      padding[kMaxSpatial]{}, dilation[kMaxSpatial]{};
};

enum Mode : std::uint32_t { kMax = 0, kAverage = 1, kAdaptive = 2 };
constexpr std::uint32_t kReadPart = 4, kWritePart = 8;  // p_flags bits in pool.comp
/// Loop iterations one pass may spend on its share of a window (a position
/// costs about nsp + 2): a quarter of lavapipe's cap.
constexpr std::uint64_t kPassBudget = 16384;

/// The input made contiguous, the output allocated, and the shape fields set.
struct Pool {
  VkTensorPtr x, y;
  PoolParams params;
  std::uint64_t window = 1;  // the most positions any window has
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

/// Bounds the window by the kernel (clipped windows have fewer positions).
template <class V>
void window_of_kernel(Pool& p, const V& kernel) {
  for (std::uint32_t d = 0; d < p.params.nsp; ++d) p.window *= std::min<std::uint64_t>(kernel[d], p.params.in[d]);
}

void run(const Context& ctx, Pool& p, Mode mode, const VkTensor& indices) {
  if (p.params.total == 0) return;
  const std::uint32_t constants[] = {mode};
  const std::string shader = fmt::format("pool_{}", dtype_suffix(p.x->dtype));
  const std::uint64_t share = kPassBudget / (p.params.nsp + 2);
  const std::uint64_t passes = (p.window + share - 1) / share;
  const std::uint64_t groups = (p.params.total + kWorkgroup - 1) / kWorkgroup;
  p.params.w_begin = 0;
  p.params.w_count = static_cast<std::uint32_t>(std::max(p.window, share));
  if (passes <= 1) {
    // The scratch slots are not touched: any valid buffers.
    const Binding bindings[] = {p.y->binding(), indices.binding(), p.x->binding(), p.y->binding(), p.y->binding()};
    dispatch_groups(ctx, shader, constants, bindings, p.params, groups);
    return;
  }
  const ir::TensorSpec spec{Shape{p.params.total}, shader_compute_dtype(p.x->dtype)};
  const VkTensorPtr value = ctx.output(spec);
  const VkTensorPtr index = mode == kMax ? ctx.output(ir::TensorSpec{spec.shape, DType::U32}) : value;
  const Binding bindings[] = {p.y->binding(), indices.binding(), p.x->binding(), value->binding(), index->binding()};
  const std::uint32_t flags = p.params.flags;
  p.params.w_count = static_cast<std::uint32_t>(share);
  for (std::uint64_t i = 0; i < passes; ++i) {
    p.params.w_begin = static_cast<std::uint32_t>(i * share);
    p.params.flags = flags | (i > 0 ? kReadPart : 0u) | (i + 1 < passes ? kWritePart : 0u);
    dispatch_groups(ctx, shader, constants, bindings, p.params, groups);
  }
}

}  // namespace

Result kernel(const Context& ctx, const ir::MaxPool& op, Inputs in, Outputs out) {
  Pool p = prepare(ctx, in, out[0]);
  put_spatial(p.params.kernel, op.kernel);
  put_spatial(p.params.stride, op.stride);
  put_spatial(p.params.padding, op.padding);
  put_spatial(p.params.dilation, op.dilation);
  window_of_kernel(p, op.kernel);
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
  window_of_kernel(p, op.kernel);
  run(ctx, p, kAverage, *p.y);
  return {p.y};
}

Result kernel(const Context& ctx, const ir::AdaptiveAvgPool&, Inputs in, Outputs out) {
  Pool p = prepare(ctx, in, out[0]);
  // hi = ((o + 1) * in + out - 1) / out is computed in 32 bits.
  for (std::uint32_t d = 0; d < p.params.nsp; ++d) {
    require_index_range(ctx, std::uint64_t{p.params.in[d]} * p.params.out[d] + p.params.out[d],
                        "an input size times the output size");
    // An adaptive window spans at most ceil(in / out) + 1 positions.
    const std::uint64_t in_d = p.params.in[d], out_d = std::max<std::uint32_t>(p.params.out[d], 1);
    p.window *= std::min(in_d, (in_d + out_d - 1) / out_d + 1);
  }
  run(ctx, p, kAdaptive, *p.y);
  return {p.y};
}

}  // namespace burn::vulkan
