// flex's f32 exp (src/backends/flex/simd/math.cpp) scales its result by 2^k
// with one VSCALEFPS on AVX-512 and with two multiplications by powers of
// two elsewhere, which round the same way: a tensor's exp must not depend on
// the CPU it runs on. White-box: Highway's run-time dispatch is pointed at
// each instruction set this CPU offers, in turn, and the results compared
// bit for bit; and the default one is held to 1 ULP of the correctly rounded
// exp over the whole range where exp is finite and nonzero, and beyond, on
// both of its paths. erf is held to its own bound.
#include <burn_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#if BURN_HAS_FLEX && defined(__x86_64__)

#include <hwy/targets.h>

#include "backends/flex/simd/math.hpp"

namespace {

using burn::flex::simd::MathFn;

/// Every float from -110 to 95 in steps of about 7e-4, then the edges: the
/// ends of the normal and subnormal ranges of e^x, overflow, zeros, infinities.
std::vector<float> exp_inputs() {
  std::vector<float> v;
  for (double x = -110.0; x <= 95.0; x += 0.0007) v.push_back(static_cast<float>(x));
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, 1e-45f, -1e-45f, 1e-8f, -1e-8f, 88.72283935546875f, 88.7228394f, 88.72284f, 89.0f, 89.5f,
                  -87.33654f, -103.97208f, -104.0f, -104.5f, inf, -inf})
    v.push_back(x);
  return v;
}

/// Floats as integers ordered like their values, so that a difference of
/// two is the number of floats between them (their ULP distance).
std::int64_t ordered(float f) {
  std::int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? -static_cast<std::int64_t>(i & 0x7fffffff) : i;
}

/// Points Highway's dispatch at `target` alone; the destructor restores the
/// CPU's own choice.
class OnlyTarget {
 public:
  explicit OnlyTarget(std::int64_t target) {
    hwy::SetSupportedTargetsForTest(target);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  }
  ~OnlyTarget() {
    hwy::SetSupportedTargetsForTest(0);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  }
  OnlyTarget(const OnlyTarget&) = delete;
  OnlyTarget& operator=(const OnlyTarget&) = delete;
};

/// Equal bits, or both NaN (a NaN's payload is not part of the contract).
bool same_bits(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<float> exp_of(const std::vector<float>& in) {
  std::vector<float> out(in.size());
  burn::flex::simd::apply(MathFn::Exp, in.data(), out.data(), in.size());
  return out;
}

TEST(FlexSimdMath, ExpGivesTheSameBitsOnEveryInstructionSetWithFma) {
  // The instruction sets whose Highway kernels fuse multiply-adds (SSE4's
  // MulAdd rounds twice, so its bits may differ: it is not compared).
  std::vector<std::int64_t> targets;
  for (std::int64_t t : {std::int64_t{HWY_AVX3_DL}, std::int64_t{HWY_AVX3}, std::int64_t{HWY_AVX2}})
    if ((hwy::SupportedTargets() & HWY_TARGETS & t) != 0) targets.push_back(t);
  if (targets.size() < 2) GTEST_SKIP() << "this CPU offers fewer than two instruction sets with FMA to compare";
  const auto in = exp_inputs();
  std::vector<std::vector<float>> results;
  for (std::int64_t t : targets) {
    const OnlyTarget only(t);
    results.push_back(exp_of(in));
  }
  for (std::size_t k = 1; k < results.size(); ++k)
    for (std::size_t i = 0; i < in.size(); ++i) {
      const float a = results[0][i], b = results[k][i];
      ASSERT_TRUE(same_bits(a, b)) << "exp(" << in[i] << "): " << hwy::TargetName(targets[0]) << " gives " << a << ", "
                                   << hwy::TargetName(targets[k]) << " gives " << b;
    }
}

TEST(FlexSimdMath, ExpIsWithinOneUlpOfTheCorrectlyRoundedResult) {
  const auto in = exp_inputs();
  const auto out = exp_of(in);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const float want = static_cast<float>(std::exp(static_cast<double>(in[i])));
    const std::int64_t ulps = std::llabs(ordered(out[i]) - ordered(want));
    ASSERT_LE(ulps, 1) << "exp(" << in[i] << ") = " << out[i] << ", correctly rounded " << want;
  }
  // Infinities, overflow and underflow land exactly.
  const float inf = std::numeric_limits<float>::infinity();
  const auto edges = exp_of({inf, -inf, 89.0f, -104.5f, std::numeric_limits<float>::quiet_NaN()});
  EXPECT_EQ(edges[0], inf);
  EXPECT_EQ(edges[1], 0.0f);
  EXPECT_EQ(edges[2], inf);
  EXPECT_EQ(edges[3], 0.0f);
  EXPECT_TRUE(std::isnan(edges[4]));
}

// A vector of in-range values takes a short path (the scaling as an
// exponent add); one with a NaN, an infinity or a value beyond +-87 takes the
// full-range one. A value's exp must not depend on its neighbours: each input
// is computed once among its in-range neighbours and once beside a NaN.
TEST(FlexSimdMath, ExpOfAValueDoesNotDependOnItsNeighbours) {
  const auto in = exp_inputs();
  const auto alone = exp_of(in);
  std::vector<float> beside_nan;
  for (float x : in) {
    beside_nan.push_back(x);
    beside_nan.push_back(std::numeric_limits<float>::quiet_NaN());
  }
  const auto mixed = exp_of(beside_nan);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const float a = alone[i], b = mixed[2 * i];
    ASSERT_TRUE(same_bits(a, b)) << "exp(" << in[i] << "): " << a << " among in-range values, " << b << " beside a NaN";
    ASSERT_TRUE(std::isnan(mixed[2 * i + 1]));
  }
}

// erf in f32 is a rational function of x^2 (math.cpp): within 6 ULP of the
// correctly rounded value, 2 or fewer almost everywhere, and exact at the
// special values.
TEST(FlexSimdMath, ErfIsWithinSixUlpOfTheCorrectlyRoundedResult) {
  std::vector<float> in;
  for (double x = -7.0; x <= 7.0; x += 1.7e-5) in.push_back(static_cast<float>(x));
  for (float x : {1e-30f, -1e-30f, 1e-45f, 3.8f, 3.92f, 3.9200001f, 10.0f, -10.0f}) in.push_back(x);
  std::vector<float> out(in.size());
  burn::flex::simd::apply(MathFn::Erf, in.data(), out.data(), in.size());
  std::size_t within_two = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const float want = static_cast<float>(std::erf(static_cast<double>(in[i])));
    const std::int64_t ulps = std::llabs(ordered(out[i]) - ordered(want));
    ASSERT_LE(ulps, 6) << "erf(" << in[i] << ") = " << out[i] << ", correctly rounded " << want;
    within_two += ulps <= 2 ? 1 : 0;
  }
  EXPECT_GE(static_cast<double>(within_two), 0.98 * static_cast<double>(in.size()));
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> edges{0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN()};
  burn::flex::simd::apply(MathFn::Erf, edges.data(), edges.data(), edges.size());
  EXPECT_EQ(edges[0], 0.0f);
  EXPECT_TRUE(std::signbit(edges[1]) && edges[1] == 0.0f) << "erf(-0) is -0";
  EXPECT_EQ(edges[2], 1.0f);
  EXPECT_EQ(edges[3], -1.0f);
  EXPECT_TRUE(std::isnan(edges[4]));
}

}  // namespace

#endif
