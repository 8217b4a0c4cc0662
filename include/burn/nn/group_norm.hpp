// GroupNorm: splits the channels (dim 1) of [batch, channels, ...] into
// num_groups groups and normalises each group of each sample over its
// channels and positions (biased variance), then applies a per-channel affine
// transform when `affine` (Burn's and PyTorch's GroupNorm):
//
//   auto gn = burn::nn::GroupNormConfig{4, 32}.init(device);
//   burn::Tensor<4> y = gn.forward(x);   // x [batch, 32, h, w]
//
// With one group it is LayerNorm over all non-batch dims; with one channel per
// group it is InstanceNorm.
#pragma once

#include <burn/module/module.hpp>
#include <optional>

namespace burn::nn {

struct GroupNorm;
namespace detail {
burn::detail::TensorRef group_norm(const GroupNorm& layer, const burn::detail::TensorRef& x);
}

struct GroupNorm {
  std::optional<module::Param<Tensor<1>>> weight;  // [num_channels], ones (when affine)
  std::optional<module::Param<Tensor<1>>> bias;    // [num_channels], zeros (when affine)
  std::size_t num_groups = 1;
  std::size_t num_channels = 1;
  double epsilon = 1e-5;
  BURN_MODULE(weight, bias)

  /// x [batch, num_channels, ...] -> the same shape; a wrong channel count is
  /// a burn::Error("[GroupNorm] ...").
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    static_assert(D >= 2, "GroupNorm needs [batch, channels, ...] inputs");
    return Tensor<D>(detail::group_norm(*this, x.ref()));
  }
};

struct GroupNormConfig {
  std::size_t num_groups = 0;
  std::size_t num_channels = 0;
  double epsilon = 1e-5;
  bool affine = true;
  GroupNormConfig with_epsilon(double e) const {
    auto c = *this;
    c.epsilon = e;
    return c;
  }
  GroupNormConfig with_affine(bool a) const {
    auto c = *this;
    c.affine = a;
    return c;
  }
  /// Throws burn::Error("[GroupNormConfig] ...") for zero sizes, channels not
  /// divisible by groups, or epsilon <= 0.
  GroupNorm init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
