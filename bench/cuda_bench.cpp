// burn's side of the CUDA benchmark: the workloads of bench/cuda_compare.py
// on Device::cuda(), which runs PyTorch on the same GPU in the same job and
// prints both side by side (docs/cuda.md, "Performance").
//
// Each workload runs once to warm up (NVRTC compiles its kernels then), and
// then `reps` repetitions of `iters` runs, each run ending with
// device.sync(); the figure is the median over repetitions of the mean time
// per run. Inputs are made, with a fixed seed, outside the timer. Prints one
// JSON object: {"device": ..., "results": {name: {"ms": .., "work": ..,
// "unit": .., "reserved_bytes": ..}}}, where `work` is the bytes moved or
// the floating-point operations done per run (the rate the report prints)
// and reserved_bytes the device memory the allocator holds after the first
// run, cached blocks included (PyTorch's max_memory_reserved).
//
//   burn-cuda-bench [--small] [--filter SUBSTRING] [--device NAME]
//
// --device runs the workloads on another device ("flex", "cpu": trying the
// harness on a machine without a GPU). Exits with status 2 and the reason
// when the device is not there.
#include <burn/activation.hpp>
#include <burn/burn.hpp>
#include <burn/module/ops.hpp>

#include "mlp_step.hpp"
#include "resnet18.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using burn::Device;
using burn::DType;
using burn::Tensor;

constexpr std::uint64_t kSeed = 42;

struct Workload {
  std::string name;
  double work = 0;   ///< bytes or floating-point operations per run
  std::string unit;  ///< "bytes" or "flop"
  int iters = 1, reps = 3;
  /// Makes the inputs and returns one run (which ends in a sync).
  std::function<std::function<void()>(const Device&)> prepare;
};

template <std::size_t D>
Tensor<D> randn(const burn::Shape& shape, const Device& device, DType dtype = DType::F32) {
  return Tensor<D>::random(shape, burn::Distribution::normal(0.0, 1.0), device).cast(dtype);
}

