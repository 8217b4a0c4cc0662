// Huber loss: quadratic for small residuals, linear beyond delta, so outliers
// pull less than with MSE.
//
//   auto huber = burn::nn::loss::HuberLossConfig{}.with_delta(0.5).init();
//   burn::Tensor<1> loss = huber.forward(pred, target, burn::nn::loss::Reduction::Mean);
#pragma once

#include <burn/nn/loss/reduction.hpp>

namespace burn::nn::loss {

struct HuberLoss {
  double delta = 1.0;

  template <std::size_t D>
  Tensor<1> forward(const Tensor<D>& pred, const Tensor<D>& target, Reduction reduction = Reduction::Mean) const {
    return detail::reduce(forward_no_reduction(pred, target).ref(), reduction, "huber_loss");
  }
  /// Per element: 0.5 r^2 if |r| <= delta, else delta (|r| - 0.5 delta), r = target - pred.
  template <std::size_t D>
  Tensor<D> forward_no_reduction(const Tensor<D>& pred, const Tensor<D>& target) const {
    detail::check_same_shape(pred.ref(), target.ref(), "huber_loss", "pred", "target");
    // f32 under autocast (burn/amp/autocast.hpp).
    return forward_residuals(Tensor<D>(amp::detail::float32_input(target.ref())) -
                             Tensor<D>(amp::detail::float32_input(pred.ref())));
  }
  template <std::size_t D>
  Tensor<D> forward_residuals(const Tensor<D>& r) const {
    // clamp(r, -delta, delta) * r equals delta |r| outside the band and has
    // the right gradient (delta * sign r) there.
    const Tensor<D> outside = r.clamp(-delta, delta) * r - 0.5 * delta * delta;
    const Tensor<D> inside = r * r * 0.5;
    return inside.mask_where(r.abs().greater_elem(delta), outside);
  }
};

struct HuberLossConfig {
  double delta = 1.0;

  HuberLossConfig with_delta(double d) const {
    auto c = *this;
    c.delta = d;
    return c;
  }
  /// Throws burn::Error("[HuberLossConfig] ...") unless delta is positive and finite.
  HuberLoss init() const;
};

}  // namespace burn::nn::loss
