// The one loop behind every elementwise flex kernel: walk an output shape in
// row-major order with per-operand strides (0 = broadcast, negative =
// flipped), handing each run of the innermost dim to a row function.
//
// The driver is not a template: kernels supply a plain function pointer per
// (op, dtype), so each instantiation is only the small inner loop. Dims that
// are dense for every operand are merged first, so contiguous same-shape data
// becomes one long run the compiler vectorises, and the flattened range is
// split across threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "backends/flex/kernels.hpp"
#include "backends/host/cpu_tensor.hpp"

namespace burn::flex {

/// One operand of a loop: pointer to its element [0, 0, ...], element width
/// in bytes, and one stride (in elements) per dim of the loop's shape.
struct Operand {
  std::byte* base = nullptr;
  std::size_t width = 0;
  host::Strides strides;
};

/// A tensor as an operand of a loop over its own shape.
Operand operand(const host::CpuTensor& t);
/// A tensor broadcast (numpy-style, equal rank) to `shape`: size-1 dims that
/// `shape` widens get stride 0.
Operand broadcast_operand(const host::CpuTensor& t, const host::Extents& shape);

/// Processes one run: ptrs[k] points at operand k's first element of the run,
/// strides[k] is its innermost stride in elements, n >= 1 elements. Returns 0,
/// or a kernel-defined error code (the loop then stops as soon as it can).
using RowFn = int (*)(const void* ctx, std::byte* const* ptrs, const std::int64_t* strides, std::size_t n);

/// Runs `fn` over every element of `shape`, multi-threaded above `grain`
/// elements per thread. Returns 0 or one of the error codes `fn` returned.
/// Never throws out of a parallel region.
int for_each_run(const host::Extents& shape, std::span<const Operand> operands, RowFn fn, const void* ctx,
                 std::size_t grain = kGrainSize);

/// for_each_run for loops with many operands (fused elementwise groups: their
/// outputs and inputs), up to kMaxWideOperands.
inline constexpr std::size_t kMaxWideOperands = 64;
int for_each_run_wide(const host::Extents& shape, std::span<const Operand> operands, RowFn fn, const void* ctx,
                      std::size_t grain = kGrainSize);

/// Copies `src` into `dst` (same shape and dtype, any strides), in parallel.
void copy_into(const host::CpuTensor& dst, const host::CpuTensor& src);
/// Converts `src` into `dst` (same shape, any dtypes and strides); cast.cpp.
void convert_into(const host::CpuTensor& dst, const host::CpuTensor& src);
/// A fresh row-major copy of any view.
host::CpuTensorPtr contiguous_copy(const Context& ctx, const host::CpuTensor& src);
/// `t` itself when already row-major, otherwise a row-major copy.
host::CpuTensorPtr make_contiguous(const Context& ctx, const host::CpuTensorPtr& t);

}  // namespace burn::flex
