// LayerNorm over the last dim: (x - mean) / sqrt(var + eps) * weight + bias,
// with the biased variance (as Burn and PyTorch).
#pragma once

#include <burn/amp/autocast.hpp>
#include <burn/module/module.hpp>
#include <burn/module/ops.hpp>

namespace burn::nn {

struct LayerNorm {
  module::Param<Tensor<1>> weight;  // [d_model], ones (Burn's gamma)
  module::Param<Tensor<1>> bias;    // [d_model], zeros (Burn's beta)
  double epsilon = 1e-5;
  BURN_MODULE(weight, bias)

  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x_in) const {
    // Under autocast (burn/amp/autocast.hpp) the statistics are computed in f32.
    const Tensor<D> x(amp::detail::float32_input(x_in.ref()));
    return module::layer_norm(x, *weight, *bias, epsilon);
  }
};

struct LayerNormConfig {
  std::size_t d_model = 0;
  double epsilon = 1e-5;
  LayerNormConfig with_epsilon(double e) const {
    auto c = *this;
    c.epsilon = e;
    return c;
  }
  /// Throws burn::Error("[LayerNormConfig] ...") for d_model 0 or epsilon <= 0.
  LayerNorm init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
