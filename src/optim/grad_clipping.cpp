#include <fmt/format.h>

#include <burn/optim/grad_clipping.hpp>
#include <burn/optim/gradients_params.hpp>
#include <cfloat>
#include <cmath>

namespace burn::optim {

namespace {

using burn::detail::TensorRef;

GradientClippingConfig::Kind checked(GradientClippingConfig::Kind kind, double threshold, const char* what) {
  if (!(threshold > 0.0) || !std::isfinite(threshold))
    throw Error("GradientClippingConfig", fmt::format("{} must be positive and finite, got {}", what, threshold));
  return kind;
}

/// The smallest positive normal value of a float dtype (Burn adds it to the
/// norm so a zero gradient never divides by zero).
double min_positive(DType d) {
  switch (d) {
    case DType::F64: return DBL_MIN;
    case DType::F16: return 6.103515625e-05;
    default: return FLT_MIN;
  }
}

/// A one-element tensor reshaped to `like`'s rank so it broadcasts over it.
TensorRef broadcastable(const TensorRef& scalar, const TensorRef& like) {
  TensorRef s = scalar;
  if (!(s->device == like->device)) s = burn::detail::to_device(s, like->device);
  if (s->spec.dtype != like->spec.dtype) s = burn::detail::cast(s, like->spec.dtype);
  return burn::detail::reshape_exact(s, Shape(std::vector<std::size_t>(like->spec.shape.rank(), 1)));
}

TensorRef sum_of_squares(const TensorRef& g) {
  return burn::detail::reduce_all(ir::ReduceOp::Sum, burn::detail::binary(ir::BinaryOp::Mul, g, g));
}

}  // namespace

GradientClippingConfig GradientClippingConfig::value(double threshold) {
  return {checked(Kind::Value, threshold, "the clipping value"), threshold};
}
GradientClippingConfig GradientClippingConfig::norm(double max_norm) {
  return {checked(Kind::Norm, max_norm, "the maximum norm"), max_norm};
}
GradientClippingConfig GradientClippingConfig::global_norm(double max_norm) {
  return {checked(Kind::GlobalNorm, max_norm, "the maximum global norm"), max_norm};
}

TensorRef GradientClippingConfig::clip(const TensorRef& grad) const {
  switch (kind_) {
    case Kind::Value: return burn::detail::clamp(grad, -threshold_, threshold_);
    case Kind::Norm: {
      const TensorRef norm = burn::detail::unary(ir::UnaryOp::Sqrt, sum_of_squares(grad));
      const TensorRef coef =
          burn::detail::clamp(burn::detail::scalar_binary(
                                  ir::BinaryOp::Div, threshold_,
                                  burn::detail::binary_scalar(ir::BinaryOp::Add, norm, min_positive(grad->spec.dtype))),
                              std::nullopt, 1.0);
      return burn::detail::binary(ir::BinaryOp::Mul, grad, broadcastable(coef, grad));
    }
    case Kind::GlobalNorm: break;
  }
  return grad;
}

void GradientClippingConfig::clip_all(GradientsParams& grads) const {
  if (kind_ == Kind::GlobalNorm) {
    std::vector<TensorRef> all;
    for (auto& [id, g] : grads.items()) all.push_back(g);
    detail::clip_global_norm(all, threshold_);
    std::size_t i = 0;
    for (auto& [id, g] : grads.items()) g = all[i++];
    return;
  }
  for (auto& [id, g] : grads.items()) g = clip(g);
}

namespace detail {

void clip_global_norm(std::vector<TensorRef>& grads, double max_norm) {
  if (grads.empty()) return;
  // Accumulate on the first gradient's device and dtype; gradients may live
  // on several devices, and the result never leaves the devices (no sync).
  const TensorRef& first = grads.front();
  TensorRef total;
  for (const auto& g : grads) {
    TensorRef part = sum_of_squares(g);
    if (!(part->device == first->device)) part = burn::detail::to_device(part, first->device);
    if (part->spec.dtype != first->spec.dtype) part = burn::detail::cast(part, first->spec.dtype);
    total = total ? burn::detail::binary(ir::BinaryOp::Add, total, part) : part;
  }
  const TensorRef norm = burn::detail::unary(ir::UnaryOp::Sqrt, total);
  const TensorRef coef =
      burn::detail::clamp(burn::detail::scalar_binary(ir::BinaryOp::Div, max_norm,
                                                      burn::detail::binary_scalar(ir::BinaryOp::Add, norm, 1e-6)),
                          std::nullopt, 1.0);
  for (auto& g : grads) g = burn::detail::binary(ir::BinaryOp::Mul, g, broadcastable(coef, g));
}

}  // namespace detail

}  // namespace burn::optim
