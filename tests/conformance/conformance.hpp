// Helpers shared by the conformance tests: parametrised fixtures over
// device x dtype, value checks that report the caller's line, and an error
// check that insists on the "[op] ..." message prefix.
#pragma once

#include <burn_test.hpp>

#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

namespace burn::conformance {

using burn::testing::DeviceDType;

/// Checks a tensor's shape and values (dtype-aware tolerance; exact for int
/// and bool) and reports a failure at the caller's line instead of throwing.
template <std::size_t D, class K>
void expect_tensor(const Tensor<D, K>& t, const Shape& shape, const std::vector<double>& expected, Tolerance tol = {},
                   std::source_location loc = std::source_location::current()) {
  try {
    burn::testing::expect_values(t.to_data(), expected, shape, tol);
  } catch (const std::exception& e) {
    ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line())) << e.what();
  }
}

/// Expects `body` to throw a burn::Error whose message starts with "[op]".
using burn::testing::expect_op_error;

/// The values of a tensor as doubles (row-major).
template <std::size_t D, class K>
std::vector<double> values_of(const Tensor<D, K>& t) {
  const TensorData d = t.to_data();
  std::vector<double> out(d.num_elements());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = d.value_as_double(i);
  return out;
}

/// Fixture for one (device, dtype) combination.
class ComboTest : public ::testing::TestWithParam<DeviceDType> {
 protected:
  const Device& dev() const { return GetParam().device; }
  DType dt() const { return GetParam().dtype; }

  template <std::size_t D>
  Tensor<D> f(const std::vector<double>& v, Shape s) const {
    return burn::testing::float_tensor<D>(v, std::move(s), dev(), dt());
  }
  /// An int tensor of the parameter dtype (for int suites).
  template <std::size_t D>
  Tensor<D, Int> in(const std::vector<std::int64_t>& v, Shape s) const {
    return burn::testing::int_tensor<D>(v, std::move(s), dev(), dt());
  }
  /// An index tensor (I64) on the parameter device.
  template <std::size_t D>
  Tensor<D, Int> ix(const std::vector<std::int64_t>& v, Shape s) const {
    return burn::testing::int_tensor<D>(v, std::move(s), dev(), DType::I64);
  }
  template <std::size_t D>
  Tensor<D, Bool> bl(const std::vector<bool>& v, Shape s) const {
    return burn::testing::bool_tensor<D>(v, std::move(s), dev());
  }
};

/// A float dtype's rounding of `v` (so expectations match what the dtype can hold).
inline double rounded(double v, DType dtype) {
  return TensorData(std::vector<double>{v}, Shape{1}).convert(dtype).value_as_double(0);
}

}  // namespace burn::conformance

#define BURN_FLOAT_SUITE(fixture)                                                                                     \
  INSTANTIATE_TEST_SUITE_P(Float, fixture, ::testing::ValuesIn(burn::testing::combos(burn::testing::float_dtypes())), \
                           burn::testing::combo_name)
#define BURN_INT_SUITE(fixture)                                                                                   \
  INSTANTIATE_TEST_SUITE_P(Int, fixture, ::testing::ValuesIn(burn::testing::combos(burn::testing::int_dtypes())), \
                           burn::testing::combo_name)
#define BURN_SIGNED_INT_SUITE(fixture)                                                                     \
  INSTANTIATE_TEST_SUITE_P(SignedInt, fixture,                                                             \
                           ::testing::ValuesIn(burn::testing::combos(burn::testing::signed_int_dtypes())), \
                           burn::testing::combo_name)
