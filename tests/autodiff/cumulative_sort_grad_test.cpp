// Cumulative ops (incl. cumprod through zeros), sort and topk against central
// differences.
#include "grad_check.hpp"

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

class CumulativeGrad : public AdTest {};

TEST_P(CumulativeGrad, Cumsum) {
  const Input<2> x{rng.uniform(12, -2, 2), {3, 4}};
  check([](auto t) { return t.cumsum(0); }, x);
  check([](auto t) { return t.cumsum(1); }, x);
  check([](auto t) { return t.cumsum(-1); }, Input<3>{rng.uniform(12, -2, 2), {2, 3, 2}});
}

TEST_P(CumulativeGrad, Cumprod) {
  const Input<2> x{rng.signed_magnitudes(12, 0.5, 1.5), {3, 4}};
  check([](auto t) { return t.cumprod(0); }, x);
  check([](auto t) { return t.cumprod(1); }, x);
}

TEST_P(CumulativeGrad, CumprodWithZeros) {
  // Row 0: one zero in the middle; row 1: two zeros; row 2: a leading zero.
  // A rule that divides by the input gives NaN or inf here.
  const Input<2> x{{1.5, -2.0, 0.0, 3.0, 0.5,   //
                    0.7, 0.0, 1.2, 0.0, -1.1,   //
                    0.0, 2.0, -0.5, 1.5, 0.8},  //
                   {3, 5}};
  check([](auto t) { return t.cumprod(1); }, x);
  check([](auto t) { return t.cumprod(0); }, x);
}

TEST_P(CumulativeGrad, CummaxCummin) {
  const Input<2> x{rng.distinct(15, -3, 3), {3, 5}};
  check([](auto t) { return t.cummax(1); }, x);
  check([](auto t) { return t.cummax(0); }, x);
  check([](auto t) { return t.cummin(1); }, x);
  check([](auto t) { return t.cummin(0); }, x);
}

BURN_AD_MODES(CumulativeGrad);

class SortGrad : public AdTest {};

TEST_P(SortGrad, Sort) {
  const Input<2> x{rng.distinct(12, -3, 3), {3, 4}};
  check([](auto t) { return t.sort(1); }, x);
  check([](auto t) { return t.sort(0); }, x);
  check([](auto t) { return t.sort_descending(1); }, x);
  check([](auto t) { return t.sort_with_indices(0).first; }, x);
  check([](auto t) { return t.sort_descending_with_indices(1).first; }, x);
}

TEST_P(SortGrad, Topk) {
  const Input<2> x{rng.distinct(15, -3, 3), {3, 5}};
  check([](auto t) { return t.topk(2, 1); }, x);
  check([](auto t) { return t.topk(1, 0); }, x);
  check([](auto t) { return t.topk_with_indices(3, 1).first; }, x);
}

TEST_P(SortGrad, IndicesCarryNoGraph) {
  const auto x = leaf<2>(rng.distinct(6, -3, 3), {2, 3});
  EXPECT_FALSE(x.argsort(1).is_require_grad());
  EXPECT_FALSE(x.sort_with_indices(1).second.is_require_grad());
  EXPECT_FALSE(x.topk_with_indices(2, 1).second.is_require_grad());
  // Used as plain values, the indices contribute constants only.
  const auto idx = x.argsort(1).to_float().cast(DType::F64);
  const Gradients grads = (x * idx).sum().backward();
  expect_grad(x.grad(grads), {2, 3}, values_of(idx));
}

BURN_AD_MODES(SortGrad);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
