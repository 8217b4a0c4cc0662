// Shared by the attention, recurrent and transformer tests: the deterministic
// inputs their PyTorch reference values were computed from.
#pragma once

#include <cmath>
#include <vector>

#include "burn_test.hpp"

namespace burn::testing::seq {

/// scale * sin(1.3 i + salt), the Python reference's wave():
/// [scale * math.sin(1.3 * i + salt) for i in range(n)].
inline std::vector<double> seq_wave(std::size_t n, double salt, double scale) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * std::sin(1.3 * static_cast<double>(i) + salt);
  return v;
}

template <std::size_t D>
Tensor<D> tensor(const std::vector<double>& values, Shape shape, const Device& device, DType dtype = DType::F32) {
  return burn::testing::float_tensor<D>(values, std::move(shape), device, dtype);
}

}  // namespace burn::testing::seq
