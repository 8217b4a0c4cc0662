// Padding of convolution and pooling layers, as Burn's PaddingConfig1d/2d:
//
//   Conv2dConfig{{1, 8}, {3, 3}}.with_padding(PaddingConfig2d::same())        // output size = input size
//   Conv2dConfig{{1, 8}, {5, 5}}.with_padding(PaddingConfig2d::explicit_(2, 2))
//
// Same needs stride 1 and an odd dilated kernel (dilation * (kernel - 1) even),
// so the padding is symmetric: PyTorch's padding="same" rule.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace burn::nn {

template <std::size_t N>
class PaddingConfig {
 public:
  enum class Kind { Valid, Same, Explicit };

  /// No padding (Burn's default).
  static PaddingConfig valid() { return PaddingConfig(Kind::Valid, {}); }
  /// Pads so the output keeps the input's spatial size.
  static PaddingConfig same() { return PaddingConfig(Kind::Same, {}); }
  // The explicit_ overloads are member templates so that the explicit
  // instantiations below never instantiate the other rank's overload (clang 14
  // does for constrained non-template members).

  /// The same padding on both sides of the one axis.
  template <std::size_t M = N>
  requires(M == N && N == 1) static PaddingConfig explicit_(std::size_t padding) {
    return PaddingConfig(Kind::Explicit, {padding});
  }
  /// Padding along height and width (each on both sides).
  template <std::size_t M = N>
  requires(M == N && N == 2) static PaddingConfig explicit_(std::size_t height, std::size_t width) {
    return PaddingConfig(Kind::Explicit, {height, width});
  }

  Kind kind() const noexcept { return kind_; }
  /// The padding given to explicit_ (zeros for Valid and Same).
  const std::array<std::size_t, N>& explicit_padding() const noexcept { return padding_; }

  /// The padding per axis for a layer with this kernel, stride and dilation.
  /// Throws burn::Error("[<who>] ...") when Same cannot keep the size (stride
  /// above 1, or an even dilated kernel that would need asymmetric padding).
  std::array<std::size_t, N> resolve(const std::array<std::size_t, N>& kernel, const std::array<std::size_t, N>& stride,
                                     const std::array<std::size_t, N>& dilation, std::string_view who) const;

  friend bool operator==(const PaddingConfig&, const PaddingConfig&) = default;

 private:
  PaddingConfig(Kind kind, std::array<std::size_t, N> padding) : kind_(kind), padding_(padding) {}
  Kind kind_;
  std::array<std::size_t, N> padding_;
};

extern template class PaddingConfig<1>;
extern template class PaddingConfig<2>;

using PaddingConfig1d = PaddingConfig<1>;
using PaddingConfig2d = PaddingConfig<2>;

}  // namespace burn::nn
