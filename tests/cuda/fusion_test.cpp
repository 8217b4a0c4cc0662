// Fused against eager on the CUDA backend. The fusion fuzz's random chains
// (tests/cpu/fuzz_*.cpp) must give the same bits on a fused CUDA device and
// on its eager twin: a fused kernel rounds every intermediate of a half
// dtype and wraps every narrow int as the eager kernels do, so the only
// difference is how many kernels run. The same chains with other scalar
// values must reuse the plans (the kernels generated once per signature).
//
// Here the devices are emulated on the CPU (emulated_device.hpp: the
// backend's own planners, fusion and generated kernels, compiled for the
// CPU); on a GPU, Device::cuda(0) runs against an unfused backend on the
// same GPU. BURN_FUZZ_CHAINS=N runs N chains; BURN_FUZZ_SEED=S replays one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include <burn/activation.hpp>
#include <burn/burn.hpp>

#include "backends/cuda/codegen.hpp"
#include "emulated_device.hpp"
#include "fusion/stats.hpp"
#include "fusion_support.hpp"
#include "fuzz_program.hpp"

namespace burn::cuda {
namespace {

using fusion_test::Program;

// Each chain compiles a few new kernels (for the CPU here, by NVRTC on a
// GPU): fewer chains than the CPU fuzz runs keep either to about a minute.
constexpr std::uint64_t kEmulatedChains = 40;
constexpr std::uint64_t kGpuChains = 100;
constexpr int kMaxReported = 5;

std::vector<std::uint64_t> seeds(std::uint64_t fallback) {
  if (const char* one = std::getenv("BURN_FUZZ_SEED"); one && *one) return {std::strtoull(one, nullptr, 10)};
  const char* n = std::getenv("BURN_FUZZ_CHAINS");
  std::vector<std::uint64_t> out(n && *n ? std::strtoull(n, nullptr, 10) : fallback);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = i + 1;
  return out;
}

std::string report(const Program& p, const std::string& what, const std::string& diff) {
  std::ostringstream os;
  os << what << " on chain seed " << p.seed << " (replay: BURN_FUZZ_SEED=" << p.seed << ")\n" << p.to_string() << diff;
  return os.str();
}

void expect_fused_equals_eager(const Device& fused, const Device& eager, std::uint64_t chains) {
  fusion::reset_stats(fused);
  int reported = 0;
  std::vector<std::uint64_t> failing;
  std::uint64_t hits = 0;
  for (const std::uint64_t seed : seeds(chains)) {
    const Program first = fusion_test::generate(seed);
    std::string diff = fusion_test::compare(fusion_test::run(first, fused), fusion_test::run(first, eager));
    if (!diff.empty()) {
      failing.push_back(seed);
      if (reported++ < kMaxReported) ADD_FAILURE() << report(first, "fused and eager cuda disagree", diff);
      continue;
    }
    // Other scalars, same signature: every plan comes from the cache, and
    // each run's scalar values reach the kernel.
    const Program second = fusion_test::with_new_scalars(first, seed * 7919);
    const fusion::FusionStats before = fusion::stats(fused);
    diff = fusion_test::compare(fusion_test::run(second, fused), fusion_test::run(second, eager));
    const fusion::FusionStats after = fusion::stats(fused);
    if (!diff.empty()) {
      failing.push_back(seed);
      if (reported++ < kMaxReported)
        ADD_FAILURE() << report(second, "fused and eager cuda disagree (new scalars)", diff);
    } else if (after.plans_built != before.plans_built && reported++ < kMaxReported) {
      ADD_FAILURE() << report(second, "the run with other scalars built plans", "");
    }
    hits += after.plan_cache_hits - before.plan_cache_hits;
  }
  EXPECT_TRUE(failing.empty()) << failing.size() << " chains disagree; seeds " << ::testing::PrintToString(failing);
  const fusion::FusionStats s = fusion::stats(fused);
  // Fusion must have happened, or this compared eager with itself.
  EXPECT_GT(s.fused_groups, 0u);
  EXPECT_GE(s.ops_fused, 2 * s.fused_groups) << "a fused group holds at least two ops";
  EXPECT_GT(hits, 0u);
}

TEST(CudaFusionOnTheCpu, RandomChainsMatchEagerBitForBit) {
  expect_fused_equals_eager(testing::emulated_cuda_device(true), testing::emulated_cuda_device(false), kEmulatedChains);
}

TEST(CudaFusion, RandomChainsMatchEagerBitForBit) {
  std::optional<Device> eager;
  try {
    eager = testing::eager_twin_of_cuda0();
  } catch (const DeviceError& e) {
    GTEST_SKIP() << "needs a CUDA device: " << e.what();
  }
  expect_fused_equals_eager(Device::cuda(0), *eager, kGpuChains);
}

#if BURN_HAS_CAPTURE
// The chains as traced functions (burn::trace) on the fused device: its
// fusion layer compiles each recording once and a call runs the compiled
// program without queueing an op, with the eager twin's bits.
TEST(CudaFusionOnTheCpu, TracedChainsMatchEagerBitForBit) {
  constexpr std::uint64_t kTracedChains = 12;
  const Device fused = testing::emulated_cuda_device(true), eager = testing::emulated_cuda_device(false);
  fusion::reset_stats(fused);
  std::vector<std::uint64_t> failing;
  int reported = 0;
  for (const std::uint64_t seed : seeds(kTracedChains)) {
    const Program p = fusion_test::generate(seed);
    const std::string diff = fusion_test::compare(fusion_test::run_traced(p, fused), fusion_test::run(p, eager));
    if (diff.empty()) continue;
    failing.push_back(seed);
    if (reported++ < kMaxReported) ADD_FAILURE() << report(p, "traced fused and eager cuda disagree", diff);
  }
  EXPECT_TRUE(failing.empty()) << failing.size() << " chains disagree; seeds " << ::testing::PrintToString(failing);
  const fusion::FusionStats s = fusion::stats(fused);
  EXPECT_EQ(s.ops_queued, 0u) << "a traced call runs its compiled program, not the queue";
  EXPECT_GT(s.fused_groups, 0u);
}
#endif

/// A layer's bias and activation after its matmul: gelu(x·w + b) · 0.5.
Tensor<2> bias_gelu(const Device& d) {
  std::vector<float> x(64 * 48), w(48 * 32), b(32);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 29) - 14) * 0.05f;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.03f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.1f - 1.5f;
  const auto xt = Tensor<2>::from_data(TensorData(x, {64, 48}), d);
  const auto wt = Tensor<2>::from_data(TensorData(w, {48, 32}), d);
  const auto bt = Tensor<1>::from_data(TensorData(b, {32}), d).unsqueeze<2>();
  return activation::gelu(xt.matmul(wt) + bt) * 0.5f;
}

