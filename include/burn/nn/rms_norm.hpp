// RmsNorm over the last dim: x / sqrt(mean(x^2) + epsilon) * weight
// (Burn's RmsNorm; Zhang & Sennrich 2019). No centring and no bias.
//
//   auto norm = burn::nn::RmsNormConfig{512}.init(device);
//   burn::Tensor<3> y = norm.forward(x);   // x [batch, seq, 512]
#pragma once

#include <burn/module/module.hpp>

namespace burn::nn {

struct RmsNorm;
namespace detail {
burn::detail::TensorRef rms_norm(const RmsNorm& layer, const burn::detail::TensorRef& x);
}

struct RmsNorm {
  module::Param<Tensor<1>> weight;  // [d_model], ones (Burn's gamma)
  double epsilon = 1e-5;
  BURN_MODULE(weight)

  /// x [..., d_model] -> the same shape; a wrong last dim is a burn::Error("[RmsNorm] ...").
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return Tensor<D>(detail::rms_norm(*this, x.ref()));
  }
};

struct RmsNormConfig {
  std::size_t d_model = 0;
  double epsilon = 1e-5;
  RmsNormConfig with_epsilon(double e) const {
    auto c = *this;
    c.epsilon = e;
    return c;
  }
  /// Throws burn::Error("[RmsNormConfig] ...") for d_model 0 or epsilon <= 0.
  RmsNorm init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
