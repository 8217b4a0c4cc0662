// The finite-difference checker itself: it must report a wrong gradient, so
// that the op suites passing means something.
#include "grad_check.hpp"

#include <gtest/gtest-spi.h>

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

class GradCheckSelf : public AdTest {};

TEST_P(GradCheckSelf, ReportsAWrongGradient) {
  // detach() hides one factor from backward, so backward sees x, not 2x.
  EXPECT_NONFATAL_FAILURE(check([](auto x) { return x.detach() * x; }, Input<1>{{1.0, 2.0, 3.0}, {3}}),
                          "differ from central differences");
}

TEST_P(GradCheckSelf, ReportsAnUnreachedInput) {
  EXPECT_NONFATAL_FAILURE(
      check([](auto x, auto y) { return x.exp() + y.detach(); }, Input<1>{{1.0, 2.0}, {2}}, Input<1>{{3.0, 4.0}, {2}}),
      "no gradient reached input 1");
}

TEST_P(GradCheckSelf, AcceptsACorrectGradient) {
  check([](auto x, auto y) { return (x * y).sin(); }, Input<1>{{0.5, -1.0, 2.0}, {3}},
        Input<1>{{1.5, 0.25, -0.5}, {3}});
}

BURN_AD_MODES(GradCheckSelf);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
