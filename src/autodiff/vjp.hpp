// Backward rules (vector-Jacobian products), one per IR op family, written
// with ordinary tensor ops (burn::detail) so they run on every device.
//
// A rule receives the op, the values of its inputs and outputs (plain,
// untracked tensors: no autodiff node) and one cotangent per output, and
// returns one gradient per input (nullopt: no gradient flows to that input,
// e.g. integer indices or an input that does not need one). Each returned
// gradient has exactly its input's shape and dtype. Rules run inside a
// no-grad scope, so nothing they compute is recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <burn/detail/ops.hpp>

namespace burn::autodiff {

using detail::TensorRef;
using Grads = std::vector<std::optional<TensorRef>>;

struct VjpArgs {
  std::span<const TensorRef> inputs;
  std::span<const TensorRef> outputs;
  /// One per output; nullopt when no gradient reached that output (treat as
  /// zeros). Mutable so a rule that reads a cotangent last may take it
  /// (take_cotangent_or_zeros): held nowhere else, its storage can then
  /// take the rule's result in place.
  std::span<std::optional<TensorRef>> cotangents;
  /// One per input: whether the caller wants that input's gradient (rules may
  /// skip work for the others and return nullopt).
  std::span<const bool> needs;
};

/// Which inputs and outputs (bit i: slot i) an op's backward rule reads as
/// values; it reads the others' specs and devices only. Autodiff nodes keep
/// just these (src/autodiff/rules/saved.cpp, next to the rules it follows).
struct SavedValues {
  std::uint32_t inputs = ~0u;
  std::uint32_t outputs = ~0u;
};
SavedValues saved_values(const ir::Op& op);

/// Dispatches to the family's rule. Throws "[op] has no backward rule" for an
/// op without one (creation ops never reach here).
Grads vjp(const ir::Op& op, const VjpArgs& args);

// One function per op family (src/autodiff/rules/*.cpp).
Grads vjp_unary(const ir::Unary& op, const VjpArgs& args);
Grads vjp_binary(const ir::Binary& op, const VjpArgs& args);
Grads vjp_clamp(const ir::Clamp& op, const VjpArgs& args);
Grads vjp_cast(const ir::Cast& op, const VjpArgs& args);
Grads vjp_matmul(const ir::Matmul& op, const VjpArgs& args);
Grads vjp_reduce(const ir::Reduce& op, const VjpArgs& args);
Grads vjp_cumulative(const ir::Cumulative& op, const VjpArgs& args);
Grads vjp_sort(const ir::Sort& op, const VjpArgs& args);
Grads vjp_reshape(const ir::Reshape& op, const VjpArgs& args);
Grads vjp_permute(const ir::Permute& op, const VjpArgs& args);
Grads vjp_expand(const ir::Expand& op, const VjpArgs& args);
Grads vjp_flip(const ir::Flip& op, const VjpArgs& args);
Grads vjp_slice(const ir::Slice& op, const VjpArgs& args);
Grads vjp_slice_assign(const ir::SliceAssign& op, const VjpArgs& args);
Grads vjp_cat(const ir::Cat& op, const VjpArgs& args);
Grads vjp_unfold(const ir::Unfold& op, const VjpArgs& args);
Grads vjp_gather(const ir::Gather& op, const VjpArgs& args);
Grads vjp_scatter(const ir::Scatter& op, const VjpArgs& args);
Grads vjp_select(const ir::Select& op, const VjpArgs& args);
Grads vjp_select_assign(const ir::SelectAssign& op, const VjpArgs& args);
Grads vjp_mask_where(const ir::MaskWhere& op, const VjpArgs& args);
Grads vjp_mask_fill(const ir::MaskFill& op, const VjpArgs& args);
Grads vjp_conv(const ir::Conv& op, const VjpArgs& args);
Grads vjp_conv_transpose(const ir::ConvTranspose& op, const VjpArgs& args);
Grads vjp_max_pool(const ir::MaxPool& op, const VjpArgs& args);
Grads vjp_avg_pool(const ir::AvgPool& op, const VjpArgs& args);
Grads vjp_adaptive_avg_pool(const ir::AdaptiveAvgPool& op, const VjpArgs& args);
Grads vjp_interpolate(const ir::Interpolate& op, const VjpArgs& args);

// ---- helpers shared by the rules (src/autodiff/rules/common.cpp) ----------------------
/// The cotangent of output i, or zeros of that output's shape and dtype.
TensorRef cotangent_or_zeros(const VjpArgs& args, std::size_t i);
/// The same, moved out of `args`: for a rule's last read of that cotangent.
/// When nothing else holds the tensor (another node's gradient slot, the
/// result), the op the rule applies to it may run in place.
TensorRef take_cotangent_or_zeros(const VjpArgs& args, std::size_t i);
/// Sums a broadcast gradient back to `shape` (same rank; dims of size 1 in
/// `shape` are summed over).
TensorRef sum_to_shape(const TensorRef& grad, const Shape& shape);
/// Zeros / a constant like t (same shape, dtype, device).
TensorRef zeros_like(const TensorRef& t);
TensorRef full_like(const TensorRef& t, Scalar value);

}  // namespace burn::autodiff
