// The MLP training step of flex_bench.cpp (bench/mlp_step.hpp: 784-1024-1024-10, batch 256,
// relu, log-softmax cross-entropy, hand-written SGD) on Device::flex() and
// Device::cpu() in one process, alternating blocks of 10 steps, so both see
// the same drift of a shared machine. burn-flex-bench runs the two rows
// minutes apart; on this 2-core VM their ratio moves by +-3 % from run to run,
// more than the difference being measured. Usage:
//   build/release/bench/burn-mlp-step-ab [rounds] [block] [control]
// rounds (default 30) blocks of `block` steps (default 10) per device, the
// first round of each a warm-up. Longer blocks come closer to one model
// training alone (each block starts with caches the other model filled):
// with block > 10 the first 10 steps of every block are not timed.
// Prints each device's median and 25th-percentile step time and cpu/flex.
// With a third argument `control`, a second, identical flex model takes
// its own block in every round and flex'/flex is printed too: the tool's
// own noise floor, measured in the same run.
#include <burn/burn.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

#include "mlp_step.hpp"

namespace {

using burn::Device;
using burn_bench::MlpStep;

Device seeded(Device d) {
  d.seed(42);  // flex_bench.cpp's seed: the same parameters as its rows
  return d;
}

double quantile(std::vector<double> t, double q) {
  std::sort(t.begin(), t.end());
  return t[static_cast<std::size_t>(q * static_cast<double>(t.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(2, std::atoi(argv[1])) : 30;
  const int block_steps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 10;
  const int untimed = block_steps > 10 ? 10 : 0;
  const bool control = argc > 3 && std::string_view(argv[3]) == "control";
  MlpStep flex(seeded(Device::flex())), cpu(seeded(Device::cpu()));
  std::optional<MlpStep> twin;
  if (control) twin.emplace(seeded(Device::flex()));
  std::vector<double> tf, tc, tt;
  auto block = [&](MlpStep& m, std::vector<double>& times, bool keep) {
    for (int i = 0; i < block_steps; ++i) {
      const auto start = std::chrono::steady_clock::now();
      m.step();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (keep && i >= untimed) times.push_back(ms);
    }
  };
  for (int r = 0; r < rounds; ++r) {  // the first round of each warms up (plans, caches)
    block(flex, tf, r > 0);
    block(cpu, tc, r > 0);
    if (twin) block(*twin, tt, r > 0);
  }
  const double f50 = quantile(tf, 0.5), c50 = quantile(tc, 0.5), f25 = quantile(tf, 0.25), c25 = quantile(tc, 0.25);
  std::printf("mlp_train_step, %zu timed steps each, alternating blocks of %d\n", tf.size(), block_steps);
  std::printf("  flex: median %.3f ms, p25 %.3f ms\n", f50, f25);
  std::printf("  cpu:  median %.3f ms, p25 %.3f ms\n", c50, c25);
  if (twin)
    std::printf("  flex'/flex: median %.3f, p25 %.3f (an identical flex model: the noise floor)\n",
                quantile(tt, 0.5) / f50, quantile(tt, 0.25) / f25);
  std::printf("  cpu/flex: median %.3f, p25 %.3f (below 1: cpu faster)\n", c50 / f50, c25 / f25);
  return 0;
}
