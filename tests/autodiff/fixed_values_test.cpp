// Burn's autodiff cases as fixed values, in the device's default
// float dtype. Most follow Burn's pattern: A = [[1, 7], [2, 3]],
// B = [[4, 7], [2, 3]], y = A.matmul(op(B)), y.backward() (seeded with ones).
// Expected values were computed with PyTorch in f64.
#include "grad_check.hpp"

#include <algorithm>
#include <functional>

#if BURN_HAS_AUTODIFF

namespace {

using namespace burn;
using namespace burn::adtest;

const Tolerance kTol = Tolerance::rel_abs(1e-4, 1e-4);

class FixedValues : public AdTest {
 protected:
  Tensor<2> a() const { return Tensor<2>::from_floats({{1.0, 7.0}, {2.0, 3.0}}, ad()).require_grad(); }
  Tensor<2> b() const { return Tensor<2>::from_floats({{4.0, 7.0}, {2.0, 3.0}}, ad()).require_grad(); }

  /// y = A.matmul(op(B)); backward from the [2, 2] result.
  void matmul_of(const std::function<Tensor<2>(const Tensor<2>&)>& op, const std::vector<double>& da,
                 const std::vector<double>& db) {
    const auto ta = a();
    const auto tb = b();
    const Gradients grads = ta.matmul(op(tb)).backward();
    expect_grad(ta.grad(grads), {2, 2}, da, kTol);
    expect_grad(tb.grad(grads), {2, 2}, db, kTol);
  }
};

TEST_P(FixedValues, Matmul) {
  matmul_of([](const Tensor<2>& t) { return t; }, {11, 5, 11, 5}, {3, 3, 10, 10});
}

TEST_P(FixedValues, MatmulOfUnary) {
  {
    SCOPED_TRACE("exp");
    matmul_of([](const Tensor<2>& t) { return t.exp(); }, {1151.23130846, 27.4745930221, 1151.23130846, 27.4745930221},
              {163.794450099, 3289.89947529, 73.8905609893, 200.855369232});
  }
  {
    SCOPED_TRACE("log");
    matmul_of([](const Tensor<2>& t) { return t.log(); }, {3.33220451018, 1.79175946923, 3.33220451018, 1.79175946923},
              {0.75, 0.428571428571, 5.0, 3.33333333333});
  }
  {
    SCOPED_TRACE("sin");
    matmul_of([](const Tensor<2>& t) { return t.sin(); },
              {-0.0998158965891, 1.05041743489, -0.0998158965891, 1.05041743489},
              {-1.96093086259, 2.26170676303, -4.16146836547, -9.899924966});
  }
  {
    SCOPED_TRACE("cos");
    matmul_of([](const Tensor<2>& t) { return t.cos(); },
              {0.10025863348, -1.40613933315, 0.10025863348, -1.40613933315},
              {2.27040748592, -1.97095979616, -9.09297426826, -1.4112000806});
  }
  {
    SCOPED_TRACE("tanh");
    matmul_of([](const Tensor<2>& t) { return t.tanh(); }, {1.99932763668, 1.95908233376, 1.99932763668, 1.95908233376},
              {0.00402285204908, 9.97832803461e-06, 0.706508248532, 0.0986603716544});
  }
  {
    SCOPED_TRACE("sqrt");
    matmul_of([](const Tensor<2>& t) { return t.sqrt(); }, {4.64575131106, 3.14626436994, 4.64575131106, 3.14626436994},
              {0.75, 0.566946709514, 3.53553390593, 2.88675134595});
  }
  {
    SCOPED_TRACE("sigmoid");
    matmul_of([](const Tensor<2>& t) { return activation::sigmoid(t); },
              {1.98110273884, 1.8333712048, 1.98110273884, 1.8333712048},
              {0.0529881186399, 0.00273066354037, 1.04993585404, 0.451766597309});
  }
  {
    SCOPED_TRACE("recip");
    matmul_of([](const Tensor<2>& t) { return t.recip(); },
              {0.392857142857, 0.833333333333, 0.392857142857, 0.833333333333},
              {-0.1875, -0.0612244897959, -2.5, -1.11111111111});
  }
  {
    SCOPED_TRACE("powf_scalar(3)");
    matmul_of([](const Tensor<2>& t) { return t.powf_scalar(3.0); }, {407, 35, 407, 35}, {144, 441, 120, 270});
  }
  {
    SCOPED_TRACE("erf");
    matmul_of([](const Tensor<2>& t) { return t.erf(); }, {1.99999998458, 1.99530017452, 1.99999998458, 1.99530017452},
              {3.80947040156e-07, 0.0, 0.206669853541, 0.00139253051947});
  }
  {
    SCOPED_TRACE("log1p");
    matmul_of([](const Tensor<2>& t) { return t.log1p(); },
              {3.68887945411, 2.48490664979, 3.68887945411, 2.48490664979}, {0.6, 0.375, 3.33333333333, 2.5});
  }
}

TEST_P(FixedValues, MatmulChain) {
  const auto ta = Tensor<2>::from_floats({{1.0, 7.0}, {13.0, -3.0}}, ad()).require_grad();
  const auto tb = b();
  const auto tc = Tensor<2>::from_floats({{2.0, 2.0}, {3.0, 2.0}}, ad()).require_grad();
  const Gradients grads = ta.matmul(tb).matmul(tc).backward();
  expect_grad(ta.grad(grads), {2, 2}, {51, 23, 51, 23}, kTol);
  expect_grad(tb.grad(grads), {2, 2}, {56, 70, 16, 20}, kTol);
  expect_grad(tc.grad(grads), {2, 2}, {64, 64, 110, 110}, kTol);
}

TEST_P(FixedValues, ElementwiseBasics) {
  const auto x = Tensor<1>::from_floats({2.0, 5.0}, ad()).require_grad();
  const auto y = Tensor<1>::from_floats({4.0, 1.0}, ad()).require_grad();
  Gradients g = (x + y).backward();
  expect_grad(x.grad(g), {2}, {1, 1}, kTol);
  expect_grad(y.grad(g), {2}, {1, 1}, kTol);

  const auto p = Tensor<1>::from_floats({1.0, 7.0}, ad()).require_grad();
  const auto q = Tensor<1>::from_floats({4.0, 7.0}, ad()).require_grad();
  g = (p * q).backward();
  expect_grad(p.grad(g), {2}, {4, 7}, kTol);
  expect_grad(q.grad(g), {2}, {1, 7}, kTol);
  g = (p / q).backward();
  expect_grad(p.grad(g), {2}, {0.25, 1.0 / 7.0}, kTol);
  expect_grad(q.grad(g), {2}, {-0.0625, -1.0 / 7.0}, kTol);
  g = (p + 5.0).backward();
  expect_grad(p.grad(g), {2}, {1, 1}, kTol);
}

TEST_P(FixedValues, SoftmaxAndLogSoftmax) {
  const auto ta = Tensor<2>::from_floats({{0.0, 1.0}, {3.0, 4.0}}, ad()).require_grad();
  const auto tb = Tensor<2>::from_floats({{6.0, 7.0}, {9.0, 10.0}}, ad()).require_grad();
  Gradients g = (activation::softmax(ta.matmul(tb), 1) * tb).backward();
  expect_grad(ta.grad(g), {2, 2}, {0.196611933241, 0.196611933241, 0.000910221180118, 0.000910221180117}, kTol);
  expect_grad(tb.grad(g), {2, 2}, {0.26621075783, 0.73378924217, -0.199341766768, 1.19934176677}, kTol);
  g = (activation::log_softmax(ta.matmul(tb) / 10.0, 1) * tb).backward();
  expect_grad(ta.grad(g), {2, 2}, {0.0175270562774, 0.0175270562774, -0.26955676712, -0.26955676712}, kTol);
  expect_grad(tb.grad(g), {2, 2}, {0.064273641285, -1.45306696143, -0.0424860366848, -1.46388606109}, kTol);
}

TEST_P(FixedValues, ReductionsOfAMatmul) {
  auto ta = a();
  auto tb = b();
  auto t3 = ta.matmul(tb);
  Gradients g = (t3.sum_dim(1) * t3).backward();
  expect_grad(ta.grad(g), {2, 2}, {1012, 460, 814, 370}, kTol);
  expect_grad(tb.grad(g), {2, 2}, {240, 240, 866, 866}, kTol);
  ta = a();
  tb = b();
  t3 = ta.matmul(tb);
  g = (t3.mean_dim(1) * t3).sum().backward();
  expect_grad(ta.grad(g), {2, 2}, {506, 230, 407, 185}, kTol);
  expect_grad(tb.grad(g), {2, 2}, {120, 120, 433, 433}, kTol);
}

TEST_P(FixedValues, CatThenSlice) {
  const auto ta = a();
  const auto tb = b();
  const auto y = Tensor<2>::cat({ta * tb, ta.matmul(tb)}, 0).slice({{1, 3}, Range::all()});
  const Gradients g = y.exp().sum().backward();
  expect_grad(ta.grad(g), {2, 2}, {10124062089900.0, 4338902512810.0, 109.196300066, 24309.2517827}, kTol);
  expect_grad(tb.grad(g), {2, 2}, {65659969.1373, 1446257064290.0, 459619893.158, 10123799474300.0}, kTol);
}

TEST_P(FixedValues, GatherMaxVarMaskFill) {
  const auto x = Tensor<2>::from_floats({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, ad()).require_grad();
  const auto idx = ints<2>({2, 1, 0, 1, 2, 1, 0, 2, 1, 0}, {2, 5});
  Gradients g = (x.gather(1, idx) * 2.0).backward();
  expect_grad(x.grad(g), {2, 3}, {2, 4, 4, 4, 4, 2}, kTol);

  const auto m = Tensor<2>::from_floats({{1.0, 7.0, 3.0}, {9.0, 2.0, 4.0}}, ad()).require_grad();
  g = (m.max_dim(1) * m.sum_dim(1).sum_dim(0)).backward();
  expect_grad(m.grad(g), {2, 3}, {16, 42, 16, 42, 16, 16}, kTol);

  const auto v = a();
  g = v.var(1).backward();
  expect_grad(v.grad(g), {2, 2}, {-6, 6, -1, 1}, kTol);

  const auto ta = a();
  const auto tb = b();
  const auto mask = bools<2>({true, false, false, true}, {2, 2});
  g = (ta.matmul(tb).mask_fill(mask, 2.0) * ta).sum().backward();
  expect_grad(ta.grad(g), {2, 2}, {51, 49, 22, 6}, kTol);
  expect_grad(tb.grad(g), {2, 2}, {4, 7, 6, 49}, kTol);
}

// Conventions at non-differentiable points, shared by Burn and PyTorch:
// relu'(0) = 0 (Burn masks x <= 0), abs'(0) = 0, clamp passes the gradient
// on its bounds.
TEST_P(FixedValues, KinkConventions) {
  const auto x = Tensor<1>::from_floats({-1.0, 0.0, 1.0, 2.0}, ad()).require_grad();
  Gradients g = activation::relu(x).backward();
  expect_grad(x.grad(g), {4}, {0, 0, 1, 1}, kTol);
  g = x.abs().backward();
  expect_grad(x.grad(g), {4}, {-1, 0, 1, 1}, kTol);
  g = x.clamp(-1.0, 1.0).backward();
  expect_grad(x.grad(g), {4}, {1, 1, 1, 0}, kTol);
}

// Ties in max/min: conventions differ (Burn follows the first index, PyTorch's
// full max splits evenly), but each output sends exactly one unit of gradient,
// and only to elements equal to it.
TEST_P(FixedValues, TiesSendOneUnitOfGradient) {
  const auto x = Tensor<2>::from_floats({{3.0, 1.0, 3.0}, {0.5, 0.5, -2.0}}, ad()).require_grad();
  auto check_ties = [&](const Gradients& grads, const std::vector<std::vector<std::size_t>>& tied_per_row) {
    const auto g = values_of(*x.grad(grads));
    for (std::size_t r = 0; r < 2; ++r) {
      double total = 0;
      for (std::size_t c = 0; c < 3; ++c) {
        const bool tied = std::find(tied_per_row[r].begin(), tied_per_row[r].end(), c) != tied_per_row[r].end();
        if (!tied) {
          EXPECT_EQ(g[r * 3 + c], 0.0) << "row " << r << " col " << c;
        }
        total += g[r * 3 + c];
      }
      EXPECT_NEAR(total, 1.0, 1e-6) << "row " << r;
    }
  };
  check_ties(x.max_dim(1).backward(), {{0, 2}, {0, 1}});
  check_ties(x.min_dim(1).backward(), {{1}, {2}});
  const auto y = Tensor<1>::from_floats({2.0, 5.0, 5.0, 1.0}, ad()).require_grad();
  const auto gy = values_of(*y.grad(y.max().backward()));
  EXPECT_EQ(gy[0], 0.0);
  EXPECT_EQ(gy[3], 0.0);
  EXPECT_NEAR(gy[1] + gy[2], 1.0, 1e-6);
}

BURN_AD_MODES(FixedValues);

}  // namespace

#endif  // BURN_HAS_AUTODIFF
