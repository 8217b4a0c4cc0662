#include <fmt/format.h>

#include <burn/amp/autocast.hpp>
#include <burn/nn/group_norm.hpp>

namespace burn::nn {

GroupNorm GroupNormConfig::init(const TensorCreationOptions& options) const {
  if (num_groups == 0 || num_channels == 0)
    throw Error("GroupNormConfig",
                fmt::format("num_groups and num_channels must be positive, got {} and {}", num_groups, num_channels));
  if (num_channels % num_groups)
    throw Error("GroupNormConfig",
                fmt::format("num_channels ({}) must be divisible by num_groups ({})", num_channels, num_groups));
  if (!(epsilon > 0.0)) throw Error("GroupNormConfig", fmt::format("epsilon must be positive, got {}", epsilon));
  GroupNorm layer{std::nullopt, std::nullopt, num_groups, num_channels, epsilon};
  if (affine) {
    layer.weight.emplace(Tensor<1>::ones(Shape{num_channels}, options));
    layer.bias.emplace(Tensor<1>::zeros(Shape{num_channels}, options));
  }
  return layer;
}

namespace detail {

burn::detail::TensorRef group_norm(const GroupNorm& layer, const burn::detail::TensorRef& x_in) {
  const burn::detail::TensorRef x_ref = amp::detail::float32_input(x_in);
  const Shape& shape = x_ref->spec.shape;
  const std::size_t c = layer.num_channels, g = layer.num_groups;
  if (shape[1] != c)
    throw Error("GroupNorm",
                fmt::format("input {} has {} channels (dim 1) but the layer has {}", shape.to_string(), shape[1], c));
  if (g == 0 || c % g) throw Error("GroupNorm", fmt::format("{} channels do not split into {} groups", c, g));
  const std::size_t n = shape[0];
  std::size_t l = 1;
  for (std::size_t i = 2; i < shape.rank(); ++i) l *= shape[i];

  // Each group of each sample is one row of [N, G, C/G * L].
  const Tensor<3> x(burn::detail::reshape_exact(x_ref, Shape{n, g, c / g * l}));
  const Tensor<3> diff = x - x.mean_dim(2);
  const Tensor<3> normalized = diff * ((diff * diff).mean_dim(2) + layer.epsilon).rsqrt();
  Tensor<3> y = normalized.reshape(std::array<std::size_t, 3>{n, c, l});
  const std::array<std::size_t, 3> per_channel{1, c, 1};
  if (layer.weight) y = y * (*layer.weight)->reshape(per_channel);
  if (layer.bias) y = y + (*layer.bias)->reshape(per_channel);
  return burn::detail::reshape_exact(y.ref(), shape);
}

}  // namespace detail

}  // namespace burn::nn
