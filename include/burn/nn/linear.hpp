// Linear: y = x W + b over the last dim, W stored [d_input, d_output] (Burn's
// layout; PyTorch stores the transpose, which the PyTorch record adapter handles).
//
//   auto fc = burn::nn::LinearConfig{784, 128}.with_bias(true).init(device);
//   burn::Tensor<2> y = fc.forward(x);   // x [batch, 784] -> [batch, 128]
#pragma once

#include <optional>

#include <burn/module/module.hpp>
#include <burn/module/ops.hpp>
#include <burn/nn/initializer.hpp>

namespace burn::nn {

struct Linear {
  module::Param<Tensor<2>> weight;  // [d_input, d_output]
  std::optional<module::Param<Tensor<1>>> bias;

  // BURN_MODULE(weight, bias) written out, so that the weight is flagged as
  // transposed relative to PyTorch however the layer was built (a config or
  // a hand-made Param); the PyTorch record adapter relies on it.
  void visit_fields(module::Visitor& visitor, const std::string& prefix) {
    weight.set_pytorch_transposed(true);
    module::detail::visit_named(visitor, prefix, "weight, bias", weight, bias);
  }
  BURN_MODULE_METHODS

  /// x [..., d_input] -> [..., d_output].
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return module::linear(x, weight.val(), bias ? std::optional<Tensor<1>>(bias->val()) : std::nullopt);
  }
};

struct LinearConfig {
  std::size_t d_input = 0;
  std::size_t d_output = 0;
  bool bias = true;
  /// PyTorch's default: uniform in ±1/sqrt(d_input), for weight and bias.
  Initializer initializer = Initializer::kaiming_uniform();

  LinearConfig with_bias(bool b) const {
    auto c = *this;
    c.bias = b;
    return c;
  }
  LinearConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }
  /// Throws burn::Error("[LinearConfig] ...") for a zero size.
  Linear init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
