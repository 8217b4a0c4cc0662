#include <fmt/format.h>

#include <burn/error.hpp>
#include <burn/nn/padding.hpp>

namespace burn::nn {

template <std::size_t N>
std::array<std::size_t, N> PaddingConfig<N>::resolve(const std::array<std::size_t, N>& kernel,
                                                     const std::array<std::size_t, N>& stride,
                                                     const std::array<std::size_t, N>& dilation,
                                                     std::string_view who) const {
  if (kind_ == Kind::Explicit) return padding_;
  std::array<std::size_t, N> out{};
  if (kind_ == Kind::Valid) return out;
  for (std::size_t i = 0; i < N; ++i) {
    if (stride[i] != 1)
      throw Error(who, fmt::format("same padding needs stride 1, got stride {} on axis {}; use explicit_ padding",
                                   stride[i], i));
    const std::size_t span = dilation[i] * (kernel[i] - (kernel[i] > 0 ? 1 : 0));
    // An even span would need one more element on one side than the other.
    if (span % 2)
      throw Error(who, fmt::format("same padding needs an odd kernel size (with dilation), got kernel {} and "
                                   "dilation {} on axis {}",
                                   kernel[i], dilation[i], i));
    out[i] = span / 2;
  }
  return out;
}

template class PaddingConfig<1>;
template class PaddingConfig<2>;

}  // namespace burn::nn
