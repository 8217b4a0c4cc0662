// Layout ops against central differences: reshape, permute,
// transpose, flip, expand, (un)squeeze, slice (incl. steps), slice_assign
// (both inputs), narrow, chunk, split, cat, stack, repeat, unfold.
#include "grad_check.hpp"

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

class LayoutGrad : public AdTest {
 protected:
  Input<3> x234() { return {rng.uniform(24, -2, 2), {2, 3, 4}}; }
};

TEST_P(LayoutGrad, Reshape) {
  check([](auto t) { return t.template reshape<2>({6, -1}); }, x234());
  check([](auto t) { return t.template reshape<4>({2, 2, 3, 2}); }, x234());
  check([](auto t) { return t.template reshape<2>(std::array<std::size_t, 2>{4, 6}); }, x234());
  check([](auto t) { return t.template flatten<2>(1, 2); }, x234());
  // A reshape of a non-contiguous view.
  check([](auto t) { return t.swap_dims(0, 2).template reshape<1>({-1}); }, x234());
}

TEST_P(LayoutGrad, PermuteTransposeSwap) {
  check([](auto t) { return t.permute({2, 0, 1}); }, x234());
  check([](auto t) { return t.permute({-1, -3, -2}); }, x234());
  check([](auto t) { return t.transpose(); }, x234());
  check([](auto t) { return t.swap_dims(0, 2); }, x234());
}

TEST_P(LayoutGrad, Flip) {
  check([](auto t) { return t.flip({0}); }, x234());
  check([](auto t) { return t.flip({0, 2}); }, x234());
  check([](auto t) { return t.flip({-1, 1}); }, x234());
}

TEST_P(LayoutGrad, Expand) {
  check([](auto t) { return t.template expand<2>({3, -1}); }, Input<2>{rng.uniform(4, -2, 2), {1, 4}});
  check([](auto t) { return t.template expand<3>({2, 3, 4}); }, Input<2>{rng.uniform(3, -2, 2), {3, 1}});
  check([](auto t) { return t.template expand<2>({2, 3}); }, Input<1>{rng.uniform(3, -2, 2), {3}});
}

