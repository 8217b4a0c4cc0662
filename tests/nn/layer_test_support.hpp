// Helpers for the layer tests: deterministic inputs and weights that the
// PyTorch reference scripts in the test comments rebuild exactly
// (wave(n, f, p, s)[i] = s * sin(f * i + p), in Python: [s * math.sin(f * i + p) for i in range(n)]).
#pragma once

#include <cmath>
#include <vector>

#include "burn_test.hpp"

namespace burn::layer_test {

inline std::vector<double> wave(std::size_t n, double f, double p, double s = 1.0) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = s * std::sin(f * static_cast<double>(i) + p);
  return v;
}

/// A wave-filled f32 (or `dtype`) tensor of `shape` on `device`.
template <std::size_t D>
Tensor<D> wave_tensor(const Shape& shape, double f, double p, double s, const Device& device,
                      DType dtype = DType::F32) {
  return burn::testing::float_tensor<D>(wave(shape.num_elements(), f, p, s), shape, device, dtype);
}

/// The tolerance for f32 results against 6-decimal references.
inline Tolerance f32_tol() { return Tolerance::rel_abs(1e-4, 2e-5); }

inline std::vector<double> values_of(const TensorData& d) { return d.convert<double>().to_vec<double>(); }

}  // namespace burn::layer_test
