// The benchmark scripts/gpu-check.sh prints: f32 matmul (square, with a
// transposed operand, batched), conv2d (3x3 and 1x1) and element-wise add/exp on a Vulkan adapter, as device time (timestamp
// queries through Device::profile) and as achieved TFLOP/s and GB/s against
// the adapter's peaks. Disabled in normal runs (it allocates gigabytes on a
// real GPU); gpu-check.sh runs it with --gtest_also_run_disabled_tests.
//
// Environment (all optional):
//   BURN_BENCH_DEVICE       device to measure (vulkan:0)
//   BURN_BENCH_ALLOW_CPU    1: accept a CPU adapter (lavapipe) instead of failing
//   BURN_BENCH_MATMUL       square matmul size n (4096: n x n x n)
//   BURN_BENCH_BATCHED      batched matmul "b,n" (16,1024: b products of n x n x n)
//   BURN_BENCH_CONV         conv2d "batch,channels,size" (32,128,56: 3x3 and 1x1, channels -> channels)
//   BURN_BENCH_ELEMENTS     element-wise length (268435456 = 256M floats)
//   BURN_BENCH_REPS         timed repetitions per case (5)
//   BURN_BENCH_PEAK_GBS     peak memory bandwidth in GB/s  } override the table
//   BURN_BENCH_PEAK_TFLOPS  peak f32 (non-tensor) TFLOP/s  }
//   BURN_BENCH_PEAK_TABLE   "name fragment=GB/s,TFLOP/s;..." matched against the adapter's name
#include "vk_test.hpp"

#include <burn/module/ops.hpp>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace {

using burn::Device;
using burn::Tensor;
using Clock = std::chrono::steady_clock;

std::string env(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}
double env_number(const char* name, double fallback) {
  const std::string v = env(name, "");
  if (v.empty()) return fallback;
  try {
    return std::stod(v);
  } catch (const std::exception&) {
    throw burn::Error("gpu-bench", std::string(name) + "=" + v + " is not a number");
  }
}

/// `count` comma-separated sizes from variable `name`.
std::vector<std::size_t> numbers(const char* name, const std::string& fallback, std::size_t count) {
  std::vector<std::size_t> out;
  std::stringstream in(env(name, fallback));
  for (std::string item; std::getline(in, item, ',');) out.push_back(static_cast<std::size_t>(std::stoul(item)));
  if (out.size() != count)
    throw burn::Error("gpu-bench", std::string(name) + " needs " + std::to_string(count) + " comma-separated sizes");
  return out;
}

struct Peaks {
  double gbs = 0, tflops = 0;  // 0: unknown
};

/// The peaks of `adapter`: flags first, else the first table entry whose name
/// fragment occurs in the adapter's name (case-insensitive).
Peaks peaks_for(const std::string& adapter) {
  Peaks p;
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::stringstream table(env("BURN_BENCH_PEAK_TABLE", ""));
  for (std::string entry; std::getline(table, entry, ';');) {
    const auto eq = entry.find('='), comma = entry.find(',');
    if (eq == std::string::npos || comma == std::string::npos || comma < eq) continue;
    if (lower(adapter).find(lower(entry.substr(0, eq))) == std::string::npos) continue;
    p.gbs = std::stod(entry.substr(eq + 1, comma - eq - 1));
    p.tflops = std::stod(entry.substr(comma + 1));
    break;
  }
  p.gbs = env_number("BURN_BENCH_PEAK_GBS", p.gbs);
  p.tflops = env_number("BURN_BENCH_PEAK_TFLOPS", p.tflops);
  return p;
}

std::string adapter_name(const Device& d) {
  for (const auto& phys : Device::enumerate_physical())
    for (const auto& dev : phys.devices)
      if (dev == d) return phys.name;
  return d.to_string();
}

