// Backward rules of the indexing ops: gather, scatter, select, select_assign,
// mask_where and mask_fill. Indices and masks never get a gradient.
#include "autodiff/rules/layout_helpers.hpp"
#include "autodiff/vjp.hpp"

namespace burn::autodiff {

using layout::no_grads;
using layout::zeros_shaped;

SavedValues saved(const ir::Gather&) { return kKeepInput1; }  // the indices
Grads rule(const ir::Gather& op, const VjpArgs& a) {
  Grads out = no_grads(a);
  if (!wants(a, 0)) return out;
  // An element gathered several times receives the sum of its cotangents.
  const TensorRef g = cotangent_or_zeros(a, 0);
  out[0] = detail::execute1(ir::Scatter{op.dim, ir::IndexReduce::Add},
                            {zeros_shaped(g, a.inputs[0]->spec.shape), a.inputs[1], g});
  return out;
}

SavedValues saved(const ir::Scatter&) { return kKeepInput1; }  // the indices
Grads rule(const ir::Scatter& op, const VjpArgs& a) {
  Grads out = no_grads(a);
  const bool want_tensor = wants(a, 0), want_values = wants(a, 2);
  if (!want_tensor && !want_values) return out;
  const TensorRef g = cotangent_or_zeros(a, 0);
  const TensorRef& indices = a.inputs[1];
  if (want_tensor) {
    if (op.reduce == ir::IndexReduce::Add) {
      out[0] = g;
    } else {
      // Overwritten positions no longer depend on the tensor.
      out[0] = detail::execute1(ir::Scatter{op.dim, ir::IndexReduce::Assign},
                                {g, indices, zeros_shaped(g, a.inputs[2]->spec.shape)});
    }
  }
  // Both reductions: each value reaches the output at its index (for Assign
  // with duplicate indices PyTorch makes the same choice: every duplicate
  // gets the cotangent of the position it targeted).
  if (want_values) out[2] = detail::execute1(ir::Gather{op.dim}, {g, indices});
  return out;
}

SavedValues saved(const ir::Select&) { return kKeepInput1; }  // the indices
Grads rule(const ir::Select& op, const VjpArgs& a) {
  Grads out = no_grads(a);
  if (!wants(a, 0)) return out;
  // Add, so an entry selected several times accumulates its cotangents.
  const TensorRef g = cotangent_or_zeros(a, 0);
  out[0] = detail::execute1(ir::SelectAssign{op.dim, ir::IndexReduce::Add},
                            {zeros_shaped(g, a.inputs[0]->spec.shape), a.inputs[1], g});
  return out;
}

SavedValues saved(const ir::SelectAssign&) { return kKeepInput1; }  // the indices
Grads rule(const ir::SelectAssign& op, const VjpArgs& a) {
  Grads out = no_grads(a);
  const bool want_tensor = wants(a, 0), want_values = wants(a, 2);
  if (!want_tensor && !want_values) return out;
  const TensorRef g = cotangent_or_zeros(a, 0);
  const TensorRef& indices = a.inputs[1];
  if (want_tensor) {
    if (op.reduce == ir::IndexReduce::Add) {
      out[0] = g;
    } else {
      // Overwritten entries no longer depend on the tensor.
      out[0] = detail::execute1(ir::SelectAssign{op.dim, ir::IndexReduce::Assign},
                                {g, indices, zeros_shaped(g, a.inputs[2]->spec.shape)});
    }
  }
  if (want_values) out[2] = detail::execute1(ir::Select{op.dim}, {g, indices});
  return out;
}

SavedValues saved(const ir::MaskWhere&) { return kKeepInput1; }  // the mask
Grads rule(const ir::MaskWhere&, const VjpArgs& a) {
  Grads out = no_grads(a);
  const bool want_tensor = wants(a, 0), want_source = wants(a, 2);
  if (!want_tensor && !want_source) return out;
  const TensorRef g = cotangent_or_zeros(a, 0);
  const TensorRef& mask = a.inputs[1];
  // The output is broadcast from all three inputs; each gradient is summed
  // back to its input's shape.
  if (want_tensor) out[0] = sum_to_shape(detail::mask_fill(g, mask, 0.0), a.inputs[0]->spec.shape);
  if (want_source)
    out[2] = sum_to_shape(detail::mask_where(zeros_shaped(g, g->spec.shape), mask, g), a.inputs[2]->spec.shape);
  return out;
}

SavedValues saved(const ir::MaskFill&) { return kKeepInput1; }  // the mask
Grads rule(const ir::MaskFill&, const VjpArgs& a) {
  Grads out = no_grads(a);
  if (!wants(a, 0)) return out;
  // Filled positions are constants; the output may be broadcast over the mask.
  // relu's backward: the cotangent is read once, so it is taken, and the
  // fill runs in its storage when nothing else holds it.
  out[0] = sum_to_shape(detail::mask_fill(take_cotangent_or_zeros(a, 0), a.inputs[1], 0.0), a.inputs[0]->spec.shape);
  return out;
}

}  // namespace burn::autodiff
