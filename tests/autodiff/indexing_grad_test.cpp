// Indexing ops against central differences: gather, scatter (Add
// and Assign, both float inputs), select, select_assign, mask_where (both),
// mask_fill, where. Index and mask tensors never receive gradients.
#include "grad_check.hpp"

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

class IndexingGrad : public AdTest {};

TEST_P(IndexingGrad, Gather) {
  // Repeated indices: their gradients accumulate.
  const auto idx1 = ints<2>({0, 2, 2, 1, 3, 3, 0, 0}, {2, 4});
  check([idx1](auto t) { return t.gather(1, idx1); }, Input<2>{rng.uniform(8, -2, 2), {2, 4}});
  const auto idx0 = ints<2>({1, 0, 1, 1, 1, 0}, {3, 2});
  check([idx0](auto t) { return t.gather(0, idx0); }, Input<2>{rng.uniform(4, -2, 2), {2, 2}});
}

TEST_P(IndexingGrad, ScatterAdd) {
  const auto idx = ints<2>({0, 2, 2, 1, 1, 1}, {2, 3});
  check([idx](auto t, auto v) { return t.scatter(1, idx, v); }, Input<2>{rng.uniform(8, -2, 2), {2, 4}},
        Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  check([idx](auto t, auto v) { return t.scatter_add(1, idx, v); }, Input<2>{rng.uniform(8, -2, 2), {2, 4}},
        Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  const auto idx0 = ints<2>({2, 0, 0, 2}, {2, 2});
  check([idx0](auto t, auto v) { return t.scatter(0, idx0, v, ir::IndexReduce::Add); },
        Input<2>{rng.uniform(6, -2, 2), {3, 2}}, Input<2>{rng.uniform(4, -2, 2), {2, 2}});
}

TEST_P(IndexingGrad, ScatterAssign) {
  // Indices unique along the scatter dim, so the result does not depend on
  // write order: overwritten targets get no gradient, values get theirs.
  const auto idx = ints<2>({3, 0, 1, 2, 1, 3}, {2, 3});
  check([idx](auto t, auto v) { return t.scatter(1, idx, v, ir::IndexReduce::Assign); },
        Input<2>{rng.uniform(8, -2, 2), {2, 4}}, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  const auto idx0 = ints<2>({2, 0, 0, 1}, {2, 2});
  check([idx0](auto t, auto v) { return t.scatter(0, idx0, v, ir::IndexReduce::Assign); },
        Input<2>{rng.uniform(6, -2, 2), {3, 2}}, Input<2>{rng.uniform(4, -2, 2), {2, 2}});
}

TEST_P(IndexingGrad, UntrackedPartners) {
  const auto idx = ints<2>({0, 2, 2, 1, 1, 1}, {2, 3});
  const auto target = constant<2>(rng.uniform(8, -2, 2), {2, 4});
  const auto values = constant<2>(rng.uniform(6, -2, 2), {2, 3});
  check([idx, target](auto v) { return target.scatter(1, idx, v); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  check([idx, values](auto t) { return t.scatter(1, idx, values); }, Input<2>{rng.uniform(8, -2, 2), {2, 4}});
  const auto sel = ints<1>({1, 0}, {2});
  const auto rows = constant<2>(rng.uniform(4, -2, 2), {2, 2});
  check([sel, rows](auto t) { return t.select_assign(0, sel, rows, ir::IndexReduce::Assign); },
        Input<2>{rng.uniform(6, -2, 2), {3, 2}});
  const auto mask = bools<2>({true, false, true, false, false, true}, {2, 3});
  const auto other = constant<2>(rng.uniform(6, -2, 2), {2, 3});
  check([mask, other](auto s) { return other.mask_where(mask, s); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
}

TEST_P(IndexingGrad, Select) {
  const auto idx = ints<1>({2, 0, 2, 3}, {4});
  check([idx](auto t) { return t.select(1, idx); }, Input<2>{rng.uniform(8, -2, 2), {2, 4}});
  check([idx](auto t) { return t.select(0, idx); }, Input<2>{rng.uniform(8, -2, 2), {4, 2}});
}

TEST_P(IndexingGrad, SelectAssign) {
  const auto dup = ints<1>({1, 0, 1}, {3});
  check([dup](auto t, auto v) { return t.select_assign(0, dup, v); }, Input<2>{rng.uniform(6, -2, 2), {3, 2}},
        Input<2>{rng.uniform(6, -2, 2), {3, 2}});
  check([dup](auto t, auto v) { return t.select_assign(1, dup, v, ir::IndexReduce::Add); },
        Input<2>{rng.uniform(8, -2, 2), {2, 4}}, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  const auto unique = ints<1>({2, 0}, {2});
  check([unique](auto t, auto v) { return t.select_assign(0, unique, v, ir::IndexReduce::Assign); },
        Input<2>{rng.uniform(6, -2, 2), {3, 2}}, Input<2>{rng.uniform(4, -2, 2), {2, 2}});
  check([unique](auto t, auto v) { return t.select_assign(1, unique, v, ir::IndexReduce::Assign); },
        Input<2>{rng.uniform(6, -2, 2), {2, 3}}, Input<2>{rng.uniform(4, -2, 2), {2, 2}});
}

TEST_P(IndexingGrad, MaskWhere) {
  const auto mask = bools<2>({true, false, false, true, true, false}, {2, 3});
  check([mask](auto t, auto s) { return t.mask_where(mask, s); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}},
        Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  // The source broadcasts; so does the mask.
  check([mask](auto t, auto s) { return t.mask_where(mask, s); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}},
        Input<2>{rng.uniform(3, -2, 2), {1, 3}});
  const auto row = bools<2>({false, true, true}, {1, 3});
  check([row](auto t, auto s) { return t.mask_where(row, s); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}},
        Input<2>{rng.uniform(6, -2, 2), {2, 3}});
}

TEST_P(IndexingGrad, MaskFill) {
  const auto mask = bools<2>({true, false, false, true, true, false}, {2, 3});
  check([mask](auto t) { return t.mask_fill(mask, 3.5); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  const auto row = bools<2>({false, true, false}, {1, 3});
  check([row](auto t) { return t.mask_fill(row, -1.0); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}});
}

TEST_P(IndexingGrad, Where) {
  const auto cond = bools<2>({true, false, true, false, false, true}, {2, 3});
  check([cond](auto a, auto b) { return where(cond, a, b); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}},
        Input<2>{rng.uniform(6, -2, 2), {2, 3}});
  // A mask computed from the tracked tensor itself (a Bool tensor: no graph).
  check([](auto a) { return where(a.greater_elem(0.0), a * 2.0, a.exp()); },
        Input<2>{rng.signed_magnitudes(6, 0.2, 2), {2, 3}});
}

BURN_AD_MODES(IndexingGrad);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
