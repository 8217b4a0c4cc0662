// Gradient checking against central finite differences in f64.
//
//   GradCheck(device).run([](auto x, auto y) { return x.matmul(y); },
//                         Input<2>{rng.uniform(6, -1, 1), {2, 3}}, Input<2>{..., {3, 4}});
//
// The function's outputs are reduced to a scalar with fixed random weights
// (loss = sum_i sum(y_i * w_i)), so every output element matters. backward()
// gives the analytic gradient of every input; each element is then compared
// with (loss(x + eps) - loss(x - eps)) / (2 eps) computed without recording.
//
// With checkpointing on, each leaf first passes through a short chain of
// memory-bound identities (x * 1, then neg twice). Their outputs are not kept,
// so the op under test sees inputs that backward must recompute.
#pragma once

#include "ad_support.hpp"

#include <array>
#include <cmath>
#include <sstream>
#include <tuple>
#include <utility>

// Device::autodiff() exists only in builds with BURN_AUTODIFF.
#if BURN_HAS_AUTODIFF

namespace burn::adtest {

/// One f64 input: row-major values and shape (rank D).
template <std::size_t D>
struct Input {
  std::vector<double> values;
  Shape shape;
};

namespace gc {

template <std::size_t D>
Tensor<D> make(const std::vector<double>& values, const Shape& shape, const Device& device) {
  return Tensor<D>::from_data(TensorData(values, shape), {device, DType::F64});
}

template <std::size_t D>
std::vector<Tensor<D>> as_outputs(const Tensor<D>& t) {
  return {t};
}
template <std::size_t D>
std::vector<Tensor<D>> as_outputs(const std::vector<Tensor<D>>& v) {
  return v;
}

/// A tensor's values flattened to doubles, plus its shape.
struct Host {
  std::vector<double> values;
  Shape shape;
};

}  // namespace gc

class GradCheck {
 public:
  explicit GradCheck(Device autodiff_device) : device_(std::move(autodiff_device)) {}

  GradCheck& eps(double e) {
    eps_ = e;
    return *this;
  }
  GradCheck& tolerance(double rtol, double atol) {
    rtol_ = rtol;
    atol_ = atol;
    return *this;
  }
  GradCheck& seed(std::uint64_t s) {
    seed_ = s;
    return *this;
  }

  template <class F, std::size_t... Ds>
  void run(F&& f, const Input<Ds>&... inputs) const {
    run_impl(std::forward<F>(f), std::index_sequence_for<Input<Ds>...>{}, inputs...);
  }

 private:
  bool checkpointing() const { return device_.gradient_checkpointing_strategy().has_value(); }

  template <std::size_t D>
  Tensor<D> prepare(const Tensor<D>& leaf) const {
    return checkpointing() ? (leaf * 1.0).neg().neg() : leaf;
  }

  /// sum_i sum(y_i * w_i) as a rank-1, one-element tensor.
  template <std::size_t D>
  Tensor<1> loss_of(const std::vector<Tensor<D>>& ys, const std::vector<gc::Host>& weights) const {
    std::optional<Tensor<1>> total;
    for (std::size_t i = 0; i < ys.size(); ++i) {
      const Tensor<1> part = (ys[i] * gc::make<D>(weights[i].values, weights[i].shape, device_)).sum();
      total = total ? *total + part : part;
    }
    return *total;
  }

