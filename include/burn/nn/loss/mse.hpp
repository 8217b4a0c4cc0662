// Mean squared error: (pred - target)^2, reduced.
//
//   burn::nn::loss::MseLoss mse;
//   burn::Tensor<1> loss = mse.forward(pred, target, burn::nn::loss::Reduction::Mean);
#pragma once

#include <burn/nn/loss/reduction.hpp>

namespace burn::nn::loss {

struct MseLoss {
  /// Mean or sum of the squared errors as shape [1]; pred and target must have equal shapes.
  template <std::size_t D>
  Tensor<1> forward(const Tensor<D>& pred, const Tensor<D>& target, Reduction reduction = Reduction::Mean) const {
    return detail::reduce(forward_no_reduction(pred, target).ref(), reduction, "mse_loss");
  }
  /// The squared error of every element.
  template <std::size_t D>
  Tensor<D> forward_no_reduction(const Tensor<D>& pred, const Tensor<D>& target) const {
    detail::check_same_shape(pred.ref(), target.ref(), "mse_loss", "pred", "target");
    // f32 under autocast (burn/amp/autocast.hpp).
    const Tensor<D> diff =
        Tensor<D>(amp::detail::float32_input(pred.ref())) - Tensor<D>(amp::detail::float32_input(target.ref()));
    return diff * diff;
  }
};

}  // namespace burn::nn::loss
