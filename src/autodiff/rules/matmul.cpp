// Backward rule of matmul: [..., m, k] x [..., k, n] -> [..., m, n] with
// broadcast batch dims. dA = g B^T and dB = A^T g, each summed over the batch
// dims its input was broadcast along.
#include <numeric>

#include "autodiff/rules/math_helpers.hpp"

namespace burn::autodiff {

using namespace math;

namespace {

/// Swaps the last two dims.
TensorRef transpose_last(const TensorRef& t) {
  std::vector<std::size_t> axes(t->spec.shape.rank());
  std::iota(axes.begin(), axes.end(), std::size_t{0});
  std::swap(axes[axes.size() - 1], axes[axes.size() - 2]);
  return detail::execute1(ir::Permute{std::move(axes)}, {t});
}

}  // namespace

SavedValues saved(const ir::Matmul&) { return kKeepInputs01; }  // never the output
Grads rule(const ir::Matmul&, const VjpArgs& args) {
  Grads out(args.inputs.size());
  const TensorRef& a = args.inputs[0];
  const TensorRef& b = args.inputs[1];
  const TensorRef g = cotangent_or_zeros(args, 0);
  if (wants(args, 0)) out[0] = sum_to_shape(detail::matmul(g, transpose_last(b)), a->spec.shape);
  if (wants(args, 1)) out[1] = sum_to_shape(detail::matmul(transpose_last(a), g), b->spec.shape);
  return out;
}

}  // namespace burn::autodiff
