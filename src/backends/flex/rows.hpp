// The per-element row functions of flex's elementwise kernels, selectable one
// by one. The eager kernels wrap each in a loop over one op's output; the
// fused CPU executor (src/backends/cpu/) chains several of them over
// cache-sized blocks, so a fused group computes bit for bit what the same ops
// compute eagerly.
#pragma once

#include <array>
#include <cstddef>

#include <burn/ir/op.hpp>

#include "backends/flex/binary.hpp"
#include "backends/flex/strided.hpp"

namespace burn::flex {

/// ptrs = {out, in}; ctx unused. Throws "[op] no kernel" for a dtype the op
/// does not take.
RowFn unary_row_fn(ir::UnaryOp op, DType dtype);
/// Gelu, exact or tanh: ptrs = {out, in}; ctx unused; float dtypes.
RowFn gelu_row_fn(bool tanh, DType dtype);

/// Clamp bounds in the element's compute type, as the clamp row reads them.
struct ClampBounds {
  alignas(8) std::array<std::byte, 32> bytes{};
};
ClampBounds clamp_bounds(const ir::Clamp& op, DType dtype);
/// ptrs = {out, in}; ctx = a ClampBounds::bytes for the same dtype.
RowFn clamp_row_fn(DType dtype);

/// ptrs = {out (to), in (from)}; ctx unused.
RowFn cast_row_fn(DType from, DType to);

/// ptrs = {out, tensor, mask, source}; ctx unused.
RowFn mask_where_row_fn(DType dtype);
/// ptrs = {out, tensor, mask}; ctx = the fill value's bytes in `dtype`.
RowFn mask_fill_row_fn(DType dtype);

/// `value` converted to `dtype`, as bytes (binary scalars, fill values).
std::array<std::byte, 8> scalar_bytes(const Scalar& value, DType dtype);

}  // namespace burn::flex

namespace burn::flex {

/// Reduces one line of `n` elements (`stride` in elements) into `*out` (the
/// op's output dtype), exactly as flex's reduce kernel reduces each line of a
/// last-dim reduction of at most kMaxLineReduce elements (one chunk: the
/// same pairwise tree, the same result bits).
using ReduceLineFn = void (*)(const std::byte* line, std::int64_t stride, std::size_t n, std::byte* out);
inline constexpr std::size_t kMaxLineReduce = 1 << 14;
/// Sum, Mean, Max, Min on float and int dtypes; nullptr for other ops.
ReduceLineFn reduce_line_fn(ir::ReduceOp op, DType dtype);

}  // namespace burn::flex