/// Runs `op` once to warm up (pipelines, pool), then `reps` times in one
/// profile window; returns {device ms, wall ms} per run.
template <class F>
std::pair<double, double> time_it(const Device& d, int reps, F op) {
  auto warm = op();
  d.sync();
  const auto t0 = Clock::now();
  auto [last, duration] = d.profile([&] {
    auto r = op();
    for (int i = 1; i < reps; ++i) r = op();
    return r;
  });
  d.sync();
  const double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / reps;
  const auto ticks = duration.resolve().get();
  const double device = ticks ? std::chrono::duration<double, std::milli>(ticks->duration()).count() / reps : 0.0;
  return {device, wall};
}

void report(const std::string& what, double device_ms, double wall_ms, double amount, const char* unit, double peak) {
  // amount: FLOPs or bytes moved; rates use the device time (the wall time
  // adds recording and submission on the host).
  const double seconds = (device_ms > 0 ? device_ms : wall_ms) / 1e3;
  const double rate = amount / seconds / 1e9 / (unit[0] == 'T' ? 1e3 : 1.0);
  char share[64] = "";
  if (peak > 0) std::snprintf(share, sizeof share, "%5.1f%% of %g %s", rate / peak * 100.0, peak, unit);
  std::printf("  %-34s %9.3f ms %9.3f ms %9.4g %-8s %s\n", what.c_str(), device_ms, wall_ms, rate, unit, share);
  std::fflush(stdout);
}

bool allow_cpu() { return env("BURN_BENCH_ALLOW_CPU", "0") == "1"; }

TEST(GpuBench, DISABLED_AdapterIsAGpu) {
  const auto devices = Device::enumerate(burn::DeviceType::Vulkan);
  ASSERT_FALSE(devices.empty()) << "no Vulkan adapter: install the GPU's Vulkan driver (NVIDIA: the driver's ICD, "
                                   "/usr/share/vulkan/icd.d/nvidia_icd.json) and the Vulkan loader";
  for (const Device& d : devices)
    std::printf("%s: %s%s\n", d.to_string().c_str(), adapter_name(d).c_str(),
                d.identity().label == "host-cpu" ? " (CPU adapter)" : "");
  const Device first = *devices.begin();
  if (first.identity().label == "host-cpu" && !allow_cpu())
    FAIL() << "every Vulkan adapter is a CPU (" << adapter_name(first)
           << "): this check needs a GPU. Install its Vulkan driver, or pass --allow-cpu to test on the CPU.";
}

