#include "autodiff/vjp.hpp"

namespace burn::autodiff {

TensorRef zeros_like(const TensorRef& t) { return full_like(t, 0.0); }

TensorRef full_like(const TensorRef& t, Scalar value) {
  return detail::create(ir::Full{t->spec.shape, value, t->spec.dtype}, t->device);
}

TensorRef cotangent_or_zeros(const VjpArgs& args, std::size_t i) {
  if (i < args.cotangents.size() && args.cotangents[i]) return *args.cotangents[i];
  return zeros_like(args.outputs[i]);
}

TensorRef take_cotangent_or_zeros(const VjpArgs& args, std::size_t i) {
  if (i < args.cotangents.size() && args.cotangents[i]) {
    TensorRef g = std::move(*args.cotangents[i]);
    args.cotangents[i].reset();
    return g;
  }
  return zeros_like(args.outputs[i]);
}

TensorRef sum_to_shape(const TensorRef& grad, const Shape& shape) {
  TensorRef g = grad;
  for (std::size_t d = 0; d < shape.rank(); ++d)
    if (shape[d] == 1 && g->spec.shape[d] != 1)
      g = detail::reduce_dim(ir::ReduceOp::Sum, g, static_cast<std::int64_t>(d));
  return g;
}

}  // namespace burn::autodiff
