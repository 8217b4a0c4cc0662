// flex computes exp, expm1, log, log1p and tanh of contiguous f32 / f64 data
// with run-time-dispatched SIMD kernels (Highway). They must match std:: to a
// few ULP on ordinary values and exactly on every special value, for any
// length (the vector tail) and for in-place-sized inputs; strided inputs
// give exactly the contiguous results.
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "burn_test.hpp"

namespace {

using namespace burn;

struct MathCase {
  const char* name;
  Tensor<1> (*apply)(const Tensor<1>&);
  double (*reference)(double);
};

const MathCase kCases[] = {
    {"exp", [](const Tensor<1>& t) { return t.exp(); }, [](double x) { return std::exp(x); }},
    {"expm1", [](const Tensor<1>& t) { return t.expm1(); }, [](double x) { return std::expm1(x); }},
    {"log", [](const Tensor<1>& t) { return t.log(); }, [](double x) { return std::log(x); }},
    {"log1p", [](const Tensor<1>& t) { return t.log1p(); }, [](double x) { return std::log1p(x); }},
    {"tanh", [](const Tensor<1>& t) { return t.tanh(); }, [](double x) { return std::tanh(x); }},
};

std::vector<double> inputs(std::size_t n, std::uint64_t seed) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v{0.0,   -0.0,  1.0,    -1.0,   inf,   -inf,  nan,    1e-30, -1e-30, 88.0,  88.8, 89.0, 100.0,
                        -87.0, -90.0, -104.0, -105.0, 700.0, 710.0, -745.0, -1.5,  -0.999, 1e-45, 3e38, 20.0, -20.0};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> wide(-30.0, 30.0), narrow(-1.0, 1.0);
  while (v.size() < n) v.push_back(v.size() % 2 ? wide(rng) : narrow(rng));
  v.resize(n);
  return v;
}

void expect_close(double got, double want, DType dtype, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got << ", want NaN";
  } else if (std::isinf(want) || want == 0.0) {
    EXPECT_EQ(got, want) << what;
  } else {
    const double rel = dtype == DType::F32 ? 4e-6 : 1e-13;
    // Subnormal f32 results carry few significant bits: compare absolutely there.
    const double abs = dtype == DType::F32 ? 1e-44 : 1e-300;
    EXPECT_NEAR(got, want, std::max(abs, rel * std::abs(want))) << what;
  }
}

TEST(SimdMath, MatchesStdOnSpecialAndRandomValuesForEveryLength) {
  for (const Device& device : burn::testing::all_devices()) {
    for (DType dtype : {DType::F32, DType::F64}) {
      for (std::size_t n : {1, 3, 7, 8, 15, 16, 17, 31, 33, 1000}) {
        const auto x = inputs(n, n);
        // The reference sees the values the tensor actually holds (f32-rounded).
        const TensorData data = TensorData(x, Shape{n}).convert(dtype);
        const auto held = data.convert<double>().to_vec<double>();
        const auto t = Tensor<1>::from_data(data, {device, dtype});
        for (const MathCase& c : kCases) {
          const auto got = c.apply(t).to_data().convert<double>().to_vec<double>();
          for (std::size_t i = 0; i < n; ++i) {
            const double want_d = c.reference(held[i]);
            const double want = dtype == DType::F32 ? static_cast<double>(static_cast<float>(want_d)) : want_d;
            expect_close(got[i], want, dtype,
                         std::string(c.name) + "(" + std::to_string(held[i]) + ") on " + device.to_string() + " " +
                             std::string(dtype_name(dtype)) + " n=" + std::to_string(n));
          }
        }
      }
    }
  }
}

TEST(SimdMath, StridedViewsGiveTheContiguousResultsBitForBit) {
  // An element's value must not depend on the layout around it: a reversed
  // view (stride -1) runs through the same SIMD kernels as contiguous data,
  // for every length (the vector tail). Fused row statistics on
  // Device::cpu() rely on this too.
  const Device device = Device::flex();
  for (DType dtype : {DType::F32, DType::F64}) {
    for (std::size_t n : {1, 7, 17, 300, 1000}) {
      const TensorData data = TensorData(inputs(n, n + 5), Shape{n}).convert(dtype);
      const auto held = data.convert<double>().to_vec<double>();
      const auto t = Tensor<1>::from_data(data, {device, dtype});
      for (const MathCase& c : kCases) {
        const auto a = c.apply(t.flip({0})).flip({0}).to_data().convert<double>().to_vec<double>();
        const auto b = c.apply(t).to_data().convert<double>().to_vec<double>();
        for (std::size_t i = 0; i < n; ++i) {
          const bool same = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i];
          EXPECT_TRUE(same) << c.name << "(" << held[i] << ") " << dtype_name(dtype) << " n=" << n << ": reversed view "
                            << a[i] << ", contiguous " << b[i];
        }
      }
    }
  }
}

}  // namespace