// The bias add, gelu (a composite of five ops) and the scaling run as one
// kernel reading the bias broadcast, and give what flex gives (within the ulps of flex's own erf).
TEST(CudaFusionOnTheCpu, BiasAndGeluAfterAMatmulAreOneKernel) {
  const Device cuda = testing::emulated_cuda_device(true);
  const auto y = bias_gelu(cuda);
  fusion::reset_stats(cuda);
  const TensorData got = y.to_data();
  const fusion::FusionStats s = fusion::stats(cuda);
  EXPECT_EQ(s.fused_groups, 1u);
  EXPECT_EQ(s.ops_fused, 7u);  // the bias add, gelu's five ops, the scaling (the matmul runs on its own)
  const auto want = bias_gelu(Device::flex()).to_data().to_vec<float>();
  const auto values = got.to_vec<float>();
  ASSERT_EQ(values.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(values[i], want[i], 1e-5f) << "element " << i;
}

/// Work whose results are dropped before the queue runs (an elementwise
/// chain and a row reduction, each of its own shape so that it is a group
/// alone), then a live chain.
TensorData dead_groups_then_live(const Device& d) {
  const auto x = Tensor<1>::from_floats({1.0, -2.0, 3.0}, d);
  {
    const auto square = Tensor<2>::ones({2, 2}, d);
    (void)((square + 1.0f).exp() * 3.0f);
    (void)(square.exp() / square.exp().sum_dim(1));
  }
  return ((x * 2.0f).abs() + 1.0f).to_data();
}

// A group nobody reads has no outputs: it compiles no kernel and runs
// nothing (CUDA C++ has no zero-length parameter arrays), and the live
// work after it runs as usual.
TEST(CudaFusionOnTheCpu, GroupsWhoseResultsAreDeadRunNothing) {
  const Device cuda = testing::emulated_cuda_device(true);
  dead_groups_then_live(cuda).assert_eq(TensorData(std::vector<float>{3, 5, 7}, {3}));
}

TEST(CudaFusion, GroupsWhoseResultsAreDeadRunNothing) {
  std::optional<Device> cuda;
  try {
    cuda = Device::cuda(0);
  } catch (const DeviceError& e) {
    GTEST_SKIP() << "needs a CUDA device: " << e.what();
  }
  dead_groups_then_live(*cuda).assert_eq(TensorData(std::vector<float>{3, 5, 7}, {3}));
}

/// Rows of a softmax and a layer norm (with an f16 copy of each), as the
/// layers write them, `width` elements long.
std::vector<TensorData> row_groups(const Device& d, std::size_t width = 96) {
  const std::size_t rows = 48;
  std::vector<float> x(rows * width), w(width), b(width);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 7 % 31) - 15) * 0.2f;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0f + static_cast<float>(i % 5) * 0.1f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 7) * 0.05f;
  std::vector<TensorData> out;
  for (const DType dtype : {DType::F32, DType::F16}) {
    const auto xt = Tensor<2>::from_data(TensorData(x, {rows, width}), d).cast(dtype);
    const auto wt = Tensor<1>::from_data(TensorData(w, {width}), d).cast(dtype).unsqueeze<2>();
    const auto bt = Tensor<1>::from_data(TensorData(b, {width}), d).cast(dtype).unsqueeze<2>();
    out.push_back(activation::softmax(xt, 1).to_data());
    const auto centred = xt - xt.mean_dim(1);
    const auto norm = centred / ((centred * centred).mean_dim(1) + 1e-5f).sqrt();
    out.push_back((norm * wt + bt).to_data());
  }
  return out;
}

