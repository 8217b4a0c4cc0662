// Bit-exact agreement with the reference (ndarray) for the line kernels flex
// runs on vector lanes and compiles per ISA (src/backends/flex/
// line_folds.hpp, scan.cpp, indexing.cpp): lanes must give exactly what a
// serial loop gives. The cases aim at what lanes could get wrong: lengths
// around the lane and chunk widths, the first of several NaNs or of +0 and
// -0, ties, strided and column lines, line counts around the scan's groups.
#include "agreement.hpp"

#include <cmath>
#include <limits>
#include <random>

namespace burn::conformance {
namespace {

using T2 = Tensor<2>;
using I2 = Tensor<2, Int>;

// flex and the device that runs its kernels (cpu). Other backends may
// differ from the reference in the sign of a zero max or a NaN's payload.
std::vector<DeviceDType> flex_combos(const std::vector<DType>& dtypes) {
  std::vector<DeviceDType> out;
  for (const auto& c : other_device_combos(dtypes)) {
    const std::string_view name = c.device.type().name();
    if (name == "flex" || name == "cpu") out.push_back(c);
  }
  return out;
}

const std::vector<DType>& scan_float_dtypes() {
  // Halves are left out: the reference scans them in double, flex in float.
  static const std::vector<DType> d{DType::F32, DType::F64};
  return d;
}

// Line lengths around the 32 lanes, the 256-element pairwise leaf and the
// 16384-element chunk (a line of several chunks merges partial results).
const std::size_t kLengths[] = {1, 7, 31, 32, 33, 100, 257, 1000, 16384 + 17, 40000};

class LineExact : public AgreementTest {
 public:
  void SetUp() override { rng_.seed(20261130); }

  template <std::size_t D, class K = Float>
  Tensor<D, K> make(const std::vector<double>& v, Shape s) const {
    return Tensor<D, K>::from_data(burn::testing::data_of(v, std::move(s), dt()), {ref(), dt()});
  }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }

  /// `op` on the reference and on the device under test: the same bytes.
  template <class F, class T>
  void exact(const std::string& what, F&& op, const T& input) const {
    SCOPED_TRACE(what);
    const TensorData want = op(input).to_data();
    const TensorData got = op(input.to_device(dev())).to_data();
    ASSERT_TRUE(got.shape() == want.shape()) << what;
    ASSERT_EQ(got.dtype(), want.dtype()) << what;
    const auto a = got.bytes(), b = want.bytes();
    const std::size_t width = dtype_size(got.dtype());
    for (std::size_t i = 0; i < got.num_elements(); ++i)
      if (!std::equal(a.begin() + i * width, a.begin() + (i + 1) * width, b.begin() + i * width)) {
        const double g = got.value_as_double(i), w = want.value_as_double(i);
        // Streams show the sign of a zero and of a NaN (-0, -nan).
        ADD_FAILURE() << what << ": element " << i << " is " << g << ", the reference " << w;
        return;
      }
  }

  /// Nine lines of n floats, each a case for max/min and their arg: random;
  /// ties of the extremes; NaNs of both signs; +0 and -0 in either order
  /// where zero is the max or the min; all -inf; all +inf.
  std::vector<double> float_lines(std::size_t n) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> v(9 * n);
    const auto line = [&](std::size_t l) { return v.begin() + static_cast<std::ptrdiff_t>(l * n); };
    for (std::size_t k = 0; k < n; ++k) {
      v[k] = uniform(-2, 2);
      v[n + k] = uniform(-2, 2);
      v[2 * n + k] = uniform(-2, 2);
      v[3 * n + k] = v[5 * n + k] = uniform(-2, -0.5);
      v[4 * n + k] = v[6 * n + k] = uniform(0.5, 2);
    }
    for (std::size_t k : {n - 1, n / 2, std::min(n - 1, n / 3 + 1)}) line(1)[k] = 3, line(1)[n - 1 - k] = -3;
    line(2)[n / 3] = -nan, line(2)[2 * n / 3] = nan, line(2)[n - 1] = -nan;
    line(3)[n / 4] = -0.0, line(3)[n / 2] = 0.0;      // max: -0 first
    line(5)[n / 5] = 0.0, line(5)[n - 1] = -0.0;      // max: +0 first
    line(4)[n / 4] = 0.0, line(4)[3 * n / 4] = -0.0;  // min: +0 first
    line(6)[n / 5] = -0.0, line(6)[n - 1] = 0.0;      // min: -0 first
    std::fill(line(7), line(8), -inf);
    std::fill(line(8), line(9), inf);
    return v;
  }

