// Gradient clipping, applied by an optimiser before its update rule.
//
//   SgdConfig{}.with_gradient_clipping(GradientClippingConfig::norm(1.0))         // Burn: each parameter's own norm
//   AdamConfig{}.with_grad_clipping(GradientClippingConfig::global_norm(1.0))      // PyTorch's clip_grad_norm_
//
// value(t): every element into [-t, t]. norm(n): each gradient scaled so its
// own L2 norm is at most n (Burn's semantics). global_norm(n): all gradients
// of one step scaled together so their joint L2 norm is at most n, with
// PyTorch's coefficient n / (total + 1e-6) capped at 1.
#pragma once

#include <burn/tensor.hpp>

namespace burn::optim {

class GradientsParams;

class GradientClippingConfig {
 public:
  enum class Kind { Value, Norm, GlobalNorm };

  /// Each of these throws burn::Error("[GradientClippingConfig] ...") unless the
  /// threshold is positive and finite.
  static GradientClippingConfig value(double threshold);
  static GradientClippingConfig norm(double max_norm);
  static GradientClippingConfig global_norm(double max_norm);

  Kind kind() const noexcept { return kind_; }
  double threshold() const noexcept { return threshold_; }
  bool is_per_parameter() const noexcept { return kind_ != Kind::GlobalNorm; }

  /// Clips one gradient by value or by its own norm (identity for GlobalNorm,
  /// which needs every gradient: use clip_all).
  burn::detail::TensorRef clip(const burn::detail::TensorRef& grad) const;
  template <std::size_t D>
  Tensor<D> clip(const Tensor<D>& grad) const {
    return Tensor<D>(clip(grad.ref()));
  }
  /// Clips every gradient in `grads` (any kind; GlobalNorm uses them jointly).
  void clip_all(GradientsParams& grads) const;

 private:
  GradientClippingConfig(Kind kind, double threshold) : kind_(kind), threshold_(threshold) {}
  Kind kind_;
  double threshold_;
};

namespace detail {
/// Scales `grads` in place so their joint L2 norm is at most max_norm
/// (PyTorch's clip_grad_norm_); no host synchronisation.
void clip_global_norm(std::vector<burn::detail::TensorRef>& grads, double max_norm);
}  // namespace detail

}  // namespace burn::optim
