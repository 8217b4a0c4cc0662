// Matmul and convolution with oneDNN post-ops: the fused CPU backend's
// epilogues (bias add, relu, scaling) applied while each output tile is
// still in cache.
#pragma once

#include <dnnl.hpp>
#include <unordered_map>

#include "backends/flex/dnnl_engine.hpp"
#include "backends/flex/kernels.hpp"

namespace burn::flex {

/// Whether flex runs an f32 product of m x k by k x n (no batch dims) with
/// oneDNN's BLAS-style dnnl_sgemm instead of a matmul primitive: up to 2^21
/// multiply-adds and 2^16 outputs. Building a primitive descriptor and its
/// memory objects costs about 2.5 us a call, more than such a product takes
/// (16x32x32: 3.07 us through a primitive, 0.32 us through dnnl_sgemm;
/// 64x128x10: 4.7 against 1.7 us; 128x128x128: 12.5 against 9.3 us). Many
/// outputs over a short inner dimension stay on the primitive, which runs
/// them faster (256x10x1024: 22 against 46 us). Measured on this project's
/// 2-core Zen 5 VM. The fused CPU backend takes no epilogue on such a
/// product either: post-ops need the primitive.
constexpr bool is_small_product(std::size_t m, std::size_t k, std::size_t n) {
  return m * n <= (std::size_t{1} << 16) && m * n * k <= (std::size_t{1} << 21);
}

/// c = a @ b (f32 operands, any layout oneDNN reads in place; c contiguous),
/// plus `bias` when given (f32, the output's last-dim length, added to every
/// row), then `attr`'s post-ops, whose arguments
/// (DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1, ...) are in
/// `post_args`. False when oneDNN has no implementation for the case: the
/// caller then runs the ops one by one.
bool matmul_f32_with_post_ops(const Context& ctx, const host::CpuTensorPtr& a, const host::CpuTensorPtr& b,
                              host::CpuTensor& c, const dnnl::primitive_attr& attr,
                              const std::unordered_map<int, dnnl::memory>& post_args,
                              const host::CpuTensor* bias = nullptr);

/// The tensor a convolution's sum post-op adds (a residual the size of the
/// output): the primitive accumulates into a destination that holds it.
struct SumOperand {
  const host::CpuTensor* tensor = nullptr;
  /// Nobody else can observe the tensor: when it is already in the layout
  /// the convolution writes, its buffer becomes the output's (no copy).
  bool reusable = false;
  /// Set by the convolution when it did take the buffer over.
  bool taken = false;
};

/// The convolution `op` (f32, 1-3 spatial dims, oneDNN's blocked layouts
/// inside) into the contiguous `y`, then `attr`'s post-ops; `post_args` are
/// their plain operands, reordered like the convolution's own if oneDNN
/// asks; `sum` is the operand of the sum post-op when `attr` has one. False
/// when oneDNN has no implementation for the case.
bool conv_f32_with_post_ops(const Context& ctx, const ir::Conv& op, Inputs in, host::CpuTensor& y,
                            const dnnl::primitive_attr& attr, std::span<const dnn::PlainArg> post_args,
                            SumOperand* sum = nullptr);

}  // namespace burn::flex
