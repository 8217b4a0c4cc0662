// Kind-generic cases for ops that accept every dtype (layout, slicing):
// one fixture over float, int and bool dtypes; each case body is written once
// as a member of Cases<K> and run with the kind matching the parameter dtype.
#pragma once

#include "conformance.hpp"

namespace burn::conformance {

template <class K>
struct KindCases {
  Device dev;
  DType dt;

  /// A tensor of the parameter dtype from doubles (bool: non-zero is true;
  /// expectations are converted the same way by expect_tensor).
  template <std::size_t D>
  Tensor<D, K> m(const std::vector<double>& v, Shape s) const {
    return Tensor<D, K>::from_data(TensorData(v, std::move(s)).convert(dt), {dev, dt});
  }
  /// 0, 1, ..., n - 1 in `shape`.
  template <std::size_t D>
  Tensor<D, K> range(Shape s) const {
    std::vector<double> v(s.num_elements());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
    return m<D>(v, std::move(s));
  }
  template <std::size_t D>
  Tensor<D, Int> ix(const std::vector<std::int64_t>& v, Shape s) const {
    return burn::testing::int_tensor<D>(v, std::move(s), dev, DType::I64);
  }
  template <std::size_t D>
  Tensor<D, Bool> bl(const std::vector<bool>& v, Shape s) const {
    return burn::testing::bool_tensor<D>(v, std::move(s), dev);
  }
};

/// Every dtype: floats, ints and bool.
inline std::vector<DType> all_dtypes() {
  std::vector<DType> d = burn::testing::float_dtypes();
  for (auto t : burn::testing::int_dtypes()) d.push_back(t);
  d.push_back(DType::Bool);
  return d;
}

/// Runs `body(cases)` with the KindCases matching the parameter's dtype.
template <class F>
void with_kind(const DeviceDType& p, F&& body) {
  if (is_float(p.dtype)) body(KindCases<Float>{p.device, p.dtype});
  else if (is_int(p.dtype)) body(KindCases<Int>{p.device, p.dtype});
  else body(KindCases<Bool>{p.device, p.dtype});
}

}  // namespace burn::conformance

#define BURN_ALL_DTYPES_SUITE(fixture)                                                                                \
  INSTANTIATE_TEST_SUITE_P(All, fixture, ::testing::ValuesIn(burn::testing::combos(burn::conformance::all_dtypes())), \
                           burn::testing::combo_name)
