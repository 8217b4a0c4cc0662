// Helpers shared by the module-op and activation suites: a fixture that runs
// every case on each enabled device x float dtype, arange-built inputs as in
// Burn's module tests, and checks that report instead of aborting the test.
#pragma once

#include <burn_test.hpp>
#include <cstddef>
#include <limits>
#include <source_location>
#include <string>
#include <vector>

namespace burn::testing::modules {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// 0, 1, 2, ... (n values), each multiplied by `scale`.
inline std::vector<double> arange_values(std::size_t n, double scale = 1.0) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i) * scale;
  return v;
}

inline std::vector<double> scaled(std::vector<double> v, double s) {
  for (auto& x : v) x *= s;
  return v;
}

/// Adds a gtest failure at the caller (without throwing, so later checks
/// still run) unless `actual` has `shape` and matches `expected` within `tol`
/// (the dtype's default tolerance when left as Tolerance{}; exact for ints).
inline void expect_data(const TensorData& actual, const std::vector<double>& expected, const Shape& shape,
                        Tolerance tol = {}, std::source_location loc = std::source_location::current()) {
  if (actual.shape() != shape) {
    ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line()))
        << "shape " << actual.shape().to_string() << ", expected " << shape.to_string();
    return;
  }
  try {
    expect_values(actual, expected, shape, tol);
  } catch (const Error& e) {
    ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line())) << e.what();
  }
}

template <std::size_t D, class K>
void expect_tensor(const Tensor<D, K>& actual, const std::vector<double>& expected, const Shape& shape,
                   Tolerance tol = {}, std::source_location loc = std::source_location::current()) {
  expect_data(actual.to_data(), expected, shape, tol, loc);
}

using burn::testing::expect_op_error;

/// Fixture: GetParam() is one enabled device and one float dtype.
class ModuleTest : public ::testing::TestWithParam<DeviceDType> {
 protected:
  const Device& device() const { return GetParam().device; }
  DType dtype() const { return GetParam().dtype; }

  template <std::size_t D>
  Tensor<D> tensor(const std::vector<double>& values, const Shape& shape) const {
    return float_tensor<D>(values, shape, device(), dtype());
  }
  /// arange(0, n) * scale reshaped to `shape`, as Burn's module tests build inputs.
  template <std::size_t D>
  Tensor<D> arange(const Shape& shape, double scale = 1.0) const {
    return tensor<D>(arange_values(shape.num_elements(), scale), shape);
  }
};

/// Instantiates a ModuleTest-derived suite on every device x float dtype.
#define BURN_MODULE_SUITE(Suite)                                                                          \
  INSTANTIATE_TEST_SUITE_P(AllDevices, Suite,                                                             \
                           ::testing::ValuesIn(::burn::testing::combos(::burn::testing::float_dtypes())), \
                           ::burn::testing::combo_name)

}  // namespace burn::testing::modules