// Softmax and layer norm run as one row kernel each (the reductions and the
// elementwise work around them), with the eager kernels' bits, and close to
// flex's values: on short rows one thread per row, on rows of kBlockFoldMin
// and more a block per row (both the row kernel and the eager reductions
// merge the threads' partial folds in the same tree).
TEST(CudaFusionOnTheCpu, SoftmaxAndLayerNormAreOneRowKernelEach) {
  for (const std::size_t width : {std::size_t{96}, std::size_t{kBlockFoldMin + 44}}) {
    SCOPED_TRACE(width);
    const Device fused = testing::emulated_cuda_device(true);
    fusion::reset_stats(fused);
    const auto got = row_groups(fused, width);
    const fusion::FusionStats s = fusion::stats(fused);
    // Per dtype, two groups: softmax (max, sub, exp, sum, div) and the layer
    // norm (mean, sub, mul, mean, add, sqrt, div, mul, add). A group with a
    // reduction in it is a row kernel.
    EXPECT_EQ(s.fused_groups, 4u);
    EXPECT_EQ(s.ops_fused, 2 * (5u + 9u));
    const auto eager = row_groups(testing::emulated_cuda_device(false), width);
    const auto flex = row_groups(Device::flex(), width);
    ASSERT_EQ(got.size(), eager.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(fusion_test::bitwise_diff(got[k], eager[k]), "") << "result " << k;
      const auto g = got[k].convert(DType::F32).to_vec<float>();
      const auto f = flex[k].convert(DType::F32).to_vec<float>();
      const float tolerance = got[k].dtype() == DType::F16 ? 4e-3f : 2e-5f;
      for (std::size_t i = 0; i < g.size(); ++i)
        ASSERT_NEAR(g[i], f[i], tolerance * std::max(1.0f, std::abs(f[i]))) << "result " << k << " element " << i;
    }
  }
}

// Device::profile reaches the device's clock through the fusion layer. The
// emulated clock ticks once per kernel, so a window around five elementwise
// ops measures one kernel fused and five eager; without the flush option,
// work still queued in the fusion layer stays out of the window.
TEST(CudaFusionOnTheCpu, ProfileWindowsUseTheDeviceClock) {
  const auto kernel_time = [](const Device& d, bool flush) {
    const auto x = Tensor<1>::from_data(TensorData(std::vector<float>(100, 0.5f), {100}), d);
    d.sync();
    auto [y, duration] =
        d.profile_with(ProfileOptions{}.flush(flush), [&] { return ((x * 2.0f + 1.0f).exp() - x).abs(); });
    const auto ticks = duration.resolve().get();
    EXPECT_TRUE(ticks.has_value());
    (void)y.to_data();
    return ticks ? ticks->duration() : std::chrono::nanoseconds(-1);
  };
  using std::chrono::microseconds;
  EXPECT_EQ(kernel_time(testing::emulated_cuda_device(true), true), microseconds(1));
  EXPECT_EQ(kernel_time(testing::emulated_cuda_device(false), true), microseconds(5));
  EXPECT_EQ(kernel_time(testing::emulated_cuda_device(true), false), microseconds(0));
}

}  // namespace
}  // namespace burn::cuda
