// Pools, interpolation, embedding and linear against central differences.
// Max pools get tie-free inputs.
#include "grad_check.hpp"

#include <burn/module/ops.hpp>

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;
using burn::module::InterpolateMode;
using burn::module::InterpolateOptions;

class PoolGrad : public AdTest {};

TEST_P(PoolGrad, MaxPool1d) {
  const Input<3> x{rng.distinct(48, -3, 3), {2, 3, 8}};
  check([](auto t) { return module::max_pool1d(t, 3, 2, 1); }, x);
  check([](auto t) { return module::max_pool1d(t, 3, 1); }, x);  // overlapping windows
  check([](auto t) { return module::max_pool1d(t, 2, 1, 0, 2); }, x);
  check([](auto t) { return module::max_pool1d(t, 3, 2, 0, 1, true); }, x);  // ceil mode: a partial last window
  check([](auto t) { return module::max_pool1d_with_indices(t, 2, 2).first; }, x);
}

TEST_P(PoolGrad, MaxPool2d) {
  const Input<4> x{rng.distinct(50, -3, 3), {1, 2, 5, 5}};
  check([](auto t) { return module::max_pool2d(t, {2, 2}, {2, 2}); }, x);
  check([](auto t) { return module::max_pool2d(t, {3, 2}, {2, 1}, {1, 0}, {1, 2}); }, x);
  check([](auto t) { return module::max_pool2d(t, {3, 3}, {1, 1}, {1, 1}); }, x);
  check([](auto t) { return module::max_pool2d(t, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true); }, x);
  check([](auto t) { return module::max_pool2d_with_indices(t, {2, 3}, {1, 2}).first; }, x);
}

TEST_P(PoolGrad, AvgPool1d) {
  const Input<3> x{rng.uniform(42, -2, 2), {2, 3, 7}};
  for (bool include_pad : {true, false}) {
    SCOPED_TRACE(include_pad ? "count_include_pad" : "exclude pad");
    check([include_pad](auto t) { return module::avg_pool1d(t, 3, 2, 1, include_pad); }, x);
    check([include_pad](auto t) { return module::avg_pool1d(t, 2, 2, 1, include_pad, true); }, x);
  }
  check([](auto t) { return module::avg_pool1d(t, 3, 1); }, x);
  check([](auto t) { return module::avg_pool1d(t, 2, 2, 0, true, true); }, x);
}

TEST_P(PoolGrad, AvgPool2d) {
  const Input<4> x{rng.uniform(50, -2, 2), {1, 2, 5, 5}};
  for (bool include_pad : {true, false}) {
    SCOPED_TRACE(include_pad ? "count_include_pad" : "exclude pad");
    check([include_pad](auto t) { return module::avg_pool2d(t, {3, 2}, {2, 2}, {1, 1}, include_pad); }, x);
    check([include_pad](auto t) { return module::avg_pool2d(t, {2, 2}, {2, 2}, {1, 0}, include_pad, true); }, x);
  }
  check([](auto t) { return module::avg_pool2d(t, {3, 3}, {1, 1}); }, x);
  check([](auto t) { return module::avg_pool2d(t, {2, 2}, {2, 2}, {0, 0}, true, true); }, x);
}

TEST_P(PoolGrad, AdaptiveAvgPool) {
  const Input<3> x1{rng.uniform(42, -2, 2), {2, 3, 7}};
  check([](auto t) { return module::adaptive_avg_pool1d(t, 3); }, x1);  // overlapping windows
  check([](auto t) { return module::adaptive_avg_pool1d(t, 4); }, x1);
  check([](auto t) { return module::adaptive_avg_pool1d(t, 9); }, x1);  // larger than the input
  const Input<4> x2{rng.uniform(40, -2, 2), {1, 2, 5, 4}};
  check([](auto t) { return module::adaptive_avg_pool2d(t, {3, 2}); }, x2);
  check([](auto t) { return module::adaptive_avg_pool2d(t, {1, 1}); }, x2);
  check([](auto t) { return module::adaptive_avg_pool2d(t, {7, 5}); }, x2);
}

BURN_AD_MODES(PoolGrad);

class InterpolateGrad : public AdTest {
 protected:
  void check_mode(InterpolateMode mode, bool align_corners) {
    const InterpolateOptions o{mode, align_corners};
    {
      SCOPED_TRACE("upsample [3, 4] -> [5, 7]");
      check([o](auto t) { return module::interpolate(t, {5, 7}, o); }, Input<4>{rng.uniform(24, -2, 2), {1, 2, 3, 4}});
    }
    {
      SCOPED_TRACE("downsample [5, 6] -> [3, 4]");
      check([o](auto t) { return module::interpolate(t, {3, 4}, o); }, Input<4>{rng.uniform(30, -2, 2), {1, 1, 5, 6}});
    }
    {
      SCOPED_TRACE("mixed [2, 5] -> [4, 2]");
      check([o](auto t) { return module::interpolate(t, {4, 2}, o); }, Input<4>{rng.uniform(20, -2, 2), {2, 1, 2, 5}});
    }
  }
};

TEST_P(InterpolateGrad, Nearest) { check_mode(InterpolateMode::Nearest, false); }
TEST_P(InterpolateGrad, Bilinear) { check_mode(InterpolateMode::Bilinear, false); }
TEST_P(InterpolateGrad, BilinearAlignCorners) { check_mode(InterpolateMode::Bilinear, true); }
TEST_P(InterpolateGrad, Bicubic) { check_mode(InterpolateMode::Bicubic, false); }
TEST_P(InterpolateGrad, BicubicAlignCorners) { check_mode(InterpolateMode::Bicubic, true); }

BURN_AD_MODES(InterpolateGrad);

class EmbeddingLinearGrad : public AdTest {};

TEST_P(EmbeddingLinearGrad, Embedding) {
  // Repeated indices accumulate into the same row; row 3 is never used.
  const auto idx = ints<2>({0, 2, 0, 4, 1, 2}, {2, 3});
  check([idx](auto w) { return module::embedding(w, idx); }, Input<2>{rng.uniform(15, -1, 1), {5, 3}});
}

TEST_P(EmbeddingLinearGrad, Linear) {
  check([](auto x, auto w, auto b) { return module::linear(x, w, b); }, Input<3>{rng.uniform(24, -1, 1), {2, 3, 4}},
        Input<2>{rng.uniform(20, -1, 1), {4, 5}}, Input<1>{rng.uniform(5, -1, 1), {5}});
  check([](auto x, auto w) { return module::linear(x, w, std::nullopt); }, Input<2>{rng.uniform(6, -1, 1), {2, 3}},
        Input<2>{rng.uniform(6, -1, 1), {3, 2}});
  check([](auto x, auto w, auto b) { return module::linear(x, w, b); }, Input<1>{rng.uniform(3, -1, 1), {3}},
        Input<2>{rng.uniform(6, -1, 1), {3, 2}}, Input<1>{rng.uniform(2, -1, 1), {2}});
}

BURN_AD_MODES(EmbeddingLinearGrad);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
