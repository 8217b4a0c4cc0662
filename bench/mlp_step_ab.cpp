// The MLP training step of flex_bench.cpp (784-1024-1024-10, batch 256,
// relu, log-softmax cross-entropy, hand-written SGD) on Device::flex() and
// Device::cpu() in one process, alternating blocks of 10 steps, so both see
// the same drift of a shared machine. burn-flex-bench runs the two rows
// minutes apart; on this 2-core VM their ratio moves by +-3 % from run to run,
// more than the difference being measured. Usage:
//   build/release/bench/burn-mlp-step-ab [rounds]     (default 30: 300 steps each)
// Prints each device's median and 25th-percentile step time and cpu/flex.
#include <burn/activation.hpp>
#include <burn/burn.hpp>
#include <burn/module/ops.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using burn::Device;
using burn::Tensor;

class MlpStep {
 public:
  explicit MlpStep(const Device& base) : device_(seeded(base).autodiff()) { device_.sync(); }

  void step() {
    auto h1 = burn::activation::relu(burn::module::linear(x_, w1_, b1_));
    auto h2 = burn::activation::relu(burn::module::linear(h1, w2_, b2_));
    auto logits = burn::module::linear(h2, w3_, b3_);
    auto loss = burn::activation::log_softmax(logits, 1).gather(1, labels_).mean().neg();
    auto grads = loss.backward();
    sgd(w1_, grads);
    sgd(w2_, grads);
    sgd(w3_, grads);
    sgd(b1_, grads);
    sgd(b2_, grads);
    sgd(b3_, grads);
    device_.sync();
  }

 private:
  static Device seeded(Device d) {
    d.seed(42);
    return d;
  }
  Tensor<2> param(std::size_t in, std::size_t out) const {
    const double scale = 2.0 / static_cast<double>(in);
    return Tensor<2>::random({in, out}, burn::Distribution::uniform(-scale, scale), device_).detach().require_grad();
  }
  Tensor<1> bias(std::size_t n) const { return Tensor<1>::zeros({n}, device_).require_grad(); }
  Tensor<2, burn::Int> labels() const {
    std::vector<std::int64_t> v(256);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>((i * 7) % 10);
    return Tensor<2, burn::Int>::from_data(burn::TensorData(v, {256, 1}), device_);
  }
  template <std::size_t D>
  static void sgd(Tensor<D>& p, const burn::Gradients& g) {
    if (auto grad = p.grad(g)) p = (p.detach() - grad->detach() * 0.01).require_grad();
  }

  Device device_;
  Tensor<2> w1_ = param(784, 1024), w2_ = param(1024, 1024), w3_ = param(1024, 10);
  Tensor<1> b1_ = bias(1024), b2_ = bias(1024), b3_ = bias(10);
  Tensor<2> x_ = Tensor<2>::random({256, 784}, burn::Distribution::normal(0.0, 1.0), device_).detach();
  Tensor<2, burn::Int> labels_ = labels();
};

double quantile(std::vector<double> t, double q) {
  std::sort(t.begin(), t.end());
  return t[static_cast<std::size_t>(q * static_cast<double>(t.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(2, std::atoi(argv[1])) : 30;
  MlpStep flex(Device::flex()), cpu(Device::cpu());
  std::vector<double> tf, tc;
  auto block = [](MlpStep& m, std::vector<double>& times, bool keep) {
    for (int i = 0; i < 10; ++i) {
      const auto start = std::chrono::steady_clock::now();
      m.step();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (keep) times.push_back(ms);
    }
  };
  for (int r = 0; r < rounds; ++r) {  // the first round of each warms up (plans, caches)
    block(flex, tf, r > 0);
    block(cpu, tc, r > 0);
  }
  const double f50 = quantile(tf, 0.5), c50 = quantile(tc, 0.5), f25 = quantile(tf, 0.25), c25 = quantile(tc, 0.25);
  std::printf("mlp_train_step, %zu steps each, alternating blocks of 10\n", tf.size());
  std::printf("  flex: median %.3f ms, p25 %.3f ms\n", f50, f25);
  std::printf("  cpu:  median %.3f ms, p25 %.3f ms\n", c50, c25);
  std::printf("  cpu/flex: median %.3f, p25 %.3f (below 1: cpu faster)\n", c50 / f50, c25 / f25);
  return 0;
}
