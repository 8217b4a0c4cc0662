// Float agreement with the reference device for every op family, on
// contiguous and non-contiguous inputs (permute, slice, expand, flip views).
#include "agreement.hpp"

namespace burn::conformance {
namespace {

class AgreeFloat : public AgreementTest {
 protected:
  void SetUp() override { ref().seed(1234); }
};

using T1 = Tensor<1>;
using T2 = Tensor<2>;
using T3 = Tensor<3>;

TEST_P(AgreeFloat, Elementwise) {
  auto x = rand<3>({4, 5, 6});
  auto y = rand<3>({4, 5, 6});
  auto row = rand<3>({1, 5, 1});
  auto pos = rand<3>({4, 5, 6}, 0.5, 2.0);
  agree(
      "add", [](const T3& a, const T3& b) { return a + b; }, x, y);
  agree(
      "sub broadcast", [](const T3& a, const T3& b) { return a - b; }, x, row);
  agree(
      "mul broadcast", [](const T3& a, const T3& b) { return b * a; }, x, row);
  agree(
      "div", [](const T3& a, const T3& b) { return a / b; }, x, pos);
  agree(
      "remainder", [](const T3& a, const T3& b) { return a.remainder(b); }, x, pos);
  agree(
      "pow", [](const T3& a, const T3& b) { return a.powf(b); }, pos, x);
  agree(
      "max_pair", [](const T3& a, const T3& b) { return a.max_pair(b); }, x, y);
  agree(
      "atan2", [](const T3& a, const T3& b) { return a.atan2(b); }, x, y);
  agree(
      "scalar ops", [](const T3& a) { return (2.0 - a) * 3.0 + 1.0 / (a.abs() + 1.0); }, x);
  agree(
      "clamp", [](const T3& a) { return a.clamp(-0.5, 0.75); }, x);
}

TEST_P(AgreeFloat, UnaryMath) {
  auto x = rand<2>({7, 9});
  agree(
      "exp", [](const T2& a) { return a.exp(); }, x);
  agree(
      "log", [](const T2& a) { return (a.abs() + 0.1).log(); }, x);
  agree(
      "sqrt", [](const T2& a) { return a.abs().sqrt(); }, x);
  agree(
      "tanh", [](const T2& a) { return a.tanh(); }, x);
  agree(
      "sin cos", [](const T2& a) { return a.sin() + a.cos(); }, x);
  agree(
      "erf", [](const T2& a) { return a.erf(); }, x);
  agree(
      "round floor ceil", [](const T2& a) { return (a * 3.0).round() + a.floor() + a.ceil() + a.trunc(); }, x);
  agree(
      "recip sign", [](const T2& a) { return (a.abs() + 0.5).recip() * a.sign(); }, x);
  agree(
      "sigmoid-like", [](const T2& a) { return 1.0 / (a.neg().exp() + 1.0); }, x);
}

TEST_P(AgreeFloat, Comparisons) {
  auto x = rand<2>({6, 8});
  auto y = rand<2>({6, 8});
  agree(
      "greater", [](const T2& a, const T2& b) { return a.greater(b); }, x, y);
  agree(
      "lower_equal_elem", [](const T2& a) { return a.lower_equal_elem(0.25); }, x);
  agree(
      "is_nan of log", [](const T2& a) { return a.log().is_nan(); }, x);
}

TEST_P(AgreeFloat, Reductions) {
  auto x = rand<3>({4, 5, 6});
  agree(
      "sum", [](const T3& a) { return a.sum(); }, x);
  agree(
      "mean", [](const T3& a) { return a.mean(); }, x);
  agree(
      "max", [](const T3& a) { return a.max(); }, x);
  for (std::int64_t d = 0; d < 3; ++d) {
    SCOPED_TRACE(d);
    agree(
        "sum_dim", [d](const T3& a) { return a.sum_dim(d); }, x);
    agree(
        "mean_dim", [d](const T3& a) { return a.mean_dim(d); }, x);
    agree(
        "prod_dim", [d](const T3& a) { return (a * 0.1 + 1.0).prod_dim(d); }, x);
    agree(
        "max_dim", [d](const T3& a) { return a.max_dim(d); }, x);
    agree(
        "min_dim", [d](const T3& a) { return a.min_dim(d); }, x);
    agree(
        "argmax", [d](const T3& a) { return a.argmax(d); }, x);
    agree(
        "argmin", [d](const T3& a) { return a.argmin(d); }, x);
    agree(
        "var", [d](const T3& a) { return a.var(d); }, x);
    agree(
        "max_dim_with_indices", [d](const T3& a) { return a.max_dim_with_indices(d).second; }, x);
  }
}

TEST_P(AgreeFloat, CumulativeAndSort) {
  auto x = rand<3>({3, 5, 7});
  for (std::int64_t d = 0; d < 3; ++d) {
    SCOPED_TRACE(d);
    agree(
        "cumsum", [d](const T3& a) { return a.cumsum(d); }, x);
    agree(
        "cumprod", [d](const T3& a) { return (a * 0.1 + 1.0).cumprod(d); }, x);
    agree(
        "cummax", [d](const T3& a) { return a.cummax(d); }, x);
    agree(
        "cummin", [d](const T3& a) { return a.cummin(d); }, x);
    agree(
        "sort", [d](const T3& a) { return a.sort(d); }, x);
    agree(
        "argsort", [d](const T3& a) { return a.argsort(d); }, x);
    agree(
        "argsort_descending", [d](const T3& a) { return a.argsort_descending(d); }, x);
    agree(
        "topk", [d](const T3& a) { return a.topk_with_indices(2, d).second; }, x);
  }
  // Many ties after rounding: stability decides the indices.
  agree(
      "argsort with ties", [](const T3& a) { return (a * 2.0).round().argsort(2); }, x);
}

TEST_P(AgreeFloat, Matmul) {
  agree(
      "2d", [](const T2& a, const T2& b) { return a.matmul(b); }, rand<2>({7, 16}), rand<2>({16, 5}));
  agree(
      "batched", [](const T3& a, const T3& b) { return a.matmul(b); }, rand<3>({3, 4, 9}), rand<3>({3, 9, 2}));
  agree(
      "broadcast batch", [](const T3& a, const T3& b) { return a.matmul(b); }, rand<3>({1, 4, 9}), rand<3>({3, 9, 2}));
  agree(
      "large", [](const T2& a, const T2& b) { return a.matmul(b); }, rand<2>({33, 65}), rand<2>({65, 17}));
  agree(
      "cross", [](const T2& a, const T2& b) { return a.cross(b, 1); }, rand<2>({4, 3}), rand<2>({4, 3}));
}

TEST_P(AgreeFloat, Layout) {
  auto x = rand<3>({4, 5, 6});
  agree(
      "permute",
      [](const T3& a) {
        return a.permute({2, 0, 1});
      },
      x);
  agree(
      "permute reshape",
      [](const T3& a) {
        return a.permute({1, 2, 0}).reshape<2>({5, -1});
      },
      x);
  agree(
      "flip",
      [](const T3& a) {
        return a.flip({0, 2});
      },
      x);
  agree(
      "slice steps",
      [](const T3& a) {
        return a.slice({{1, 4}, {0, 5, 2}, {0, 6, -2}});
      },
      x);
  agree(
      "expand",
      [](const T3& a) {
        return a.slice({{0, 1}}).expand<3>({3, 5, 6});
      },
      x);
  agree(
      "cat",
      [](const T3& a) {
        return T3::cat({a, a.flip({1}), a.slice({{0, 2}})}, 0);
      },
      x);
  agree(
      "stack",
      [](const T3& a) {
        return T3::stack<4>({a, a * 2.0}, 2);
      },
      x);
  agree(
      "repeat",
      [](const T3& a) {
        return a.repeat({1, 2, 3});
      },
      x);
  agree(
      "unfold", [](const T3& a) { return a.unfold(2, 3, 2); }, x);
  agree(
      "slice_assign",
      [](const T3& a) {
        return a.slice_assign({{1, 3}, {0, 5, 2}}, a.slice({{0, 2}, {0, 3}}) * 10.0);
      },
      x);
  agree(
      "slice_fill",
      [](const T3& a) {
        return a.slice_fill({Range::all(), {1, 4}, {0, 6, -3}}, 7.0);
      },
      x);
  agree(
      "chunk", [](const T3& a) { return a.chunk(3, 2)[1]; }, x);
}

TEST_P(AgreeFloat, Indexing) {
  auto x = rand<3>({4, 5, 6});
  auto idx = rand_int<3>({4, 5, 3}, 6);
  agree(
      "gather", [](const T3& a, const Tensor<3, Int>& i) { return a.gather(2, i); }, x, idx);
  agree(
      "scatter add",
      [](const T3& a, const Tensor<3, Int>& i) {
        return a.scatter(2, i, a.slice({Range::all(), Range::all(), {0, 3}}));
      },
      x, idx);
  auto sel = rand_int<1>({7}, 5);
  agree(
      "select", [](const T3& a, const Tensor<1, Int>& i) { return a.select(1, i); }, x, sel);
  agree(
      "select_assign", [](const T3& a, const Tensor<1, Int>& i) { return a.select_assign(1, i, a.select(1, i) * 2.0); },
      x, sel);
  auto mask = rand_bool<3>({4, 5, 6});
  agree(
      "mask_where", [](const T3& a, const Tensor<3, Bool>& m) { return a.mask_where(m, a * -1.0); }, x, mask);
  agree(
      "mask_fill", [](const T3& a, const Tensor<3, Bool>& m) { return a.mask_fill(m, 3.0); }, x, mask);
  agree(
      "argwhere", [](const T3& a) { return a.greater_elem(0.5).argwhere(); }, x);
}

TEST_P(AgreeFloat, NonContiguousInputs) {
  auto x = rand<3>({4, 5, 6});
  auto y = rand<3>({6, 4, 5});
  // Views feeding elementwise ops.
  agree(
      "permuted + contiguous",
      [](const T3& a, const T3& b) {
        return a.permute({2, 0, 1}) + b;
      },
      x, y);
  agree(
      "exp of stepped slice",
      [](const T3& a) {
        return a.slice({Range::all(), {0, 5, 2}}).exp();
      },
      x);
  agree(
      "expanded * flipped",
      [](const T3& a) {
        return a.slice({Range::all(), {0, 1}}).expand<3>({4, 5, 6}) * a.flip({1});
      },
      x);
  agree(
      "transposed clamp", [](const T3& a) { return a.swap_dims(0, 2).clamp(-1.0, 1.0); }, x);
  // Views feeding reductions, scans and sorts.
  agree(
      "sum_dim of flip", [](const T3& a) { return a.flip({2}).sum_dim(1); }, x);
  agree(
      "argmax of permute",
      [](const T3& a) {
        return a.permute({1, 2, 0}).argmax(2);
      },
      x);
  agree(
      "var of slice",
      [](const T3& a) {
        return a.slice({{1, 4}, Range::all(), {0, 6, -1}}).var(0);
      },
      x);
  agree(
      "cumsum of permute",
      [](const T3& a) {
        return a.permute({2, 1, 0}).cumsum(1);
      },
      x);
  agree(
      "sort of slice",
      [](const T3& a) {
        return a.slice({Range::all(), {1, 4}}).sort_with_indices(1).second;
      },
      x);
  // Views feeding matmul and indexing.
  agree(
      "matmul of transposed",
      [](const T3& a, const T3& b) {
        return a.transpose().matmul(b.permute({1, 2, 0}));
      },
      x, y);
  agree(
      "matmul of expanded",
      [](const T3& a) {
        return a.slice({{0, 1}}).expand<3>({4, 5, 6}).matmul(a.transpose());
      },
      x);
  auto idx = rand_int<3>({4, 6, 2}, 5);
  agree(
      "gather from permuted", [](const T3& a, const Tensor<3, Int>& i) { return a.swap_dims(1, 2).gather(2, i); }, x,
      idx);
  agree(
      "gather with permuted indices",
      [](const T3& a, const Tensor<3, Int>& i) {
        return a.gather(1, i.permute({0, 2, 1}));
      },
      x, idx);
  agree(
      "mask_where permuted",
      [](const T3& a, const T3& b) {
        return a.mask_where(b.permute({1, 2, 0}).greater_elem(0.0), a.flip({0}));
      },
      x, y);
  agree(
      "cat of views",
      [](const T3& a) {
        return T3::cat({a.flip({0}), a.slice({Range::all(), {0, 5, 2}})}, 1);
      },
      x);
  agree(
      "reshape of expanded",
      [](const T3& a) {
        return a.slice({{0, 1}}).expand<3>({4, 5, 6}).reshape<2>({20, -1});
      },
      x);
  // Views as the target (and the source) of writes.
  agree(
      "slice_assign into permuted",
      [](const T3& a) {
        auto p = a.permute({2, 0, 1});
        return p.slice_assign({{0, 2}}, p.slice({{4, 6}}).flip({1}));
      },
      x);
  agree(
      "select_assign into flipped",
      [](const T3& a, const Tensor<3, Int>& i) {
        auto rows = i.slice({{0, 1}, {0, 1}}).reshape<1>({-1});
        return a.flip({1}).select_assign(1, rows, a.slice({Range::all(), {0, 2}}).transpose().transpose());
      },
      x, idx);
  agree(
      "scatter into transposed",
      [](const T3& a, const Tensor<3, Int>& i) {
        auto t = a.swap_dims(1, 2);
        return t.scatter(2, i, t.slice({Range::all(), Range::all(), {0, 2}}).flip({0}));
      },
      x, idx);
  agree(
      "mask_fill on expanded",
      [](const T3& a) {
        return a.slice({{0, 1}}).expand<3>({4, 5, 6}).mask_fill(a.greater_elem(0.0), 0.0);
      },
      x);
}

// Above the flex backend's parallel threshold (2^15 elements), so its
// multi-threaded paths are compared too.
TEST_P(AgreeFloat, LargeTensors) {
  auto x = rand<3>({40, 50, 40});
  auto y = rand<3>({40, 50, 40});
  agree(
      "add", [](const T3& a, const T3& b) { return a + b; }, x, y);
  agree(
      "broadcast mul",
      [](const T3& a, const T3& b) {
        return a * b.slice({{0, 1}});
      },
      x, y);
  agree(
      "permuted sub",
      [](const T3& a, const T3& b) {
        return a.permute({2, 1, 0}) - b;
      },
      x, y);
  agree(
      "exp of flip", [](const T3& a) { return a.flip({1}).exp(); }, x);
  agree(
      "sum", [](const T3& a) { return a.sum(); }, x);
  for (std::int64_t d = 0; d < 3; ++d) {
    SCOPED_TRACE(d);
    agree(
        "sum_dim", [d](const T3& a) { return a.sum_dim(d); }, x);
    agree(
        "max_dim", [d](const T3& a) { return a.max_dim(d); }, x);
    agree(
        "argmin", [d](const T3& a) { return a.argmin(d); }, x);
    agree(
        "cumsum", [d](const T3& a) { return a.cumsum(d); }, x);
    agree(
        "argsort", [d](const T3& a) { return a.argsort(d); }, x);
  }
  agree(
      "sum_dim of permuted",
      [](const T3& a) {
        return a.permute({1, 2, 0}).sum_dim(2);
      },
      x);
  agree(
      "matmul", [](const T2& a, const T2& b) { return a.matmul(b); }, rand<2>({96, 200}), rand<2>({200, 80}));
  agree(
      "matmul transposed", [](const T2& a, const T2& b) { return a.transpose().matmul(b); }, rand<2>({200, 96}),
      rand<2>({200, 80}));
  auto idx = rand_int<3>({40, 50, 40}, 40);
  agree(
      "gather", [](const T3& a, const Tensor<3, Int>& i) { return a.gather(2, i); }, x, idx);
  agree(
      "scatter", [](const T3& a, const Tensor<3, Int>& i) { return a.scatter(0, i, a); }, x, idx);
  agree(
      "mask_where", [](const T3& a, const T3& b) { return a.mask_where(b.greater_elem(0.0), b); }, x, y);
  agree(
      "cat",
      [](const T3& a, const T3& b) {
        return T3::cat({a, b.flip({2})}, 1);
      },
      x, y);
}

TEST_P(AgreeFloat, EmptyTensors) {
  auto e = rand<3>({2, 0, 3});
  agree(
      "sum_dim of empty", [](const T3& a) { return a.sum_dim(1); }, e);
  agree(
      "add of empty", [](const T3& a) { return a + a; }, e);
  agree(
      "cat with empty",
      [](const T3& a, const T3& b) {
        return T3::cat({a, b}, 1);
      },
      e, rand<3>({2, 2, 3}));
  agree(
      "matmul k = 0", [](const T2& a, const T2& b) { return a.matmul(b); }, rand<2>({3, 0}), rand<2>({0, 4}));
}

BURN_AGREEMENT_SUITE(AgreeFloat, burn::testing::float_dtypes());

}  // namespace
}  // namespace burn::conformance