std::vector<Workload> workloads(bool small) {
  // The sizes: GEMM 8192³, elementwise over 256 MiB of f32.
  const std::size_t n = small ? 512 : 8192;
  const std::size_t elements = small ? (std::size_t{1} << 20) : (std::size_t{1} << 26);
  const std::size_t cols = 1024, rows = elements / cols;
  const double f32_bytes = 4.0 * static_cast<double>(elements);
  std::vector<Workload> w;
  for (DType dtype : {DType::F32, DType::BF16}) {
    const std::string name = std::string(dtype == DType::F32 ? "sgemm_" : "bf16_gemm_") + std::to_string(n);
    w.push_back({name, 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n), "flop", 1, 3,
                 [n, dtype](const Device& d) {
                   auto a = randn<2>({n, n}, d, dtype);
                   auto b = randn<2>({n, n}, d, dtype);
                   return std::function<void()>([a, b, d] {
                     auto c = a.matmul(b);
                     d.sync();
                   });
                 }});
  }
  // Read two, write one; read one, write one.
  w.push_back({"add", 3.0 * f32_bytes, "bytes", 5, 3, [elements](const Device& d) {
                 auto a = randn<1>({elements}, d);
                 auto b = randn<1>({elements}, d);
                 return std::function<void()>([a, b, d] {
                   auto c = a + b;
                   d.sync();
                 });
               }});
  w.push_back({"exp", 2.0 * f32_bytes, "bytes", 5, 3, [elements](const Device& d) {
                 auto a = randn<1>({elements}, d);
                 return std::function<void()>([a, d] {
                   auto c = a.exp();
                   d.sync();
                 });
               }});
  // gelu(x·w + b) with w, b rows broadcast over x: one pass when fused.
  w.push_back({"gelu_affine", 2.0 * f32_bytes, "bytes", 5, 3, [rows, cols](const Device& d) {
                 auto x = randn<2>({rows, cols}, d);
                 auto wt = randn<1>({cols}, d).unsqueeze<2>();
                 auto b = randn<1>({cols}, d).unsqueeze<2>();
                 return std::function<void()>([x, wt, b, d] {
                   auto y = burn::activation::gelu(x * wt + b);
                   d.sync();
                 });
               }});
  w.push_back({"softmax", 2.0 * f32_bytes, "bytes", 5, 3, [rows, cols](const Device& d) {
                 auto x = randn<2>({rows, cols}, d);
                 return std::function<void()>([x, d] {
                   auto y = burn::activation::softmax(x, -1);
                   d.sync();
                 });
               }});
  w.push_back({"layer_norm", 2.0 * f32_bytes, "bytes", 5, 3, [rows, cols](const Device& d) {
                 auto x = randn<2>({rows, cols}, d);
                 auto gamma = Tensor<1>::ones({cols}, d);
                 auto beta = Tensor<1>::zeros({cols}, d);
                 return std::function<void()>([x, gamma, beta, d] {
                   auto y = burn::module::layer_norm(x, gamma, beta, 1e-5);
                   d.sync();
                 });
               }});
  // The CPU benchmark's MLP step (784-1024-1024-10, batch 256; bench/mlp_step.hpp).
  const burn_bench::MlpShape mlp = small ? burn_bench::kSmallMlp : burn_bench::MlpShape{};
  const double mlp_flop = 6.0 * static_cast<double>(mlp.batch) *
                          static_cast<double>(mlp.in * mlp.hidden + mlp.hidden * mlp.hidden + mlp.hidden * mlp.classes);
  w.push_back({"mlp_train_step", mlp_flop, "flop", 10, 3, [mlp](const Device& d) {
                 auto step = std::make_shared<burn_bench::MlpStep>(d, mlp);
                 return std::function<void()>([step] { step->step(); });
               }});
  // ResNet-18, batch 32 of 224x224 images (bench/resnet18.hpp).
  const burn_bench::ResNetShape resnet = small ? burn_bench::kSmallResNet : burn_bench::ResNetShape{};
  w.push_back({"resnet18_train_step", burn_bench::resnet18_train_flop(resnet), "flop", 5, 3, [resnet](const Device& d) {
                 auto step = std::make_shared<burn_bench::ResNetStep>(d, resnet);
                 return std::function<void()>([step] { step->step(); });
               }});
  return w;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool small = false;
  std::string filter;
  std::string device_name = "cuda";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--small") small = true;
    else if (arg == "--filter" && i + 1 < argc) filter = argv[++i];
    else if (arg == "--device" && i + 1 < argc) device_name = argv[++i];
    else {
      std::fprintf(stderr,
                   "burn-cuda-bench: unknown argument '%s' (usage: burn-cuda-bench [--small] [--filter S] "
                   "[--device NAME])\n",
                   argv[i]);
      return 1;
    }
  }
  std::optional<Device> chosen;
  try {
    // Device::cuda() says why there is no device (no driver, no GPU).
    chosen = device_name == "cuda" ? Device::cuda() : Device::parse(device_name);
  } catch (const burn::DeviceError& e) {
    std::fprintf(stderr, "burn-cuda-bench: %s\n", e.what());
    return 2;
  }
  const Device& device = *chosen;
  device.seed(kSeed);
  std::printf("{\"device\": \"%s\", \"results\": {", device.to_string().c_str());
  bool first = true;
  for (const Workload& w : workloads(small)) {
    if (!filter.empty() && w.name.find(filter) == std::string::npos) continue;
    const std::function<void()> run = w.prepare(device);
    device.sync();
    run();  // warm-up: NVRTC compiles this workload's kernels
    const auto usage = device.memory_pool_usage();
    std::vector<double> means;
    for (int r = 0; r < w.reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < w.iters; ++i) run();
      const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - t0;
      means.push_back(elapsed.count() / w.iters);
    }
    std::printf("%s\n  \"%s\": {\"ms\": %.6g, \"work\": %.6g, \"unit\": \"%s\", \"reserved_bytes\": %llu}",
                first ? "" : ",", w.name.c_str(), median(means), w.work, w.unit.c_str(),
                static_cast<unsigned long long>(usage ? usage->bytes_reserved : 0));
    std::fflush(stdout);
    first = false;
  }
  std::printf("\n}}\n");
  return 0;
}