  std::mt19937_64 rng_;
};

#define BURN_LINE_EXACT_SUITE(fixture, dtypes)            \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(fixture); \
  INSTANTIATE_TEST_SUITE_P(VsReference, fixture, ::testing::ValuesIn(flex_combos(dtypes)), burn::testing::combo_name)

class LineExactFloat : public LineExact {};
class LineExactInt : public LineExact {};
class ScanExactFloat : public LineExact {};
class ScanExactInt : public LineExact {};
class GatherExact : public LineExact {};

// Max/min/arg over contiguous lines (lanes), strided lines (a transposed
// view: serial) and columns (the column path), and the whole tensor.
template <class K>
void check_extremes(const LineExact& t, const Tensor<2, K>& rows, const Tensor<2, K>& cols, std::size_t n) {
  using Tk = Tensor<2, K>;
  const std::string at = " n=" + std::to_string(n);
  t.exact(
      "max_dim" + at, [](const Tk& a) { return a.max_dim(1); }, rows);
  t.exact(
      "min_dim" + at, [](const Tk& a) { return a.min_dim(1); }, rows);
  t.exact(
      "argmax" + at, [](const Tk& a) { return a.argmax(1); }, rows);
  t.exact(
      "argmin" + at, [](const Tk& a) { return a.argmin(1); }, rows);
  t.exact(
      "max" + at, [](const Tk& a) { return a.max(); }, rows);
  t.exact(
      "min" + at, [](const Tk& a) { return a.min(); }, rows);
  t.exact(
      "strided max_dim" + at, [](const Tk& a) { return a.transpose().max_dim(1); }, cols);
  t.exact(
      "strided argmin" + at, [](const Tk& a) { return a.transpose().argmin(1); }, cols);
  t.exact(
      "column max_dim" + at, [](const Tk& a) { return a.max_dim(0); }, cols);
  t.exact(
      "column min_dim" + at, [](const Tk& a) { return a.min_dim(0); }, cols);
  t.exact(
      "column argmax" + at, [](const Tk& a) { return a.argmax(0); }, cols);
}

// The transpose of a row-major [rows, n] as row-major values.
std::vector<double> transposed(const std::vector<double>& v, std::size_t rows, std::size_t n) {
  std::vector<double> out(v.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < n; ++k) out[k * rows + r] = v[r * n + k];
  return out;
}

TEST_P(LineExactFloat, MaxMinArgAsSerial) {
  for (const std::size_t n : kLengths) {
    const auto v = float_lines(n);
    check_extremes(*this, make<2>(v, {9, n}), make<2>(transposed(v, 9, n), {n, 9}), n);
  }
}

TEST_P(LineExactInt, MaxMinArgSumAsSerial) {
  const bool is_signed = dt() == DType::I64 || dt() == DType::I32 || dt() == DType::I16 || dt() == DType::I8;
  for (const std::size_t n : kLengths) {
    // Few distinct values, so every line has many ties; line 2 is all zero.
    std::vector<double> v(3 * n, 0.0);
    for (std::size_t k = 0; k < 2 * n; ++k) v[k] = static_cast<double>(is_signed ? integer(-20, 20) : integer(0, 40));
    check_extremes(*this, make<2, Int>(v, {3, n}), make<2, Int>(transposed(v, 3, n), {n, 3}), n);
    exact(
        "int sum_dim n=" + std::to_string(n), [](const I2& a) { return a.sum_dim(1); }, make<2, Int>(v, {3, n}));
  }
}

