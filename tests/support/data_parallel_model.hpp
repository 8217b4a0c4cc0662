// The model and data of the data-parallel tests: a small MLP trained on a
// fixed regression problem, the same in the ranks (tests/support/
// collective_worker_main.cpp) and in the single-process reference they are
// compared with (tests/collective/gradient_sync_test.cpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

#include <burn/burn.hpp>

namespace burn::testing::data_parallel {

/// fc1 and fc2 make the prediction; `side` is used by some ranks' losses only
/// and `never` by none (the partial-gradient scenario).
struct Mlp {
  nn::Linear fc1;
  nn::Linear fc2;
  nn::Linear side;
  nn::Linear never;
  BURN_MODULE(fc1, fc2, side, never)
  Tensor<2> forward(const Tensor<2>& x) const { return fc2.forward(fc1.forward(x).tanh()); }
};

inline constexpr std::size_t kInputs = 8;
inline constexpr std::size_t kOutputs = 4;
inline constexpr std::size_t kBatch = 64;
inline constexpr int kSteps = 20;

inline Mlp make_mlp(const Device& device, std::uint64_t seed) {
  device.seed(seed);
  return Mlp{nn::LinearConfig{kInputs, 32}.init(device), nn::LinearConfig{32, kOutputs}.init(device),
             nn::LinearConfig{kInputs, 2}.init(device), nn::LinearConfig{kInputs, 2}.init(device)};
}

/// Rows [begin, begin + count) of step `step`'s batch of kBatch: inputs and
/// targets (a fixed smooth function of the inputs).
inline std::pair<Tensor<2>, Tensor<2>> batch_rows(int step, std::size_t begin, std::size_t count,
                                                  const Device& device) {
  std::vector<float> x(count * kInputs), y(count * kOutputs);
  for (std::size_t r = 0; r < count; ++r) {
    const double row = static_cast<double>(step) * kBatch + static_cast<double>(begin + r);
    for (std::size_t j = 0; j < kInputs; ++j)
      x[r * kInputs + j] = static_cast<float>(std::sin(0.37 * row + 1.3 * static_cast<double>(j)));
    for (std::size_t k = 0; k < kOutputs; ++k)
      y[r * kOutputs + k] = static_cast<float>(std::cos(x[r * kInputs + k] + 0.5 * x[r * kInputs + k + 4]));
  }
  return {Tensor<2>::from_data(TensorData(x, Shape{count, kInputs}), device),
          Tensor<2>::from_data(TensorData(y, Shape{count, kOutputs}), device)};
}

inline optim::Optimizer make_optimizer(const std::string& name) {
  if (name == "adam") return optim::AdamConfig{}.init();
  return optim::SgdConfig{}.with_momentum(optim::MomentumConfig{0.9, 0.0, false}).init();
}

inline double learning_rate(const std::string& name) { return name == "adam" ? 0.01 : 0.05; }

/// Every trainable parameter's values, flattened in declaration order.
inline std::vector<float> flat_params(const Mlp& model) {
  std::vector<float> out;
  module::for_each_param(model, [&](const std::string&, const module::ParamBase& p) {
    const std::vector<float> v = burn::detail::to_data(p.ref()).convert(DType::F32).to_vec<float>();
    out.insert(out.end(), v.begin(), v.end());
  });
  return out;
}

inline void write_floats(const std::string& path, const std::vector<float>& values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
}

inline std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  std::vector<float> values(static_cast<std::size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  return values;
}

}  // namespace burn::testing::data_parallel
