#include <fmt/format.h>

#include <burn/amp/autocast.hpp>
#include <burn/nn/rms_norm.hpp>

namespace burn::nn {

RmsNorm RmsNormConfig::init(const TensorCreationOptions& options) const {
  if (d_model == 0) throw Error("RmsNormConfig", "d_model must be positive");
  if (!(epsilon > 0.0)) throw Error("RmsNormConfig", fmt::format("epsilon must be positive, got {}", epsilon));
  return RmsNorm{module::Param(Tensor<1>::ones(Shape{d_model}, options)), epsilon};
}

namespace detail {

burn::detail::TensorRef rms_norm(const RmsNorm& layer, const burn::detail::TensorRef& x_in) {
  const burn::detail::TensorRef x_ref = amp::detail::float32_input(x_in);
  const Shape& shape = x_ref->spec.shape;
  const std::size_t d = layer.weight->dims()[0];
  if (shape[shape.rank() - 1] != d)
    throw Error("RmsNorm", fmt::format("input {} has {} features in its last dim but the layer has {}",
                                       shape.to_string(), shape[shape.rank() - 1], d));
  // Rows of [rows, d_model]: one reduction whatever the input's rank.
  const std::size_t rows = d ? shape.num_elements() / d : 0;
  const Tensor<2> x(burn::detail::reshape_exact(x_ref, Shape{rows, d}));
  const Tensor<2> y = x * ((x * x).mean_dim(1) + layer.epsilon).rsqrt() * layer.weight->unsqueeze<2>();
  return burn::detail::reshape_exact(y.ref(), shape);
}

}  // namespace detail

}  // namespace burn::nn
