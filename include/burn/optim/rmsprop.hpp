// RMSProp (Hinton), optionally centered and with momentum, computed as Burn
// and PyTorch do:
//   g = grad + penalty * param
//   s = alpha s + (1 - alpha) g^2                         (from zero)
//   centered: a = alpha a + (1 - alpha) g,  avg = s - a^2  (else avg = s)
//   u = g / (sqrt(avg) + eps);  momentum: b = momentum b + u, u = b
//   param -= lr * u
//
// Defaults: alpha 0.99 and epsilon 1e-5 as Burn; momentum 0 as PyTorch
// (Burn's 0.9 is rarely what an RMSProp user expects).
#pragma once

#include <burn/optim/grad_clipping.hpp>
#include <burn/optim/optimizer.hpp>
#include <burn/optim/weight_decay.hpp>
#include <optional>

namespace burn::optim {

struct RmsPropConfig {
  double alpha = 0.99;
  double epsilon = 1e-5;
  bool centered = false;
  double momentum = 0.0;
  std::optional<WeightDecayConfig> weight_decay;
  std::optional<GradientClippingConfig> grad_clipping;

  RmsPropConfig with_alpha(double a) const {
    auto c = *this;
    c.alpha = a;
    return c;
  }
  RmsPropConfig with_epsilon(double e) const {
    auto c = *this;
    c.epsilon = e;
    return c;
  }
  RmsPropConfig with_centered(bool b) const {
    auto c = *this;
    c.centered = b;
    return c;
  }
  RmsPropConfig with_momentum(double m) const {
    auto c = *this;
    c.momentum = m;
    return c;
  }
  RmsPropConfig with_weight_decay(std::optional<WeightDecayConfig> w) const {
    auto c = *this;
    c.weight_decay = w;
    return c;
  }
  RmsPropConfig with_grad_clipping(std::optional<GradientClippingConfig> g) const {
    auto c = *this;
    c.grad_clipping = g;
    return c;
  }
  RmsPropConfig with_gradient_clipping(std::optional<GradientClippingConfig> g) const { return with_grad_clipping(g); }
  /// torch.optim.RMSprop's defaults: epsilon 1e-8 (Burn's is 1e-5); alpha,
  /// momentum and centered agree.
  static RmsPropConfig pytorch_defaults() { return RmsPropConfig{}.with_epsilon(1e-8); }
  /// Throws burn::Error("[RmsPropConfig] ...") for alpha outside [0, 1] or a
  /// negative epsilon, momentum or penalty.
  Optimizer init() const;
};

}  // namespace burn::optim
