// Shared pieces of the optimiser tests: a one-parameter module fed fixed
// gradients, a tiny model with a training step, and a temporary directory.
#pragma once

#include <atomic>
#include <burn/nn/linear.hpp>
#include <burn/nn/loss/mse.hpp>
#include <burn/optim/optimizer.hpp>
#include <filesystem>
#include <random>
#include <string>

#include "burn_test.hpp"

namespace burn::optim_test {

/// One rank-1 parameter.
struct Vec {
  module::Param<Tensor<1>> w;
  BURN_MODULE(w)
};

/// The gradient sequence of the reference trajectories.
inline const std::vector<std::vector<double>>& fixed_grads() {
  static const std::vector<std::vector<double>> g{{0.5, -1.0}, {0.1, 0.3}, {-0.2, 0.4}};
  return g;
}

/// Starts w at [1, -2] and applies the fixed gradients with `optim` at `lr`;
/// returns w after each step.
inline std::vector<std::vector<double>> trajectory(optim::Optimizer& optim, const Device& device, double lr,
                                                   DType dtype = DType::F64) {
  Vec m{
      module::Param(Tensor<1>::from_data(TensorData(std::vector<double>{1.0, -2.0}).convert(dtype), {device, dtype}))};
  std::vector<std::vector<double>> out;
  for (const auto& g : fixed_grads()) {
    optim::GradientsParams grads;
    grads.insert(m.w.id(), Tensor<1>::from_data(TensorData(g).convert(dtype), {device, dtype}));
    m = optim.step(lr, m, std::move(grads));
    out.push_back(m.w->to_data().convert<double>().to_vec<double>());
  }
  return out;
}

inline void expect_trajectory(const std::vector<std::vector<double>>& got, const std::vector<std::vector<double>>& want,
                              double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t s = 0; s < got.size(); ++s)
    for (std::size_t i = 0; i < want[s].size(); ++i)
      EXPECT_NEAR(got[s][i], want[s][i], tol * std::max(1.0, std::abs(want[s][i])))
          << "step " << s + 1 << ", element " << i;
}

/// A two-layer regression model.
struct TinyNet {
  nn::Linear fc1;
  nn::Linear fc2;
  BURN_MODULE(fc1, fc2)
  Tensor<2> forward(const Tensor<2>& x) const { return fc2.forward(fc1.forward(x).tanh()); }
};

inline TinyNet tiny_net(const Device& device) {
  device.seed(7);
  return TinyNet{nn::LinearConfig{3, 4}.init(device), nn::LinearConfig{4, 2}.init(device)};
}

/// Fixed inputs [6, 3] and targets [6, 2] that TinyNet can fit (a linear map of x).
inline std::pair<Tensor<2>, Tensor<2>> tiny_batch(const Device& device) {
  std::vector<double> x(18), y(12);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7 * static_cast<double>(i) + 0.3);
  for (std::size_t r = 0; r < 6; ++r) {
    y[2 * r] = 0.8 * x[3 * r] - 0.5 * x[3 * r + 1] + 0.2;
    y[2 * r + 1] = -0.3 * x[3 * r] + 0.6 * x[3 * r + 2];
  }
  return {Tensor<2>::from_data(TensorData(x, Shape{6, 3}), device),
          Tensor<2>::from_data(TensorData(y, Shape{6, 2}), device)};
}

/// One forward/backward/step; returns the loss before the step.
template <class M>
double train_step(optim::Optimizer& optim, M& model, const std::pair<Tensor<2>, Tensor<2>>& batch, double lr) {
  const Tensor<1> loss = nn::loss::MseLoss{}.forward(model.forward(batch.first), batch.second);
  Gradients grads = loss.backward();
  model = optim.step(lr, model, optim::GradientsParams::from_grads(grads, model));
  return loss.into_scalar<double>();
}

/// Every tensor of a module as host data, in visiting order.
template <class M>
std::vector<TensorData> snapshot(const M& model) {
  std::vector<TensorData> out;
  module::for_each_tensor(
      model, [&](const std::string&, const module::ParamBase& p) { out.push_back(burn::detail::to_data(p.ref())); });
  return out;
}

/// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("burn_optim_test_" + std::to_string(std::random_device{}()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace burn::optim_test
