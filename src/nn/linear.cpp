#include <burn/nn/linear.hpp>

#include <fmt/format.h>

namespace burn::nn {

Linear LinearConfig::init(const TensorCreationOptions& options) const {
  if (d_input == 0 || d_output == 0)
    throw Error("LinearConfig", fmt::format("d_input and d_output must be positive, got {} and {}", d_input, d_output));
  Linear layer{module::Param(initializer.init<2>(Shape{d_input, d_output}, options, d_input, d_output)), std::nullopt};
  if (bias) layer.bias.emplace(initializer.init<1>(Shape{d_output}, options, d_input, d_output));
  return layer;
}

}  // namespace burn::nn
