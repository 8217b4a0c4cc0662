// Matmul with oneDNN post-ops: the fused CPU backend's matmul epilogues
// (bias add, relu, scaling) applied while each output tile is still in cache.
#pragma once

#include <dnnl.hpp>
#include <unordered_map>

#include "backends/flex/kernels.hpp"

namespace burn::flex {

/// c = a @ b (f32 operands, any layout oneDNN reads in place; c contiguous),
/// then `attr`'s post-ops, whose arguments (DNNL_ARG_ATTR_MULTIPLE_POST_OP(i)
/// | DNNL_ARG_SRC_1, ...) are in `post_args`. False when oneDNN has no
/// implementation for the case: the caller then runs the ops one by one.
bool matmul_f32_with_post_ops(const Context& ctx, const cpu::CpuTensorPtr& a, const cpu::CpuTensorPtr& b,
                              cpu::CpuTensor& c, const dnnl::primitive_attr& attr,
                              const std::unordered_map<int, dnnl::memory>& post_args);

}  // namespace burn::flex
