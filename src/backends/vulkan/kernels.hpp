// One `kernel(ctx, op, inputs, outputs)` overload per IR op the Vulkan
// backend implements; supports_op is true exactly for these (backend.cpp).
// An op without an overload is rejected with "[op] not supported by the
// vulkan backend".
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "backends/vulkan/backend.hpp"

namespace burn::vulkan {

using Inputs = std::span<const backend::Input>;
using Outputs = std::span<const ir::TensorSpec>;
using Result = std::vector<backend::PrimitivePtr>;

/// What a kernel needs: the backend (with its lock held) and the op's name.
struct Context {
  VulkanBackend& backend;
  std::string_view op;

  VkTensorPtr output(const ir::TensorSpec& spec) const { return backend.allocate(spec, op); }
  VkPipeline pipeline(std::string_view shader, std::span<const std::uint32_t> constants = {}) const {
    return backend.pipelines().get(op, shader, constants);
  }
  Stream& stream() const { return backend.commands(); }
};

// creation.cpp
Result kernel(const Context& ctx, const ir::Full& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Arange& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Random& op, Inputs in, Outputs out);
// cast.cpp
Result kernel(const Context& ctx, const ir::Cast& op, Inputs in, Outputs out);
// unary.cpp
Result kernel(const Context& ctx, const ir::Unary& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Clamp& op, Inputs in, Outputs out);
// binary.cpp
Result kernel(const Context& ctx, const ir::Binary& op, Inputs in, Outputs out);
// matmul.cpp
Result kernel(const Context& ctx, const ir::Matmul& op, Inputs in, Outputs out);
// reduce.cpp
Result kernel(const Context& ctx, const ir::Reduce& op, Inputs in, Outputs out);
// layout.cpp
Result kernel(const Context& ctx, const ir::Reshape& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Permute& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Expand& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Flip& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Slice& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::SliceAssign& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Cat& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Unfold& op, Inputs in, Outputs out);
// mask.cpp
Result kernel(const Context& ctx, const ir::MaskWhere& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::MaskFill& op, Inputs in, Outputs out);
// indexing.cpp
Result kernel(const Context& ctx, const ir::Gather& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Select& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::Scatter& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::SelectAssign& op, Inputs in, Outputs out);
// sort.cpp
Result kernel(const Context& ctx, const ir::Sort& op, Inputs in, Outputs out);
// scan.cpp
Result kernel(const Context& ctx, const ir::Cumulative& op, Inputs in, Outputs out);
// pool.cpp
Result kernel(const Context& ctx, const ir::MaxPool& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::AvgPool& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::AdaptiveAvgPool& op, Inputs in, Outputs out);
// interpolate.cpp
Result kernel(const Context& ctx, const ir::Interpolate& op, Inputs in, Outputs out);
// conv.cpp
Result kernel(const Context& ctx, const ir::Conv& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::ConvTranspose& op, Inputs in, Outputs out);
Result kernel(const Context& ctx, const ir::ConvWeightGrad& op, Inputs in, Outputs out);

}  // namespace burn::vulkan
