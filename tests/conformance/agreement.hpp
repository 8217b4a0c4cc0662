// Cross-device agreement: an op run on the reference device (ndarray, the
// oracle) and on every other device must give the same result for the same
// seeded random inputs. The parameter's device is the device under test.
#pragma once

#include "conformance.hpp"

#include <tuple>

namespace burn::conformance {

/// Every enabled device except the reference, crossed with the `dtypes` it supports.
inline std::vector<DeviceDType> other_device_combos(const std::vector<DType>& dtypes) {
  std::vector<DeviceDType> out;
  const Device ref = burn::testing::reference_device();
  for (const auto& d : burn::testing::all_devices())
    if (!(d == ref))
      for (auto t : dtypes)
        if (d.supports_dtype(t)) out.push_back({d, t});
  return out;
}

class AgreementTest : public ComboTest {
 protected:
  Device ref() const { return burn::testing::reference_device(); }

  /// Uniform random floats of the parameter dtype on the reference device.
  template <std::size_t D>
  Tensor<D> rand(Shape s, double lo = -2.0, double hi = 2.0) const {
    return Tensor<D>::random(std::move(s), Distribution::uniform(lo, hi), {ref(), dt()});
  }
  /// Random integers in [0, n) of `dtype` on the reference device.
  template <std::size_t D>
  Tensor<D, Int> rand_int(Shape s, std::int64_t n, DType dtype = DType::I64) const {
    // Just below n so rounding can never reach n.
    auto f =
        Tensor<D>::random(std::move(s), Distribution::uniform(0.0, static_cast<double>(n) - 0.01), {ref(), DType::F32});
    return f.to_int().cast(dtype);
  }
  template <std::size_t D>
  Tensor<D, Bool> rand_bool(Shape s, double p = 0.5) const {
    return Tensor<D>::random(std::move(s), Distribution::bernoulli(p), {ref(), DType::F32}).to_bool();
  }

  /// Runs `op` on the reference inputs and on copies moved to the device under
  /// test; the results must agree (approximately for floats, exactly otherwise).
  template <class F, class... T>
  void agree(const char* what, F&& op, const T&... inputs) const {
    SCOPED_TRACE(what);
    try {
      auto expected = op(inputs...);
      auto actual = op(inputs.to_device(dev())...);
      EXPECT_EQ(actual.device(), dev());
      const TensorData want = expected.to_data();
      const TensorData got = actual.to_data();
      if (is_float(want.dtype())) got.assert_approx_eq(want, Tolerance::default_for(want.dtype()));
      else got.assert_eq(want);
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  }
};

}  // namespace burn::conformance

#define BURN_AGREEMENT_SUITE(fixture, dtypes)                                                                         \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(fixture);                                                             \
  INSTANTIATE_TEST_SUITE_P(VsReference, fixture, ::testing::ValuesIn(burn::conformance::other_device_combos(dtypes)), \
                           burn::testing::combo_name)
