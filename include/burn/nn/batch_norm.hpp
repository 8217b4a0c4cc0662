// BatchNorm over the channel dim (dim 1) of [batch, channels, ...] inputs,
// for any rank >= 2 (Burn's BatchNorm<D>; PyTorch's BatchNorm1d/2d/3d):
//
//   auto bn = burn::nn::BatchNormConfig{32}.init(device);
//   burn::Tensor<4> y = bn.forward(x);   // x [batch, 32, h, w]
//
// Training normalises with the batch statistics (biased variance) and moves
// the running statistics towards them: running = (1 - momentum) * running +
// momentum * batch, with the unbiased variance for running_var (PyTorch's
// rule). Evaluation normalises with the running statistics. Which one applies
// is decided by `training` (Auto: training on an autodiff device while
// gradients are recorded; module.train()/eval() force it).
#pragma once

#include <burn/module/module.hpp>

namespace burn::nn {

struct BatchNorm;
namespace detail {
burn::detail::TensorRef batch_norm(const BatchNorm& layer, const burn::detail::TensorRef& x, bool training);
}

struct BatchNorm {
  module::Param<Tensor<1>> weight;               // [num_features], ones (Burn's gamma)
  module::Param<Tensor<1>> bias;                 // [num_features], zeros (Burn's beta)
  module::RunningState<Tensor<1>> running_mean;  // zeros
  module::RunningState<Tensor<1>> running_var;   // ones
  double momentum = 0.1;
  double epsilon = 1e-5;
  module::TrainingMode training;
  BURN_MODULE(weight, bias, running_mean, running_var, training)

  /// x [batch, num_features, ...] -> the same shape. A wrong channel count,
  /// or training on a single value per channel, is a burn::Error("[BatchNorm] ...").
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    static_assert(D >= 2, "BatchNorm needs [batch, channels, ...] inputs");
    return Tensor<D>(detail::batch_norm(*this, x.ref(), training.is_training(x)));
  }
};

struct BatchNormConfig {
  std::size_t num_features = 0;
  double epsilon = 1e-5;
  double momentum = 0.1;
  BatchNormConfig with_epsilon(double e) const {
    auto c = *this;
    c.epsilon = e;
    return c;
  }
  BatchNormConfig with_momentum(double m) const {
    auto c = *this;
    c.momentum = m;
    return c;
  }
  /// Throws burn::Error("[BatchNormConfig] ...") for num_features 0, epsilon <= 0
  /// or momentum outside [0, 1].
  BatchNorm init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
