// Layout ops. Reshape (of contiguous data), permute, expand, flip, slice and
// unfold are views of the input's block; cat and slice_assign copy through the
// strided copy shader into views of a fresh output.
#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"

namespace burn::vulkan {
namespace {

/// The view of `t` that a slice selects.
VkTensorPtr sliced(const VkTensor& t, const std::vector<ir::SliceRange>& ranges) {
  std::vector<std::size_t> shape = t.shape;
  std::vector<std::int64_t> strides = t.strides;
  std::int64_t offset = t.offset;
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    shape[d] = ranges[d].len;
    if (ranges[d].len > 0) offset += static_cast<std::int64_t>(ranges[d].start) * t.strides[d];
    strides[d] = t.strides[d] * ranges[d].step;
  }
  return t.view(std::move(shape), std::move(strides), offset);
}

}  // namespace

Result kernel(const Context& ctx, const ir::Reshape& op, Inputs in, Outputs) {
  const VkTensorPtr x = contiguous(ctx, as_vk_ptr(in[0].primitive));
  return {x->view(op.shape.dims(), row_major_strides(op.shape.dims()), x->offset)};
}

Result kernel(const Context&, const ir::Permute& op, Inputs in, Outputs) {
  const VkTensor& x = as_vk(in[0].primitive);
  std::vector<std::size_t> shape(op.axes.size());
  std::vector<std::int64_t> strides(op.axes.size());
  for (std::size_t i = 0; i < op.axes.size(); ++i) {
    shape[i] = x.shape[op.axes[i]];
    strides[i] = x.strides[op.axes[i]];
  }
  return {x.view(std::move(shape), std::move(strides), x.offset)};
}

Result kernel(const Context&, const ir::Expand& op, Inputs in, Outputs) {
  const VkTensor& x = as_vk(in[0].primitive);
  const Operand o = broadcast_to(x, op.shape.dims());
  return {x.view(op.shape.dims(), o.strides, x.offset)};
}

Result kernel(const Context&, const ir::Flip& op, Inputs in, Outputs) {
  const VkTensor& x = as_vk(in[0].primitive);
  std::vector<std::int64_t> strides = x.strides;
  std::int64_t offset = x.offset;
  for (std::size_t d : op.axes) {
    if (x.shape[d] == 0) continue;
    offset += static_cast<std::int64_t>(x.shape[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  return {x.view(x.shape, std::move(strides), offset)};
}

Result kernel(const Context&, const ir::Slice& op, Inputs in, Outputs) {
  return {sliced(as_vk(in[0].primitive), op.ranges)};
}

Result kernel(const Context& ctx, const ir::SliceAssign& op, Inputs in, Outputs) {
  const VkTensorPtr t = contiguous(ctx, as_vk_ptr(in[0].primitive), /*force=*/true);
  const VkTensorPtr target = sliced(*t, op.ranges);
  copy_into(ctx, as_vk(in[1].primitive), operand(*target));
  return {t};
}

Result kernel(const Context& ctx, const ir::Cat& op, Inputs in, Outputs out) {
  auto t = ctx.output(out[0]);
  std::int64_t at = 0;
  for (const auto& input : in) {
    const VkTensor& x = as_vk(input.primitive);
    // The part of the output this input fills.
    const VkTensorPtr part = t->view(x.shape, t->strides, t->offset + at * t->strides[op.dim]);
    copy_into(ctx, x, operand(*part));
    at += static_cast<std::int64_t>(x.shape[op.dim]);
  }
  return {t};
}

Result kernel(const Context&, const ir::Unfold& op, Inputs in, Outputs out) {
  // Window w, element e reads position w * step + e along the dim: the
  // windows dim strides by step elements, the new last dim by one.
  const VkTensor& x = as_vk(in[0].primitive);
  std::vector<std::int64_t> strides = x.strides;
  strides[op.dim] = x.strides[op.dim] * static_cast<std::int64_t>(op.step);
  strides.push_back(x.strides[op.dim]);
  return {x.view(out[0].shape.dims(), std::move(strides), x.offset)};
}

}  // namespace burn::vulkan
