// Matmul (with broadcast batch dims), cross, and every reduction against
// central differences.
#include "grad_check.hpp"

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

class MatmulGrad : public AdTest {};

TEST_P(MatmulGrad, Matrix) {
  check([](auto a, auto b) { return a.matmul(b); }, Input<2>{rng.uniform(6, -1, 1), {2, 3}},
        Input<2>{rng.uniform(12, -1, 1), {3, 4}});
}
TEST_P(MatmulGrad, Batched) {
  check([](auto a, auto b) { return a.matmul(b); }, Input<3>{rng.uniform(12, -1, 1), {2, 2, 3}},
        Input<3>{rng.uniform(12, -1, 1), {2, 3, 2}});
}
TEST_P(MatmulGrad, BroadcastBatchDims) {
  check([](auto a, auto b) { return a.matmul(b); }, Input<3>{rng.uniform(12, -1, 1), {2, 2, 3}},
        Input<3>{rng.uniform(6, -1, 1), {1, 3, 2}});
  check([](auto a, auto b) { return a.matmul(b); }, Input<4>{rng.uniform(12, -1, 1), {2, 1, 2, 3}},
        Input<4>{rng.uniform(18, -1, 1), {1, 3, 3, 2}});
}
TEST_P(MatmulGrad, TransposedOperands) {
  // Non-contiguous inputs (views on flex).
  check([](auto a, auto b) { return a.transpose().matmul(b.transpose()); }, Input<2>{rng.uniform(6, -1, 1), {3, 2}},
        Input<2>{rng.uniform(12, -1, 1), {4, 3}});
}
TEST_P(MatmulGrad, OneSideUntracked) {
  const auto left = constant<2>(rng.uniform(6, -1, 1), {3, 2});
  const auto right = constant<3>(rng.uniform(8, -1, 1), {1, 2, 4});
  check([left](auto b) { return left.matmul(b); }, Input<2>{rng.uniform(8, -1, 1), {2, 4}});
  check([right](auto a) { return a.matmul(right); }, Input<3>{rng.uniform(12, -1, 1), {2, 3, 2}});
}

TEST_P(MatmulGrad, Cross) {
  check([](auto a, auto b) { return a.cross(b, 1); }, Input<2>{rng.uniform(12, -2, 2), {4, 3}},
        Input<2>{rng.uniform(12, -2, 2), {4, 3}});
  check([](auto a, auto b) { return a.cross(b, 0); }, Input<2>{rng.uniform(6, -2, 2), {3, 2}},
        Input<2>{rng.uniform(6, -2, 2), {3, 2}});
  check([](auto a, auto b) { return a.cross(b, -1); }, Input<2>{rng.uniform(6, -2, 2), {2, 3}},
        Input<2>{rng.uniform(3, -2, 2), {1, 3}});
}

BURN_AD_MODES(MatmulGrad);

class ReduceGrad : public AdTest {};

TEST_P(ReduceGrad, SumAndMean) {
  const Input<3> x{rng.uniform(24, -2, 2), {2, 3, 4}};
  check([](auto t) { return t.sum(); }, x);
  check([](auto t) { return t.mean(); }, x);
  for (std::int64_t d : {0, 1, 2, -1}) {
    SCOPED_TRACE("dim " + std::to_string(d));
    check([d](auto t) { return t.sum_dim(d); }, x);
    check([d](auto t) { return t.mean_dim(d); }, x);
  }
}

TEST_P(ReduceGrad, Prod) {
  const Input<2> x{rng.uniform(6, 0.5, 1.5), {2, 3}};
  check([](auto t) { return t.prod(); }, x);
  check([](auto t) { return t.prod_dim(0); }, x);
  check([](auto t) { return t.prod_dim(1); }, x);
}

TEST_P(ReduceGrad, ProdWithZeros) {
  // Row 0 has one zero (its gradient is the product of the others), row 1
  // two zeros (every gradient is zero), row 2 none. Dividing the product by
  // the input would give NaN here.
  const Input<2> x{{1.5, 0.0, -2.0, 0.0, 3.0, 0.0, 0.5, -1.5, 2.0}, {3, 3}};
  check([](auto t) { return t.prod_dim(1); }, x);
  check([](auto t) { return t.prod_dim(0); }, x);
  check([](auto t) { return t.prod(); }, x);
  check([](auto t) { return t.prod(); }, Input<1>{{2.0, 0.0, 3.0}, {3}});
}

TEST_P(ReduceGrad, MaxMin) {
  const Input<3> x{rng.distinct(24, -3, 3), {2, 3, 4}};
  check([](auto t) { return t.max(); }, x);
  check([](auto t) { return t.min(); }, x);
  for (std::int64_t d : {0, 1, 2}) {
    SCOPED_TRACE("dim " + std::to_string(d));
    check([d](auto t) { return t.max_dim(d); }, x);
    check([d](auto t) { return t.min_dim(d); }, x);
  }
}

TEST_P(ReduceGrad, MaxMinWithIndices) {
  const Input<2> x{rng.distinct(12, -3, 3), {3, 4}};
  check([](auto t) { return t.max_dim_with_indices(1).first; }, x);
  check([](auto t) { return t.min_dim_with_indices(0).first; }, x);
  // The indices are an Int tensor outside the graph.
  const auto t = leaf<2>(x.values, x.shape);
  const auto [values, indices] = t.max_dim_with_indices(1);
  EXPECT_FALSE(indices.is_require_grad());
  const Gradients grads = values.sum().backward();
  const auto g = values_of(*t.grad(grads));
  const auto idx = values_of(indices);
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 4; ++c)
      EXPECT_EQ(g[r * 4 + c], static_cast<double>(c) == idx[r] ? 1.0 : 0.0) << "row " << r << " col " << c;
}

TEST_P(ReduceGrad, Var) {
  const Input<2> x{rng.uniform(12, -2, 2), {3, 4}};
  check([](auto t) { return t.var(1); }, x);
  check([](auto t) { return t.var(0); }, x);
  check([](auto t) { return t.var_bias(1); }, x);
  check([](auto t) { return t.var_bias(0); }, x);
  check([](auto t) { return std::vector{t.var_mean(1).first, t.var_mean(1).second}; }, x);
  check([](auto t) { return std::vector{t.var_mean_bias(0).first, t.var_mean_bias(0).second}; }, x);
}

BURN_AD_MODES(ReduceGrad);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