  template <class F, std::size_t... Is, std::size_t... Ds>
  void run_impl(F&& f, std::index_sequence<Is...>, const Input<Ds>&... inputs) const {
    constexpr std::size_t N = sizeof...(Ds);
    const std::array<std::vector<double>, N> base{inputs.values...};
    const std::array<Shape, N> shapes{inputs.shape...};
    for (std::size_t k = 0; k < N; ++k)
      ASSERT_EQ(base[k].size(), shapes[k].num_elements()) << "input " << k << " has the wrong number of values";

    // Analytic gradients.
    const auto leaves = std::make_tuple(gc::make<Ds>(inputs.values, inputs.shape, device_).require_grad()...);
    const auto outputs = gc::as_outputs(f(prepare(std::get<Is>(leaves))...));
    ASSERT_FALSE(outputs.empty());
    Rng rng(seed_);
    std::vector<gc::Host> weights;
    for (const auto& y : outputs) {
      std::vector<double> w = rng.signed_magnitudes(y.num_elements(), 0.5, 1.5);
      weights.push_back({std::move(w), y.shape()});
    }
    const Gradients grads = loss_of(outputs, weights).backward();
    std::array<std::optional<gc::Host>, N> analytic;
    std::array<std::string, N> problems;
    (
        [&] {
          const auto g = std::get<Is>(leaves).grad(grads);
          if (!g) {
            problems[Is] = "no gradient reached input " + std::to_string(Is);
            return;
          }
          if (g->shape() != shapes[Is] || g->dtype() != DType::F64) {
            problems[Is] = "gradient of input " + std::to_string(Is) + " has shape " + g->shape().to_string() +
                           " and dtype " + std::string(dtype_name(g->dtype())) + "; expected " +
                           shapes[Is].to_string() + " f64";
            return;
          }
          if (!(g->device() == device_))
            problems[Is] = "gradient of input " + std::to_string(Is) + " is on " + g->device().to_string();
          analytic[Is] = gc::Host{values_of(*g), g->shape()};
        }(),
        ...);

    // Central differences, recorded nowhere.
    NoGradGuard no_grad;
    auto loss_at = [&](const std::array<std::vector<double>, N>& vals) {
      const auto ys = gc::as_outputs(f(gc::make<Ds>(vals[Is], shapes[Is], device_)...));
      return loss_of(ys, weights).template into_scalar<double>();
    };
    for (std::size_t k = 0; k < N; ++k) {
      if (!problems[k].empty()) {
        ADD_FAILURE() << problems[k];
        continue;
      }
      std::array<std::vector<double>, N> vals = base;
      std::ostringstream bad;
      std::size_t n_bad = 0;
      for (std::size_t j = 0; j < base[k].size(); ++j) {
        vals[k][j] = base[k][j] + eps_;
        const double up = loss_at(vals);
        vals[k][j] = base[k][j] - eps_;
        const double down = loss_at(vals);
        vals[k][j] = base[k][j];
        const double numeric = (up - down) / (2 * eps_);
        const double got = analytic[k]->values[j];
        if (!(std::abs(got - numeric) <= atol_ + rtol_ * std::abs(numeric))) {
          if (n_bad < 8) bad << "\n  [" << j << "] backward " << got << ", finite difference " << numeric;
          ++n_bad;
        }
      }
      if (n_bad)
        ADD_FAILURE() << "input " << k << " (shape " << shapes[k].to_string() << "): " << n_bad << " of "
                      << base[k].size() << " gradient elements differ from central differences:" << bad.str();
    }
  }

  Device device_;
  double eps_ = 1e-6;
  double rtol_ = 1e-6;
  double atol_ = 1e-6;
  std::uint64_t seed_ = 7;
};

/// Fixture for one Mode: the autodiff device, a seeded Rng, and `check`.
class AdTest : public ::testing::TestWithParam<Mode> {
 protected:
  Device ad() const { return autodiff_device(GetParam()); }
  bool checkpointing() const { return GetParam().checkpointing; }

  template <class F, std::size_t... Ds>
  void check(F&& f, const Input<Ds>&... inputs) const {
    GradCheck(ad()).run(std::forward<F>(f), inputs...);
  }

  /// A tracked f64 leaf.
  template <std::size_t D>
  Tensor<D> leaf(const std::vector<double>& values, const Shape& shape) const {
    return gc::make<D>(values, shape, ad()).require_grad();
  }
  /// An untracked f64 tensor on the autodiff device.
  template <std::size_t D>
  Tensor<D> constant(const std::vector<double>& values, const Shape& shape) const {
    return gc::make<D>(values, shape, ad());
  }
  template <std::size_t D>
  Tensor<D, Int> ints(const std::vector<std::int64_t>& values, const Shape& shape) const {
    return Tensor<D, Int>::from_data(TensorData(values, shape), {ad(), DType::I64});
  }
  template <std::size_t D>
  Tensor<D, Bool> bools(const std::vector<bool>& values, const Shape& shape) const {
    return Tensor<D, Bool>::from_data(TensorData(values, shape), ad());
  }

  Rng rng{12345};
};

}  // namespace burn::adtest

/// Instantiates an AdTest-derived fixture over every device x {plain, checkpointing}.
#define BURN_AD_MODES(Fixture) \
  INSTANTIATE_TEST_SUITE_P(Modes, Fixture, ::testing::ValuesIn(burn::adtest::all_modes()), burn::adtest::mode_name)

#endif  // BURN_HAS_AUTODIFF
