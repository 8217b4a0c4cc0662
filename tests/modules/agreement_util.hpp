// Helpers for comparing a backend with the reference (ndarray): seeded host
// data, inputs in several memory layouts, and a value comparison.
#pragma once

#include <cstdint>
#include <numeric>
#include <random>

#include "module_test_util.hpp"

namespace burn::testing::modules {

/// Uniform values in [-1, 1) from a fixed seed (bit-exact on every platform,
/// unlike std::uniform_real_distribution).
inline std::vector<double> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(n);
  for (auto& x : v) x = static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0;
  return v;
}

/// How an input tensor is laid out in memory; the logical values never change.
enum class Layout {
  Contiguous,
  ChannelsLast,  // stored as [N, *spatial, C] (matrices: transposed), viewed through permute
  Sliced,        // a strided, offset window (every other element of the last dim) of a larger tensor
};

inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous: return "contiguous";
    case Layout::ChannelsLast: return "channels-last";
    case Layout::Sliced: return "sliced";
  }
  return "?";
}

/// Row-major values of `values` (shape `shape`) permuted so that output dim i is input dim perm[i].
inline std::vector<double> permute_host(const std::vector<double>& values, const Shape& shape,
                                        const std::vector<std::size_t>& perm) {
  const std::size_t rank = shape.rank();
  std::vector<std::size_t> in_strides(rank, 1), out_shape(rank);
  for (std::size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * shape[i];
  for (std::size_t i = 0; i < rank; ++i) out_shape[i] = shape[perm[i]];
  std::vector<double> out(values.size());
  std::vector<std::size_t> idx(rank, 0);
  for (std::size_t flat = 0; flat < out.size(); ++flat) {
    std::size_t src = 0;
    for (std::size_t i = 0; i < rank; ++i) src += idx[i] * in_strides[perm[i]];
    out[flat] = values[src];
    for (std::size_t i = rank; i-- > 0;) {  // odometer increment over out_shape
      if (++idx[i] < out_shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

/// A float tensor holding `values` (row-major for `shape`) in the given layout.
template <std::size_t D>
Tensor<D> make_tensor(const std::vector<double>& values, const Shape& shape, Layout layout, const Device& device,
                      DType dtype) {
  switch (layout) {
    case Layout::Contiguous: return float_tensor<D>(values, shape, device, dtype);
    case Layout::ChannelsLast: {
      // perm = {0, 2, ..., D-1, 1} (a transpose for matrices); the view
      // permutes back with its inverse.
      std::vector<std::size_t> perm = D == 2 ? std::vector<std::size_t>{1, 0} : std::vector<std::size_t>{0};
      for (std::size_t i = 2; i < D; ++i) perm.push_back(i);
      if (D > 2) perm.push_back(1);
      std::vector<std::size_t> stored_dims;
      for (auto p : perm) stored_dims.push_back(shape[p]);
      const Shape stored_shape(stored_dims);
      auto stored = float_tensor<D>(permute_host(values, shape, perm), stored_shape, device, dtype);
      std::array<std::int64_t, D> inverse{};
      for (std::size_t i = 0; i < D; ++i) inverse[perm[i]] = static_cast<std::int64_t>(i);
      return Tensor<D>(burn::detail::permute(stored.ref(), inverse));
    }
    case Layout::Sliced: {
      // Larger storage: dim 0 gets one extra leading entry, the last dim is
      // doubled and read with step 2. Unread slots hold 1000 so a kernel that
      // ignores strides or offsets produces visibly wrong values.
      std::vector<std::size_t> big = shape.dims();
      big[0] += 1;
      big[D - 1] *= 2;
      const Shape big_shape(big);
      std::vector<double> storage(big_shape.num_elements(), 1000.0);
      // Logical element (i0, ..., j) lives at (i0 + 1, ..., 2 j): rows shift by
      // one batch entry, columns spread out. Inputs here are never empty.
      const std::size_t last = shape[D - 1];
      const std::size_t rows = values.size() / last;
      const std::size_t rows_per_batch = rows / shape[0];
      for (std::size_t row = 0; row < rows; ++row)
        for (std::size_t j = 0; j < last; ++j)
          storage[(row + rows_per_batch) * 2 * last + 2 * j] = values[row * last + j];
      std::array<Range, D> ranges;
      for (auto& r : ranges) r = Range::all();
      ranges[0] = Range(1, static_cast<std::int64_t>(big[0]));
      ranges[D - 1] = Range(0, static_cast<std::int64_t>(big[D - 1]), 2);
      auto stored = float_tensor<D>(storage, big_shape, device, dtype);
      return Tensor<D>(burn::detail::slice(stored.ref(), ranges));
    }
  }
  throw Error("make_tensor", "unknown layout");
}

/// The reference values of a tensor as doubles.
template <std::size_t D, class K>
std::vector<double> values_of(const Tensor<D, K>& t) {
  return t.to_data().convert(DType::F64).template to_vec<double>();
}

/// Fixture: GetParam() is a device other than the reference, and a dtype.
class AgreementTest : public ::testing::TestWithParam<DeviceDType> {
 protected:
  const Device& device() const { return GetParam().device; }
  Device reference() const { return reference_device(); }
  DType dtype() const { return GetParam().dtype; }
  std::uint64_t seed_ = 0x5eed;
  std::vector<double> random(std::size_t n) { return random_values(n, seed_++); }

  /// Expects `actual` (on the tested device) to match `expected` (reference).
  template <std::size_t D, class K>
  void expect_agree(const Tensor<D, K>& actual, const Tensor<D, K>& expected, const std::string& what,
                    Tolerance tol = {}, std::source_location loc = std::source_location::current()) const {
    SCOPED_TRACE(what);
    EXPECT_EQ(actual.dtype(), expected.dtype());
    expect_data(actual.to_data(), values_of(expected), expected.shape(), tol, loc);
  }
};

/// Every non-reference device x float dtype (none when only the reference is built).
inline std::vector<DeviceDType> agreement_combos() {
  std::vector<DeviceDType> out;
  for (const auto& c : combos(float_dtypes()))
    if (!(c.device == reference_device())) out.push_back(c);
  return out;
}

#define BURN_AGREEMENT_SUITE(Suite)                                                                               \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Suite);                                                           \
  INSTANTIATE_TEST_SUITE_P(VsReference, Suite, ::testing::ValuesIn(::burn::testing::modules::agreement_combos()), \
                           ::burn::testing::combo_name)

}  // namespace burn::testing::modules