// Scans of 13 lines (one group of 8 and a partial one) along the last dim,
// of a transposed view (strided steps) and along dim 0 (the tile path).
template <class K>
void check_scans(const LineExact& t, const Tensor<2, K>& x, std::size_t n) {
  using Tk = Tensor<2, K>;
  const std::string at = " n=" + std::to_string(n);
  t.exact(
      "cumsum" + at, [](const Tk& a) { return a.cumsum(1); }, x);
  t.exact(
      "cumprod" + at, [](const Tk& a) { return a.cumprod(1); }, x);
  t.exact(
      "cummax" + at, [](const Tk& a) { return a.cummax(1); }, x);
  t.exact(
      "cummin" + at, [](const Tk& a) { return a.cummin(1); }, x);
  t.exact(
      "cumsum of a transposed view" + at, [](const Tk& a) { return a.transpose().cumsum(1); }, x);
  t.exact(
      "cummax of a transposed view" + at, [](const Tk& a) { return a.transpose().cummax(1); }, x);
  t.exact(
      "cumsum dim 0" + at, [](const Tk& a) { return a.cumsum(0); }, x);
  t.exact(
      "cummin dim 0" + at, [](const Tk& a) { return a.cummin(0); }, x);
}

const std::size_t kScanLengths[] = {1, 5, 16, 17, 33, 100, 1000};

TEST_P(ScanExactFloat, ScansAsSerial) {
  for (const std::size_t n : kScanLengths) {
    std::vector<double> v(13 * n);
    for (auto& x : v) x = uniform(0.5, 1.5);  // products neither vanish nor overflow
    v[3 * n + n / 2] = std::numeric_limits<double>::quiet_NaN();
    v[4 * n] = -0.0;
    check_scans(*this, make<2>(v, {13, n}), n);
  }
}

TEST_P(ScanExactInt, ScansAsSerial) {
  for (const std::size_t n : kScanLengths) {
    std::vector<double> v(13 * n);
    for (auto& x : v) x = static_cast<double>(integer(0, 3));  // wrapping products agree too
    check_scans(*this, make<2, Int>(v, {13, n}), n);
  }
}

TEST_P(GatherExact, GatherAndSelect) {
  const std::size_t rows = 5, n = 37;
  std::vector<double> v(rows * n);
  for (auto& x : v) x = uniform(-2, 2);
  const auto x = make<2>(v, {rows, n});
  std::vector<std::int64_t> along1(rows * n), along0(3 * n), pick(11);
  for (auto& i : along1) i = integer(0, static_cast<std::int64_t>(n) - 1);
  for (auto& i : along0) i = integer(0, static_cast<std::int64_t>(rows) - 1);
  for (auto& i : pick) i = integer(0, static_cast<std::int64_t>(n) - 1);
  const auto ix1 = I2::from_data(TensorData(along1, {rows, n}), {ref(), DType::I64});
  const auto ix0 = I2::from_data(TensorData(along0, {3, n}), {ref(), DType::I64});
  const auto ixt = I2::from_data(TensorData(along1, {n, rows}), {ref(), DType::I64});
  const auto sel = Tensor<1, Int>::from_data(TensorData(pick, {11}), {ref(), DType::I64});
  const auto on = [&](const auto& t) { return t.to_device(dev()); };
  // Indices move with the input; the op runs on whichever device holds them.
  exact(
      "gather dim 1", [&](const T2& a) { return a.gather(1, a.device() == ref() ? ix1 : on(ix1)); }, x);
  exact(
      "gather dim 0", [&](const T2& a) { return a.gather(0, a.device() == ref() ? ix0 : on(ix0)); }, x);
  exact(
      "gather, strided indices",
      [&](const T2& a) { return a.gather(1, (a.device() == ref() ? ixt : on(ixt)).transpose()); }, x);
  exact(
      "select", [&](const T2& a) { return a.select(1, a.device() == ref() ? sel : on(sel)); }, x);
  auto bad = along1;
  bad[17] = -1;
  const auto neg = I2::from_data(TensorData(bad, {rows, n}), {dev(), DType::I64});
  expect_op_error([&] { (void)x.to_device(dev()).gather(1, neg); }, "gather");
}

BURN_LINE_EXACT_SUITE(LineExactFloat, burn::testing::float_dtypes());
BURN_LINE_EXACT_SUITE(LineExactInt, burn::testing::int_dtypes());
BURN_LINE_EXACT_SUITE(ScanExactFloat, scan_float_dtypes());
BURN_LINE_EXACT_SUITE(ScanExactInt, burn::testing::int_dtypes());
BURN_LINE_EXACT_SUITE(GatherExact, burn::testing::float_dtypes());

}  // namespace
}  // namespace burn::conformance
