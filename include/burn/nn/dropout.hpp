// Dropout: in training, zeroes each element with probability `prob` and
// scales the rest by 1 / (1 - prob); in evaluation it is the identity.
// Training is decided by the layer's TrainingMode (module/module.hpp).
#pragma once

#include <burn/module/module.hpp>

namespace burn::nn {

namespace detail {
burn::detail::TensorRef dropout(const burn::detail::TensorRef& x, double prob);
}

struct Dropout {
  double prob = 0.5;
  module::TrainingMode training;
  BURN_MODULE(training)

  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    if (prob == 0.0 || !training.is_training(x)) return x;
    return Tensor<D>(detail::dropout(x.ref(), prob));
  }
};

struct DropoutConfig {
  double prob = 0.5;
  /// Throws burn::Error("[DropoutConfig] ...") unless 0 <= prob <= 1.
  Dropout init() const;
};

}  // namespace burn::nn
