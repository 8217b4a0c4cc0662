// Shared helpers for the autodiff suite: the {device} x {plain, checkpointing}
// parametrisation, seeded host random data, and small value checks.
//
// Every gradient test runs twice per device: once on `device.autodiff()` and
// once on `device.autodiff().gradient_checkpointing()`, so the whole suite
// covers checkpointing; gradients must agree with the same references.
#pragma once

#include <burn_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <source_location>
#include <string>
#include <vector>

// Device::autodiff() exists only in builds with BURN_AUTODIFF.
#if BURN_HAS_AUTODIFF

namespace burn::adtest {

/// One parameter: an execution device and whether checkpointing is on.
struct Mode {
  Device device;
  bool checkpointing = false;
};

inline std::vector<Mode> all_modes() {
  std::vector<Mode> out;
  for (const Device& d : burn::testing::all_devices()) {
    out.push_back({d, false});
    out.push_back({d, true});
  }
  return out;
}

inline void PrintTo(const Mode& m, std::ostream* os) {
  *os << m.device.to_string() << (m.checkpointing ? " / checkpointing" : " / plain");
}

inline std::string mode_name(const ::testing::TestParamInfo<Mode>& info) {
  return std::string(info.param.device.type().name()) + (info.param.checkpointing ? "_checkpointing" : "_plain");
}

inline std::string device_name(const ::testing::TestParamInfo<Device>& info) {
  return std::string(info.param.type().name());
}

/// The autodiff device a mode stands for.
inline Device autodiff_device(const Mode& m) {
  const Device d = m.device.autodiff();
  return m.checkpointing ? d.gradient_checkpointing() : d;
}

/// Seeded host data, so every device and mode sees the same inputs.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}

  std::vector<double> uniform(std::size_t n, double lo, double hi) {
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(n);
    for (auto& x : v) x = dist(gen_);
    return v;
  }
  /// Magnitudes in [lo, hi] with a random sign: keeps away from 0 (abs, sign, division).
  std::vector<double> signed_magnitudes(std::size_t n, double lo, double hi) {
    std::vector<double> v = uniform(n, lo, hi);
    std::bernoulli_distribution coin(0.5);
    for (auto& x : v)
      if (coin(gen_)) x = -x;
    return v;
  }
  /// n values in [lo, hi), pairwise at least (hi - lo) / (2n) apart, in random
  /// order: max, sort and pools have no ties, and no finite-difference step
  /// crosses one.
  std::vector<double> distinct(std::size_t n, double lo, double hi) {
    const double step = (hi - lo) / static_cast<double>(n);
    std::uniform_real_distribution<double> jitter(-0.25, 0.25);
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = lo + (static_cast<double>(i) + 0.5 + jitter(gen_)) * step;
    std::shuffle(v.begin(), v.end(), gen_);
    return v;
  }
  std::vector<std::int64_t> indices(std::size_t n, std::int64_t bound) {
    std::uniform_int_distribution<std::int64_t> dist(0, bound - 1);
    std::vector<std::int64_t> v(n);
    for (auto& x : v) x = dist(gen_);
    return v;
  }
  /// A random permutation of 0..n-1.
  std::vector<std::int64_t> permutation(std::size_t n) {
    std::vector<std::int64_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int64_t>(i);
    std::shuffle(v.begin(), v.end(), gen_);
    return v;
  }
  std::mt19937_64& engine() { return gen_; }

 private:
  std::mt19937_64 gen_;
};

/// The values of a tensor as doubles (row-major).
template <std::size_t D, class K>
std::vector<double> values_of(const Tensor<D, K>& t) {
  const TensorData d = t.to_data();
  std::vector<double> out(d.num_elements());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = d.value_as_double(i);
  return out;
}

/// Checks shape and values (within `tol`), reporting at the caller's line.
template <std::size_t D>
void expect_values(const Tensor<D>& t, const Shape& shape, const std::vector<double>& expected,
                   Tolerance tol = Tolerance::rel_abs(1e-6, 1e-6),
                   std::source_location loc = std::source_location::current()) {
  try {
    t.to_data().convert(DType::F64).assert_approx_eq(TensorData(expected, shape), tol);
  } catch (const std::exception& e) {
    ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line())) << e.what();
  }
}

/// Checks that `g` holds a gradient of `shape` with `expected` values.
template <std::size_t D>
void expect_grad(const std::optional<Tensor<D>>& g, const Shape& shape, const std::vector<double>& expected,
                 Tolerance tol = Tolerance::rel_abs(1e-5, 1e-5),
                 std::source_location loc = std::source_location::current()) {
  if (!g) {
    ADD_FAILURE_AT(loc.file_name(), static_cast<int>(loc.line())) << "no gradient reached this leaf";
    return;
  }
  expect_values(*g, shape, expected, tol, loc);
}

using burn::testing::expect_op_error;

}  // namespace burn::adtest

#endif  // BURN_HAS_AUTODIFF
