// Backward rules of the layout ops: reshape, permute, expand, flip, slice,
// slice_assign, cat and unfold. Each moves the cotangent back to the input's
// layout; only expand and unfold (elements read more than once) accumulate.
#include "autodiff/rules/layout_helpers.hpp"
#include "autodiff/vjp.hpp"

namespace burn::autodiff {

using layout::full_ranges;
using layout::no_grads;
using layout::zeros_shaped;

SavedValues saved(const ir::Reshape&) { return kKeepNothing; }
Grads rule(const ir::Reshape&, const VjpArgs& a) {
  Grads out = no_grads(a);
  if (wants(a, 0)) out[0] = detail::reshape_exact(cotangent_or_zeros(a, 0), a.inputs[0]->spec.shape);
  return out;
}

SavedValues saved(const ir::Permute&) { return kKeepNothing; }
Grads rule(const ir::Permute& op, const VjpArgs& a) {
  Grads out = no_grads(a);
  if (!wants(a, 0)) return out;
  // Output dim i is input dim axes[i], so input dim axes[i] is output dim i.
  std::vector<std::size_t> inverse(op.axes.size());
  for (std::size_t i = 0; i < op.axes.size(); ++i) inverse[op.axes[i]] = i;
  out[0] = detail::execute1(ir::Permute{std::move(inverse)}, {cotangent_or_zeros(a, 0)});
  return out;
}

SavedValues saved(const ir::Expand&) { return kKeepNothing; }
Grads rule(const ir::Expand&, const VjpArgs& a) {
  Grads out = no_grads(a);
  if (wants(a, 0)) out[0] = sum_to_shape(cotangent_or_zeros(a, 0), a.inputs[0]->spec.shape);
  return out;
}

SavedValues saved(const ir::Flip&) { return kKeepNothing; }
Grads rule(const ir::Flip& op, const VjpArgs& a) {
  Grads out = no_grads(a);
  if (wants(a, 0)) out[0] = detail::execute1(ir::Flip{op.axes}, {cotangent_or_zeros(a, 0)});
  return out;
}

SavedValues saved(const ir::Slice&) { return kKeepNothing; }
Grads rule(const ir::Slice& op, const VjpArgs& a) {
  Grads out = no_grads(a);
  if (!wants(a, 0)) return out;
  // Elements outside the slice did not reach the output: their gradient is 0.
  const TensorRef g = cotangent_or_zeros(a, 0);
  out[0] = detail::execute1(ir::SliceAssign{op.ranges}, {zeros_shaped(g, a.inputs[0]->spec.shape), g});
  return out;
}

SavedValues saved(const ir::SliceAssign&) { return kKeepNothing; }
Grads rule(const ir::SliceAssign& op, const VjpArgs& a) {
  Grads out = no_grads(a);
  const bool want_tensor = wants(a, 0), want_values = wants(a, 1);
  if (!want_tensor && !want_values) return out;
  const TensorRef g = cotangent_or_zeros(a, 0);
  // The slice's positions were overwritten by `values`: the tensor's
  // gradient there is 0 and `values` receives what flowed into them.
  if (want_tensor) out[0] = detail::execute1(ir::SliceAssign{op.ranges}, {g, zeros_shaped(g, a.inputs[1]->spec.shape)});
  if (want_values) out[1] = detail::execute1(ir::Slice{op.ranges}, {g});
  return out;
}

SavedValues saved(const ir::Cat&) { return kKeepNothing; }
Grads rule(const ir::Cat& op, const VjpArgs& a) {
  Grads out = no_grads(a);
  const TensorRef g = cotangent_or_zeros(a, 0);
  auto ranges = full_ranges(g->spec.shape);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    const std::size_t len = a.inputs[i]->spec.shape[op.dim];
    if (wants(a, i)) {
      ranges[op.dim] = {offset, len, 1};
      out[i] = detail::execute1(ir::Slice{ranges}, {g});
    }
    offset += len;
  }
  return out;
}

SavedValues saved(const ir::Unfold&) { return kKeepNothing; }
Grads rule(const ir::Unfold& op, const VjpArgs& a) {
  Grads out = no_grads(a);
  if (!wants(a, 0)) return out;
  const TensorRef g = cotangent_or_zeros(a, 0);
  const Shape& in_shape = a.inputs[0]->spec.shape;
  const std::size_t rank = in_shape.rank();
  const std::size_t windows = g->spec.shape[op.dim];
  if (g->spec.shape.num_elements() == 0) {
    out[0] = zeros_shaped(g, in_shape);
    return out;
  }

  // Lay the windows out flat along dim: [..., windows, ..., size] ->
  // [..., windows, size, ...] -> [..., windows * size, ...].
  std::vector<std::size_t> axes;
  axes.reserve(rank + 1);
  for (std::size_t d = 0; d <= op.dim; ++d) axes.push_back(d);
  axes.push_back(rank);
  for (std::size_t d = op.dim + 1; d < rank; ++d) axes.push_back(d);
  Shape flat_shape = in_shape;
  flat_shape[op.dim] = windows * op.size;
  const TensorRef flat = detail::reshape_exact(detail::execute1(ir::Permute{std::move(axes)}, {g}), flat_shape);

  // The input position each flattened window element was read from: the
  // positions 0..n-1 of dim, unfolded exactly as the forward op did.
  const std::size_t n = in_shape[op.dim];
  const DType index_dtype = layout::index_dtype_for(g->device, n);
  const TensorRef positions = detail::create(ir::Arange{0, static_cast<std::int64_t>(n), 1, index_dtype}, g->device);
  const TensorRef unfolded = detail::execute1(ir::Unfold{0, op.size, op.step}, {positions});
  Shape index_shape(std::vector<std::size_t>(rank, 1));
  index_shape[op.dim] = windows * op.size;
  const TensorRef index = detail::execute1(ir::Expand{flat_shape}, {detail::reshape_exact(unfolded, index_shape)});

  // Scatter-add: overlapping windows (step < size) accumulate, positions no
  // window covers (step > size, or a tail) stay 0.
  out[0] = detail::execute1(ir::Scatter{op.dim, ir::IndexReduce::Add}, {zeros_shaped(g, in_shape), index, flat});
  return out;
}

}  // namespace burn::autodiff