TEST_P(LayoutGrad, UnsqueezeSqueeze) {
  check([](auto t) { return t.template unsqueeze<4>(); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  check([](auto t) { return t.template unsqueeze_dim<3>(1); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  check([](auto t) { return t.template unsqueeze_dim<3>(-1); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  check([](auto t) { return t.template squeeze<2>(1); }, Input<3>{rng.uniform(6, -2, 2), {2, 1, 3}});
}

TEST_P(LayoutGrad, Slice) {
  check([](auto t) { return t.slice({{0, 1}, Range::all(), {1, 3}}); }, x234());
  check([](auto t) { return t.slice({Range::all(), {-2, 3}}); }, x234());
  check([](auto t) { return t.slice({Range::index(1), Range::all(), Range::from(2)}); }, x234());
  // Steps: every second column, and a negative step walking backwards.
  check([](auto t) { return t.slice({Range::all(), Range::all(), {0, 4, 2}}); }, x234());
  check([](auto t) { return t.slice({Range::all(), {0, 3, -1}, {1, 4, 2}}); }, x234());
  check([](auto t) { return t.slice({{0, 2, -1}, {0, 3, 2}, {0, 4, -3}}); }, x234());
}

TEST_P(LayoutGrad, SliceAssign) {
  check(
      [](auto t, auto v) {
        return t.slice_assign({{0, 1}, {1, 3}}, v);
      },
      Input<2>{rng.uniform(12, -2, 2), {3, 4}}, Input<2>{rng.uniform(2, -2, 2), {1, 2}});
  check(
      [](auto t, auto v) {
        return t.slice_assign({Range::all(), {0, 4, 2}}, v);
      },
      Input<2>{rng.uniform(12, -2, 2), {3, 4}}, Input<2>{rng.uniform(6, -2, 2), {3, 2}});
  check(
      [](auto t, auto v) {
        return t.slice_assign({{0, 3, -2}, {1, 4, -1}}, v);
      },
      Input<2>{rng.uniform(12, -2, 2), {3, 4}}, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  // The assigned values themselves computed from the target.
  check(
      [](auto t) {
        return t.slice_assign({{1, 3}, Range::all()}, t.slice({{0, 2}, Range::all()}).exp());
      },
      Input<2>{rng.uniform(12, -2, 2), {3, 4}});
}

TEST_P(LayoutGrad, SliceFill) {
  check([](auto t) { return t.slice_fill({{0, 2}, {1, 3}}, 5.0) * t; }, Input<2>{rng.uniform(12, -2, 2), {3, 4}});
}

TEST_P(LayoutGrad, Narrow) {
  check([](auto t) { return t.narrow(2, 1, 2); }, x234());
  check([](auto t) { return t.narrow(-2, -2, 2); }, x234());
}

TEST_P(LayoutGrad, ChunkAndSplit) {
  check([](auto t) { return t.chunk(2, 2); }, x234());
  check([](auto t) { return t.chunk(3, 1); }, x234());
  check([](auto t) { return t.split(3, 2); }, x234());  // sizes 3 and 1
  check([](auto t) { return t.split_with_sizes({1, 2}, 1); }, x234());
  // Only some of the pieces used: the others contribute zeros.
  check([](auto t) { return t.chunk(4, 2)[1] * t.chunk(4, 2)[3]; }, x234());
}

TEST_P(LayoutGrad, Cat) {
  check(
      [](auto a, auto b, auto c) {
        return Tensor<2>::cat({a, b, c}, 0);
      },
      Input<2>{rng.uniform(6, -2, 2), {2, 3}}, Input<2>{rng.uniform(3, -2, 2), {1, 3}},
      Input<2>{rng.uniform(9, -2, 2), {3, 3}});
  check(
      [](auto a, auto b) {
        return Tensor<2>::cat({a, b, a}, 1);
      },
      Input<2>{rng.uniform(4, -2, 2), {2, 2}}, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
}

TEST_P(LayoutGrad, UntrackedPartners) {
  // Only the tracked operand gets a gradient; the constant one is skipped.
  const auto c = constant<2>(rng.uniform(6, -2, 2), {2, 3});
  check([c](auto a) { return Tensor<2>::cat({c, a, c}, 0); }, Input<2>{rng.uniform(3, -2, 2), {1, 3}});
  check([c](auto a) { return c.slice_assign({{0, 1}, {1, 3}}, a); }, Input<2>{rng.uniform(2, -2, 2), {1, 2}});
  check(
      [c](auto t) {
        return t.slice_assign({Range::all(), {0, 3, 2}}, c.slice({Range::all(), {0, 2}}));
      },
      Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  check([c](auto a) { return Tensor<2>::stack<3>({a, c}, 1); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
}

TEST_P(LayoutGrad, Stack) {
  check(
      [](auto a, auto b) {
        return Tensor<2>::stack<3>({a, b, a}, 0);
      },
      Input<2>{rng.uniform(6, -2, 2), {2, 3}}, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  check(
      [](auto a, auto b) {
        return Tensor<2>::stack<3>({a, b}, 2);
      },
      Input<2>{rng.uniform(6, -2, 2), {2, 3}}, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
}

TEST_P(LayoutGrad, Repeat) {
  check([](auto t) { return t.repeat_dim(0, 3); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  check([](auto t) { return t.repeat_dim(1, 2); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  check([](auto t) { return t.repeat({2, 1, 3}); }, Input<3>{rng.uniform(6, -2, 2), {1, 3, 2}});
}

TEST_P(LayoutGrad, Unfold) {
  // Overlapping windows (step < size): each element feeds several windows.
  check([](auto t) { return t.unfold(1, 3, 1); }, Input<2>{rng.uniform(12, -2, 2), {2, 6}});
  check([](auto t) { return t.unfold(1, 3, 2); }, Input<2>{rng.uniform(14, -2, 2), {2, 7}});
  // Gaps (step > size): some elements feed no window.
  check([](auto t) { return t.unfold(0, 2, 3); }, Input<2>{rng.uniform(16, -2, 2), {8, 2}});
}

BURN_AD_MODES(LayoutGrad);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
