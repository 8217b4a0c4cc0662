// Sequential: layers of different types applied in order, their fields named
// 0, 1, ... as PyTorch's nn.Sequential names its children, so a torch state
// dict's "downsample.0.weight" is this container's path too.
//
//   auto downsample = burn::nn::sequential(conv_config.init(device), burn::nn::BatchNormConfig{64}.init(device));
//   burn::Tensor<4> y = downsample.forward(x);          // bn(conv(x))
//   const burn::nn::Conv2d& conv = downsample.get<0>();
//
//   struct Block {
//     std::optional<burn::nn::Sequential<burn::nn::Conv2d, burn::nn::BatchNorm>> downsample;
//     BURN_MODULE(downsample)
//   };
//
// A layer is any module with a const forward; each takes what the previous
// one returns, so ranks may change along the way (a Flatten-like lambda
// layer is a module with a forward of its own). A chain of one layer type
// repeated is a std::vector field, which records also name 0, 1, ...
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include <burn/module/module.hpp>

namespace burn::nn {

template <class... Layers>
struct Sequential {
  static_assert(sizeof...(Layers) > 0, "a Sequential needs at least one layer");
  std::tuple<Layers...> layers;

  void visit_fields(module::Visitor& visitor, const std::string& prefix) { visit_from<0>(visitor, prefix); }
  BURN_MODULE_METHODS

  static constexpr std::size_t size() noexcept { return sizeof...(Layers); }

  template <std::size_t I>
  auto& get() noexcept {
    return std::get<I>(layers);
  }
  template <std::size_t I>
  const auto& get() const noexcept {
    return std::get<I>(layers);
  }

  /// layer N-1(... layer 1(layer 0(x))).
  template <class X>
  auto forward(const X& x) const {
    return forward_from<0>(x);
  }

 private:
  template <std::size_t I>
  void visit_from(module::Visitor& visitor, const std::string& prefix) {
    if constexpr (I < sizeof...(Layers)) {
      module::detail::visit_field(visitor, module::detail::join_path(prefix, std::to_string(I)), std::get<I>(layers));
      visit_from<I + 1>(visitor, prefix);
    }
  }
  template <std::size_t I, class X>
  auto forward_from(const X& x) const {
    if constexpr (I + 1 == sizeof...(Layers)) return std::get<I>(layers).forward(x);
    else return forward_from<I + 1>(std::get<I>(layers).forward(x));
  }
};

/// A Sequential of `layers`, in order.
template <class... Layers>
Sequential<std::decay_t<Layers>...> sequential(Layers&&... layers) {
  return Sequential<std::decay_t<Layers>...>{std::tuple<std::decay_t<Layers>...>(std::forward<Layers>(layers)...)};
}

}  // namespace burn::nn
