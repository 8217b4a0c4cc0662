// Convolutions and transposed convolutions (input, weight and bias) against
// central differences, with stride, padding, dilation and groups.
#include "grad_check.hpp"

#include <burn/module/ops.hpp>

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;
using burn::module::ConvOptions;
using burn::module::ConvTransposeOptions;

class ConvGrad : public AdTest {
 protected:
  std::vector<double> r(std::size_t n) { return rng.uniform(n, -1, 1); }
};

TEST_P(ConvGrad, Conv1d) {
  const ConvOptions<1> o({2}, {1}, {2}, 2);
  check([o](auto x, auto w, auto b) { return module::conv1d(x, w, b, o); }, Input<3>{r(56), {2, 4, 7}},
        Input<3>{r(36), {6, 2, 3}}, Input<1>{r(6), {6}});
  check([](auto x, auto w) { return module::conv1d(x, w, std::nullopt); }, Input<3>{r(15), {1, 3, 5}},
        Input<3>{r(18), {2, 3, 3}});
}

TEST_P(ConvGrad, Conv2d) {
  const ConvOptions<2> o({2, 1}, {1, 0}, {1, 2}, 2);
  check([o](auto x, auto w, auto b) { return module::conv2d(x, w, b, o); }, Input<4>{r(100), {1, 4, 5, 5}},
        Input<4>{r(48), {4, 2, 3, 2}}, Input<1>{r(4), {4}});
  check([](auto x, auto w) { return module::conv2d(x, w, std::nullopt); }, Input<4>{r(64), {2, 2, 4, 4}},
        Input<4>{r(36), {2, 2, 3, 3}});
  // Depthwise (groups == channels) with padding on both sides.
  const ConvOptions<2> dw({1, 1}, {1, 1}, {1, 1}, 3);
  check([dw](auto x, auto w, auto b) { return module::conv2d(x, w, b, dw); }, Input<4>{r(48), {1, 3, 4, 4}},
        Input<4>{r(12), {3, 1, 2, 2}}, Input<1>{r(3), {3}});
}

TEST_P(ConvGrad, Conv3d) {
  const ConvOptions<3> o({2, 1, 1}, {1, 0, 1}, {1, 2, 1}, 2);
  check([o](auto x, auto w, auto b) { return module::conv3d(x, w, b, o); }, Input<5>{r(96), {1, 2, 4, 4, 3}},
        Input<5>{r(16), {2, 1, 2, 2, 2}}, Input<1>{r(2), {2}});
}

TEST_P(ConvGrad, ConvTranspose1d) {
  const ConvTransposeOptions<1> o({2}, {1}, {1}, {1}, 2);
  check([o](auto x, auto w, auto b) { return module::conv_transpose1d(x, w, b, o); }, Input<3>{r(40), {2, 4, 5}},
        Input<3>{r(36), {4, 3, 3}}, Input<1>{r(6), {6}});
  const ConvTransposeOptions<1> dil({1}, {0}, {0}, {2}, 1);
  check([dil](auto x, auto w) { return module::conv_transpose1d(x, w, std::nullopt, dil); }, Input<3>{r(8), {1, 2, 4}},
        Input<3>{r(12), {2, 3, 2}});
}

TEST_P(ConvGrad, ConvTranspose2d) {
  const ConvTransposeOptions<2> o({2, 2}, {1, 0}, {1, 0}, {1, 2}, 1);
  check([o](auto x, auto w, auto b) { return module::conv_transpose2d(x, w, b, o); }, Input<4>{r(18), {1, 2, 3, 3}},
        Input<4>{r(36), {2, 2, 3, 3}}, Input<1>{r(2), {2}});
  const ConvTransposeOptions<2> g({1, 2}, {0, 1}, {0, 1}, {1, 1}, 2);
  check([g](auto x, auto w, auto b) { return module::conv_transpose2d(x, w, b, g); }, Input<4>{r(36), {1, 4, 3, 3}},
        Input<4>{r(16), {4, 1, 2, 2}}, Input<1>{r(2), {2}});
}

TEST_P(ConvGrad, ConvTranspose3d) {
  const ConvTransposeOptions<3> o({2, 1, 2}, {0, 1, 0}, {1, 0, 0}, {1, 1, 1}, 1);
  check([o](auto x, auto w, auto b) { return module::conv_transpose3d(x, w, b, o); }, Input<5>{r(16), {1, 2, 2, 2, 2}},
        Input<5>{r(16), {2, 1, 2, 2, 2}}, Input<1>{r(1), {1}});
}

BURN_AD_MODES(ConvGrad);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
