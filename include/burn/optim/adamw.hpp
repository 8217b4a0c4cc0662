// AdamW (Loshchilov & Hutter): Adam with decoupled weight decay, as Burn and
// PyTorch compute it:
//   param = param * (1 - lr * weight_decay) - lr * m_hat / (sqrt(v_hat) + eps)
//
// Defaults are Burn's: epsilon 1e-5, weight_decay 1e-4 (PyTorch: 1e-8, 1e-2).
#pragma once

#include <burn/optim/grad_clipping.hpp>
#include <burn/optim/optimizer.hpp>
#include <optional>

namespace burn::optim {

struct AdamWConfig {
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-5;
  double weight_decay = 1e-4;
  bool amsgrad = false;
  std::optional<GradientClippingConfig> grad_clipping;

  AdamWConfig with_beta_1(double b) const {
    auto c = *this;
    c.beta_1 = b;
    return c;
  }
  AdamWConfig with_beta_2(double b) const {
    auto c = *this;
    c.beta_2 = b;
    return c;
  }
  AdamWConfig with_epsilon(double e) const {
    auto c = *this;
    c.epsilon = e;
    return c;
  }
  AdamWConfig with_weight_decay(double w) const {
    auto c = *this;
    c.weight_decay = w;
    return c;
  }
  AdamWConfig with_amsgrad(bool a) const {
    auto c = *this;
    c.amsgrad = a;
    return c;
  }
  AdamWConfig with_grad_clipping(std::optional<GradientClippingConfig> g) const {
    auto c = *this;
    c.grad_clipping = g;
    return c;
  }
  AdamWConfig with_gradient_clipping(std::optional<GradientClippingConfig> g) const { return with_grad_clipping(g); }
  /// torch.optim.AdamW's defaults: epsilon 1e-8 and weight decay 1e-2
  /// (Burn's are 1e-5 and 1e-4); betas agree.
  static AdamWConfig pytorch_defaults() { return AdamWConfig{}.with_epsilon(1e-8).with_weight_decay(1e-2); }
  /// Throws burn::Error("[AdamWConfig] ...") for betas outside [0, 1), a
  /// negative epsilon or weight decay.
  Optimizer init() const;
};

}  // namespace burn::optim
