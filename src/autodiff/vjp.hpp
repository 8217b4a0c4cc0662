// Backward rules (vector-Jacobian products), one per IR op, written
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

/// Whether input i gets a gradient: the caller wants it and it is a float
/// tensor (indices, masks and other int/bool inputs never do).
inline bool wants(const VjpArgs& a, std::size_t i) {
  return i < a.inputs.size() && i < a.needs.size() && a.needs[i] && is_float(a.inputs[i]->spec.dtype);
}

/// Which inputs and outputs (bit i: slot i) an op's backward rule reads as
/// values; it reads the others' specs and devices only. A node keeps only
/// those; for the rest it keeps the spec and device alone, so an activation a
/// rule never reads (a linear layer's matmul result before its bias add, a
/// mask_fill's filled input) is freed as soon as the forward pass drops it,
/// as PyTorch's saved tensors are. Each op's mask sits next to its rule and
/// must follow it: a rule that runs an op on a value not kept fails with an
/// internal error from dispatch, which the autodiff tests would report.
struct SavedValues {
  std::uint32_t inputs = ~0u;
  std::uint32_t outputs = ~0u;
};
inline constexpr SavedValues kKeepAll{};
inline constexpr SavedValues kKeepNothing{0, 0};
inline constexpr SavedValues kKeepInput0{0b1, 0};
inline constexpr SavedValues kKeepInput1{0b10, 0};
inline constexpr SavedValues kKeepInputs01{0b11, 0};
inline constexpr SavedValues kKeepOutput0{0, 0b1};
inline constexpr SavedValues kKeepOutput1{0, 0b10};
inline constexpr SavedValues kKeepInput0Output0{0b1, 0b1};

/// The op's saved values (what record() keeps for its rule).
SavedValues saved_values(const ir::Op& op);

/// Runs the op's rule. Creation ops (never recorded: no input to track) and
/// conv_weight_grad (a backward kernel) have none and throw.
Grads vjp(const ir::Op& op, const VjpArgs& args);

// One overload of each per op, next to each other in the op's family file
// (src/autodiff/rules/<family>.cpp, families as in <burn/ir/op.hpp>): the
// backward rule, and the values it reads. rules/dispatch.cpp visits ir::Op and
// calls them; the deleted templates make an op without them a compile error
// there, never a fallback.
template <class O>
Grads rule(const O& op, const VjpArgs& args) = delete;
template <class O>
SavedValues saved(const O& op) = delete;

// creation.cpp
Grads rule(const ir::Full& op, const VjpArgs& args);
Grads rule(const ir::Arange& op, const VjpArgs& args);
Grads rule(const ir::Random& op, const VjpArgs& args);
SavedValues saved(const ir::Full& op);
SavedValues saved(const ir::Arange& op);
SavedValues saved(const ir::Random& op);

// elementwise.cpp
Grads rule(const ir::Unary& op, const VjpArgs& args);
Grads rule(const ir::Binary& op, const VjpArgs& args);
Grads rule(const ir::Clamp& op, const VjpArgs& args);
Grads rule(const ir::Cast& op, const VjpArgs& args);
SavedValues saved(const ir::Unary& op);
SavedValues saved(const ir::Binary& op);
SavedValues saved(const ir::Clamp& op);
SavedValues saved(const ir::Cast& op);

// matmul.cpp
Grads rule(const ir::Matmul& op, const VjpArgs& args);
SavedValues saved(const ir::Matmul& op);

// reduce.cpp
Grads rule(const ir::Reduce& op, const VjpArgs& args);
Grads rule(const ir::Cumulative& op, const VjpArgs& args);
Grads rule(const ir::Sort& op, const VjpArgs& args);
SavedValues saved(const ir::Reduce& op);
SavedValues saved(const ir::Cumulative& op);
SavedValues saved(const ir::Sort& op);

// layout.cpp
Grads rule(const ir::Reshape& op, const VjpArgs& args);
Grads rule(const ir::Permute& op, const VjpArgs& args);
Grads rule(const ir::Expand& op, const VjpArgs& args);
Grads rule(const ir::Flip& op, const VjpArgs& args);
Grads rule(const ir::Slice& op, const VjpArgs& args);
Grads rule(const ir::SliceAssign& op, const VjpArgs& args);
Grads rule(const ir::Cat& op, const VjpArgs& args);
Grads rule(const ir::Unfold& op, const VjpArgs& args);
SavedValues saved(const ir::Reshape& op);
SavedValues saved(const ir::Permute& op);
SavedValues saved(const ir::Expand& op);
SavedValues saved(const ir::Flip& op);
SavedValues saved(const ir::Slice& op);
SavedValues saved(const ir::SliceAssign& op);
SavedValues saved(const ir::Cat& op);
SavedValues saved(const ir::Unfold& op);

// indexing.cpp
Grads rule(const ir::Gather& op, const VjpArgs& args);
Grads rule(const ir::Scatter& op, const VjpArgs& args);
Grads rule(const ir::Select& op, const VjpArgs& args);
Grads rule(const ir::SelectAssign& op, const VjpArgs& args);
Grads rule(const ir::MaskWhere& op, const VjpArgs& args);
Grads rule(const ir::MaskFill& op, const VjpArgs& args);
SavedValues saved(const ir::Gather& op);
SavedValues saved(const ir::Scatter& op);
SavedValues saved(const ir::Select& op);
SavedValues saved(const ir::SelectAssign& op);
SavedValues saved(const ir::MaskWhere& op);
SavedValues saved(const ir::MaskFill& op);

// conv.cpp
Grads rule(const ir::Conv& op, const VjpArgs& args);
Grads rule(const ir::ConvTranspose& op, const VjpArgs& args);
Grads rule(const ir::ConvWeightGrad& op, const VjpArgs& args);
SavedValues saved(const ir::Conv& op);
SavedValues saved(const ir::ConvTranspose& op);
SavedValues saved(const ir::ConvWeightGrad& op);

// pool.cpp
Grads rule(const ir::MaxPool& op, const VjpArgs& args);
Grads rule(const ir::AvgPool& op, const VjpArgs& args);
Grads rule(const ir::AdaptiveAvgPool& op, const VjpArgs& args);
SavedValues saved(const ir::MaxPool& op);
SavedValues saved(const ir::AvgPool& op);
SavedValues saved(const ir::AdaptiveAvgPool& op);

// interpolate.cpp
Grads rule(const ir::Interpolate& op, const VjpArgs& args);
SavedValues saved(const ir::Interpolate& op);

// norm.cpp
Grads rule(const ir::LayerNorm& op, const VjpArgs& args);
SavedValues saved(const ir::LayerNorm& op);
Grads rule(const ir::BatchNorm& op, const VjpArgs& args);
SavedValues saved(const ir::BatchNorm& op);

// activation.cpp
Grads rule(const ir::Softmax& op, const VjpArgs& args);
SavedValues saved(const ir::Softmax& op);
Grads rule(const ir::Gelu& op, const VjpArgs& args);
SavedValues saved(const ir::Gelu& op);

// Helpers shared by the rules (src/autodiff/rules/common.cpp).
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
