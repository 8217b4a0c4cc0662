// Adam (Kingma & Ba) with optional L2 weight decay folded into the gradient
// and AMSGrad, computed as Burn and PyTorch do:
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2   (from zero)
//   param -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
//
// epsilon defaults to Burn's 1e-5 (PyTorch uses 1e-8; set it for parity).
#pragma once

#include <burn/optim/grad_clipping.hpp>
#include <burn/optim/optimizer.hpp>
#include <burn/optim/weight_decay.hpp>
#include <optional>

namespace burn::optim {

struct AdamConfig {
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-5;
  /// Divide by the running maximum of v (Reddi et al.).
  bool amsgrad = false;
  std::optional<WeightDecayConfig> weight_decay;
  std::optional<GradientClippingConfig> grad_clipping;

  AdamConfig with_beta_1(double b) const {
    auto c = *this;
    c.beta_1 = b;
    return c;
  }
  AdamConfig with_beta_2(double b) const {
    auto c = *this;
    c.beta_2 = b;
    return c;
  }
  AdamConfig with_epsilon(double e) const {
    auto c = *this;
    c.epsilon = e;
    return c;
  }
  AdamConfig with_amsgrad(bool a) const {
    auto c = *this;
    c.amsgrad = a;
    return c;
  }
  AdamConfig with_weight_decay(std::optional<WeightDecayConfig> w) const {
    auto c = *this;
    c.weight_decay = w;
    return c;
  }
  AdamConfig with_grad_clipping(std::optional<GradientClippingConfig> g) const {
    auto c = *this;
    c.grad_clipping = g;
    return c;
  }
  AdamConfig with_gradient_clipping(std::optional<GradientClippingConfig> g) const { return with_grad_clipping(g); }
  /// torch.optim.Adam's defaults, for a port that must match PyTorch:
  /// epsilon 1e-8 (Burn's is 1e-5); betas and weight decay agree.
  static AdamConfig pytorch_defaults() { return AdamConfig{}.with_epsilon(1e-8); }
  /// Throws burn::Error("[AdamConfig] ...") for betas outside [0, 1), a
  /// negative epsilon or penalty.
  Optimizer init() const;
};

}  // namespace burn::optim