TEST(GpuBench, DISABLED_MatmulAndElementwiseAgainstPeaks) {
  const Device d = Device::parse(env("BURN_BENCH_DEVICE", "vulkan:0"));
  const std::string name = adapter_name(d);
  const bool cpu_adapter = d.identity().label == "host-cpu";
  if (cpu_adapter && !allow_cpu())
    FAIL() << d.to_string() << " is a CPU adapter (" << name
           << "): this benchmark measures a GPU. Install the GPU's Vulkan driver, or pass --allow-cpu.";
  const Peaks peaks = peaks_for(name);
  const int reps = static_cast<int>(env_number("BURN_BENCH_REPS", 5));
  const auto n = static_cast<std::size_t>(env_number("BURN_BENCH_MATMUL", 4096));
  const auto batched = numbers("BURN_BENCH_BATCHED", "16,1024", 2);
  const std::size_t bb = batched[0], bn = batched[1];
  const auto conv = numbers("BURN_BENCH_CONV", "32,128,56", 3);
  const auto elements = static_cast<std::size_t>(env_number("BURN_BENCH_ELEMENTS", 268435456.0));
  ASSERT_GT(reps, 0);

  const bool scalar = env("BURN_VULKAN_SCALAR_LOADS", "0") == "1";
  std::printf("\nburn Vulkan benchmark on %s (%s), f32, %d runs each, %s\n", d.to_string().c_str(), name.c_str(), reps,
              scalar ? "scalar loads only (BURN_VULKAN_SCALAR_LOADS=1)" : "vector loads where layouts allow");
  if (peaks.gbs > 0 || peaks.tflops > 0)
    std::printf("  peaks: %g GB/s, %g TFLOP/s f32 (0: unknown)\n", peaks.gbs, peaks.tflops);
  else std::printf("  peaks unknown for this adapter: pass --peak-gbs and --peak-tflops to gpu-check.sh\n");
  std::printf("  %-34s %12s %12s %18s\n", "case", "device", "wall", "achieved");

  {
    const auto a = Tensor<2>::full({n, n}, 0.5f, d), b = Tensor<2>::full({n, n}, 0.25f, d);
    const auto [dev, wall] = time_it(d, reps, [&] { return a.matmul(b); });
    report("matmul " + std::to_string(n) + "^3", dev, wall, 2.0 * n * n * n, "TFLOP/s", peaks.tflops);
    const auto c = a.matmul(b).to_data().to_vec<float>();
    EXPECT_FLOAT_EQ(c.front(), 0.125f * n);
    EXPECT_FLOAT_EQ(c.back(), 0.125f * n);
  }
  {
    // a x b^T: the rhs is a transposed view (what backward passes multiply by).
    const auto a = Tensor<2>::full({n, n}, 0.5f, d), b = Tensor<2>::full({n, n}, 0.25f, d).transpose();
    const auto [dev, wall] = time_it(d, reps, [&] { return a.matmul(b); });
    report("matmul " + std::to_string(n) + "^3, rhs transposed", dev, wall, 2.0 * n * n * n, "TFLOP/s", peaks.tflops);
  }
  {
    const auto a = Tensor<3>::full({bb, bn, bn}, 0.5f, d), b = Tensor<3>::full({bb, bn, bn}, 2.0f, d);
    const auto [dev, wall] = time_it(d, reps, [&] { return a.matmul(b); });
    report("matmul " + std::to_string(bb) + " x " + std::to_string(bn) + "^3", dev, wall, 2.0 * bb * bn * bn * bn,
           "TFLOP/s", peaks.tflops);
    EXPECT_FLOAT_EQ(a.matmul(b).max().into_scalar<float>(), static_cast<float>(bn));
  }
  {
    const std::size_t cn = conv[0], cc = conv[1], hw = conv[2];
    const auto x = Tensor<4>::full({cn, cc, hw, hw}, 0.5f, d);
    for (std::size_t k : {3, 1}) {
      const auto w = Tensor<4>::full({cc, cc, k, k}, 0.25f, d);
      const burn::module::ConvOptions<2> o({1, 1}, {k / 2, k / 2}, {1, 1});
      const auto [dev, wall] = time_it(d, reps, [&] { return burn::module::conv2d(x, w, std::nullopt, o); });
      report("conv2d " + std::to_string(k) + "x" + std::to_string(k) + " " + std::to_string(cn) + "x" +
                 std::to_string(cc) + "x" + std::to_string(hw) + "^2",
             dev, wall, 2.0 * cn * cc * cc * k * k * hw * hw, "TFLOP/s", peaks.tflops);
      // Away from the border every tap sees the input: c * k * k products of 1/8.
      EXPECT_FLOAT_EQ(burn::module::conv2d(x, w, std::nullopt, o).max().into_scalar<float>(), 0.125f * cc * k * k);
    }
  }
  {
    const auto a = Tensor<1>::full({elements}, 0.5f, d), b = Tensor<1>::full({elements}, 0.25f, d);
    const double bytes = 4.0 * static_cast<double>(elements);
    const auto [dev, wall] = time_it(d, reps, [&] { return a + b; });
    report("add " + std::to_string(elements / (1 << 20)) + "M", dev, wall, 3 * bytes, "GB/s", peaks.gbs);
    EXPECT_FLOAT_EQ((a + b).min().into_scalar<float>(), 0.75f);
    const auto [edev, ewall] = time_it(d, reps, [&] { return a.exp(); });
    report("exp " + std::to_string(elements / (1 << 20)) + "M", edev, ewall, 2 * bytes, "GB/s", peaks.gbs);
    EXPECT_NEAR(a.exp().max().into_scalar<float>(), 1.6487213f, 1e-6f);
  }
}

}  // namespace
