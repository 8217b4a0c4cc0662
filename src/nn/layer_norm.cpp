#include <burn/nn/layer_norm.hpp>

#include <fmt/format.h>

namespace burn::nn {

LayerNorm LayerNormConfig::init(const TensorCreationOptions& options) const {
  if (d_model == 0) throw Error("LayerNormConfig", "d_model must be positive");
  if (!(epsilon > 0.0)) throw Error("LayerNormConfig", fmt::format("epsilon must be positive, got {}", epsilon));
  return LayerNorm{module::Param(Tensor<1>::ones(Shape{d_model}, options)),
                   module::Param(Tensor<1>::zeros(Shape{d_model}, options)), epsilon};
}

}  // namespace burn::nn
