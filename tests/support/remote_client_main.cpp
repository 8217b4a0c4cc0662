// A burn client process for the remote tests that need several clients, or a
// client to kill:
//
//   burn_remote_client hold HOST:PORT MIB    holds MIB MiB of tensors on the server's
//                                            flex:0, prints "ready", then waits (at
//                                            most 120 s) to be killed
//   burn_remote_client train HOST:PORT SEED STEPS
//                                            trains a small regression on the server's
//                                            flex:0 and on local flex side by side;
//                                            exit 0 when every loss agrees bit for bit
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <burn/burn.hpp>

namespace {

using namespace burn;

int hold(const std::string& address, std::size_t mib) {
  const Device d = Device::remote_options(RemoteHost{address}).device("flex:0").init();
  std::vector<Tensor<1>> held;
  for (std::size_t i = 0; i < mib; ++i) held.push_back(Tensor<1>::ones({std::size_t{1} << 18}, d) * 2.0);  // 1 MiB each
  d.sync();
  std::printf("ready\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(120));
  return 3;  // not killed in time
}

#if BURN_HAS_AUTODIFF
int train(const std::string& address, unsigned seed, int steps) {
  const Device remote = Device::remote_options(RemoteHost{address}).device("flex:0").init().autodiff();
  const Device local = Device::flex().autodiff();
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(64 * 16), y(64), w0(16);
  for (auto& v : x) v = normal(rng);
  for (auto& v : y) v = normal(rng);
  for (auto& v : w0) v = 0.1f * normal(rng);

  struct Run {
    Tensor<2> x, y, w;
  };
  auto make = [&](const Device& d) {
    return Run{Tensor<2>::from_data(TensorData(x, {64, 16}), d), Tensor<2>::from_data(TensorData(y, {64, 1}), d),
               Tensor<2>::from_data(TensorData(w0, {16, 1}), d)};
  };
  Run runs[2] = {make(remote), make(local)};
  for (int step = 0; step < steps; ++step) {
    float losses[2];
    for (int r = 0; r < 2; ++r) {
      auto& run = runs[r];
      auto w = run.w.require_grad();
      auto diff = run.x.matmul(w) - run.y;
      auto loss = (diff * diff).mean();
      auto grads = loss.backward();
      run.w = (w - *w.grad(grads) * 0.05).detach();
      losses[r] = loss.into_scalar<float>();
    }
    if (std::memcmp(&losses[0], &losses[1], sizeof(float)) != 0) {
      std::fprintf(stderr, "seed %u step %d: remote loss %.9g, local loss %.9g\n", seed, step, losses[0], losses[1]);
      return 1;
    }
  }
  std::printf("seed %u: %d steps agree\n", seed, steps);
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "hold" && argc == 4) return hold(argv[2], std::stoul(argv[3]));
#if BURN_HAS_AUTODIFF
    if (mode == "train" && argc == 5)
      return train(argv[2], static_cast<unsigned>(std::stoul(argv[3])), std::stoi(argv[4]));
#endif
    std::fprintf(stderr, "usage: burn_remote_client hold HOST:PORT MIB | train HOST:PORT SEED STEPS\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "burn_remote_client: %s\n", e.what());
    return 1;
  }
}
