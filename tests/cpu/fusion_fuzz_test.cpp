// Fused against unfused: random op chains (fuzz_generate.cpp) run on
// Device::cpu() and on Device::flex() must give the same bits, since the
// fused kernels evaluate flex's own per-element code.
//
// A failure prints the chain's seed and text. To replay one chain:
//   BURN_FUZZ_SEED=123 burn_cpu_tests --gtest_filter='FusionFuzz.*'
// BURN_FUZZ_CHAINS=N runs N chains instead of the default.
#include <cstdlib>
#include <sstream>
#include <string>

#include "fusion_support.hpp"
#include "fuzz_program.hpp"

namespace burn::fusion_test {
namespace {

constexpr std::uint64_t kDefaultChains = 400;
constexpr int kMaxReported = 5;  // enough to see a pattern, short enough to read

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

/// The seeds to run: one replayed seed, or 1..N.
std::vector<std::uint64_t> seeds() {
  if (const std::uint64_t one = env_or("BURN_FUZZ_SEED", 0)) return {one};
  std::vector<std::uint64_t> out(env_or("BURN_FUZZ_CHAINS", kDefaultChains));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = i + 1;
  return out;
}

std::string report(const Program& p, const std::string& what, const std::string& diff) {
  std::ostringstream os;
  os << what << " on chain seed " << p.seed << " (replay: BURN_FUZZ_SEED=" << p.seed << ")\n" << p.to_string() << diff;
  return os.str();
}

TEST(FusionFuzz, RandomChainsMatchFlexBitForBit) {
  const Device cpu = fused_device(), flex = eager_device();
  fusion::reset_stats(cpu);
  int reported = 0;
  std::vector<std::uint64_t> failing;
  for (std::uint64_t seed : seeds()) {
    const Program p = generate(seed);
    const std::string diff = compare(run(p, cpu), run(p, flex));
    if (diff.empty()) continue;
    failing.push_back(seed);
    if (reported++ < kMaxReported) ADD_FAILURE() << report(p, "cpu and flex disagree", diff);
  }
  EXPECT_TRUE(failing.empty()) << failing.size() << " of " << seeds().size() << " chains disagree; seeds "
                               << testing::PrintToString(failing);
  const fusion::FusionStats s = fusion::stats(cpu);
  // Fusion must actually have happened, or this test compared flex with itself.
  EXPECT_GT(s.fused_groups, 0u);
  EXPECT_GT(s.ops_fused, 0u);
  EXPECT_GE(s.ops_fused, 2 * s.fused_groups) << "a fused group holds at least two ops";
  EXPECT_LE(s.ops_fused + s.ops_skipped, s.ops_queued);
}

#if BURN_HAS_CAPTURE
// Each chain as a traced function (every value the chain reads is one of
// its results): the fused device compiles the recording once
// (FusionBackend::compile plans across the whole chain, where the queue
// drained at each read) and runs it without queueing an op. The bits are
// flex's all the same.
TEST(FusionFuzz, TracedChainsMatchFlexBitForBit) {
  constexpr std::uint64_t kTracedChains = 200;
  const Device cpu = fused_device(), flex = eager_device();
  fusion::reset_stats(cpu);
  int reported = 0;
  std::vector<std::uint64_t> failing;
  std::size_t ran = 0;
  for (std::uint64_t seed : seeds()) {
    if (ran++ == kTracedChains) break;
    const Program p = generate(seed);
    const std::string diff = compare(run_traced(p, cpu), run(p, flex));
    if (diff.empty()) continue;
    failing.push_back(seed);
    if (reported++ < kMaxReported) ADD_FAILURE() << report(p, "traced cpu and flex disagree", diff);
  }
  EXPECT_TRUE(failing.empty()) << failing.size() << " chains disagree; seeds " << testing::PrintToString(failing);
  const fusion::FusionStats s = fusion::stats(cpu);
  EXPECT_EQ(s.ops_queued, 0u) << "a traced call runs its compiled program, not the queue";
  EXPECT_GT(s.fused_groups, 0u);
  EXPECT_GE(s.ops_fused, 2 * s.fused_groups) << "a fused group holds at least two ops";
}
#endif

// The same chain with other scalar values has the same signature: the second
// run reuses every plan the first built.
TEST(FusionFuzz, SameChainWithOtherScalarsReusesPlans) {
  const Device cpu = fused_device(), flex = eager_device();
  int reported = 0;
  std::uint64_t hits = 0;
  for (std::uint64_t seed : seeds()) {
    if (seed > 60) break;  // the plan cache is exercised well within a few dozen chains
    const Program first = generate(seed);
    const Program second = with_new_scalars(first, seed * 7919);
    if (!run(first, cpu).error.empty()) continue;  // reported by the test above
    fusion::reset_stats(cpu);
    const Outcome fused = run(second, cpu);
    const fusion::FusionStats s = fusion::stats(cpu);
    const std::string diff = compare(fused, run(second, flex));
    if (!diff.empty() && reported++ < kMaxReported)
      ADD_FAILURE() << report(second, "cpu and flex disagree (new scalars)", diff);
    if (s.plans_built != 0 && reported++ < kMaxReported)
      ADD_FAILURE() << report(second, "the second run built plans", "") << "plans built: " << s.plans_built;
    hits += s.plan_cache_hits;
  }
  EXPECT_GT(hits, 0u);
}

// Directed: one group reading k distinct inputs (some broadcast) and, with
// `keep`, writing several outputs, for k past any fixed operand limit of
// the fused loop; the planner must split what one loop cannot take.
TEST(FusionFuzz, GroupsWithManyInputsAndOutputs) {
  const Device cpu = fused_device(), flex = eager_device();
  auto chain = [](const Device& d, std::size_t k, bool keep) {
    std::vector<Tensor<2>> in;
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t rows = i % 3 == 1 ? 1 : 9;  // every third input broadcasts over rows
      std::vector<float> v(rows * 20);
      for (std::size_t j = 0; j < v.size(); ++j) v[j] = static_cast<float>((j * (i + 3)) % 11) * 0.37f - 1.0f;
      in.push_back(Tensor<2>::from_data(TensorData(v, {rows, 20}), d));
    }
    std::vector<Tensor<2>> kept;
    auto acc = in[0].exp();
    for (std::size_t i = 1; i < k; ++i) {
      acc = i % 2 ? acc * in[i] + 0.5f : (acc - in[i]).tanh();
      if (keep && i % 3 == 0) kept.push_back(acc);
    }
    std::vector<TensorData> out{acc.to_data()};
    for (const auto& t : kept) out.push_back(t.to_data());
    return out;
  };
  for (std::size_t k = 2; k <= 14; ++k) {
    for (const bool keep : {false, true}) {
      std::vector<TensorData> fused, eager = chain(flex, k, keep);
      try {
        fused = chain(cpu, k, keep);
      } catch (const std::exception& e) {
        ADD_FAILURE() << k << " inputs" << (keep ? ", several outputs" : "") << ": cpu threw " << e.what();
        continue;
      }
      ASSERT_EQ(fused.size(), eager.size());
      for (std::size_t i = 0; i < fused.size(); ++i)
        EXPECT_EQ(bitwise_diff(fused[i], eager[i]), "") << k << " inputs, output " << i;
    }
  }
}

// A fixed chain, the same shapes twice with other scalars: one plan, then a hit.
TEST(FusionFuzz, FixedChainHitsThePlanCache) {
  const Device cpu = fused_device(), flex = eager_device();
  auto chain = [](const Device& d, float a, float b, float c) {
    std::vector<float> xs(64 * 33), ws(33);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 17) * 0.25f - 2.0f;
    for (std::size_t i = 0; i < ws.size(); ++i) ws[i] = static_cast<float>(i) * 0.1f - 1.5f;
    auto x = Tensor<2>::from_data(TensorData(xs, {64, 33}), d);
    auto w = Tensor<1>::from_data(TensorData(ws, {33}), d).unsqueeze<2>();
    return ((x * a + b).exp() - w).clamp(-c, c).tanh().to_data();
  };
  chain(cpu, 0.5f, 1.0f, 2.0f);  // builds the plan (and warms the device)
  fusion::reset_stats(cpu);
  const TensorData got = chain(cpu, -1.5f, 0.25f, 3.0f);
  const fusion::FusionStats s = fusion::stats(cpu);
  EXPECT_EQ(bitwise_diff(got, chain(flex, -1.5f, 0.25f, 3.0f)), "");
  EXPECT_EQ(s.plans_built, 0u);
  EXPECT_GE(s.plan_cache_hits, 1u);
  EXPECT_GE(s.fused_groups, 1u);
}

}  // namespace
}  // namespace burn::fusion_test
