// Stochastic gradient descent with optional momentum (Nesterov or not) and
// L2 weight decay, as Burn and PyTorch compute it:
//   g = grad + penalty * param
//   v = g on the first step, else momentum * v + (1 - dampening) * g
//   g = nesterov ? g + momentum * v : v
//   param -= lr * g
//
//   auto optim = burn::optim::SgdConfig{}.with_momentum(burn::optim::MomentumConfig{}).init();
#pragma once

#include <burn/optim/grad_clipping.hpp>
#include <burn/optim/optimizer.hpp>
#include <burn/optim/weight_decay.hpp>
#include <optional>

namespace burn::optim {

/// Burn's defaults (PyTorch's dampening default is 0).
struct MomentumConfig {
  double momentum = 0.9;
  double dampening = 0.1;
  bool nesterov = false;

  /// torch.optim.SGD(momentum=m)'s momentum: no dampening (Burn's default
  /// dampening is 0.1), not Nesterov. PyTorch has no default momentum (0
  /// means none): pass the one the PyTorch code sets.
  static MomentumConfig pytorch_defaults(double momentum) { return {momentum, 0.0, false}; }
};

struct SgdConfig {
  std::optional<WeightDecayConfig> weight_decay;
  std::optional<MomentumConfig> momentum;
  std::optional<GradientClippingConfig> gradient_clipping;

  SgdConfig with_weight_decay(std::optional<WeightDecayConfig> w) const {
    auto c = *this;
    c.weight_decay = w;
    return c;
  }
  SgdConfig with_momentum(std::optional<MomentumConfig> m) const {
    auto c = *this;
    c.momentum = m;
    return c;
  }
  SgdConfig with_gradient_clipping(std::optional<GradientClippingConfig> g) const {
    auto c = *this;
    c.gradient_clipping = g;
    return c;
  }
  SgdConfig with_grad_clipping(std::optional<GradientClippingConfig> g) const { return with_gradient_clipping(g); }
  /// Throws burn::Error("[SgdConfig] ...") for a negative or non-finite
  /// momentum, dampening or penalty.
  Optimizer init() const;
};

}  // namespace burn::optim
